package search_test

import (
	"slices"
	"testing"

	"github.com/grpc-mcp-gateway/gateway/internal/search"
)

func TestVectorsNearest(t *testing.T) {
	v, err := search.NewVectors([][]float32{{1, 0}, {0, 2}, {1, 1}, {-1, 0}, {0, 0}})
	if err != nil {
		t.Fatal(err)
	}
	docs := func(hs []search.Hit) []int {
		var out []int
		for _, h := range hs {
			out = append(out, h.Doc)
		}
		return out
	}
	// Cosine, not dot product: {0, 2} is as near {0, 1} as can be; the
	// opposite and the zero vector match nothing.
	if got := docs(v.Nearest([]float32{0, 5}, 10, nil)); !slices.Equal(got, []int{1, 2}) {
		t.Errorf("nearest {0,5}: %v", got)
	}
	if got := docs(v.Nearest([]float32{3, 2.9}, 2, nil)); !slices.Equal(got, []int{2, 0}) {
		t.Errorf("nearest {3,2.9} limit 2: %v", got)
	}
	if got := docs(v.Nearest([]float32{1, 1}, 10, func(d int) bool { return d != 2 })); !slices.Equal(got, []int{0, 1}) {
		t.Errorf("nearest {1,1} without doc 2: %v", got)
	}
	if got := v.Nearest([]float32{1, 1, 1}, 10, nil); got != nil {
		t.Errorf("a query of another dimension matched %v", got)
	}
	if _, err := search.NewVectors([][]float32{{1, 0}, {1}}); err == nil {
		t.Error("vectors of two dimensions accepted")
	}
}

func TestFuse(t *testing.T) {
	lexical := []search.Hit{{Doc: 1}, {Doc: 2}, {Doc: 3}}
	semantic := []search.Hit{{Doc: 4}, {Doc: 2}, {Doc: 1}}
	var got []int
	for _, h := range search.Fuse(4, lexical, semantic) {
		got = append(got, h.Doc)
	}
	// 1 and 2 are found by both: first, 1 ahead on ties by the first
	// ranking's order; then 4 (first of one list) before 3 (third).
	if want := []int{1, 2, 4, 3}; !slices.Equal(got, want) {
		t.Errorf("fused %v, want %v", got, want)
	}
}
