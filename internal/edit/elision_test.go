package edit

import (
	"errors"
	"strings"
	"testing"
)

func TestIsPlaceholder(t *testing.T) {
	t.Parallel()
	placeholders := []string{
		"# ... rest of code ...",
		"    // ... existing code ...",
		"/* ... */",
		"<!-- ... -->",
		"# rest of the file unchanged",
		"// (unchanged)",
		"# ...",
		"// …",
		"\t// ... other methods ...",
		"# ... (rest of the class)",
		"-- ... remaining queries unchanged ...",
		"% ... more cases",
		"{/* ... existing JSX ... */}",
		" * ... existing code ...",
		"// Rest of the function remains the same",
		"# The rest of the implementation is unchanged.",
		"// existing code here",
		"// previous implementation unchanged",
		"# other methods unchanged",
		"// remaining functions remain the same",
		"# unchanged",
		"// no changes",
		"# same as before",
		"// code omitted for brevity",
		"# implementation omitted",
		"// keep existing code",
		"// implementation unchanged",
		"// etc.",
		"// ...snip...",
		"#...existing imports...",
	}
	for _, l := range placeholders {
		if !isPlaceholder(l) {
			t.Errorf("isPlaceholder(%q) = false, want true", l)
		}
	}
	ordinary := []string{
		"...",                    // Python Ellipsis
		"    ...",                // Ellipsis as a body
		"def f(*args): ...",      // stub
		"\tfmt.Println(args...)", // Go variadic call
		"func f(xs ...int) {}",   // Go variadic parameter
		"x = y[...]",             // NumPy
		"// Rest of the file handles parsing.",
		"# rest of the tests",
		"// other helpers",
		"# Other methods",
		"// Wait for the other goroutines...",
		"# TODO: handle the rest of the cases",
		"// Existing users keep their settings.",
		"# ... and then we return early",
		"#!/usr/bin/env python3",
		"#[derive(Debug)]",
		"#include <stdio.h>",
		"**kwargs,",
		"*p = 1;",
		"--i;",
		"// fields with None values are omitted from the output",
		"",
		"    ",
		"'...',",
		`"...",`,
		"print('...')",
	}
	for _, l := range ordinary {
		if isPlaceholder(l) {
			t.Errorf("isPlaceholder(%q) = true, want false", l)
		}
	}
}

func TestCheckElision(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		block Block
		line  string // "" when no error is expected
	}{
		{
			name:  "placeholder replaces real code",
			block: Block{Find: "def f():\n    a()\n    b()\n", Replace: "def f():\n    a()\n    # ... rest of code ...\n"},
			line:  "    # ... rest of code ...",
		},
		{
			name:  "placeholder already in the file",
			block: Block{Find: "x = 1\n# ... rest of code ...\n", Replace: "x = 2\n# ... rest of code ...\n"},
		},
		{
			name:  "placeholder in the file with other indentation",
			block: Block{Find: "    // ... existing code ...\n", Replace: "// ... existing code ...\nfoo()\n"},
		},
		{
			name:  "ordinary comments and Ellipsis",
			block: Block{Find: "class P(Protocol):\n    def f(self): ...\n", Replace: "class P(Protocol):\n    # Implementations must be pure.\n    def f(self): ...\n    def g(self): ...\n"},
		},
		{
			name:  "numbered placeholder replaces numbered code",
			block: Block{Find: "1 | def f():\n2 |     a()\n3 |     b()\n", Replace: "1 | def f():\n2 |     # ... rest of code ...\n"},
			line:  "2 |     # ... rest of code ...",
		},
		{
			name:  "numbered placeholder that FIND had",
			block: Block{Find: "7 | x = 1\n8 | # ... rest of code ...\n", Replace: "7 | x = 2\n8 | # ... rest of code ...\n"},
		},
		{
			name:  "second placeholder is new",
			block: Block{Find: "// ... existing code ...\nx()\n", Replace: "// ... existing code ...\n/* ... */\n"},
			line:  "/* ... */",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tt.block.N = 3
			err := CheckElision([]Block{{N: 1, Find: "a\n", Replace: "b\n"}, tt.block})
			if tt.line == "" {
				if err != nil {
					t.Fatalf("CheckElision: %v", err)
				}
				return
			}
			var ee *ElisionError
			if !errors.As(err, &ee) {
				t.Fatalf("CheckElision = %v, want *ElisionError", err)
			}
			if ee.Block != 3 || ee.Line != tt.line {
				t.Errorf("ElisionError{%d, %q}, want {3, %q}", ee.Block, ee.Line, tt.line)
			}
			for _, s := range []string{"edit block 3", strings.TrimSpace(tt.line), "Write out every line"} {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not contain %q", err, s)
				}
			}
		})
	}
}
