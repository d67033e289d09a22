// Package embeddings is a client of an OpenAI-compatible embeddings
// endpoint (POST {"model", "input": [...]} to /v1/embeddings, answered
// with {"data": [{"index", "embedding": [...]}]}), which OpenAI, vLLM,
// Ollama, llama.cpp's server, LocalAI and most hosted model services
// speak. Search mode uses it, when an operator configures one, to rerank
// its lexical matches (internal/search.Fuse); this package knows nothing
// of tools.
package embeddings

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Defaults of Options.
const (
	// DefaultMaxBatch is how many texts one request embeds.
	DefaultMaxBatch = 64
	// DefaultMaxResponseBytes bounds one response: 64 texts of 4,096
	// dimensions written as JSON numbers take about 6 MB.
	DefaultMaxResponseBytes = 32 << 20
	// DefaultTimeout bounds one request when the caller's context has
	// no earlier deadline.
	DefaultTimeout = 30 * time.Second
	// DefaultMaxDimensions bounds a vector's dimensions. Embedding models
	// answer 384 to 4,096 (OpenAI's largest 3,072); a vector of 200,000
	// would make a catalog of a few thousand tools take gigabytes.
	DefaultMaxDimensions = 8192
	// MaxDimensionsCeiling is the most Options.MaxDimensions may be: a
	// vector is counted against it before it is decoded, so an answer of
	// one huge vector allocates nothing for it.
	MaxDimensionsCeiling = 1 << 16
)

// Options configure a Client.
type Options struct {
	// URL is the embeddings endpoint, e.g.
	// https://api.openai.com/v1/embeddings or
	// http://127.0.0.1:11434/v1/embeddings. Plain http is accepted only
	// for a loopback host: requests carry what users search for.
	URL string
	// Model is the model name sent with every request; required.
	Model string
	// APIKey, when set, is sent as "Authorization: Bearer APIKey".
	APIKey string
	// HTTPClient makes the requests; nil means a client of its own.
	HTTPClient *http.Client
	// MaxBatch, MaxResponseBytes and Timeout: zero means the defaults.
	MaxBatch         int
	MaxResponseBytes int64
	Timeout          time.Duration
	// MaxDimensions bounds each vector's dimensions: an answer with a
	// longer one is an error naming the limit. Zero means
	// DefaultMaxDimensions; at most MaxDimensionsCeiling.
	MaxDimensions int
}

// Client embeds texts. It is safe for concurrent use.
type Client struct {
	url, model, key string
	// shown is the URL as errors name it: without a query, which some
	// services put a key in.
	shown    string
	http     *http.Client
	maxBatch int
	maxBytes int64
	timeout  time.Duration
	maxDims  int
}

// StatusError is an answer of the endpoint other than 200 OK.
type StatusError struct {
	// Code is the HTTP status code; Status its text.
	Code   int
	Status string
	// URL is the endpoint, without its query; Body the answer's start.
	URL, Body string
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("embeddings: %s answered %s: %.200s", e.URL, e.Status, e.Body)
}

// Rejected reports whether the endpoint refused this request for what it
// holds (a 4xx other than one about the key or the rate), so the same
// request would fail again while others may work.
func (e *StatusError) Rejected() bool {
	return e.Code >= 400 && e.Code < 500 && e.Code != http.StatusUnauthorized && e.Code != http.StatusForbidden &&
		e.Code != http.StatusTooManyRequests && e.Code != http.StatusRequestTimeout
}

// New checks o and returns a Client.
func New(o Options) (*Client, error) {
	u, err := url.Parse(o.URL)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return nil, fmt.Errorf("embeddings URL: want an http(s) URL such as https://api.openai.com/v1/embeddings, got %q", o.URL)
	}
	if u.Scheme == "http" && !loopback(u.Hostname()) {
		return nil, fmt.Errorf("embeddings URL %s: plain http is allowed only to a loopback host; use https (search queries are sent to it)", o.URL)
	}
	if u.User != nil {
		return nil, fmt.Errorf("embeddings URL %s: credentials in the URL would be logged with its errors; give the key as the API key", u.Redacted())
	}
	if strings.TrimSpace(o.Model) == "" {
		return nil, errors.New("embeddings model: required with an embeddings URL (the model name the endpoint serves)")
	}
	if strings.ContainsFunc(o.APIKey, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return nil, errors.New("embeddings API key: holds a control character (a line break?); give the key alone")
	}
	if o.MaxDimensions < 0 || o.MaxDimensions > MaxDimensionsCeiling {
		return nil, fmt.Errorf("embeddings MaxDimensions: want 1 to %d, or 0 for the default (%d), got %d", MaxDimensionsCeiling, DefaultMaxDimensions, o.MaxDimensions)
	}
	shown := *u
	shown.RawQuery, shown.Fragment = "", ""
	c := &Client{url: o.URL, shown: shown.String(), model: o.Model, key: o.APIKey, http: o.HTTPClient, maxBatch: o.MaxBatch, maxBytes: o.MaxResponseBytes, timeout: o.Timeout,
		maxDims: cmp.Or(o.MaxDimensions, DefaultMaxDimensions)}
	if c.http == nil {
		// Redirects are refused: one could send the texts and the key to
		// another host, or downgrade https to http.
		c.http = &http.Client{CheckRedirect: func(req *http.Request, _ []*http.Request) error {
			return fmt.Errorf("embeddings: %s redirects; give the URL it redirects to", c.shown)
		}}
	}
	if c.maxBatch <= 0 {
		c.maxBatch = DefaultMaxBatch
	}
	if c.maxBytes <= 0 {
		c.maxBytes = DefaultMaxResponseBytes
	}
	if c.timeout <= 0 {
		c.timeout = DefaultTimeout
	}
	return c, nil
}

func loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Model is the model the client asks for.
func (c *Client) Model() string { return c.model }

// BatchSize is how many texts one request embeds.
func (c *Client) BatchSize() int { return c.maxBatch }

type request struct {
	Model string   `json:"model"`
	Input []string `json:"input"`
}

type response struct {
	Data []struct {
		Index     *int   `json:"index"`
		Embedding vector `json:"embedding"`
	} `json:"data"`
}

// vector is an embedding decoded from its JSON array straight into
// float32s: its numbers are counted first, so a vector over
// MaxDimensionsCeiling allocates nothing, and one within it allocates
// its 4 bytes a dimension once, with no []float64 on the way (which took
// 8 bytes a dimension, twice over as the slice grew).
type vector []float32

// dimensionsError is a vector longer than MaxDimensionsCeiling, refused
// while decoding.
type dimensionsError struct{ n int }

func (e *dimensionsError) Error() string {
	return fmt.Sprintf("a vector of %d dimensions, over the most any client takes (%d)", e.n, MaxDimensionsCeiling)
}

// errNotFinite is a number a float32 cannot hold, or NaN and infinities
// (which JSON cannot write, but a lenient encoder might).
var errNotFinite = errors.New("a vector with a non-finite number")

// UnmarshalJSON decodes b, one JSON value the decoder has checked: null,
// or an array of numbers and nothing else.
func (v *vector) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if string(b) == "null" {
		*v = nil
		return nil
	}
	if len(b) < 2 || b[0] != '[' {
		return errors.New("an embedding that is not an array of numbers")
	}
	body := bytes.TrimSpace(b[1 : len(b)-1])
	if len(body) == 0 {
		*v = vector{}
		return nil
	}
	// The array holds numbers only, or the parse below fails: its commas
	// count them.
	n := bytes.Count(body, []byte{','}) + 1
	if n > MaxDimensionsCeiling {
		return &dimensionsError{n}
	}
	out := make(vector, 0, n)
	for num := range bytes.SplitSeq(body, []byte{','}) {
		f, err := strconv.ParseFloat(string(bytes.TrimSpace(num)), 32)
		switch {
		case err == nil && !math.IsNaN(f) && !math.IsInf(f, 0):
		case errors.Is(err, strconv.ErrRange), err == nil:
			return errNotFinite
		default:
			return errors.New("an embedding that is not an array of numbers")
		}
		out = append(out, float32(f))
	}
	*v = out
	return nil
}

// Embed returns one vector per text, in order, in as many requests as
// MaxBatch needs. Every vector has the same dimension.
func (c *Client) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, 0, len(texts))
	for start := 0; start < len(texts); start += c.maxBatch {
		batch := texts[start:min(start+c.maxBatch, len(texts))]
		vs, err := c.embedBatch(ctx, batch)
		if err != nil {
			return nil, err
		}
		out = append(out, vs...)
	}
	for i, v := range out {
		if len(v) != len(out[0]) {
			return nil, fmt.Errorf("embeddings: %s answered vectors of %d and %d dimensions (texts 0 and %d)", c.shown, len(out[0]), len(v), i)
		}
	}
	return out, nil
}

func (c *Client) embedBatch(ctx context.Context, texts []string) ([][]float32, error) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	body, err := json.Marshal(request{Model: c.model, Input: texts})
	if err != nil {
		return nil, fmt.Errorf("embeddings: encoding the request: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("embeddings: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	if c.key != "" {
		req.Header.Set("Authorization", "Bearer "+c.key)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		if ue, ok := err.(*url.Error); ok {
			ue.URL = c.shown // the query may hold a key
		}
		return nil, fmt.Errorf("embeddings: %w", err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, c.maxBytes+1))
	if err != nil {
		return nil, fmt.Errorf("embeddings: reading the answer of %s: %w", c.shown, err)
	}
	if int64(len(raw)) > c.maxBytes {
		return nil, fmt.Errorf("embeddings: the answer of %s is over %d bytes", c.shown, c.maxBytes)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, &StatusError{Code: resp.StatusCode, Status: resp.Status, URL: c.shown, Body: string(bytes.TrimSpace(raw))}
	}
	var r response
	var de *dimensionsError
	switch err := json.Unmarshal(raw, &r); {
	case errors.As(err, &de):
		return nil, fmt.Errorf("embeddings: %s answered a vector of %d dimensions, over the limit of %d (MaxDimensions)", c.shown, de.n, c.maxDims)
	case errors.Is(err, errNotFinite):
		return nil, fmt.Errorf("embeddings: %s answered %w", c.shown, err)
	case err != nil:
		return nil, fmt.Errorf("embeddings: the answer of %s is not an embeddings response: %w", c.shown, err)
	}
	if len(r.Data) != len(texts) {
		return nil, fmt.Errorf("embeddings: %s answered %d vectors for %d texts", c.shown, len(r.Data), len(texts))
	}
	out := make([][]float32, len(texts))
	for i, d := range r.Data {
		at := i
		if d.Index != nil {
			at = *d.Index
		}
		if at < 0 || at >= len(texts) || out[at] != nil {
			return nil, fmt.Errorf("embeddings: %s answered index %d for %d texts, or one twice", c.shown, at, len(texts))
		}
		switch n := len(d.Embedding); {
		case n == 0:
			return nil, fmt.Errorf("embeddings: %s answered an empty vector for text %d", c.shown, at)
		case n > c.maxDims:
			return nil, fmt.Errorf("embeddings: %s answered a vector of %d dimensions for text %d, over the limit of %d (MaxDimensions)", c.shown, n, at, c.maxDims)
		}
		out[at] = d.Embedding
	}
	return out, nil
}
