package edit

import (
	"regexp"
	"strings"
	"sync"
)

// The rules of each brace language, matched against a statement's first
// line without its indentation, the first match naming the kind. Written
// loosely: they tell declarations from the other statements that can
// stand in the same place (a call at the top of a script, an
// initialiser block in a class), not valid code from invalid.

// r builds a rule, expanding the {NAME} parts of its pattern.
func r(parts map[string]string, pattern, kind string, opens scope, entry ...string) rule {
	for k, v := range parts {
		pattern = strings.ReplaceAll(pattern, "{"+k+"}", v)
	}
	ru := rule{re: regexp.MustCompile(pattern), kind: kind, opens: opens}
	if len(entry) > 0 {
		ru.entry = entry[0]
	}
	return ru
}

var goOutline = sync.OnceValue(func() *braceLang {
	p := map[string]string{"TP": `\s*(?:\[.*\])?\s*`}
	return &braceLang{
		goRaw: true,
		top: []rule{
			r(p, `^package\b`, "package", opaque),
			r(p, `^import\s*\(`, "import", group, ""),
			r(p, `^import\b`, "import", opaque),
			r(p, `^func\s*\(`, "method", opaque),
			r(p, `^func\b`, "func", opaque),
			r(p, `^type\s*\(`, "type", group, "type"),
			r(p, `^type\s+\w+{TP}struct\b`, "struct", opaque),
			r(p, `^type\s+\w+{TP}interface\b`, "interface", opaque),
			r(p, `^type\b`, "type", opaque),
			r(p, `^const\s*\(`, "const", group, "const"),
			r(p, `^const\b`, "const", opaque),
			r(p, `^var\s*\(`, "var", group, "var"),
			r(p, `^var\b`, "var", opaque),
		},
		typeEntry: []rule{
			r(p, `^\w+{TP}struct\b`, "struct", opaque),
			r(p, `^\w+{TP}interface\b`, "interface", opaque),
			r(p, `^\w`, "type", opaque),
		},
	}
})

var rustOutline = sync.OnceValue(func() *braceLang {
	p := map[string]string{
		"VIS": `(?:pub(?:\s*\([^)]*\))?\s+)?`,
		"FN":  `(?:default\s+)?(?:const\s+)?(?:async\s+)?(?:unsafe\s+)?(?:extern\s+(?:"[^"]*"\s+)?)?fn\b`,
	}
	items := []rule{
		r(p, `^{VIS}{FN}`, "func", opaque),
		r(p, `^{VIS}use\b`, "import", opaque),
		r(p, `^extern\s+crate\b`, "import", opaque),
		r(p, `^{VIS}mod\s+\w+\s*;`, "module", opaque),
		r(p, `^{VIS}mod\b`, "module", transparent),
		r(p, `^{VIS}(?:unsafe\s+)?(?:auto\s+)?trait\b`, "trait", members),
		r(p, `^(?:default\s+)?(?:unsafe\s+)?impl\b`, "impl", members),
		r(p, `^{VIS}struct\b`, "struct", opaque),
		r(p, `^{VIS}enum\b`, "enum", opaque),
		r(p, `^{VIS}union\b`, "union", opaque),
		r(p, `^{VIS}type\b`, "type", opaque),
		r(p, `^{VIS}const\b`, "const", opaque),
		r(p, `^{VIS}static\b`, "static", opaque),
		r(p, `^macro_rules!`, "macro", opaque),
		r(p, `^{VIS}macro\b`, "macro", opaque),
		r(p, `^(?:unsafe\s+)?extern\s*(?:"[^"]*")?\s*\{?$`, "module", transparent),
		r(p, `^[A-Za-z_][\w:]*!\s*[({\[]`, "macro_call", opaque),
	}
	return &braceLang{
		rustStrings: true,
		nestComment: true,
		top:         items,
		member: []rule{
			r(p, `^{VIS}{FN}`, "method", opaque),
			r(p, `^{VIS}(?:default\s+)?type\b`, "type", opaque),
			r(p, `^{VIS}(?:default\s+)?const\b`, "const", opaque),
			r(p, `^[A-Za-z_][\w:]*!\s*[({\[]`, "macro_call", opaque),
		},
	}
})

