package gateway

import (
	"context"
	"crypto/sha256"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/grpc-mcp-gateway/gateway/gateway/search"
	"github.com/grpc-mcp-gateway/gateway/gateway/search/embeddings"
)

// Semantic reranking of search mode (optional).
//
// An operator who runs an embedding model can have search_tools fuse its
// lexical ranking with the model's: the tools' texts are embedded once per
// catalog version, in the background (a vector is kept by the text's hash,
// so a refresh that changes a few tools embeds those few), and each query
// is embedded when it is asked (cached). Until the catalog's vectors are
// ready, and whenever the endpoint fails, search is lexical alone; a
// failure is logged once, and its end once, not on every query.

// SearchEmbeddings configures the semantic reranking of search mode: an
// OpenAI-compatible embeddings endpoint (see package embeddings).
type SearchEmbeddings struct {
	// URL is the endpoint (https, or http to a loopback host), e.g.
	// https://api.openai.com/v1/embeddings.
	URL string
	// Model is the model name the endpoint serves; required.
	Model string
	// APIKey, when set, is sent as a bearer token.
	APIKey string
	// HTTPClient makes the requests; nil means a client of the
	// embeddings package's own.
	HTTPClient *http.Client
}

// Timings of the semantic reranking.
const (
	// queryEmbedTimeout bounds the embedding of one query: past it the
	// query is answered lexically.
	queryEmbedTimeout = 2 * time.Second
	// semanticRetry is how long a failed catalog embedding waits before
	// it is tried again (sooner when the catalog changes).
	semanticRetry = time.Minute
	// maxQueryVectors bounds the query vectors kept.
	maxQueryVectors = 4096
	// semanticDepth is how many matches of each ranking are fused.
	semanticDepth = 50
	// maxEmbedText bounds the text of a tool that is embedded.
	maxEmbedText = 2000
)

// semantic is the reranking's state: the client, the vectors kept, and
// whether the endpoint is failing.
type semantic struct {
	client *embeddings.Client
	logger *slog.Logger
	// wake is signalled when a catalog is swapped in.
	wake chan struct{}

	mu      sync.Mutex
	vectors map[[32]byte][]float32 // by the hash of a tool's text
	queries map[string][]float32
	failing bool
}

func newSemantic(o *SearchEmbeddings, logger *slog.Logger) (*semantic, error) {
	c, err := embeddings.New(embeddings.Options{URL: o.URL, Model: o.Model, APIKey: o.APIKey, HTTPClient: o.HTTPClient})
	if err != nil {
		return nil, fmt.Errorf("gateway: Options.SearchEmbeddings: %w", err)
	}
	return &semantic{client: c, logger: logger, wake: make(chan struct{}, 1),
		vectors: map[[32]byte][]float32{}, queries: map[string][]float32{}}, nil
}

// kick tells the background loop that a catalog was swapped in.
func (s *semantic) kick() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// run embeds each search catalog swapped in, until ctx ends.
func (s *semantic) run(ctx context.Context, current func() *searchCatalog) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.wake:
		}
		for sc := current(); sc != nil && sc.vectors.Load() == nil; sc = current() {
			err := s.embedCatalog(ctx, sc)
			if err == nil {
				s.recovered()
				break
			}
			if ctx.Err() != nil {
				return
			}
			s.failed(err)
			t := time.NewTimer(semanticRetry)
			select {
			case <-ctx.Done():
				t.Stop()
				return
			case <-s.wake:
			case <-t.C:
			}
			t.Stop()
		}
	}
}

// embedText is what is embedded of a tool: its name, title and
// description.
func embedText(t *tool) string {
	text := t.def.Name + ": " + t.def.Title + ". " + t.def.Description
	if len(text) > maxEmbedText {
		text = text[:maxEmbedText]
	}
	return text
}

