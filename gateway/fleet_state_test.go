package gateway_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/grpc-mcp-gateway/gateway/gateway"
	"github.com/grpc-mcp-gateway/gateway/gateway/auth"
	"github.com/grpc-mcp-gateway/gateway/gateway/mcp"
	"github.com/grpc-mcp-gateway/gateway/gateway/state"
	"github.com/grpc-mcp-gateway/gateway/internal/redistest"
	"github.com/grpc-mcp-gateway/gateway/internal/testkit"
)

// fleetSecret is the session secret the replicas of these tests share.
var fleetSecret = []byte(strings.Repeat("f", 32))

// fleetReplica is one replica of a fleet sharing the Redis at url,
// fronting the zoo at addr with authentication a and results over 1 KiB
// cut and kept. It returns the replica's base URL and its store.
func fleetReplica(t *testing.T, url, addr string, a *auth.Authenticator, so *state.Options) (string, *state.Redis) {
	t.Helper()
	st, err := state.Open(url, so)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() }) // after the gateway's shutdown, registered next
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := st.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	_, base := newGateway(t, []gateway.Backend{dialBackend(t, "zoo", addr)}, &gateway.Options{
		Auth: a, State: st, Results: gateway.ResultOptions{
			MaxBytes: 1024,
		}, Transports: gateway.TransportOptions{
			HTTP: &mcp.StreamableHTTPOptions{SessionSecret: fleetSecret},
		}})
	return base, st
}

const toolsList = `{"jsonrpc":"2.0","id":3,"method":"tools/list"}`

// TestFleetRevocationBound: a principal's DELETEs beyond
// --state-max-revocations-per-principal are refused (429, saying the
// session was not deleted and stays valid), and that session goes on
// working on every replica; the sessions deleted before stay deleted on
// every replica; another principal has a share of its own. Before, every
// DELETE added to the fleet's list without any bound.
func TestFleetRevocationBound(t *testing.T) {
	srv := redistest.Start(t, nil)
	b := startBackend(t)
	a, _ := bearerAuth(t, "alice\nbob\n")
	so := &state.Options{MaxRevocationsPerPrincipal: 2}
	baseA, _ := fleetReplica(t, srv.URL(), b.addr, a, so)
	baseB, _ := fleetReplica(t, srv.URL(), b.addr, a, so)
	var sids []string
	for range 3 {
		sids = append(sids, initSession(t, baseA, "alice"))
	}
	for i, base := range []string{baseA, baseB} {
		if resp, body := mcpRequest(t, base, "DELETE", "alice", sids[i], ""); resp.StatusCode != http.StatusNoContent {
			t.Fatalf("DELETE %d within the bound: %d %s", i, resp.StatusCode, body)
		}
	}
	resp, body := mcpRequest(t, baseA, "DELETE", "alice", sids[2], "")
	if resp.StatusCode != http.StatusTooManyRequests || !strings.Contains(body, "the session was not deleted") || !strings.Contains(body, "stays valid") {
		t.Errorf("a third DELETE of two: %d %s; want 429 saying the session was not deleted", resp.StatusCode, body)
	}
	for _, base := range []string{baseA, baseB} {
		for i, want := range []int{http.StatusNotFound, http.StatusNotFound, http.StatusOK} {
			if resp, body := mcpRequest(t, base, "POST", "alice", sids[i], toolsList); resp.StatusCode != want {
				t.Errorf("%s: session %d answers %d, want %d: %.200s", base, i, resp.StatusCode, want, body)
			}
		}
	}
	bob := initSession(t, baseB, "bob")
	if resp, body := mcpRequest(t, baseB, "DELETE", "bob", bob, ""); resp.StatusCode != http.StatusNoContent {
		t.Errorf("another principal's DELETE: %d %s", resp.StatusCode, body)
	}
}

