package search_test

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzSearch: whatever a client sends as a query, ranking ends, never
// panics, and returns distinct documents of the index, best first.
func FuzzSearch(f *testing.F) {
	for _, q := range []string{
		"which servers do I have in eu-west-3", "get rid of the old box", `publish {"a": [1, {"b": "c"}]} to "x`,
		"spin a new server up", "before we deploy, take a snapshot", "who has access to the topic",
		"terminate every LegacySync workflow that is still running", "{{{{", `"""`, "what's the * of", "",
		"a b c d e f g h i j k l m n o p", "ÜnïcodeÖ ЖЖЖ 中文 🚀", "fine-tune re-run x-y-z-1-2", "show show show which any",
	} {
		f.Add(q)
	}
	ix := apiIndex()
	f.Fuzz(func(t *testing.T, q string) {
		if !utf8.ValidString(q) {
			return
		}
		hits := ix.Search(q, 10)
		seen := map[int]bool{}
		for i, h := range hits {
			if h.Doc < 0 || h.Doc >= ix.Len() || seen[h.Doc] {
				t.Fatalf("%q: hit %d is document %d (of %d), or a repeat", q, i, h.Doc, ix.Len())
			}
			seen[h.Doc] = true
			if i > 0 && h.Score > hits[i-1].Score {
				t.Fatalf("%q: not best first: %v", q, hits)
			}
		}
		if len(hits) > 10 {
			t.Fatalf("%q: %d hits for a limit of 10", q, len(hits))
		}
	})
}

// BenchmarkSearchLongQuery: a query of 2,000 bytes, the most search_tools
// takes (gateway.MaxSearchQueryBytes): reading a query costs time in
// proportion to its words.
func BenchmarkSearchLongQuery(b *testing.B) {
	ix := apiIndex()
	q := strings.Repeat("which servers do I have get rid of the box spin it up ", 40)[:2000]
	b.ReportAllocs()
	for b.Loop() {
		ix.Search(q, 5)
	}
}
