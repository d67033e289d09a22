package search

import (
	"cmp"
	"fmt"
	"os"
	"slices"
)

func init() {
	want := os.Getenv("SEARCH_DEBUG")
	if want == "" {
		return
	}
	debugQuery = func(q string, p plan, hits []Hit, ix *Index) {
		if q != want {
			return
		}
		fmt.Fprintf(os.Stderr, "QUERY %q\n kinds %v\n verbs %v\n primary %v\n", q, p.kinds, p.verbs, p.primary)
		for i, g := range p.groups {
			fmt.Fprintf(os.Stderr, " group w=%.2f %v\n", p.weights[i], g)
		}
		h := slices.Clone(hits)
		slices.SortFunc(h, func(a, b Hit) int { return cmp.Compare(b.Score, a.Score) })
		for _, x := range h[:min(8, len(h))] {
			fmt.Fprintf(os.Stderr, "  %.3f doc %d action=%s col=%d target=%v group=%d\n", x.Score, x.Doc, ix.actions[x.Doc], ix.columns[x.Doc], ix.targets[x.Doc], ix.groups[x.Doc])
		}
	}
}