// jsOutline serves JavaScript and TypeScript alike: TypeScript's
// declarations are a superset, and a .js file has none of its words.
var jsOutline = sync.OnceValue(func() *braceLang {
	p := map[string]string{
		"P":    `(?:export\s+(?:default\s+)?)?(?:declare\s+)?`,
		"DEC":  `(?:@[\w$.]+(?:\([^)]*\))?\s+)*`,
		"MODS": `(?:(?:public|private|protected|static|readonly|abstract|override|declare|accessor|async)\s+)*`,
		"TP":   jvmTParam,
	}
	return &braceLang{
		template:  true,
		regexLits: true,
		top: []rule{
			r(p, `^import[\s{*'"]`, "import", opaque),
			r(p, `^import\s+type\b`, "import", opaque),
			r(p, `^export\s+import\b`, "import", opaque),
			r(p, `^export\s*(?:type\s*)?(?:\{|\*)`, "export", opaque),
			r(p, `^export\s*=`, "export", opaque),
			r(p, `^export\s+as\s+namespace\b`, "export", opaque),
			r(p, `^export\s+default\s*\{`, "export", members),
			r(p, `^{P}(?:async\s+)?function\b`, "func", opaque),
			r(p, `^{P}(?:abstract\s+)?class\b`, "class", members),
			r(p, `^{P}(?:const\s+)?enum\b`, "enum", opaque),
			r(p, `^{P}const\b`, "const", opaque),
			r(p, `^{P}(?:let|var|using)\b`, "var", opaque),
			r(p, `^{P}interface\b`, "interface", members),
			r(p, `^{P}type\s+[\w$]`, "type", opaque),
			r(p, `^{P}(?:namespace|module)\s+[\w$.'"]`, "namespace", transparent),
			r(p, `^declare\s+global\b`, "namespace", transparent),
			r(p, `^export\s+default\b`, "export", opaque),
			r(p, `^module\.exports\s*=\s*\{`, "export", members),
			r(p, `^(?:module\.)?exports(?:\.[\w$]+|\[[^\]]*\])?\s*=[^=]`, "export", opaque),
			r(p, `^Object\.defineProperty\(\s*(?:module\.)?exports\b`, "export", opaque),
			r(p, `^[A-Za-z_$][\w$]*\.prototype\.[\w$]+\s*=[^=]`, "method", opaque),
			r(p, `^[A-Za-z_$][\w$]*\.prototype\s*=[^=]`, "assign", opaque),
		},
		member: []rule{
			r(p, `^{DEC}{MODS}(?:get|set)\s+[#\w$\[]`, "property", opaque),
			r(p, `^{DEC}(?:(?:public|private|protected)\s+)?constructor\s*\(`, "constructor", opaque),
			r(p, `^{DEC}{MODS}\*?\s*(?:[#\w$]+|\[[^\]]*\])\??\s*(?:{TP}\(|<\s*$)`, "method", opaque),
			r(p, `^{DEC}{MODS}(?:[#\w$]+|'[^']*'|"[^"]*"|\[[^\]]*\])[?!]?\s*(?:[:=;,]|$)`, "property", opaque),
		},
	}
})

// The Java-like languages: a type is any run of names, dots, brackets and
// type arguments; annotations (attributes in C#) and modifiers are
// stripped before the rules are matched.
const (
	jvmType   = `(?:[\w$.?\[\]>]|<[^>]*>)+`
	jvmTParam = `(?:<(?:[^<>]|<(?:[^<>]|<[^<>]*>)*>)*>\s*)?`
)

