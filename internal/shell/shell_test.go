package shell

import (
	"os/exec"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestQuote(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"src/calc.py":   "src/calc.py",
		"my file.py":    "'my file.py'",
		"it's":          `'it'\''s'`,
		"-rf":           "'-rf'",
		"":              "''",
		"a\nb":          `$'a\nb'`,
		"tab\there":     `$'tab\there'`,
		"\x1b[2Jclear":  `$'\x1b[2Jclear'`,
		"caf\xe9":       `$'caf\xe9'`,
		"azero/7-multi": "azero/7-multi",
	} {
		if got := Quote(in); got != want {
			t.Errorf("Quote(%q) = %s, want %s", in, got, want)
		}
	}
}

// FuzzQuote: bash reads back exactly the word that was quoted.
func FuzzQuote(f *testing.F) {
	for _, s := range []string{"plain", "it's", "a b", "\n", "$HOME", "`x`", "\\", "\xff", "-n"} {
		f.Add(s)
	}
	bash, err := exec.LookPath("bash")
	f.Fuzz(func(t *testing.T, s string) {
		if strings.ContainsRune(s, 0) {
			return // no shell word holds NUL
		}
		q := Quote(s)
		for _, r := range q {
			if r < 0x20 || r == 0x7f {
				t.Fatalf("Quote(%q) = %q holds a control character", s, q)
			}
		}
		if err != nil || !utf8.ValidString(q) {
			return
		}
		out, err := exec.Command(bash, "-c", "printf %s "+q).Output()
		if err != nil || string(out) != s {
			t.Fatalf("bash read %q back as %q (%v)", q, out, err)
		}
	})
}
