package embeddings_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"go.uber.org/goleak"

	"github.com/grpc-mcp-gateway/gateway/gateway/search/embeddings"
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
	} {
		if _, err := embeddings.New(tc.o); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", tc.o, err, tc.want)
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