var javaOutline = sync.OnceValue(func() *braceLang {
	p := map[string]string{"T": jvmType, "TP": jvmTParam}
	types := []rule{
		r(p, `^class\b`, "class", members),
		r(p, `^@?interface\b`, "interface", members),
		r(p, `^enum\b`, "enum", members),
		r(p, `^record\b`, "record", members),
	}
	return &braceLang{
		tripleQuote: true,
		strip:       regexp.MustCompile(`^(?:@[\w$.]+(?:\s*\([^)]*\))?\s*|(?:public|protected|private|abstract|static|final|sealed|non-sealed|strictfp|default|synchronized|native|transient|volatile)\s+)*`),
		top:         append([]rule{r(p, `^package\b`, "package", opaque), r(p, `^import\b`, "import", opaque)}, types...),
		member: append(types,
			r(p, `^[A-Z][A-Z0-9_]*\s*(?:[(,;{]|$)`, "const", opaque), // an enum's constants
			r(p, `^{TP}[\w$]+\s*\(`, "constructor", opaque),
			r(p, `^[A-Z][\w$]*\s*\{`, "constructor", opaque), // a record's compact constructor
			r(p, `^{TP}{T}\s+[\w$]+\s*\(`, "method", opaque),
			r(p, `^{T}\s+[\w$]+\s*(?:[=;,]|$)`, "field", opaque),
		),
	}
})

var kotlinOutline = sync.OnceValue(func() *braceLang {
	p := map[string]string{}
	decls := func(fun string) []rule {
		return []rule{
			r(p, `^(?:fun\s+)?interface\b`, "interface", members),
			r(p, `^class\b`, "class", members),
			r(p, `^object\b`, "object", members),
			r(p, `^fun\b`, fun, opaque),
			r(p, `^const\s+val\b`, "const", opaque),
			r(p, `^(?:val|var)\b`, "property", opaque),
			r(p, `^typealias\b`, "type", opaque),
		}
	}
	return &braceLang{
		tripleQuote: true,
		nestComment: true,
		backtickID:  true,
		strip:       regexp.MustCompile(`^(?:@[\w$.:]+(?:\s*\([^)]*\))?\s*|(?:public|private|internal|protected|open|abstract|final|sealed|data|enum|annotation|inline|value|inner|companion|suspend|tailrec|operator|infix|external|override|lateinit|expect|actual)\s+)*`),
		top:         append([]rule{r(p, `^package\b`, "package", opaque), r(p, `^import\b`, "import", opaque)}, decls("func")...),
		member:      append(decls("method"), r(p, `^constructor\b`, "constructor", opaque)),
	}
})

var csharpOutline = sync.OnceValue(func() *braceLang {
	p := map[string]string{"T": jvmType, "TP": jvmTParam}
	types := []rule{
		r(p, `^(?:record\s+)?struct\b`, "struct", members),
		r(p, `^record\b`, "record", members),
		r(p, `^class\b`, "class", members),
		r(p, `^interface\b`, "interface", members),
		r(p, `^enum\b`, "enum", opaque),
		r(p, `^delegate\b`, "type", opaque),
	}
	return &braceLang{
		tripleQuote: true,
		verbatim:    true,
		strip:       regexp.MustCompile(`^(?:\[[^\]]*\]\s*|(?:public|private|protected|internal|static|abstract|sealed|partial|readonly|ref|unsafe|new|file|virtual|override|async|extern|volatile|required|implicit|explicit)\s+)*`),
		top: append([]rule{
			r(p, `^(?:global\s+)?using\b`, "import", opaque),
			r(p, `^namespace\s+[\w.]+\s*;`, "namespace", opaque),
			r(p, `^namespace\b`, "namespace", transparent),
		}, types...),
		member: append(types,
			r(p, `^const\b`, "const", opaque),
			r(p, `^event\b`, "field", opaque),
			r(p, `^~?\w+\s*\(`, "constructor", opaque),
			r(p, `^{T}\s+(?:[\w.]+\.)?this\s*\[`, "property", opaque),
			r(p, `^(?:\([^)]*\)|{T})\s+[\w.]+\s*{TP}\(`, "method", opaque),
			r(p, `^{T}\s+[\w.]+\s*(?:\{|=>|$)`, "property", opaque),
			r(p, `^{T}\s+\w+\s*(?:[=;,]|$)`, "field", opaque),
		),
	}
})

// braceLanguage returns the rules of a brace language, or nil.
func braceLanguage(lang string) *braceLang {
	switch lang {
	case "go":
		return goOutline()
	case "javascript", "typescript":
		return jsOutline()
	case "rust":
		return rustOutline()
	case "java":
		return javaOutline()
	case "kotlin":
		return kotlinOutline()
	case "csharp":
		return csharpOutline()
	}
	return nil
}
