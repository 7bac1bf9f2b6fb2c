package shellcmd

import (
	"strings"
)

// optKind is what a git commit option means for the gate.
type optKind int

const (
	optPlain        optKind = iota // changes nothing the gate looks at
	optArg                         // takes an argument (attached with = or the next word)
	optOptionalArg                 // takes an argument only when attached with =
	optAll                         // -a, --all
	optAmend                       // --amend
	optNoVerify                    // -n, --no-verify
	optWorkingTree                 // -i, -o, --interactive, --patch: working-tree content
	optPathspecFile                // --pathspec-from-file=FILE: paths azero cannot see
)

// commitLongOptions are git commit's long options (git 2.4x).
var commitLongOptions = map[string]optKind{
	"all": optAll, "amend": optAmend, "no-verify": optNoVerify, "verify": optPlain,
	"include": optWorkingTree, "only": optWorkingTree, "interactive": optWorkingTree, "patch": optWorkingTree,
	"pathspec-from-file": optPathspecFile, "pathspec-file-nul": optPlain,
	"message": optArg, "file": optArg, "reuse-message": optArg, "reedit-message": optArg, "fixup": optArg,
	"squash": optArg, "author": optArg, "date": optArg, "template": optArg, "cleanup": optArg, "trailer": optArg,
	"gpg-sign": optOptionalArg, "untracked-files": optOptionalArg,
	"quiet": optPlain, "verbose": optPlain, "reset-author": optPlain, "signoff": optPlain, "edit": optPlain,
	"no-edit": optPlain, "status": optPlain, "no-status": optPlain, "dry-run": optPlain, "short": optPlain,
	"branch": optPlain, "ahead-behind": optPlain, "porcelain": optPlain, "long": optPlain, "null": optPlain,
	"no-post-rewrite": optPlain, "allow-empty": optPlain, "allow-empty-message": optPlain, "no-gpg-sign": optPlain,
}

// commitShortOptions are git commit's short options.
var commitShortOptions = map[byte]optKind{
	'a': optAll, 'n': optNoVerify, 'i': optWorkingTree, 'o': optWorkingTree, 'p': optWorkingTree,
	'm': optArg, 'F': optArg, 'c': optArg, 'C': optArg, 't': optArg,
	'S': optOptionalArg, 'u': optOptionalArg,
	'q': optPlain, 'v': optPlain, 's': optPlain, 'e': optPlain, 'z': optPlain, 'h': optPlain,
}

// parseCommitArgs reads git commit's arguments the way git's option
// parser does: short options cluster (-am MSG), an option's argument may
// be attached or the next word, long options may be abbreviated to any
// unambiguous prefix, "--" ends the options, and any other word is a
// pathspec. An abbreviation git would refuse as ambiguous counts as every
// option it could mean: over-reading never lets a commit through.
func parseCommitArgs(args []word) Commit {
	var c Commit
	apply := func(k optKind) {
		switch k {
		case optAll:
			c.All = true
		case optAmend:
			c.Amend = true
		case optNoVerify:
			c.NoVerify = true
		case optWorkingTree, optPathspecFile:
			c.Pathspecs = true
		}
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !a.known {
			c.Uncertain = "an argument of git commit (" + a.raw + ") is computed when the command runs"
			c.Pathspecs = true
			continue
		}
		v := a.val
		switch {
		case v == "--":
			if i+1 < len(args) {
				c.Pathspecs = true
			}
			return c
		case strings.HasPrefix(v, "--"):
			name, _, attached := strings.Cut(v[2:], "=")
			kinds := longOption(name)
			takesArg := false
			for _, k := range kinds {
				apply(k)
				if k == optArg || k == optPathspecFile {
					takesArg = true
				}
			}
			if takesArg && !attached && len(kinds) == 1 {
				i++ // the option's argument
			}
		case strings.HasPrefix(v, "-") && len(v) > 1:
		cluster:
			for j := 1; j < len(v); j++ {
				k, ok := commitShortOptions[v[j]]
				if !ok {
					continue
				}
				apply(k)
				switch k {
				case optArg:
					if j == len(v)-1 {
						i++ // the argument is the next word
					}
					break cluster
				case optOptionalArg:
					break cluster
				}
			}
		default:
			c.Pathspecs = true
		}
	}
	return c
}

// longOption returns what --name means: the option itself, its negation,
// or every option an abbreviation could stand for.
func longOption(name string) []optKind {
	if k, ok := commitLongOptions[name]; ok {
		return []optKind{k}
	}
	if base, ok := strings.CutPrefix(name, "no-"); ok {
		if _, ok := commitLongOptions[base]; ok {
			return []optKind{optPlain} // --no-all, --no-amend, ...: off
		}
	}
	if name == "" {
		return nil
	}
	var kinds []optKind
	for opt, k := range commitLongOptions {
		if strings.HasPrefix(opt, name) || strings.HasPrefix("no-"+opt, name) && !strings.HasPrefix(opt, "no-") {
			if strings.HasPrefix("no-"+opt, name) && !strings.HasPrefix(opt, name) {
				k = optPlain // an abbreviated negation turns the option off
			}
			kinds = append(kinds, k)
		}
	}
	return kinds
}
