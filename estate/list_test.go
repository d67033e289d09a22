package estate_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/grpc-mcp-gateway/gateway/gateway"
	"github.com/grpc-mcp-gateway/gateway/internal/testkit"
)

// listing is one whole tools/list, as a client of the latest revision sees
// it: each tool's JSON as sent, and the bytes of every page.
type listing struct {
	tools [][]byte
	bytes int
	pages int
}

// listTools serves g over Streamable HTTP and lists every page of tools
// (2026-07-28, stateless), following nextCursor.
func listTools(tb testing.TB, g *gateway.Gateway) listing {
	tb.Helper()
	srv := httptest.NewServer(g.Handler())
	defer srv.Close()
	return listToolsAt(tb, srv.URL)
}

// listToolsAt lists every page of tools from the gateway serving MCP at
// base+"/mcp", as listTools does.
func listToolsAt(tb testing.TB, base string) listing {
	tb.Helper()
	c := &testkit.Client{URL: base + "/mcp", Version: "2026-07-28", HTTP: &http.Client{Timeout: 5 * time.Minute}}
	var l listing
	cursor := ""
	for {
		params := `{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
		if cursor != "" {
			params += `,"cursor":` + fmt.Sprintf("%q", cursor)
		}
		body := `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":` + params + `}}`
		resp, err := c.Do(context.Background(), http.MethodPost, []byte(body), testkit.MethodHeaders("tools/list", ""))
		if err != nil {
			tb.Fatal(err)
		}
		raw := []byte(resp.Body)
		if resp.Status != http.StatusOK {
			tb.Fatalf("tools/list: %d: %.300s", resp.Status, raw)
		}
		var out struct {
			Result struct {
				Tools      []json.RawMessage
				NextCursor string
			}
		}
		if err := json.Unmarshal(raw, &out); err != nil {
			tb.Fatalf("tools/list: %v: %.300s", err, raw)
		}
		l.bytes += len(raw)
		l.pages++
		for _, t := range out.Result.Tools {
			l.tools = append(l.tools, t)
		}
		if out.Result.NextCursor == "" {
			return l
		}
		cursor = out.Result.NextCursor
	}
}

// sizes are the figures README.md reports for a listing.
type sizes struct {
	largest, p90, p50, total int
	largestName              string
	// annotated, readOnly and destructive count the tools with any hint,
	// readOnlyHint true and destructiveHint true.
	annotated, readOnly, destructive int
	// over48KiB counts the tools whose definition is over 48 KiB.
	over48KiB int
}

func (l listing) sizes() sizes {
	var s sizes
	lens := make([]int, len(l.tools))
	for i, t := range l.tools {
		var hints struct {
			Annotations *struct{ ReadOnlyHint, DestructiveHint bool }
		}
		_ = json.Unmarshal(t, &hints)
		if a := hints.Annotations; a != nil {
			s.annotated++
			if a.ReadOnlyHint {
				s.readOnly++
			}
			if a.DestructiveHint {
				s.destructive++
			}
		}
		lens[i] = len(t)
		if len(t) > 48<<10 {
			s.over48KiB++
		}
		s.total += len(t)
		if len(t) > s.largest {
			s.largest = len(t)
			var named struct{ Name string }
			_ = json.Unmarshal(t, &named)
			s.largestName = named.Name
		}
	}
	slices.Sort(lens)
	if n := len(lens); n > 0 {
		s.p90, s.p50 = lens[n*9/10], lens[n/2]
	}
	return s
}
