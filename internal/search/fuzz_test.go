package search_test

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzSearch: whatever a client sends as a query, ranking ends, never
// panics, and returns distinct documents of the index, best first;
// SearchLoose returns some whatever the query.
func FuzzSearch(f *testing.F) {
	for _, q := range []string{
		"which servers do I have in eu-west-3", "get rid of the old box", `publish {"a": [1, {"b": "c"}]} to "x`,
		"spin a new server up", "before we deploy, take a snapshot", "who has access to the topic", "can user:anne view doc:x?", "is docker.io/library/redis:7 there?", "xylophone",
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
		// SearchLoose never answers empty, and is loose exactly when
		// Search found nothing.
		all, loose := ix.SearchLoose(q, 10, nil)
		if len(all) == 0 || len(all) > 10 || loose != (len(hits) == 0) {
			t.Fatalf("%q: SearchLoose %v (loose %v), Search %v", q, all, loose, hits)
		}
		seen = map[int]bool{}
		for i, h := range all {
			if h.Doc < 0 || h.Doc >= ix.Len() || seen[h.Doc] || i > 0 && h.Score > all[i-1].Score {
				t.Fatalf("%q: SearchLoose: hit %d is document %d (of %d), a repeat, or not best first: %v", q, i, h.Doc, ix.Len(), all)
			}
			seen[h.Doc] = true
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
