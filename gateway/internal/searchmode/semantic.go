package searchmode

import (
	"cmp"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/grpc-mcp-gateway/gateway/internal/search"
	"github.com/grpc-mcp-gateway/gateway/internal/search/embeddings"
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

// Timings of the semantic reranking.
const (
	// queryEmbedTimeout bounds the embedding of one query: past it the
	// query is answered lexically.
	queryEmbedTimeout = 2 * time.Second
	// semanticRetry is how long a failed catalog embedding waits before
	// it is tried again (sooner when the catalog changes).
	semanticRetry = time.Minute
	// queryEntryOverhead is what a query vector kept costs beyond its
	// text and its numbers: the map entry and the two slice headers.
	queryEntryOverhead = 64
	// semanticDepth is how many matches of each ranking are fused.
	semanticDepth = 50
	// maxEmbedText bounds the text of a tool that is embedded, in bytes.
	maxEmbedText = 2000
)

// DefaultPause is how long queries are answered lexically, without
// asking the endpoint, after a query's embedding failed: a down or slow
// endpoint then costs one query in this long queryEmbedTimeout, not
// every query.
const DefaultPause = 30 * time.Second

// SemanticOptions configure a Semantic.
type SemanticOptions struct {
	// Client is the embeddings endpoint's client.
	Client *embeddings.Client
	// Logger gets the endpoint's failures and recoveries, once each.
	Logger *slog.Logger
	// MaxVectorBytes bounds the tools' vectors kept, 4 bytes a
	// dimension; MaxQueryBytes the query vectors kept (each query's
	// text, its vector and queryEntryOverhead). Both are resolved: the
	// gateway's options apply their defaults.
	MaxVectorBytes, MaxQueryBytes int64
	// Pause is how long queries skip the endpoint after one failed
	// (DefaultPause; tests shorten it).
	Pause time.Duration
}

// Semantic is the reranking's state: the client, the vectors kept, and
// whether the endpoint is failing. One serves every catalog of a
// gateway (the whole catalog's and the search-mode toolsets').
type Semantic struct {
	client *embeddings.Client
	logger *slog.Logger
	pause  time.Duration
	// wake is signalled when a catalog is swapped in.
	wake chan struct{}

	// maxVectorBytes and maxQueryBytes are SemanticOptions'
	// MaxVectorBytes and MaxQueryBytes.
	maxVectorBytes, maxQueryBytes int64

	mu      sync.Mutex
	vectors map[[32]byte][]float32 // by the hash of a tool's text
	queries map[string][]float32
	// vectorBytes and queryBytes are what vectors and queries hold, as
	// the caps count it.
	vectorBytes, queryBytes int64
	failing                 bool
	// pausedUntil is when queries may be embedded again after a failure.
	pausedUntil time.Time
}

// NewSemantic returns the reranking of o's endpoint; Run embeds the
// catalogs.
func NewSemantic(o SemanticOptions) *Semantic {
	return &Semantic{client: o.Client, logger: o.Logger, pause: o.Pause, wake: make(chan struct{}, 1),
		maxVectorBytes: o.MaxVectorBytes, maxQueryBytes: o.MaxQueryBytes,
		vectors: map[[32]byte][]float32{}, queries: map[string][]float32{}}
}

// errVectorCap is a catalog whose vectors would take more than
// MaxVectorBytes: trying again cannot help until the catalog changes. It
// names the gateway's option that sets the cap, which the operator
// raises.
var errVectorCap = errors.New("over Options.Search.Embeddings.MaxVectorBytes")

// vectorBytes is what a vector of dim dimensions costs, as the caps
// count it.
func vectorBytes(dim int) int64 { return 4 * int64(dim) }

// clearVectors forgets every vector kept; s.mu is held.
func (s *Semantic) clearVectors() {
	clear(s.vectors)
	clear(s.queries)
	s.vectorBytes, s.queryBytes = 0, 0
}

// Kick tells Run that a catalog was swapped in.
func (s *Semantic) Kick() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// Run embeds each search catalog swapped in (the whole catalog's and the
// search-mode toolsets', which current returns; Kick says when), until
// ctx ends. A toolset's tools are the catalog's, so once the catalog is
// embedded its toolsets cost no request.
func (s *Semantic) Run(ctx context.Context, current func() []*Catalog) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.wake:
		}
		for sc := unembedded(current()); sc != nil; sc = unembedded(current()) {
			// The vectors of catalogs gone count against no cap.
			s.prune(current())
			err := s.embedCatalog(ctx, sc)
			if err == nil {
				s.recovered()
				s.prune(current())
				continue // the catalog may have changed meanwhile
			}
			if ctx.Err() != nil {
				return
			}
			if errors.Is(err, errVectorCap) {
				// Only another catalog can fit: wait for one.
				s.logger.Error("search embeddings: the catalog's vectors do not fit; search_tools ranks lexically", "err", err.Error())
				select {
				case <-ctx.Done():
					return
				case <-s.wake:
				}
				continue
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

// unembedded is the first of scs without vectors, nil when all have them.
func unembedded(scs []*Catalog) *Catalog {
	for _, sc := range scs {
		if sc.vectors.Load() == nil {
			return sc
		}
	}
	return nil
}

// prune drops the kept vectors no tool of scs has, so the cache holds the
// current catalogs' and no more.
func (s *Semantic) prune(scs []*Catalog) {
	keep := make(map[[32]byte]bool)
	for _, sc := range scs {
		for _, t := range sc.tools {
			keep[s.key(embedText(t))] = true
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for k, v := range s.vectors {
		if !keep[k] {
			delete(s.vectors, k)
			s.vectorBytes -= vectorBytes(len(v))
		}
	}
}

// key is the cache key of a text's vector: the model and the text.
func (s *Semantic) key(text string) [32]byte {
	return sha256.Sum256([]byte(s.client.Model() + "\x00" + text))
}

// embedText is what is embedded of a tool: its name, title and
// description, cut on a character boundary.
func embedText(t Tool) string {
	def := t.Def()
	text := def.Name + ": " + def.Title + ". " + def.Description
	if len(text) > maxEmbedText {
		cut := maxEmbedText
		for cut > 0 && !utf8.RuneStart(text[cut]) {
			cut--
		}
		text = text[:cut]
	}
	return text
}

// embedCatalog gives every tool of sc its vector, embedding only the
// texts not embedded before, one batch at a time: a batch embedded is
// kept even when a later one fails, so the next try resumes. A batch the
// endpoint rejects for what it holds (a text too long for the model) is
// skipped, its tools left to the lexical ranking, unless the endpoint
// refuses everything (a wrong model name): when nothing was embedded yet,
// a short text is tried, and its refusal fails the pass. When the
// endpoint's vectors change dimension (its model was replaced under the
// same name), everything is embedded again, once: an endpoint whose
// answers keep changing dimension fails the pass.
func (s *Semantic) embedCatalog(ctx context.Context, sc *Catalog) error {
	return s.embedPass(ctx, sc, true)
}

func (s *Semantic) embedPass(ctx context.Context, sc *Catalog, again bool) error {
	keys := make([][32]byte, len(sc.tools))
	var missing []string
	var at []int
	s.mu.Lock()
	for i, t := range sc.tools {
		text := embedText(t)
		keys[i] = s.key(text)
		if s.vectors[keys[i]] == nil {
			missing = append(missing, text)
			at = append(at, i)
		}
	}
	s.mu.Unlock()
	var rejected []string
	var firstErr error
	accepting := false // whether the endpoint was seen to embed anything
	for start := 0; start < len(missing); start += s.client.BatchSize() {
		end := min(start+s.client.BatchSize(), len(missing))
		fresh, err := s.client.Embed(ctx, missing[start:end])
		if err == nil {
			err = s.fits(len(missing)-start, len(sc.tools), fresh)
		}
		if err != nil {
			var se *embeddings.StatusError
			if !errors.As(err, &se) || !se.Rejected() {
				return fmt.Errorf("embedding the tools' texts (%d of %d left): %w", len(missing)-start, len(sc.tools), err)
			}
			if !accepting {
				if accepting = s.acceptsAny(ctx, sc); !accepting {
					return fmt.Errorf("embedding the tools' texts: even a tool's name is refused: %w", err)
				}
			}
			for _, i := range at[start:end] {
				rejected = append(rejected, sc.tools[i].Def().Name)
			}
			firstErr = cmp.Or(firstErr, err)
			continue
		}
		s.mu.Lock()
		for j, i := range at[start:end] {
			if old, ok := s.vectors[keys[i]]; ok {
				s.vectorBytes -= vectorBytes(len(old))
			}
			s.vectors[keys[i]] = fresh[j]
			s.vectorBytes += vectorBytes(len(fresh[j]))
		}
		s.mu.Unlock()
	}
	s.mu.Lock()
	all := make([][]float32, len(sc.tools))
	dim := 0
	for i, k := range keys {
		if v := s.vectors[k]; v != nil {
			all[i] = v
			if dim == 0 {
				dim = len(v)
			} else if len(v) != dim {
				s.clearVectors()
				s.mu.Unlock()
				if !again {
					return fmt.Errorf("the endpoint answers vectors of %d and of %d dimensions", dim, len(v))
				}
				s.logger.Warn("search embeddings changed dimension; embedding the catalog again", "from", dim, "to", len(v), "model", s.client.Model())
				return s.embedPass(ctx, sc, false)
			}
		}
	}
	s.mu.Unlock()
	if dim == 0 && len(sc.tools) > 0 {
		return fmt.Errorf("every text of the catalog was rejected: %w", firstErr)
	}
	for i := range all {
		if all[i] == nil { // rejected
			all[i] = make([]float32, dim) // matches nothing
		}
	}
	v, err := search.NewVectors(all)
	if err != nil {
		return err
	}
	sc.vectors.Store(v)
	if len(rejected) > 0 {
		s.logger.Warn("search embeddings rejected some tools' texts; they are ranked lexically", "tools", len(rejected),
			"first", rejected[0], "err", firstErr.Error())
	}
	s.logger.Info("search embeddings ready", "tools", len(sc.tools), "embedded", len(missing)-len(rejected), "model", s.client.Model())
	return nil
}

// fits checks, with the first batch of a pass's vectors in hand (fresh),
// that the left texts still to be kept (fresh's among them) fit in
// MaxVectorBytes beside the vectors kept, before more of them are asked
// for: a catalog that cannot fit costs the endpoint one batch.
func (s *Semantic) fits(left, tools int, fresh [][]float32) error {
	if len(fresh) == 0 {
		return nil
	}
	dim := len(fresh[0])
	s.mu.Lock()
	need := s.vectorBytes + int64(left)*vectorBytes(dim)
	s.mu.Unlock()
	if need <= s.maxVectorBytes {
		return nil
	}
	return fmt.Errorf("the tools' vectors would take %d bytes (%d tools of %d dimensions, 4 bytes each), %w (%d): raise it, or use a model of fewer dimensions",
		need, tools, dim, errVectorCap, s.maxVectorBytes)
}

// acceptsAny reports whether the endpoint embeds anything: some text was
// embedded before, or the first tool's name is embedded now.
func (s *Semantic) acceptsAny(ctx context.Context, sc *Catalog) bool {
	s.mu.Lock()
	some := len(s.vectors) > 0
	s.mu.Unlock()
	if some {
		return true
	}
	_, err := s.client.Embed(ctx, []string{sc.tools[0].Def().Name})
	return err == nil
}

// ready reports whether a query on sc would be ranked with embeddings:
// the catalog has its vectors and queries are not paused.
func (s *Semantic) ready(sc *Catalog) bool {
	if sc.vectors.Load() == nil {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return !time.Now().Before(s.pausedUntil)
}

// queryVector embeds a query, or returns its kept vector.
func (s *Semantic) queryVector(ctx context.Context, query string) ([]float32, error) {
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
	size := int64(len(query)) + vectorBytes(len(vs[0])) + queryEntryOverhead
	s.mu.Lock()
	if _, kept := s.queries[query]; !kept && size <= s.maxQueryBytes {
		if s.queryBytes+size > s.maxQueryBytes {
			clear(s.queries)
			s.queryBytes = 0
		}
		s.queries[query] = vs[0]
		s.queryBytes += size
	}
	s.mu.Unlock()
	return vs[0], nil
}

// failed logs the first failure of a run of them.
func (s *Semantic) failed(err error) {
	s.mu.Lock()
	first := !s.failing
	s.failing = true
	s.mu.Unlock()
	if first {
		s.logger.Warn("search embeddings failing; search_tools ranks lexically until they work again", "err", err.Error())
	}
}

// recovered logs the end of a run of failures.
func (s *Semantic) recovered() {
	s.mu.Lock()
	was := s.failing
	s.failing = false
	s.mu.Unlock()
	if was {
		s.logger.Info("search embeddings working again")
	}
}

// rank is search_tools' ranking with the semantic half: the lexical and
// the semantic matches fused. It returns nil, false when the query is
// better ranked lexically (it names a tool exactly, or the endpoint
// cannot embed it); the caller ranks lexically then.
func (s *Semantic) rank(ctx context.Context, sc *Catalog, query string, limit int, keep func(int) bool) ([]search.Hit, bool) {
	vs := sc.vectors.Load()
	if vs == nil || sc.index.Exact(query) >= 0 {
		// A name needs no model: the lexical ranking puts its tool first
		// and its neighbours after it.
		return nil, false
	}
	q, err := s.queryVector(ctx, query)
	if err != nil {
		var se *embeddings.StatusError
		switch {
		case ctx.Err() != nil:
			// The client went away; the endpoint is not to blame.
		case errors.As(err, &se) && se.Rejected():
			// This query alone is refused (too long for the model?).
			s.logger.Debug("search embeddings rejected a query; ranked lexically", "err", err.Error())
		default:
			s.mu.Lock()
			s.pausedUntil = time.Now().Add(s.pause)
			s.mu.Unlock()
			s.failed(err)
		}
		return nil, false
	}
	if len(q) != vs.Dim() {
		// The model behind the endpoint changed: the catalog's vectors
		// are of the old one. Embed it again; rank lexically meanwhile.
		s.mu.Lock()
		s.clearVectors()
		s.mu.Unlock()
		sc.vectors.CompareAndSwap(vs, nil)
		s.Kick()
		return nil, false
	}
	s.recovered()
	lexical := sc.index.SearchWithin(query, semanticDepth, keep)
	return search.Fuse(limit, lexical, vs.Nearest(q, semanticDepth, keep)), true
}
