// Package embeddings is a client of an OpenAI-compatible embeddings
// endpoint (POST {"model", "input": [...]} to /v1/embeddings, answered
// with {"data": [{"index", "embedding": [...]}]}), which OpenAI, vLLM,
// Ollama, llama.cpp's server, LocalAI and most hosted model services
// speak. Search mode uses it, when an operator configures one, to rerank
// its lexical matches (gateway/search.Fuse); this package knows nothing
// of tools.
package embeddings

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/url"
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
	shown := *u
	shown.RawQuery, shown.Fragment = "", ""
	c := &Client{url: o.URL, shown: shown.String(), model: o.Model, key: o.APIKey, http: o.HTTPClient, maxBatch: o.MaxBatch, maxBytes: o.MaxResponseBytes, timeout: o.Timeout}
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
		Index     *int      `json:"index"`
		Embedding []float64 `json:"embedding"`
	} `json:"data"`
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
	if err := json.Unmarshal(raw, &r); err != nil {
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
		if len(d.Embedding) == 0 {
			return nil, fmt.Errorf("embeddings: %s answered an empty vector for text %d", c.shown, at)
		}
		v := make([]float32, len(d.Embedding))
		for j, f := range d.Embedding {
			if math.IsNaN(f) || math.IsInf(f, 0) {
				return nil, fmt.Errorf("embeddings: %s answered a vector with a non-finite number for text %d", c.shown, at)
			}
			v[j] = float32(f)
		}
		out[at] = v
	}
	return out, nil
}