// embedCatalog gives every tool of sc its vector, embedding only the
// texts not embedded before, and keeps only the current tools' vectors.
func (s *semantic) embedCatalog(ctx context.Context, sc *searchCatalog) error {
	keys := make([][32]byte, len(sc.tools))
	var missing []string
	var at []int
	s.mu.Lock()
	for i, t := range sc.tools {
		text := embedText(t)
		keys[i] = sha256.Sum256([]byte(s.client.Model() + "\x00" + text))
		if s.vectors[keys[i]] == nil {
			missing = append(missing, text)
			at = append(at, i)
		}
	}
	s.mu.Unlock()
	var fresh [][]float32
	if len(missing) > 0 {
		var err error
		if fresh, err = s.client.Embed(ctx, missing); err != nil {
			return fmt.Errorf("embedding %d tools: %w", len(missing), err)
		}
	}
	s.mu.Lock()
	for j, i := range at {
		s.vectors[keys[i]] = fresh[j]
	}
	all := make([][]float32, len(sc.tools))
	keep := make(map[[32]byte][]float32, len(keys))
	for i, k := range keys {
		all[i] = s.vectors[k]
		keep[k] = all[i]
	}
	s.vectors = keep
	s.mu.Unlock()
	v, err := search.NewVectors(all)
	if err != nil {
		return err
	}
	sc.vectors.Store(v)
	s.logger.Info("search embeddings ready", "tools", len(sc.tools), "embedded", len(missing), "model", s.client.Model())
	return nil
}

// queryVector embeds a query, or returns its kept vector.
func (s *semantic) queryVector(ctx context.Context, query string) ([]float32, error) {
	s.mu.Lock()
	v, ok := s.queries[query]
	s.mu.Unlock()
	if ok {
		return v, nil
	}
	ctx, cancel := context.WithTimeout(ctx, queryEmbedTimeout)
	defer cancel()
	vs, err := s.client.Embed(ctx, []string{query})
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	if len(s.queries) >= maxQueryVectors {
		clear(s.queries)
	}
	s.queries[query] = vs[0]
	s.mu.Unlock()
	return vs[0], nil
}

// failed logs the first failure of a run of them.
func (s *semantic) failed(err error) {
	s.mu.Lock()
	first := !s.failing
	s.failing = true
	s.mu.Unlock()
	if first {
		s.logger.Warn("search embeddings failing; search_tools ranks lexically until they work again", "err", err.Error())
	}
}

// recovered logs the end of a run of failures.
func (s *semantic) recovered() {
	s.mu.Lock()
	was := s.failing
	s.failing = false
	s.mu.Unlock()
	if was {
		s.logger.Info("search embeddings working again")
	}
}

// rank is search_tools' ranking with the semantic half: the lexical and
// the semantic matches fused, a tool named exactly by the query first.
// It returns nil, false when there are no vectors for this catalog yet
// or the query cannot be embedded; the caller ranks lexically then.
func (s *semantic) rank(ctx context.Context, sc *searchCatalog, query string, limit int, keep func(int) bool) ([]search.Hit, bool) {
	vs := sc.vectors.Load()
	if vs == nil {
		return nil, false
	}
	q, err := s.queryVector(ctx, query)
	if err != nil {
		if ctx.Err() == nil {
			s.failed(err)
		}
		return nil, false
	}
	s.recovered()
	lexical := sc.index.SearchWithin(query, semanticDepth, keep)
	hits := search.Fuse(limit, lexical, vs.Nearest(q, semanticDepth, keep))
	if exact := sc.index.Exact(query); exact >= 0 && (keep == nil || keep(exact)) {
		hits = append([]search.Hit{{Doc: exact}}, removeDoc(hits, exact)...)
		hits = hits[:min(limit, len(hits))]
	}
	return hits, true
}

func removeDoc(hits []search.Hit, doc int) []search.Hit {
	out := hits[:0:0]
	for _, h := range hits {
		if h.Doc != doc {
			out = append(out, h)
		}
	}
	return out
}
