//go:build race

package safewrite_test

// raceEnabled: the race detector slows the crash helper's start and writes
// tenfold; the crash test then kills fewer times.
const raceEnabled = true
