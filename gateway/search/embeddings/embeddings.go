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
	http            *http.Client
	maxBatch        int
	maxBytes        int64
	timeout         time.Duration
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
	if strings.TrimSpace(o.Model) == "" {
		return nil, errors.New("embeddings model: required with an embeddings URL (the model name the endpoint serves)")
	}
	c := &Client{url: o.URL, model: o.Model, key: o.APIKey, http: o.HTTPClient, maxBatch: o.MaxBatch, maxBytes: o.MaxResponseBytes, timeout: o.Timeout}
	if c.http == nil {
		c.http = &http.Client{}
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
			return nil, fmt.Errorf("embeddings: %s answered vectors of %d and %d dimensions (texts 0 and %d)", c.url, len(out[0]), len(v), i)
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
		return nil, fmt.Errorf("embeddings: %w", err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, c.maxBytes+1))
	if err != nil {
		return nil, fmt.Errorf("embeddings: reading the answer of %s: %w", c.url, err)
	}
	if int64(len(raw)) > c.maxBytes {
		return nil, fmt.Errorf("embeddings: the answer of %s is over %d bytes", c.url, c.maxBytes)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("embeddings: %s answered %s: %.200s", c.url, resp.Status, bytes.TrimSpace(raw))
	}
	var r response
	if err := json.Unmarshal(raw, &r); err != nil {
		return nil, fmt.Errorf("embeddings: the answer of %s is not an embeddings response: %w", c.url, err)
	}
	if len(r.Data) != len(texts) {
		return nil, fmt.Errorf("embeddings: %s answered %d vectors for %d texts", c.url, len(r.Data), len(texts))
	}
	out := make([][]float32, len(texts))
	for i, d := range r.Data {
		at := i
		if d.Index != nil {
			at = *d.Index
		}
		if at < 0 || at >= len(texts) || out[at] != nil {
			return nil, fmt.Errorf("embeddings: %s answered index %d for %d texts, or one twice", c.url, at, len(texts))
		}
		if len(d.Embedding) == 0 {
			return nil, fmt.Errorf("embeddings: %s answered an empty vector for text %d", c.url, at)
		}
		v := make([]float32, len(d.Embedding))
		for j, f := range d.Embedding {
			if math.IsNaN(f) || math.IsInf(f, 0) {
				return nil, fmt.Errorf("embeddings: %s answered a vector with a non-finite number for text %d", c.url, at)
			}
			v[j] = float32(f)
		}
		out[at] = v
	}
	return out, nil
}
