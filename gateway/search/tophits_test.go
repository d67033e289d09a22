package search

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestTopHits: topHits gives what sorting every hit and keeping the first
// limit gives, ties (frequent: equal scores) broken by document, for
// limits on both sides of where it stops sorting everything.
func TestTopHits(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 1, 2, 7, 40, 41, 100, 1000, 5000} {
		for _, limit := range []int{1, 2, 5, 10, 50, 200, 6000} {
			hits := make([]Hit, n)
			for i := range hits {
				// Few distinct scores, so that ties decide.
				hits[i] = Hit{Doc: r.IntN(n * 2), Score: float64(r.IntN(20)) / 4}
			}
			want := slices.Clone(hits)
			slices.SortFunc(want, byRank)
			want = want[:min(limit, len(want))]
			if got := topHits(slices.Clone(hits), limit); !slices.Equal(got, want) {
				t.Errorf("n=%d limit=%d:\n got %v\nwant %v", n, limit, got, want)
			}
		}
	}
}
