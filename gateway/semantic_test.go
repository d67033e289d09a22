package gateway_test

import (
	"context"
	"encoding/json"
	"hash/fnv"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unicode"

	"github.com/grpc-mcp-gateway/gateway/gateway"
)

// conceptServer is a small embedding model for tests: an OpenAI-compatible
// /v1/embeddings endpoint whose vector for a text counts the words of a
// few concepts (a word and its synonyms share a dimension) and hashes the
// other words into dimensions of their own at a low weight. It is not a
// good model; it is one whose answers a test can predict, so the plumbing
// (catalog vectors, query vectors, fusion, failures) is what is tested.
type conceptServer struct {
	*httptest.Server
	fail     atomic.Bool
	requests atomic.Int32
	texts    atomic.Int32
	// reject, when set, refuses (400) a request holding a text with it.
	reject atomic.Pointer[string]
	// extra adds a dimension to every vector: the model was replaced.
	extra atomic.Bool
	// pad adds that many dimensions (zeros) to every vector.
	pad atomic.Int32
}

var concepts = [][]string{
	{"pet", "animal", "creature", "beast"},
	{"keeper", "caretaker", "staff", "zookeeper"},
	{"enclosure", "cage", "habitat", "pen", "paddock"},
	{"feed", "feeding", "meal", "food", "dinner"},
}

const hashedDims = 16

func conceptVector(text string) []float64 {
	v := make([]float64, len(concepts)+hashedDims)
	for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return !unicode.IsLetter(r) }) {
		w = strings.TrimSuffix(w, "s")
		found := false
		for i, c := range concepts {
			if slices.Contains(c, w) {
				v[i]++
				found = true
			}
		}
		if !found {
			h := fnv.New32a()
			h.Write([]byte(w))
			v[len(concepts)+int(h.Sum32()%hashedDims)] += 0.05
		}
	}
	return v
}

