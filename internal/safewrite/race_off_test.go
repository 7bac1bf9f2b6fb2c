//go:build !race

package safewrite_test

const raceEnabled = false
