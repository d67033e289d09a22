package search_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/grpc-mcp-gateway/gateway/internal/search"
)

// looseAPI is a catalog of three APIs whose words a request may miss: an
// authorization API, a container runtime's images and a store's
// snapshots.
var looseAPI = []struct {
	name, kind, group string
	readOnly          bool
	desc, fields      string
}{
	{"Permissions_Check", "", "authz", true, "Checks whether a user has a relation to an object.", "user relation object"},
	{"Permissions_WriteTuples", "", "authz", false, "Writes relationship tuples.", "writes deletes"},
	{"Images_ImageStatus", search.KindGet, "runtime", true, "Returns the status of an image: its presence and size.", "image"},
	{"Images_PullImage", "", "runtime", false, "Pulls an image from a registry.", "image auth"},
	{"Images_RemoveImage", search.KindDelete, "runtime", false, "Removes an image.", "image"},
	{"Snapshots_View", search.KindGet, "store", true, "Mounts a read-only snapshot.", "key parent"},
	{"Snapshots_List", search.KindList, "store", true, "Lists the snapshots.", "filters"},
}

func looseIndex() *search.Index {
	docs := make([]search.Document, len(looseAPI))
	for i, d := range looseAPI {
		_, method, _ := strings.Cut(d.name, "_")
		docs[i] = search.Document{Key: d.name, Action: search.Tokens(method)[0], Kind: d.kind, ReadOnly: d.readOnly, Group: d.group,
			Fields: []search.Field{{Text: method, Weight: 3, Pairs: true}, {Text: d.desc, Weight: 1}, {Text: d.fields, Weight: 0.5}}}
	}
	return search.New(docs)
}

func looseNames(hits []search.Hit) []string {
	var out []string
	for _, h := range hits {
		out = append(out, looseAPI[h.Doc].name)
	}
	return out
}

// TestSearchLoose: a request whose words match no document the normal way
// still gets documents, flagged loose, ranked by the weaker evidence: the
// words of its values, a stem it shares with a document, what a
// yes-or-no question asks, and at last the kind it asks for.
func TestSearchLoose(t *testing.T) {
	ix := looseIndex()
	for _, tc := range []struct{ why, query, want string }{
		{"whether someone may: a check, not the verb asked about", "can user:anne peruse document:budget?", "Permissions_Check"},
		{"a value written as an image, a question of presence", "is docker.io/library/redis:7 already present here, and how big is it?", "Images_ImageStatus"},
		{"a stem shared with a description's word", "present", "Images_ImageStatus"},
		{"a value's word", "what about relation:owner?", "Permissions_Check"},
	} {
		if hits := ix.Search(tc.query, 5); len(hits) != 0 {
			t.Fatalf("%s: %q: Search found %v; the case needs a query it misses", tc.why, tc.query, looseNames(hits))
		}
		hits, loose := ix.SearchLoose(tc.query, 5, nil)
		if got := looseNames(hits); !loose || len(got) == 0 || got[0] != tc.want {
			t.Errorf("%s: %q: %v (loose %v), want %s first, loose", tc.why, tc.query, got, loose, tc.want)
		}
	}
}