func newConceptServer(t *testing.T) *conceptServer {
	t.Helper()
	s := &conceptServer{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.requests.Add(1)
		if s.fail.Load() {
			http.Error(w, "model overloaded", http.StatusServiceUnavailable)
			return
		}
		var req struct {
			Model string   `json:"model"`
			Input []string `json:"input"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.Model != "concepts" {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		if mark := s.reject.Load(); mark != nil && slices.ContainsFunc(req.Input, func(in string) bool { return strings.Contains(in, *mark) }) {
			http.Error(w, "input too long for this model", http.StatusBadRequest)
			return
		}
		s.texts.Add(int32(len(req.Input)))
		type item struct {
			Index     int       `json:"index"`
			Embedding []float64 `json:"embedding"`
		}
		var data []item
		for i, in := range req.Input {
			v := conceptVector(in)
			if s.extra.Load() {
				v = append(v, 0.01)
			}
			v = append(v, make([]float64, s.pad.Load())...)
			data = append(data, item{i, v})
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"data": data})
	}))
	t.Cleanup(s.Close)
	return s
}

// logWatch is a slog handler that keeps the messages logged and signals
// each on a channel, so a test waits on what the gateway says it did.
type logWatch struct {
	mu   sync.Mutex
	msgs []string
	// errs are the records' "err" attributes, in order.
	errs []string
	seen chan string
}

func newLogWatch() *logWatch { return &logWatch{seen: make(chan string, 64)} }

func (l *logWatch) Enabled(context.Context, slog.Level) bool { return true }
func (l *logWatch) WithAttrs([]slog.Attr) slog.Handler       { return l }
func (l *logWatch) WithGroup(string) slog.Handler            { return l }
func (l *logWatch) Handle(_ context.Context, r slog.Record) error {
	l.mu.Lock()
	l.msgs = append(l.msgs, r.Message)
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "err" {
			l.errs = append(l.errs, a.Value.String())
		}
		return true
	})
	l.mu.Unlock()
	select {
	case l.seen <- r.Message:
	default:
	}
	return nil
}

func (l *logWatch) count(msg string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, m := range l.msgs {
		if m == msg {
			n++
		}
	}
	return n
}

// waitFor returns once msg is logged (it may have been already).
func (l *logWatch) waitFor(t *testing.T, msg string) {
	t.Helper()
	timeout := time.After(20 * time.Second)
	for l.count(msg) == 0 {
		select {
		case <-l.seen:
		case <-timeout:
			t.Fatalf("%q was not logged", msg)
		}
	}
}

// TestSearchEmbeddings: with an embedding endpoint, search_tools finds
// what the words of a request do not say but the model understands; an
// exact name still comes first; the catalog is embedded once; when the
// endpoint fails, search answers lexically and the failure is logged
// once, and its end once.
func TestSearchEmbeddings(t *testing.T) {
	defer gateway.SetSemanticPause(0)()
	model := newConceptServer(t)
	logs := newLogWatch()
	_, _, url := startGateway(t, &gateway.Options{Search: gateway.SearchOptions{
		ToolMode:   gateway.ToolModeSearch,
		Embeddings: &gateway.SearchEmbeddings{URL: model.URL + "/v1/embeddings", Model: "concepts"},
	}, Logger: slog.New(logs),
	})
	_, _, lexicalURL := startGateway(t, searchMode)
	logs.waitFor(t, "search embeddings ready")
	cs, lexical := connect(t, url, "2025-11-25"), connect(t, lexicalURL, "2025-11-25")

	// No tool of the zoo says "paddock" or "cage": only the model knows
	// they are enclosures. (The lexical answer is loose matches, its note
	// says: the catalog's tools, by the kind of request.)
	if got, note, _ := searchAnswer(t, lexical, map[string]any{"query": "paddocks"}); !strings.Contains(note, "matched no tool closely") {
		t.Fatalf("the lexical ranking alone matched paddocks (%v, note %q): the test needs a word it does not know", names(got), note)
	}
	if got, note, _ := searchAnswer(t, cs, map[string]any{"query": "paddocks"}); len(got) == 0 || got[0].Name != "ZooService_ListEnclosures" || note != "" {
		t.Errorf("with embeddings, \"paddocks\": %v, note %q; want ZooService_ListEnclosures first, no note", names(got), note)
	}
	if got := names(searchTools(t, cs, map[string]any{"query": "ZooService_GetAnimal", "limit": 3})); len(got) == 0 || got[0] != "ZooService_GetAnimal" {
		t.Errorf("exact name with embeddings: %v", got)
	}
	if n := model.texts.Load(); n != 12+1 {
		t.Errorf("the model embedded %d texts, want the 12 tools once and the query that is not a name", n)
	}

	// The endpoint fails: answers are lexical (and still answers), and
	// one warning says so however many queries fail.
	model.fail.Store(true)
	for _, q := range []string{"creatures please", "dinner time", "list the pens"} {
		res := call(t, cs, gateway.SearchToolsName, map[string]any{"query": q})
		if res.IsError {
			t.Errorf("%q while the model fails: %s", q, text(t, res))
		}
	}
	if got := names(searchTools(t, cs, map[string]any{"query": "list the enclosures"})); len(got) == 0 || got[0] != "ZooService_ListEnclosures" {
		t.Errorf("lexical answer while the model fails: %v", got)
	}
	if n := logs.count("search embeddings failing; search_tools ranks lexically until they work again"); n != 1 {
		t.Errorf("the failure was logged %d times, want once", n)
	}
	model.fail.Store(false)
	if got := names(searchTools(t, cs, map[string]any{"query": "show me the cages"})); len(got) == 0 || got[0] != "ZooService_ListEnclosures" {
		t.Errorf("after the model recovered, \"show me the cages\": %v", got)
	}
	if n := logs.count("search embeddings working again"); n != 1 {
		t.Errorf("the recovery was logged %d times, want once", n)
	}
}

// TestSearchEmbeddingsPause: after a query's embedding fails, queries are
// answered lexically without asking the endpoint for a while, so a down
// endpoint does not slow every search.
func TestSearchEmbeddingsPause(t *testing.T) {
	defer gateway.SetSemanticPause(time.Hour)()
	model := newConceptServer(t)
	logs := newLogWatch()
	_, _, url := startGateway(t, &gateway.Options{Search: gateway.SearchOptions{
		ToolMode:   gateway.ToolModeSearch,
		Embeddings: &gateway.SearchEmbeddings{URL: model.URL + "/v1/embeddings", Model: "concepts"},
	}, Logger: slog.New(logs),
	})
	logs.waitFor(t, "search embeddings ready")
	cs := connect(t, url, "2025-11-25")
	model.fail.Store(true)
	before := model.requests.Load()
	for _, q := range []string{"list the animals", "feed an animal", "list the enclosures"} {
		if got := searchTools(t, cs, map[string]any{"query": q}); len(got) == 0 {
			t.Errorf("%q while the model fails: no answer", q)
		}
	}
	if n := model.requests.Load() - before; n != 1 {
		t.Errorf("%d requests to the failing endpoint for 3 queries, want 1 (then a pause)", n)
	}
}

// TestSearchEmbeddingsRejected: texts the endpoint refuses leave their
// tools to the lexical ranking and the others are embedded; an endpoint
// that refuses everything is a failure, logged, and search is lexical.
func TestSearchEmbeddingsRejected(t *testing.T) {
	model := newConceptServer(t)
	feed := "Feed"
	model.reject.Store(&feed)
	logs := newLogWatch()
	_, _, url := startGateway(t, &gateway.Options{Search: gateway.SearchOptions{
		ToolMode:   gateway.ToolModeSearch,
		Embeddings: &gateway.SearchEmbeddings{URL: model.URL + "/v1/embeddings", Model: "concepts", BatchSize: 2},
	}, Logger: slog.New(logs),
	})
	logs.waitFor(t, "search embeddings ready")
	if logs.count("search embeddings rejected some tools' texts; they are ranked lexically") != 1 {
		t.Error("the rejected texts were not logged")
	}
	cs := connect(t, url, "2025-11-25")
	if got := names(searchTools(t, cs, map[string]any{"query": "paddocks"})); len(got) == 0 || got[0] != "ZooService_ListEnclosures" {
		t.Errorf("with some texts rejected, \"paddocks\": %v, want ZooService_ListEnclosures first", got)
	}

	refused := newConceptServer(t)
	all := ""
	refused.reject.Store(&all)
	logs = newLogWatch()
	_, _, url = startGateway(t, &gateway.Options{Search: gateway.SearchOptions{
		ToolMode:   gateway.ToolModeSearch,
		Embeddings: &gateway.SearchEmbeddings{URL: refused.URL + "/v1/embeddings", Model: "concepts"},
	}, Logger: slog.New(logs),
	})
	logs.waitFor(t, "search embeddings failing; search_tools ranks lexically until they work again")
	if got := names(searchTools(t, connect(t, url, "2025-11-25"), map[string]any{"query": "list the enclosures"})); len(got) == 0 || got[0] != "ZooService_ListEnclosures" {
		t.Errorf("lexical answer while every text is refused: %v", got)
	}
}

// TestSearchEmbeddingsDimensionChange: when the endpoint's vectors change
// dimension (another model under the same name), the catalog is embedded
// again and search uses the new vectors.
func TestSearchEmbeddingsDimensionChange(t *testing.T) {
	model := newConceptServer(t)
	logs := newLogWatch()
	_, _, url := startGateway(t, &gateway.Options{Search: gateway.SearchOptions{
		ToolMode:   gateway.ToolModeSearch,
		Embeddings: &gateway.SearchEmbeddings{URL: model.URL + "/v1/embeddings", Model: "concepts"},
	}, Logger: slog.New(logs),
	})
	logs.waitFor(t, "search embeddings ready")
	cs := connect(t, url, "2025-11-25")
	model.extra.Store(true)
	_ = searchTools(t, cs, map[string]any{"query": "paddocks"}) // finds the change
	deadline := time.After(20 * time.Second)
	for logs.count("search embeddings ready") < 2 {
		select {
		case <-logs.seen:
		case <-deadline:
			t.Fatal("the catalog was not embedded again")
		}
	}
	if n := model.texts.Load(); n != 12+1+12 {
		t.Errorf("the model embedded %d texts, want the catalog twice and the query", n)
	}
	if got := names(searchTools(t, cs, map[string]any{"query": "cages"})); len(got) == 0 || got[0] != "ZooService_ListEnclosures" {
		t.Errorf("after the change, \"cages\": %v, want ZooService_ListEnclosures first", got)
	}
}

// TestSearchEmbeddingsRefused: a configuration the client would refuse
// stops the gateway at start, naming the option.
func TestSearchEmbeddingsRefused(t *testing.T) {
	b := startBackend(t)
	for _, tc := range []struct {
		e    gateway.SearchEmbeddings
		want string
	}{
		{gateway.SearchEmbeddings{URL: "http://embed.example.com/v1/embeddings", Model: "m"}, "plain http is allowed only to a loopback host"},
		{gateway.SearchEmbeddings{URL: "https://embed.example.com/v1/embeddings"}, "embeddings model: required"},
	} {
		_, err := gateway.New(context.Background(), []gateway.Backend{dialBackend(t, "zoo", b.addr)}, &gateway.Options{Search: gateway.SearchOptions{Embeddings: &tc.e}})
		if err == nil || !strings.Contains(err.Error(), "Options.Search.Embeddings") || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want an error naming Options.Search.Embeddings and %q", tc.e, err, tc.want)
		}
	}
}

// TestSearchEmbeddingsToolset: a search-mode toolset ranks with the
// embeddings too, the whole catalog being typed (so only the toolset is
// embedded), and only among its own tools.
func TestSearchEmbeddingsToolset(t *testing.T) {
	defer gateway.SetSemanticPause(0)()
	model := newConceptServer(t)
	logs := newLogWatch()
	_, _, url := startGateway(t, &gateway.Options{Search: gateway.SearchOptions{
		ToolMode:   gateway.ToolModeTyped,
		Embeddings: &gateway.SearchEmbeddings{URL: model.URL + "/v1/embeddings", Model: "concepts"},
	}, Logger: slog.New(logs),
		FrontDoor: gateway.FrontDoorOptions{
			Toolsets: []gateway.Toolset{
				{Name: "places", Include: []string{"zoo.v1.ZooService/*Enclosure*"}, ToolMode: gateway.ToolModeSearch},
				{Name: "animals", Include: []string{"zoo.v1.ZooService/*Animal*"}, ToolMode: gateway.ToolModeSearch},
			},
		}})
	// Each toolset's index is embedded (and says so) on its own.
	timeout := time.After(20 * time.Second)
	for logs.count("search embeddings ready") < 2 {
		select {
		case <-logs.seen:
		case <-timeout:
			t.Fatalf("search embeddings ready logged %d times, want once per toolset", logs.count("search embeddings ready"))
		}
	}
	places := connect(t, url+"/places", "2025-11-25")
	if got := names(searchTools(t, places, map[string]any{"query": "paddocks"})); len(got) == 0 || got[0] != "ZooService_ListEnclosures" {
		t.Errorf("\"paddocks\" in the places toolset: %v, want ZooService_ListEnclosures first", got)
	}
	animals := connect(t, url+"/animals", "2025-11-25")
	if got := names(searchTools(t, animals, map[string]any{"query": "paddocks"})); slices.Contains(got, "ZooService_ListEnclosures") {
		t.Errorf("\"paddocks\" in the animals toolset: %v, has a tool outside it", got)
	}
}

// loggedErr reports whether an "err" attribute logged holds want.
func (l *logWatch) loggedErr(want string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.ContainsFunc(l.errs, func(e string) bool { return strings.Contains(e, want) })
}

// TestSearchEmbeddingsCaps: vectors are bounded in dimensions and bytes.
// An endpoint answering vectors over MaxDimensions (8,192 by default) is
// failing, logged naming the limit, and search ranks lexically; a catalog
// whose vectors would take more than MaxVectorBytes is refused after one
// batch, logged naming the option; and the query cache is bounded in
// bytes (MaxQueryCacheBytes), not entries: past it, a query asked again
// is embedded again.
func TestSearchEmbeddingsCaps(t *testing.T) {
	defer gateway.SetSemanticPause(0)()
	start := func(t *testing.T, model *conceptServer, e gateway.SearchEmbeddings) (*logWatch, string) {
		t.Helper()
		logs := newLogWatch()
		e.URL, e.Model = model.URL+"/v1/embeddings", "concepts"
		_, _, url := startGateway(t, &gateway.Options{Search: gateway.SearchOptions{ToolMode: gateway.ToolModeSearch, Embeddings: &e}, Logger: slog.New(logs)})
		return logs, url
	}
	t.Run("dimensions", func(t *testing.T) {
		model := newConceptServer(t)
		model.pad.Store(10_000)
		logs, url := start(t, model, gateway.SearchEmbeddings{})
		logs.waitFor(t, "search embeddings failing; search_tools ranks lexically until they work again")
		if !logs.loggedErr("dimensions for text 0, over the limit of 8192 (MaxDimensions)") {
			t.Errorf("the failure does not name the limit: %q", logs.errs)
		}
		if got := names(searchTools(t, connect(t, url, "2025-11-25"), map[string]any{"query": "list the enclosures"})); len(got) == 0 || got[0] != "ZooService_ListEnclosures" {
			t.Errorf("lexical answer while vectors are refused: %v", got)
		}
	})
	t.Run("catalog bytes", func(t *testing.T) {
		model := newConceptServer(t)
		// 12 tools of 20 dimensions take 960 bytes.
		logs, _ := start(t, model, gateway.SearchEmbeddings{BatchSize: 2, MaxVectorBytes: 500})
		logs.waitFor(t, "search embeddings: the catalog's vectors do not fit; search_tools ranks lexically")
		if !logs.loggedErr("the tools' vectors would take 960 bytes (12 tools of 20 dimensions, 4 bytes each), over Options.Search.Embeddings.MaxVectorBytes (500)") {
			t.Errorf("the refusal does not name the option: %q", logs.errs)
		}
		if n := model.requests.Load(); n != 1 {
			t.Errorf("%d requests to the endpoint for a catalog that cannot fit, want 1 batch", n)
		}
	})
	t.Run("query cache bytes", func(t *testing.T) {
		queries := []string{"paddocks", "cages", "paddocks", "cages"}
		for _, tc := range []struct {
			cache int64
			asked int32
		}{{0, 2}, {200, 4}} {
			model := newConceptServer(t)
			logs, url := start(t, model, gateway.SearchEmbeddings{MaxQueryCacheBytes: tc.cache})
			logs.waitFor(t, "search embeddings ready")
			cs := connect(t, url, "2025-11-25")
			before := model.texts.Load()
			for i, q := range queries {
				// Another limit each time: search_tools keeps its
				// answers, by query and limit, in a cache of its own.
				searchTools(t, cs, map[string]any{"query": q, "limit": 5 + i})
			}
			// A query's vector takes 8 + 80 + 64 bytes with its text: 200
			// bytes keep one.
			if n := model.texts.Load() - before; n != tc.asked {
				t.Errorf("MaxQueryCacheBytes %d: %d queries embedded for %q, want %d", tc.cache, n, queries, tc.asked)
			}
		}
	})
	t.Run("refused", func(t *testing.T) {
		b := startBackend(t)
		for _, tc := range []struct {
			e    gateway.SearchEmbeddings
			want string
		}{
			{gateway.SearchEmbeddings{MaxVectorBytes: -1}, "Options.Search.Embeddings.MaxVectorBytes: want a number of bytes, or 0 for the default"},
			{gateway.SearchEmbeddings{MaxQueryCacheBytes: -1}, "Options.Search.Embeddings.MaxQueryCacheBytes: want a number of bytes, or 0 for the default"},
			{gateway.SearchEmbeddings{MaxDimensions: 1 << 20}, "embeddings MaxDimensions: want 1 to 65536"},
		} {
			tc.e.URL, tc.e.Model = "https://embed.example.com/v1/embeddings", "m"
			if _, err := gateway.New(context.Background(), []gateway.Backend{dialBackend(t, "zoo", b.addr)}, &gateway.Options{Search: gateway.SearchOptions{Embeddings: &tc.e}}); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%+v: %v, want %q", tc.e, err, tc.want)
			}
		}
	})
}
