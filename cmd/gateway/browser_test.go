package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// browserPage is a page that calls the gateway from a browser through
// fetch, the way a web MCP client does: initialize (reading Mcp-Session-Id,
// which CORS must expose), notifications/initialized, then one tools/call,
// and posts what happened back to the server that served it (its own
// origin, so that report needs no CORS).
const browserPage = `<!doctype html><html><body><script>
const gw = %q;
async function rpc(body, sid) {
  const h = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-11-25"};
  if (sid) h["Mcp-Session-Id"] = sid;
  const r = await fetch(gw, {method: "POST", headers: h, body: JSON.stringify(body)});
  return {status: r.status, sid: r.headers.get("Mcp-Session-Id"), text: await r.text()};
}
(async () => {
  let report;
  try {
    const init = await rpc({jsonrpc: "2.0", id: 1, method: "initialize", params: {protocolVersion: "2025-11-25", capabilities: {}, clientInfo: {name: "browser", version: "1"}}});
    await rpc({jsonrpc: "2.0", method: "notifications/initialized"}, init.sid);
    const call = await rpc({jsonrpc: "2.0", id: 2, method: "tools/call", params: {name: "ZooService_GetAnimal", arguments: {id: "leo"}}}, init.sid);
    report = {ok: true, sid: init.sid, status: call.status, text: call.text};
  } catch (e) {
    report = {ok: false, error: String(e)};
  }
  await fetch("/result", {method: "POST", body: JSON.stringify(report)});
})();
</script></body></html>`

// browserReport is what a page posts back.
type browserReport struct {
	OK     bool   `json:"ok"`
	SID    string `json:"sid"`
	Status int    `json:"status"`
	Text   string `json:"text"`
	Error  string `json:"error"`
}

// servePage serves browserPage (calling the URL gw returns) and collects
// its report.
func servePage(t *testing.T, gw func() string) (*httptest.Server, <-chan browserReport) {
	t.Helper()
	reports := make(chan browserReport, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/":
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprintf(w, browserPage, gw())
		case "/result":
			var rep browserReport
			body, _ := io.ReadAll(r.Body)
			if err := json.Unmarshal(body, &rep); err != nil {
				rep = browserReport{Error: "bad report: " + string(body)}
			}
			select {
			case reports <- rep:
			default:
			}
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv, reports
}

// runBrowser loads url in headless Chromium until the page reports.
func runBrowser(t *testing.T, chromium, url string, reports <-chan browserReport) browserReport {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	// --no-sandbox: CI runs as root, where Chromium's sandbox cannot start.
	cmd := exec.CommandContext(ctx, chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
		"--no-first-run", "--user-data-dir="+t.TempDir(), url)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer func() {
		_ = cmd.Process.Kill()
		<-exited
	}()
	select {
	case rep := <-reports:
		return rep
	case err := <-exited:
		t.Fatalf("chromium exited before the page reported: %v\n%s", err, stderr.String())
	case <-ctx.Done():
		t.Fatalf("the page did not report:\n%s", stderr.String())
	}
	return browserReport{}
}

// TestBrowserCORS: a page from an origin listed in --allow-origin
// initializes and calls a tool through fetch in a real browser (headless
// Chromium, Debian's package; `make test` installs it), which only works
// when the preflight is answered and Mcp-Session-Id is exposed; a page
// from any other origin is refused by the browser.
func TestBrowserCORS(t *testing.T) {
	chromium, err := exec.LookPath("chromium")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("chromium is not installed (make test installs it: apt-get install chromium)")
		}
		t.Skip("chromium is not installed (apt-get install chromium; make test does)")
	}
	// The pages' servers exist before the gateway, so their origins can be
	// listed; each is told the gateway's URL when it serves the page.
	var gwURL atomic.Pointer[string]
	gw := func() string { return *gwURL.Load() }
	allowed, allowedReports := servePage(t, gw)
	foreign, foreignReports := servePage(t, gw)
	u := startGatewayProcess(t, "--allow-origin", allowed.URL).base + "/mcp"
	gwURL.Store(&u)

	rep := runBrowser(t, chromium, allowed.URL+"/", allowedReports)
	if !rep.OK || rep.SID == "" || rep.Status != 200 || !strings.Contains(rep.Text, `"result"`) || !strings.Contains(rep.Text, "Leo") {
		t.Errorf("allowed origin %s: %+v", allowed.URL, rep)
	}
	rep = runBrowser(t, chromium, foreign.URL+"/", foreignReports)
	if rep.OK || !strings.Contains(rep.Error, "Failed to fetch") {
		t.Errorf("foreign origin %s: %+v, want the browser to refuse the call", foreign.URL, rep)
	}
}
