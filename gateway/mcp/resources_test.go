package mcp

import (
	"bufio"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/tools/txtar"
)

// resourceHandler adds resources to the test Handler.
type resourceHandler struct {
	*fakeHandler
	rs atomic.Pointer[ResourceSet]
}

func newResourceHandler(t testing.TB) *resourceHandler {
	t.Helper()
	rs, err := NewResourceSet([]Resource{
		{URI: "grpc://a/x.v1.One", Name: "x.v1.One", Title: "One", Description: "The first.", MIMEType: "text/x-protobuf"},
		{URI: "grpc://a/x.v1.Two", Name: "x.v1.Two", Title: "Two", MIMEType: "text/x-protobuf"},
		{URI: "grpc://b/y.v1.Three", Name: "y.v1.Three", MIMEType: "text/x-protobuf"},
	}, &ResourceSetOptions{PageSize: 2})
	if err != nil {
		t.Fatal(err)
	}
	h := &resourceHandler{fakeHandler: newFakeHandler(t, nil)}
	h.rs.Store(rs)
	return h
}

func (h *resourceHandler) Resources() *ResourceSet { return h.rs.Load() }

func (h *resourceHandler) ReadResource(_ context.Context, uri string) (*ResourceContents, error) {
	for _, r := range h.rs.Load().Resources() {
		if r.URI == uri {
			return &ResourceContents{URI: uri, MIMEType: r.MIMEType, Text: "service " + r.Title + " {}\n"}, nil
		}
	}
	return nil, ErrResourceNotFound
}

// TestResourceTranscripts replays testdata/resources/*.txtar over stdio
// against a Handler with resources (the format of TestTranscripts; -update
// rewrites them).
func TestResourceTranscripts(t *testing.T) {
	files, err := filepath.Glob("testdata/resources/*.txtar")
	if err != nil || len(files) == 0 {
		t.Fatalf("no transcripts: %v", err)
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txtar"), func(t *testing.T) {
			ar, err := txtar.ParseFile(file)
			if err != nil {
				t.Fatal(err)
			}
			var input, want []byte
			wantIdx := -1
			for i, f := range ar.Files {
				switch f.Name {
				case "input":
					input = f.Data
				case "transcript":
					want, wantIdx = f.Data, i
				}
			}
			h := newResourceHandler(t)
			s := NewServer(testImpl, h, nil)
			inR, inW := io.Pipe()
			outR, outW := io.Pipe()
			done := make(chan error, 1)
			go func() { done <- s.ServeStdio(context.Background(), inR, outW); outW.Close() }()
			lines := make(chan string, 64)
			go func() {
				sc := bufio.NewScanner(outR)
				for sc.Scan() {
					lines <- sc.Text()
				}
				close(lines)
			}()
			got := runLineTranscript(t, input, func(msg string) error {
				_, err := io.WriteString(inW, msg+"\n")
				return err
			}, lines, func() { inW.Close() })
			if err := <-done; err != nil {
				t.Errorf("ServeStdio: %v", err)
			}
			if *update {
				if wantIdx < 0 {
					ar.Files = append(ar.Files, txtar.File{Name: "transcript"})
					wantIdx = len(ar.Files) - 1
				}
				ar.Files[wantIdx].Data = []byte(got)
				if err := os.WriteFile(file, txtar.Format(ar), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			if diff := cmp.Diff(string(want), got); diff != "" {
				t.Errorf("transcript mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestNoResourcesWithoutHandler: a Handler that is not a ResourceHandler
// advertises no resources and answers the methods -32601.
func TestNoResourcesWithoutHandler(t *testing.T) {
	s := NewServer(testImpl, newFakeHandler(t, nil), nil)
	if strings.Contains(string(s.caps), "resources") || strings.Contains(string(s.discoverBody), "resources") {
		t.Errorf("capabilities %s", s.caps)
	}
	var m message
	if !decodeMessage([]byte(`{"jsonrpc":"2.0","id":1,"method":"resources/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`), &m) {
		t.Fatal("decode")
	}
	if r := s.handleMessage(context.Background(), nil, &scope{transport: "stdio"}, &m, nil); r.code != CodeMethodNotFound {
		t.Errorf("resources/list: %s", r.body)
	}
}
