// Package lazyre compiles a regular expression the first time it is used
// rather than when the program starts: every azero command pays for the
// package-level expressions of every package linked in, and most commands
// never parse a test log or a model's reply.
package lazyre

import (
	"regexp"
	"sync"
)

// New returns a function that compiles pattern on its first call and
// returns the same *regexp.Regexp on every call. It panics, on that first
// call, if pattern does not compile, as regexp.MustCompile does; a test
// that calls it once catches a bad pattern.
func New(pattern string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(pattern) })
}
