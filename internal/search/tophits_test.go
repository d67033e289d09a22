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

// TestSearchAfterPanickingFilter: a query whose keep panics (the caller
// recovers) leaves nothing behind for the next queries, whose per-query
// arrays come from a pool.
func TestSearchAfterPanickingFilter(t *testing.T) {
	var docs []Document
	for i, name := range []string{"CreateInstance", "DeleteInstance", "ListInstances", "CreateDisk", "ResizeDisk", "GetProject", "CreateProject", "ListDisks"} {
		docs = append(docs, Document{Key: name, Fields: []Field{{Text: name, Weight: 1}, {Text: "project instance disk " + name, Weight: 0.5}}, Group: []string{"compute", "disks", "projects"}[i%3]})
	}
	ix := New(docs)
	for _, q := range []string{"create instance project", "list disks", "delete"} {
		want := ix.Search(q, 5)
		for k := range 8 {
			func() {
				defer func() { _ = recover() }()
				calls := 0
				ix.SearchWithin(q, 5, func(int) bool {
					if calls++; calls > k {
						panic("keep")
					}
					return true
				})
			}()
			if got := ix.Search(q, 5); !slices.Equal(got, want) {
				t.Errorf("%q after a keep that panicked at call %d: %v, want %v", q, k+1, got, want)
			}
		}
	}
}
