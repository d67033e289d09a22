package estate_test

import (
	"bytes"
	"context"
	"log/slog"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/grpc-mcp-gateway/gateway/gateway"
	"github.com/grpc-mcp-gateway/gateway/gateway/mcp"
	"github.com/grpc-mcp-gateway/gateway/internal/schema"
	"github.com/grpc-mcp-gateway/gateway/internal/testkit"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestGoogleapisToolSizes: the whole googleapis catalog of the npm package
// (every file that defines a service, compiled from source with its
// comments, as `--no-reflection --proto-path … --proto …` does) lists no
// tool over gateway.MaxToolBytes in typed mode, every shortened schema
// lints and compiles, and the resources its escapes name are served.
// It logs the largest tool before and after, from the gateway's log line.
// Skipped with -short and -race: it compiles about 1,500 files and builds
// over 13,000 tools.
func TestGoogleapisToolSizes(t *testing.T) {
	b, nfiles := googleapisBackend(t)
	var logs testkit.SyncBuffer
	opts := &gateway.Options{Search: gateway.SearchOptions{
		ToolMode: gateway.ToolModeTyped,
	}, Catalog: gateway.CatalogOptions{
		Refresh:          -1,
		RequireBackends:  true,
		DiscoveryTimeout: 15 * time.Minute,
	},
		Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelInfo}))}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	start := time.Now()
	g, err := gateway.New(ctx, []gateway.Backend{b}, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(g.Close)
	tools := g.Tools().Tools()
	t.Logf("%d files, %d tools, ready in %v", nfiles, len(tools), time.Since(start).Round(time.Millisecond))
	var sizes []int
	shortened, dropped := 0, 0
	var escaped string
	linted := map[string]bool{}
	for _, tl := range tools {
		n := mcp.EntryBytes(tl)
		sizes = append(sizes, n)
		if n > gateway.MaxToolBytes {
			t.Errorf("%s: %d bytes, over %d", tl.Name, n, gateway.MaxToolBytes)
		}
		for what, s := range map[string][]byte{"inputSchema": tl.InputSchema, "outputSchema": tl.OutputSchema} {
			if !bytes.Contains(s, []byte(schema.BoundedNote)) {
				continue
			}
			shortened++
			if linted[string(s)] {
				continue
			}
			linted[string(s)] = true
			if p := schema.Lint(s); len(p) > 0 {
				t.Errorf("%s %s: lint: %q", tl.Name, what, p)
			}
			if err := compile(s); err != nil {
				t.Errorf("%s %s: %v", tl.Name, what, err)
			}
			if m := regexp.MustCompile(`see resource (grpc://googleapis/[A-Za-z0-9_.]+[A-Za-z0-9_])`).FindSubmatch(s); m != nil && escaped == "" {
				escaped = string(m[1])
			}
		}
		if tl.OutputSchema == nil {
			dropped++
		}
	}
	slices.Sort(sizes)
	t.Logf("tool entries: largest %d, p99 %d, p90 %d, p50 %d bytes; %d schemas shortened; %d tools without an output schema",
		sizes[len(sizes)-1], sizes[len(sizes)*99/100], sizes[len(sizes)*9/10], sizes[len(sizes)/2], shortened, dropped)
	line := ""
	for _, l := range strings.Split(logs.String(), "\n") {
		if strings.Contains(l, "tool schemas shortened") {
			line = l
		}
	}
	if line == "" {
		t.Fatal("no log line on the shortened tools")
	}
	t.Logf("before: %s", line[strings.Index(line, "backend="):])
	if escaped == "" {
		t.Fatal("no shortened schema names a resource")
	}
	// Read as a client reads it, through the MCP endpoint.
	srv := httptest.NewServer(g.Handler())
	t.Cleanup(srv.Close)
	read, err := testkit.Connect(t, srv.URL+"/mcp", "2025-11-25").ReadResource(ctx, &sdk.ReadResourceParams{URI: escaped})
	if err != nil {
		t.Fatalf("%s: %v", escaped, err)
	}
	res := read.Contents[0]
	if name := escaped[strings.LastIndex(escaped, ".")+1:]; !strings.Contains(res.Text, "message "+name+" {") {
		t.Errorf("%s: %.500s", escaped, res.Text)
	}
	// The printed message carries its comments, which the descriptors
	// keep apart (descriptors.Comments); the header is a comment too.
	if _, body, _ := strings.Cut(res.Text, "\n\n"); !strings.Contains(body, "// ") {
		t.Errorf("%s: printed without its comments: %.500s", escaped, res.Text)
	}
}
