package embeddings_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"

	"go.uber.org/goleak"

	"github.com/grpc-mcp-gateway/gateway/internal/search/embeddings"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// server is an embeddings endpoint: each text's vector is its length and
// its number of words, answered in reverse order with their indexes, as a
// server may.
func server(t *testing.T, batches *atomic.Int32) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.Header.Get("Content-Type") != "application/json" {
			http.Error(w, "want a JSON POST", http.StatusBadRequest)
			return
		}
		if r.Header.Get("Authorization") != "Bearer k3y" {
			http.Error(w, `{"error":"bad key"}`, http.StatusUnauthorized)
			return
		}
		var req struct {
			Model string   `json:"model"`
			Input []string `json:"input"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.Model != "tiny" {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		batches.Add(1)
		type item struct {
			Index     int       `json:"index"`
			Embedding []float64 `json:"embedding"`
		}
		var data []item
		for i := len(req.Input) - 1; i >= 0; i-- {
			data = append(data, item{i, []float64{float64(len(req.Input[i])), float64(len(strings.Fields(req.Input[i])))}})
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": data, "model": req.Model})
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestEmbed(t *testing.T) {
	var batches atomic.Int32
	srv := server(t, &batches)
	c, err := embeddings.New(embeddings.Options{URL: srv.URL + "/v1/embeddings", Model: "tiny", APIKey: "k3y", MaxBatch: 2})
	if err != nil {
		t.Fatal(err)
	}
	texts := []string{"a", "bb cc", "ddd eee fff", "g"}
	got, err := c.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range got {
		if want := []float32{float32(len(texts[i])), float32(len(strings.Fields(texts[i])))}; fmt.Sprint(v) != fmt.Sprint(want) {
			t.Errorf("text %d: %v, want %v (vectors are placed by their index)", i, v, want)
		}
	}
	if n := batches.Load(); n != 2 {
		t.Errorf("%d requests for 4 texts in batches of 2", n)
	}
	// Without the key the endpoint refuses, and the error says so.
	c, _ = embeddings.New(embeddings.Options{URL: srv.URL, Model: "tiny"})
	if _, err := c.Embed(context.Background(), texts); err == nil || !strings.Contains(err.Error(), "401") {
		t.Errorf("without the key: %v", err)
	}
}

func TestNewRefuses(t *testing.T) {
	for _, tc := range []struct {
		o    embeddings.Options
		want string
	}{
		{embeddings.Options{URL: "ftp://host/x", Model: "m"}, "want an http(s) URL"},
		{embeddings.Options{URL: "not a url", Model: "m"}, "want an http(s) URL"},
		{embeddings.Options{URL: "http://embed.example.com/v1/embeddings", Model: "m"}, "plain http is allowed only to a loopback host"},
		{embeddings.Options{URL: "https://embed.example.com/v1/embeddings"}, "embeddings model: required"},
		{embeddings.Options{URL: "https://user:s3cret@embed.example.com/v1/embeddings", Model: "m"}, "credentials in the URL"},
		{embeddings.Options{URL: "https://embed.example.com/v1/embeddings", Model: "m", APIKey: "k3y\n"}, "embeddings API key: holds a control character"},
	} {
		_, err := embeddings.New(tc.o)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", tc.o, err, tc.want)
		} else if strings.Contains(err.Error(), "s3cret") {
			t.Errorf("the error shows the URL's password: %v", err)
		}
	}
	for _, ok := range []string{"http://127.0.0.1:1/v1/embeddings", "http://localhost:1/x", "http://[::1]:1/x", "https://api.example.com/v1/embeddings"} {
		if _, err := embeddings.New(embeddings.Options{URL: ok, Model: "m"}); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
}

// TestBadAnswers: an endpoint that answers something other than one
// vector per text is an error naming what was wrong, never a panic or a
// wrong vector.
func TestBadAnswers(t *testing.T) {
	for _, tc := range []struct {
		body string
		want string
	}{
		{`not json`, "not an embeddings response"},
		{`{"data":[]}`, "answered 0 vectors for 2 texts"},
		{`{"data":[{"index":0,"embedding":[1]},{"index":0,"embedding":[2]}]}`, "index 0 for 2 texts, or one twice"},
		{`{"data":[{"index":0,"embedding":[1]},{"index":5,"embedding":[2]}]}`, "index 5"},
		{`{"data":[{"index":0,"embedding":[1]},{"index":1,"embedding":[]}]}`, "an empty vector for text 1"},
		{`{"data":[{"index":0,"embedding":[1]},{"index":1,"embedding":[1,2]}]}`, "vectors of 1 and 2 dimensions"},
		{strings.Repeat(" ", 2048), "over 1024 bytes"},
		{`{"data":[{"index":0,"embedding":[1]},{"index":1,"embedding":[1e39]}]}`, "a vector with a non-finite number"},
		{`{"data":[{"index":0,"embedding":[1]},{"index":1,"embedding":["1"]}]}`, "not an array of numbers"},
		{`{"data":[{"index":0,"embedding":[1]},{"index":1,"embedding":[[1,2]]}]}`, "not an array of numbers"},
		{`{"data":[{"index":0,"embedding":[1]},{"index":1,"embedding":{"a":1}}]}`, "not an array of numbers"},
		{`{"data":[{"index":0,"embedding":[1]},{"index":1,"embedding":null}]}`, "an empty vector for text 1"},
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte(tc.body)) }))
		c, err := embeddings.New(embeddings.Options{URL: srv.URL, Model: "m", MaxResponseBytes: 1024})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Embed(context.Background(), []string{"a", "b"}); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%.40q: %v, want %q", tc.body, err, tc.want)
		}
		srv.Close()
	}
}

// TestStatusErrors: an answer other than 200 is a StatusError that tells
// a request refused for what it holds from a failing endpoint, and no
// error shows the URL's query, where some services take a key.
func TestStatusErrors(t *testing.T) {
	var code atomic.Int32
	var queries atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("api-version") == "2024-02-01" {
			queries.Add(1) // the request keeps the URL's query
		}
		http.Error(w, "no", int(code.Load()))
	}))
	defer srv.Close()
	c, err := embeddings.New(embeddings.Options{URL: srv.URL + "/embed?api-version=2024-02-01&key=s3cret", Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		code     int
		rejected bool
	}{{400, true}, {404, true}, {413, true}, {401, false}, {403, false}, {408, false}, {429, false}, {500, false}, {503, false}} {
		code.Store(int32(tc.code))
		_, err := c.Embed(context.Background(), []string{"a"})
		var se *embeddings.StatusError
		if !errors.As(err, &se) || se.Code != tc.code || se.Rejected() != tc.rejected {
			t.Errorf("HTTP %d: %#v, want a StatusError, rejected %v", tc.code, err, tc.rejected)
		}
		if err != nil && strings.Contains(err.Error(), "s3cret") {
			t.Errorf("HTTP %d: the error shows the URL's query: %v", tc.code, err)
		}
	}
	if n := queries.Load(); n != 9 {
		t.Errorf("%d of 9 requests carried the URL's query", n)
	}
	// A transport error names the URL without its query too.
	srv.Close()
	if _, err := c.Embed(context.Background(), []string{"a"}); err == nil || strings.Contains(err.Error(), "s3cret") {
		t.Errorf("endpoint gone: %v, want an error without the query", err)
	}
}

// TestRedirectRefused: an endpoint that redirects is an error; the texts
// and the key are not sent on to where it points.
func TestRedirectRefused(t *testing.T) {
	var followed atomic.Int32
	target := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { followed.Add(1) }))
	defer target.Close()
	srv := httptest.NewServer(http.RedirectHandler(target.URL, http.StatusTemporaryRedirect))
	defer srv.Close()
	c, err := embeddings.New(embeddings.Options{URL: srv.URL, Model: "m", APIKey: "k3y"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Embed(context.Background(), []string{"a"}); err == nil || !strings.Contains(err.Error(), "redirects") {
		t.Errorf("redirect: %v, want an error saying the endpoint redirects", err)
	}
	if followed.Load() != 0 {
		t.Error("the redirect was followed")
	}
}

// hugeVectors answers every request with one vector of dims dimensions
// per text, written as tersely as JSON allows ("0,0,...,1").
func hugeVectors(t *testing.T, dims int) *httptest.Server {
	t.Helper()
	// Made once: the server's allocations count in the test's figures.
	vec := []byte(strings.Repeat("0,", dims-1) + "1]}")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Input []string `json:"input"`
		}
		_ = json.NewDecoder(r.Body).Decode(&req)
		w.Write([]byte(`{"data":[`))
		for i := range req.Input {
			if i > 0 {
				w.Write([]byte(","))
			}
			fmt.Fprintf(w, `{"index":%d,"embedding":[`, i)
			w.Write(vec)
		}
		w.Write([]byte(`]}`))
	}))
	t.Cleanup(srv.Close)
	return srv
}

// allocated sets *n to the bytes the process allocated while f ran.
func allocated(f func(), n *uint64) {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	*n = after.TotalAlloc - before.TotalAlloc
}

// TestVectorDimensionsBounded: a vector over MaxDimensions (8,192 by
// default) is an error naming the limit; one over the ceiling is refused
// while it is counted, before anything is allocated for it: 64 vectors
// of 200,000 dimensions (25.6 MB of JSON) cost little more than reading
// the answer (the issue measured 791 MiB allocated for one such batch,
// decoded through []float64). A vector within the limit is decoded whole.
func TestVectorDimensionsBounded(t *testing.T) {
	texts := make([]string, 64)
	for i := range texts {
		texts[i] = fmt.Sprint("text ", i)
	}
	for _, tc := range []struct {
		dims, max int
		want      string
	}{
		{8193, 0, "answered a vector of 8193 dimensions for text 0, over the limit of 8192 (MaxDimensions)"},
		{300, 256, "answered a vector of 300 dimensions for text 0, over the limit of 256 (MaxDimensions)"},
		{200_000, 0, "answered a vector of 200000 dimensions, over the limit of 8192 (MaxDimensions)"},
	} {
		srv := hugeVectors(t, tc.dims)
		c, err := embeddings.New(embeddings.Options{URL: srv.URL, Model: "m", MaxDimensions: tc.max})
		if err != nil {
			t.Fatal(err)
		}
		var got uint64
		allocated(func() { _, err = c.Embed(context.Background(), texts) }, &got)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%d dimensions: %v, want %q", tc.dims, err, tc.want)
		}
		if tc.dims != 200_000 {
			continue
		}
		// What reading the answer alone allocates (its buffer grows), with
		// the server's side of it: decoding a refused vector must add
		// less than the answer's size.
		var reading uint64
		allocated(func() {
			resp, err := http.Post(srv.URL, "application/json", strings.NewReader(`{"model":"m","input":["`+strings.Join(texts, `","`)+`"]}`))
			if err != nil {
				t.Fatal(err)
			}
			_, _ = io.ReadAll(io.LimitReader(resp.Body, embeddings.DefaultMaxResponseBytes+1))
			resp.Body.Close()
		}, &reading)
		answer := uint64(len(texts) * 2 * tc.dims)
		t.Logf("%d dimensions: %d MiB allocated for a %d MiB answer, %d MiB of it reading it", tc.dims, got>>20, answer>>20, reading>>20)
		if got > reading+answer {
			t.Errorf("%d dimensions: %d MiB allocated for a %d MiB answer, want under %d MiB (reading it takes %d MiB)", tc.dims, got>>20, answer>>20, (reading+answer)>>20, reading>>20)
		}
	}
	srv := hugeVectors(t, 4096)
	c, err := embeddings.New(embeddings.Options{URL: srv.URL, Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	got, err := c.Embed(context.Background(), texts[:2])
	if err != nil || len(got) != 2 || len(got[1]) != 4096 || got[1][4095] != 1 || got[1][0] != 0 {
		t.Errorf("4,096 dimensions: %d vectors, %v", len(got), err)
	}
	for _, bad := range []int{-1, embeddings.MaxDimensionsCeiling + 1} {
		if _, err := embeddings.New(embeddings.Options{URL: srv.URL, Model: "m", MaxDimensions: bad}); err == nil || !strings.Contains(err.Error(), "embeddings MaxDimensions: want 1 to 65536") {
			t.Errorf("MaxDimensions %d: %v", bad, err)
		}
	}
}
