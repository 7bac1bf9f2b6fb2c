package edit

// NumberedLine is a line of the file with its 1-based line number.
type NumberedLine struct {
	Line int    `json:"line"`
	Text string `json:"text"`
}

const (
	closestContext = 2  // lines shown above and below the best guess
	closestMax     = 40 // never show more lines than this
	minAlignScore  = 4  // characters of matching lines that make a guess
	maxRepeats     = 8  // FIND lines repeated more often are ignored
)

// closest returns the lines of the file a FIND that matched nowhere was
// most likely meant to match, so the error can show a model what the file
// really says there. The guess is where the most FIND lines (weighted by
// length) occur at the same offsets; failing that, the line most similar
// to FIND's longest line.
func (t *text) closest(find []string) []NumberedLine {
	core, _, _ := trimBlankEdges(find)
	if t.len() == 0 || len(core) == 0 {
		return nil
	}
	start, ok := t.bestAlignment(core)
	if !ok {
		start = t.bestSimilar(core)
	}
	start = min(max(0, start), t.len()-1)
	from := max(0, start-closestContext)
	to := min(t.len(), start+len(core)+closestContext, from+closestMax)
	return t.numbered(from, to)
}

// bestAlignment returns the start offset at which the most FIND lines,
// weighted by their length, equal the file's lines (whitespace ignored).
// Lines that repeat within FIND (braces, "return nil") say little about
// where it belongs and would make this quadratic, so they are left out.
func (t *text) bestAlignment(core []string) (start int, ok bool) {
	t.needNorm()
	at := make(map[uint64][]int) // normalised hash -> FIND line indexes
	for j, l := range core {
		if normLen(l) > 0 {
			h := t.normHash(l)
			at[h] = append(at[h], j)
		}
	}
	// score[s+len(core)] is the score of start s, which may be negative.
	score := make([]int, t.len()+len(core))
	best, bestScore := 0, 0
	for i, h := range t.norm.hash {
		js := at[h]
		if len(js) > maxRepeats {
			continue
		}
		for _, j := range js {
			s := i - j
			score[s+len(core)] += normLen(core[j])
			if v := score[s+len(core)]; v > bestScore || (v == bestScore && s < best) {
				best, bestScore = s, v
			}
		}
	}
	return best, bestScore >= minAlignScore
}

// bestSimilar returns the start offset that puts FIND's longest line on
// the file line sharing the most character pairs with it.
func (t *text) bestSimilar(core []string) int {
	a := longest(core, normLen)
	want := newBigrams(string(appendNormalized(nil, core[a])))
	best, bestScore := 0, -1.0
	var buf []byte
	for i := range t.len() {
		buf = appendNormalized(buf[:0], t.line(i))
		if s := want.similarity(buf); s > bestScore {
			best, bestScore = i, s
		}
	}
	return best - a
}

// bigrams is the set of adjacent byte pairs of a string.
type bigrams struct {
	set [1 << 16 / 64]uint64
	n   int
}

func newBigrams(s string) *bigrams {
	b := &bigrams{}
	for i := 0; i+1 < len(s); i++ {
		k := uint16(s[i])<<8 | uint16(s[i+1])
		b.set[k/64] |= 1 << (k % 64)
		b.n++
	}
	return b
}

// similarity is the Dice coefficient of s's pairs against the set, in [0, 1].
func (b *bigrams) similarity(s []byte) float64 {
	if len(s) < 2 || b.n == 0 {
		return 0
	}
	hits := 0
	for i := 0; i+1 < len(s); i++ {
		k := uint16(s[i])<<8 | uint16(s[i+1])
		if b.set[k/64]&(1<<(k%64)) != 0 {
			hits++
		}
	}
	return min(1, 2*float64(hits)/float64(b.n+len(s)-1))
}