// TestSearchLooseCatalog: a request no word of which any document has
// gets the catalog's documents, ranked by the kind it asks for, one of
// each group first; within a filter, only that filter's; and nothing
// only when the filter keeps no document.
func TestSearchLooseCatalog(t *testing.T) {
	ix := looseIndex()
	hits, loose := ix.SearchLoose("xylophone", 5, nil)
	if !loose || len(hits) != 5 {
		t.Fatalf("xylophone: %v (loose %v), want 5 loose hits", looseNames(hits), loose)
	}
	groups := map[string]bool{}
	for i, h := range hits[:3] {
		groups[looseAPI[h.Doc].group] = true
		if i > 0 && h.Score > hits[i-1].Score {
			t.Errorf("not best first: %v", hits)
		}
	}
	if len(groups) != 3 {
		t.Errorf("xylophone: the first three are of %d groups, want one of each: %v", len(groups), looseNames(hits))
	}
	// A question reads: the catalog's reads come first.
	hits, _ = ix.SearchLoose("is the xylophone tuned?", 3, nil)
	for _, h := range hits {
		if !looseAPI[h.Doc].readOnly {
			t.Errorf("a question: %v, want reads first", looseNames(hits))
			break
		}
	}
	runtime := func(d int) bool { return looseAPI[d].group == "runtime" }
	hits, loose = ix.SearchLoose("xylophone", 5, runtime)
	if !loose || len(hits) != 3 {
		t.Errorf("within runtime: %v (loose %v), want its 3 documents", looseNames(hits), loose)
	}
	for _, h := range hits {
		if !runtime(h.Doc) {
			t.Errorf("within runtime: %v", looseNames(hits))
		}
	}
	if hits, loose := ix.SearchLoose("xylophone", 5, func(int) bool { return false }); hits != nil || loose {
		t.Errorf("nothing kept: %v (loose %v), want none", hits, loose)
	}
	if hits, loose := search.New(nil).SearchLoose("anything", 5, nil); hits != nil || loose {
		t.Errorf("empty index: %v (loose %v)", hits, loose)
	}
	if hits, loose := ix.SearchLoose("xylophone", 0, nil); hits != nil || loose {
		t.Errorf("limit 0: %v (loose %v)", hits, loose)
	}
}

// TestSearchLooseMatching: a query that matches answers what
// SearchWithin does, not loose, and costs no more allocations.
func TestSearchLooseMatching(t *testing.T) {
	ix := looseIndex()
	const q = "pull the redis image"
	want := ix.SearchWithin(q, 5, nil)
	hits, loose := ix.SearchLoose(q, 5, nil)
	if loose || len(hits) == 0 || len(hits) != len(want) {
		t.Fatalf("%q: %v (loose %v), want %v", q, looseNames(hits), loose, looseNames(want))
	}
	for i := range hits {
		if hits[i] != want[i] {
			t.Fatalf("%q: %v, want %v", q, hits, want)
		}
	}
	if raceEnabled {
		return
	}
	strict := testing.AllocsPerRun(100, func() { ix.SearchWithin(q, 5, nil) })
	withLoose := testing.AllocsPerRun(100, func() { ix.SearchLoose(q, 5, nil) })
	if withLoose != strict {
		t.Errorf("SearchLoose of a matching query: %.0f allocations, SearchWithin %.0f", withLoose, strict)
	}
}

// BenchmarkSearchLoose: the loose path's worst case, a request no word of
// which any document has, on a catalog of 15,000 documents in 500 groups
// (the size of the googleapis catalog): every document is ranked.
func BenchmarkSearchLoose(b *testing.B) {
	kinds := []string{search.KindList, search.KindGet, search.KindCreate, search.KindUpdate, search.KindDelete, ""}
	nouns := []string{"instance", "disk", "topic", "bucket", "workflow", "cluster", "node", "table", "key", "secret"}
	docs := make([]search.Document, 15000)
	for i := range docs {
		noun := nouns[i%len(nouns)] + strconv.Itoa(i/len(nouns)%50)
		kind := kinds[i%len(kinds)]
		docs[i] = search.Document{Key: "D" + strconv.Itoa(i), Kind: kind, ReadOnly: kind == search.KindList || kind == search.KindGet,
			Group: "api" + strconv.Itoa(i%500), Target: noun,
			Fields: []search.Field{{Text: kind + " " + noun, Weight: 3}, {Text: "Does " + kind + " to a " + noun + " of a project.", Weight: 1}}}
	}
	ix := search.New(docs)
	for _, q := range []string{"xylophone", "can user:anne view document:budget?"} {
		b.Run(q, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if hits, loose := ix.SearchLoose(q, 5, nil); len(hits) != 5 || !loose {
					b.Fatalf("%q: %v (loose %v)", q, hits, loose)
				}
			}
		})
	}
}