// TestFleetReplicaStartsOnLargeSet: a replica that starts on a store
// holding 200,000 revocations (written behind the gateway's back with a
// pipeline, as a day of initialize and DELETE in a loop leaves them)
// refuses a deleted session and serves a live one from its first request,
// while it reads them and after, and reports the store up and the
// revocations loaded. Before, its one read of the whole set could fail
// forever while it served deleted sessions again.
func TestFleetReplicaStartsOnLargeSet(t *testing.T) {
	srv := redistest.Start(t, nil)
	b := startBackend(t)
	a, _ := bearerAuth(t, "alice\n")
	baseA, _ := fleetReplica(t, srv.URL(), b.addr, a, nil)
	live, gone := initSession(t, baseA, "alice"), initSession(t, baseA, "alice")
	if resp, body := mcpRequest(t, baseA, "DELETE", "alice", gone, ""); resp.StatusCode != http.StatusNoContent {
		t.Fatalf("DELETE: %d %s", resp.StatusCode, body)
	}
	raw := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer raw.Close()
	ctx := context.Background()
	exp := float64(time.Now().Add(time.Hour).Unix())
	for i := 0; i < 200_000; i += 10_000 {
		if _, err := raw.Pipelined(ctx, func(p redis.Pipeliner) error {
			for j := i; j < i+10_000; j++ {
				p.ZAdd(ctx, "{mcpgw}:revoked", redis.Z{Score: exp, Member: fmt.Sprintf("%043d", j)})
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}

	baseB, stB := fleetReplica(t, srv.URL(), b.addr, a, nil)
	check := func(when string) {
		t.Helper()
		if resp, body := mcpRequest(t, baseB, "POST", "alice", gone, toolsList); resp.StatusCode != http.StatusNotFound {
			t.Errorf("%s: the deleted session answers %d %.200s, want 404", when, resp.StatusCode, body)
		}
		if resp, body := mcpRequest(t, baseB, "POST", "alice", live, `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"ZooService_GetAnimal","arguments":{"id":"leo"}}}`); resp.StatusCode != http.StatusOK || !strings.Contains(body, "Leo") {
			t.Errorf("%s: the live session answers %d %.200s", when, resp.StatusCode, body)
		}
	}
	check(fmt.Sprintf("at start (revocations loaded: %v)", stB.RevocationsLoaded()))
	testkit.WaitFor(t, "the new replica to read the revocations", stB.RevocationsLoaded)
	check("once loaded")
	resp, err := http.Get(baseB + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(body), `"state":{"up":true,"revocationsLoaded":true}`) {
		t.Errorf("/readyz = %s", body)
	}
}

var resultURI = regexp.MustCompile(regexp.QuoteMeta(gateway.ResultURIPrefix) + `[A-Za-z0-9]+`)

// TestRedisHoldsNoCredential: after a session's calls with kept results
// (read through the other replica), a stateless call's kept result, a
// cancellation relayed between replicas, a fleet-wide count of requests
// in flight and a DELETE, no key, value or channel message in Redis
// holds the bearer token, the session id, a kept result's id (the
// capability that reads an anonymous result), or the principal's name:
// only their digests. Before, a kept result's owner held the session id.
func TestRedisHoldsNoCredential(t *testing.T) {
	srv := redistest.Start(t, nil)
	ctx := context.Background()
	raw := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer raw.Close()
	sub := raw.PSubscribe(ctx, "{mcpgw}:*")
	defer sub.Close()
	if _, err := sub.Receive(ctx); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var published []string
	msgs := sub.Channel()
	go func() {
		for m := range msgs {
			mu.Lock()
			published = append(published, m.Channel+" "+m.Payload)
			mu.Unlock()
		}
	}()

	const token = "bearer-token-that-must-not-leak-0123456789"
	b := startBackend(t)
	a, _ := bearerAuth(t, token+"\n")
	baseA, _ := fleetReplica(t, srv.URL(), b.addr, a, nil)
	baseB, _ := fleetReplica(t, srv.URL(), b.addr, a, nil)
	sid := initSession(t, baseA, token)
	var secrets []string
	for i := range 2 {
		resp, body := mcpRequest(t, baseA, "POST", token, sid, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"ZooService_ListAnimals","arguments":{"pageSize":100}}}`, 10+i))
		uri := resultURI.FindString(body)
		if resp.StatusCode != http.StatusOK || uri == "" {
			t.Fatalf("a cut result: %d %.300s", resp.StatusCode, body)
		}
		resp, body = mcpRequest(t, baseB, "POST", token, sid, `{"jsonrpc":"2.0","id":20,"method":"resources/read","params":{"uri":"`+uri+`"}}`)
		if resp.StatusCode != http.StatusOK || !strings.Contains(body, `"contents"`) {
			t.Fatalf("reading the kept result through the other replica: %d %.300s", resp.StatusCode, body)
		}
		secrets = append(secrets, strings.TrimPrefix(uri, gateway.ResultURIPrefix))
	}
	out, err := postBody(statelessCaller(http.DefaultClient, baseA+"/mcp", "ZooService_ListAnimals", token), listAnimalsBody)
	if uri := resultURI.FindString(out); err != nil || uri == "" {
		t.Fatalf("a stateless cut result: %v %.300s", err, out)
	} else {
		secrets = append(secrets, strings.TrimPrefix(uri, gateway.ResultURIPrefix))
	}
	// A call held on A, cancelled through B: the cancellation crosses the
	// channel.
	done := make(chan struct{})
	go func() {
		defer close(done)
		mcpRequest(t, baseA, "POST", token, sid, `{"jsonrpc":"2.0","id":"held","method":"tools/call","params":{"name":"ZooService_GetAnimal","arguments":{"id":"block"}}}`)
	}()
	<-b.started
	if resp, _ := mcpRequest(t, baseB, "POST", token, sid, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"held"}}`); resp.StatusCode != http.StatusAccepted {
		t.Fatalf("notifications/cancelled: %d", resp.StatusCode)
	}
	<-b.ended
	<-done
	if resp, body := mcpRequest(t, baseB, "DELETE", token, sid, ""); resp.StatusCode != http.StatusNoContent {
		t.Fatalf("DELETE: %d %s", resp.StatusCode, body)
	}

	sum := sha256.Sum256([]byte(token))
	tokenID := hex.EncodeToString(sum[:8])
	secrets = append(secrets, token, sid, tokenID, "token:"+tokenID)
	var dump []string
	iter := raw.Scan(ctx, 0, "*", 100).Iterator()
	for iter.Next(ctx) {
		key := iter.Val()
		dump = append(dump, "key "+key)
		switch typ := raw.Type(ctx, key).Val(); typ {
		case "string":
			dump = append(dump, raw.Get(ctx, key).Val())
		case "hash":
			for f, v := range raw.HGetAll(ctx, key).Val() {
				dump = append(dump, f, v)
			}
		case "zset":
			for _, z := range raw.ZRangeWithScores(ctx, key, 0, -1).Val() {
				dump = append(dump, fmt.Sprint(z.Member))
			}
		case "set":
			dump = append(dump, raw.SMembers(ctx, key).Val()...)
		case "list":
			dump = append(dump, raw.LRange(ctx, key, 0, -1).Val()...)
		default:
			t.Errorf("key %s of type %s: the test does not read it", key, typ)
		}
	}
	if err := iter.Err(); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	dump = append(dump, published...)
	nPublished := len(published)
	mu.Unlock()
	if len(dump) < 10 || nPublished < 3 {
		t.Fatalf("the store holds %d items and saw %d messages: too few for the test to mean anything", len(dump), nPublished)
	}
	for _, item := range dump {
		for _, s := range secrets {
			if strings.Contains(item, s) {
				t.Errorf("Redis holds %q in %.120q", s, item)
			}
		}
	}
}
