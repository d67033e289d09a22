package loadtest_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/grpc-mcp-gateway/gateway/internal/redistest"
	"github.com/grpc-mcp-gateway/gateway/internal/testkit"
	"github.com/grpc-mcp-gateway/gateway/loadtest"
)

// keptResult is a result cut and kept, and the whole result as it was
// first read back.
type keptResult struct{ uri, whole string }

// cutAndKeep calls ListAnimals in s (its result is cut and kept) and
// reads the whole result back through read.
func cutAndKeep(ctx context.Context, s, read *loadtest.HTTPSession) (keptResult, error) {
	res, err := s.Call(ctx, "tools/call", `{"name":"ZooService_ListAnimals","arguments":{"pageSize":100}}`)
	if err != nil {
		return keptResult{}, fmt.Errorf("tools/call: %w", err)
	}
	uri := loadtest.ResultURI(res)
	switch {
	case uri == "" && strings.Contains(string(res), "could not be kept (the state store is unavailable)"):
		// Cut but not kept, and the result says so: a clean answer.
		return keptResult{}, &loadtest.RPCError{Message: "the whole result could not be kept"}
	case uri == "":
		return keptResult{}, fmt.Errorf("a cut result without a resource link: %.200s", res)
	}
	whole, err := read.Call(ctx, "resources/read", `{"uri":"`+uri+`"}`)
	if err != nil {
		return keptResult{}, fmt.Errorf("resources/read: %w", err)
	}
	return keptResult{uri, string(whole)}, nil
}

// TestSentinelFailoverUnderLoad runs two replicas sharing a Redis master
// with one replica of its own, found through a real Sentinel (--state
// redis://SENTINEL/0?master_name=mymaster), under a load of results cut,
// kept by one replica and read back through the other. The master is
// killed; the Sentinel promotes the replica. While it does, the calls
// that need the store fail with an error naming the store, or are cut
// without being kept and say so (none hangs past the call timeout); once
// it has, they succeed again within recoveryLimit. Every
// result kept before the failover is either read back whole and
// unchanged, or reported gone: never different. A session DELETEd after
// the failover is refused by the other replica.
func TestSentinelFailoverUnderLoad(t *testing.T) {
	const recoveryLimit = 20 * time.Second
	ctx := t.Context()
	master, replica := redistest.Start(t, nil), redistest.Start(t, nil)
	rc := redis.NewClient(&redis.Options{Addr: replica.Addr()})
	defer rc.Close()
	if err := rc.Do(ctx, "REPLICAOF", "127.0.0.1", fmt.Sprint(master.Port)).Err(); err != nil {
		t.Fatal(err)
	}
	testkit.WaitWithin(t, 10*time.Second, "the replica to sync", func() bool {
		info, _ := rc.Info(ctx, "replication").Result()
		return strings.Contains(info, "master_link_status:up")
	})
	sport := redistest.StartSentinel(t, master)
	sc := redis.NewSentinelClient(&redis.Options{Addr: fmt.Sprintf("127.0.0.1:%d", sport)})
	defer sc.Close()
	// The Sentinel learns of the replica from the master's INFO, which it
	// reads every 10 s: a failover before then would find no replica.
	testkit.WaitWithin(t, 20*time.Second, "the Sentinel to know the replica", func() bool {
		rs, _ := sc.Replicas(ctx, "mymaster").Result()
		return len(rs) == 1
	})

	z := startZoo(t, testkit.FreeAddr(t))
	secret := sessionSecret(t, t.TempDir())
	state := fmt.Sprintf("redis://127.0.0.1:%d/0?master_name=mymaster", sport)
	var gws []*loadtest.Gateway
	for range 2 {
		gws = append(gws, startGateway(t, "--backend", z.addr, "--session-secret-file", secret, "--state", state,
			"--max-result-bytes", "1024", "--log-level", "error", "--call-timeout", callTimeout.String()))
	}
	hc := &http.Client{Transport: loadtest.NewTransport()}
	defer hc.CloseIdleConnections()
	sess, err := loadtest.DialHTTP(ctx, hc, gws[0].Base)
	if err != nil {
		t.Fatal(err)
	}
	other := sess.On(gws[1].Base)
	var before []keptResult
	for range 20 {
		k, err := cutAndKeep(ctx, sess, other)
		if err != nil {
			t.Fatal(err)
		}
		before = append(before, k)
	}
	doomed, err := loadtest.DialHTTP(ctx, hc, gws[0].Base) // DELETEd after the failover
	if err != nil {
		t.Fatal(err)
	}

	// The load: results cut on one replica and read on the other, on 4
	// sessions.
	kept := loadtest.Op{Name: "kept across replicas", Weight: 1, Do: func(ctx context.Context, c loadtest.Conn) error {
		s := c.(*loadtest.HTTPSession)
		_, err := cutAndKeep(ctx, s, s.On(gws[1].Base))
		return err
	}}
	bg, err := loadtest.StartBackground(ctx, gws[0], 4, 0, kept, 3*callTimeout)
	if err != nil {
		t.Fatal(err)
	}
	defer bg.Stop()
	if !bg.WaitFor(10*time.Second, func(o []loadtest.Outcome) bool { return loadtest.Count(o, false) >= 50 }) {
		t.Fatal("no steady load")
	}

	killed := time.Now()
	master.Stop()
	promoted := time.Time{}
	testkit.WaitWithin(t, 30*time.Second, "the Sentinel to promote the replica", func() bool {
		addr, err := sc.GetMasterAddrByName(ctx, "mymaster").Result()
		if err == nil && len(addr) == 2 && addr[1] == fmt.Sprint(replica.Port) {
			promoted = time.Now()
			return true
		}
		return false
	})
	rec := recoveredAfter(t, bg, promoted, recoveryLimit)
	outcomes := bg.Stop()
	checkCleanErrors(t, outcomes, 2*callTimeout+time.Second) // a cut and a read: two calls

	readable, lost := 0, 0
	for _, k := range before {
		whole, err := other.Call(ctx, "resources/read", `{"uri":"`+k.uri+`"}`)
		var rpc *loadtest.RPCError
		switch {
		case err == nil && string(whole) == k.whole:
			readable++
		case err == nil:
			t.Errorf("a result kept before the failover reads differently after it: %.200s, was %.200s", whole, k.whole)
		case errors.As(err, &rpc):
			lost++
		default:
			t.Errorf("reading a result kept before the failover: %v", err)
		}
	}

	if err := doomed.Close(); err != nil { // DELETE through replica 0
		t.Fatal(err)
	}
	if _, err := doomed.On(gws[1].Base).Call(ctx, "tools/list", `{}`); err == nil || !strings.Contains(err.Error(), "404") {
		t.Errorf("a session DELETEd after the failover, used on the other replica: %v (want 404)", err)
	}
	cancelAcross(t, ctx, sess, gws[1].Base)
	during := loadtest.Since(outcomes, killed)
	notKept := 0
	var sample error
	for _, o := range during {
		switch {
		case o.Err == nil:
		case strings.Contains(o.Err.Error(), "could not be kept"):
			notKept++
		case !strings.Contains(o.Err.Error(), "state store is unavailable"):
			// Every failure says why, so a client knows to retry.
			t.Errorf("an error during the failover that does not name the store: %v", o.Err)
		case sample == nil:
			sample = o.Err
		}
	}
	t.Logf("master killed; the Sentinel promoted the replica %v later; %d cut-and-read operations failed meanwhile (%d results cut and reported not kept; others: %.150v), served again %v after the promotion; of 20 results kept before, %d read back unchanged, %d reported gone",
		promoted.Sub(killed).Round(time.Millisecond), loadtest.Count(during, true), notKept, sample, rec.Round(time.Millisecond), readable, lost)
	_ = sess.Close()
}

