package edit

import (
	"math/rand/v2"
	"testing"
)

func TestIndexFrom(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		hs := make([]uint64, rng.IntN(12))
		for i := range hs {
			hs[i] = rng.Uint64N(3)
		}
		h, from := rng.Uint64N(3), rng.IntN(len(hs)+1)
		want := -1
		for i := from; i < len(hs); i++ {
			if hs[i] == h {
				want = i
				break
			}
		}
		if got := indexFrom(hs, h, from); got != want {
			t.Fatalf("indexFrom(%v, %d, %d) = %d, want %d", hs, h, from, got, want)
		}
	}
}
