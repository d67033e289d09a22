package state_test

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/grpc-mcp-gateway/gateway/gateway/state"
	"github.com/grpc-mcp-gateway/gateway/internal/redistest"
	"github.com/grpc-mcp-gateway/gateway/internal/testkit"
)

// TestACLConfinesFleet: the ACL line docs/transports.md gives (read from
// it, so the two cannot drift) lets a fleet's user do everything the
// fleet does, and nothing to the keys or channels of another prefix.
func TestACLConfinesFleet(t *testing.T) {
	doc, err := os.ReadFile("../../docs/transports.md")
	if err != nil {
		t.Fatal(err)
	}
	var line string
	for l := range strings.Lines(string(doc)) {
		if strings.Contains(l, "ACL SETUSER zoo-gateway") {
			line = strings.TrimSpace(l)
		}
	}
	if line == "" {
		t.Fatal("docs/transports.md shows no ACL SETUSER line")
	}
	srv := redistest.Start(t, nil)
	ctx := context.Background()
	raw := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer raw.Close()
	var args []any
	for _, f := range strings.Fields(strings.Replace(line, ">PASSWORD", ">zoo-password", 1)) {
		args = append(args, f)
	}
	if err := raw.Do(ctx, args...).Err(); err != nil {
		t.Fatalf("%s: %v", line, err)
	}
	url := "redis://zoo-gateway@" + srv.Addr() + "/0"
	zoo := open(t, url, &state.Options{Prefix: "zoo", Password: "zoo-password"})
	id, err := zoo.Put(ctx, "o", "sub:alice", []byte("x"))
	if err != nil {
		t.Fatalf("Put as the fleet's user: %v", err)
	}
	if _, err := zoo.Get(ctx, "o", id); err != nil {
		t.Errorf("Get as the fleet's user: %v", err)
	}
	if err := zoo.Revoke(ctx, "s1", "sub:alice", time.Now().Add(time.Hour)); err != nil {
		t.Errorf("Revoke as the fleet's user: %v", err)
	}
	testkit.WaitFor(t, "the mirror to be read", zoo.RevocationsLoaded)
	if !revoked(t, zoo, "s1") {
		t.Error("the revocation is not seen")
	}
	rel, err := zoo.AcquireSlot(ctx, "sub:alice", 2)
	if err != nil {
		t.Errorf("AcquireSlot as the fleet's user: %v", err)
	} else {
		rel()
	}
	if err := zoo.Cancel(ctx, "s1", json.RawMessage(`1`)); err != nil {
		t.Errorf("Cancel as the fleet's user: %v", err)
	}

	// The same user under another prefix: refused everywhere.
	other, err := state.Open(url, &state.Options{Prefix: "other", Password: "zoo-password"})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if err := other.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := other.Put(ctx, "o", "", []byte("x")); err == nil {
		t.Error("Put under another fleet's prefix allowed")
	}
	if err := other.Revoke(ctx, "s2", "", time.Now().Add(time.Hour)); err == nil {
		t.Error("Revoke under another fleet's prefix allowed")
	}
	if err := other.Cancel(ctx, "s2", json.RawMessage(`1`)); err == nil {
		t.Error("a cancellation published on another fleet's channel")
	}
	// ACL DRYRUN answers OK, or why not.
	if res, err := raw.Do(ctx, "ACL", "DRYRUN", "zoo-gateway", "SUBSCRIBE", "{other}:revoke").Text(); err != nil || res == "OK" {
		t.Errorf("the fleet's user subscribing to another fleet's channel: %q %v; want it refused", res, err)
	}
}