// cancelAcross starts a long server stream in s (WatchFeedings: 50
// events 10 s apart, the first at once), waits for its first progress
// notification, sends notifications/cancelled for it through the replica
// at other, and checks that the stream then ends without an answer (a
// cancelled request gets none). The cancellation reaches the call's
// replica only through the store, so after a failover it shows that the
// gateway's subscription followed the Sentinel to the promoted master.
// Uncancelled, the call is answered when its watch window ends (the
// binary reads WatchFeedings as a watch), which the test reports; the
// 60 s bound only keeps a stream that neither ends nor answers from
// hanging the test.
func cancelAcross(t *testing.T, ctx context.Context, s *loadtest.HTTPSession, other string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	resp, err := s.Post(ctx, `{"jsonrpc":"2.0","id":"held","method":"tools/call","params":{"name":"ZooService_WatchFeedings","arguments":{"count":50,"interval":"10s"},"_meta":{"progressToken":"p"}}}`)
	if err != nil {
		t.Fatalf("the held call: %v", err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); resp.StatusCode != http.StatusOK || !strings.HasPrefix(ct, "text/event-stream") {
		t.Fatalf("the held call: HTTP %d %s, want an event stream", resp.StatusCode, ct)
	}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() && !strings.Contains(sc.Text(), `"notifications/progress"`) {
	}
	if sc.Err() != nil {
		t.Fatalf("the held call sent no progress: %v", sc.Err())
	}
	cr, err := s.On(other).Post(ctx, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"held","reason":"test"}}`)
	if err != nil {
		t.Fatalf("notifications/cancelled through the other replica: %v", err)
	}
	_, _ = io.Copy(io.Discard, cr.Body)
	cr.Body.Close()
	if cr.StatusCode != http.StatusAccepted {
		t.Fatalf("notifications/cancelled through the other replica: HTTP %d, want 202", cr.StatusCode)
	}
	events := 0
	for sc.Scan() {
		line := sc.Text()
		if strings.Contains(line, `"id":"held"`) {
			t.Errorf("a call cancelled through the other replica was answered (a cancelled request gets no response): %.300s", line)
		}
		if strings.Contains(line, `"notifications/progress"`) {
			events++
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("the call was not cancelled through the other replica after the failover (%d more events): %v", events, err)
	}
}
