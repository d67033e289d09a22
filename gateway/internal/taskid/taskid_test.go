package taskid

import (
	"encoding/base64"
	"strings"
	"testing"
	"time"
)

func mustKeys(t testing.TB, secret string, previous ...string) *Keys {
	t.Helper()
	var prev [][]byte
	for _, p := range previous {
		prev = append(prev, []byte(p))
	}
	var s []byte
	if secret != "" {
		s = []byte(secret)
	}
	tk, err := NewKeys(s, prev)
	if err != nil {
		t.Fatal(err)
	}
	return tk
}

// TestTaskIDs: an id says what it was minted with, only to its owner and
// only under a key it was signed with (the current secret or a retired
// one still listed); any change to it is a task that does not exist.
func TestTaskIDs(t *testing.T) {
	ref := Ref{Backend: "jobs", Method: "/lrotest.v1.Jobs/Run", Operation: "operations/job-1", Started: time.Unix(1_790_000_000, 0)}
	old := mustKeys(t, "the old secret, thirty-two bytes long")
	cur := mustKeys(t, "the new secret, thirty-two bytes long", "the old secret, thirty-two bytes long")
	id, ok := old.Mint(ref, "alice")
	if !ok {
		t.Fatal("mint refused an ordinary task")
	}
	for _, tc := range []struct {
		name  string
		keys  *Keys
		id    string
		owner string
		ok    bool
	}{
		{"owner, signing key", old, id, "alice", true},
		{"owner, retired key still listed", cur, id, "alice", true},
		{"another owner", old, id, "bob", false},
		{"anonymous", old, id, "", false},
		{"an owner that extends another", old, id, "alice2", false},
		{"another gateway's key", mustKeys(t, ""), id, "alice", false},
		{"a key derived from another secret", mustKeys(t, "yet another secret of thirty-two bytes"), id, "alice", false},
		{"the operation's name", old, ref.Operation, "alice", false},
		{"empty", old, "", "alice", false},
		{"padded", old, id + "=", "alice", false},
		{"too long", old, strings.Repeat("A", MaxLen+4), "alice", false},
	} {
		got, err := tc.keys.Parse(tc.id, tc.owner)
		if (err == nil) != tc.ok {
			t.Errorf("%s: err %v, want ok %v", tc.name, err, tc.ok)
		}
		if tc.ok && got != ref {
			t.Errorf("%s: %+v, want %+v", tc.name, got, ref)
		}
	}
	// Every single-byte change to the id is refused.
	raw, _ := base64.RawURLEncoding.DecodeString(id)
	for i := range raw {
		bad := append([]byte(nil), raw...)
		bad[i] ^= 0x01
		if _, err := old.Parse(base64.RawURLEncoding.EncodeToString(bad), "alice"); err == nil {
			t.Errorf("byte %d flipped: accepted", i)
		}
	}
	// A name too long for an id is not minted.
	if _, ok := old.Mint(Ref{Backend: "b", Method: "/m", Operation: strings.Repeat("x", MaxField+1)}, ""); ok {
		t.Error("mint accepted an operation name over the bound")
	}
}

// FuzzTaskID: no input makes parse panic or accept an id not minted with
// the key, and every id minted is read back as it was minted.
func FuzzTaskID(f *testing.F) {
	tk := mustKeys(f, "a secret for the fuzzer, thirty-two bytes")
	id, _ := tk.Mint(Ref{Backend: "jobs", Method: "/a.B/C", Operation: "operations/1", Started: time.Unix(1, 0)}, "alice")
	f.Add(id, "jobs", "/a.B/C", "operations/1", "alice")
	f.Add("AQ", "", "", "", "")
	f.Add(strings.Repeat("_", 100), "b", "/m", "op", "")
	f.Fuzz(func(t *testing.T, id, backend, method, op, owner string) {
		if ref, err := tk.Parse(id, owner); err == nil {
			// Only an id minted with this key verifies: this one must be
			// the seed's.
			if ref.Backend != "jobs" || owner != "alice" {
				t.Fatalf("parse accepted %q for %q: %+v", id, owner, ref)
			}
		}
		ref := Ref{Backend: backend, Method: method, Operation: op, Started: time.Unix(1_790_000_000, 0)}
		minted, ok := tk.Mint(ref, owner)
		if !ok {
			return
		}
		got, err := tk.Parse(minted, owner)
		if err != nil || got != ref {
			t.Fatalf("round trip of %+v: %+v, %v", ref, got, err)
		}
		if _, err := tk.Parse(minted, owner+"x"); err == nil {
			t.Fatalf("id of %q accepted for %q", owner, owner+"x")
		}
	})
}

// BenchmarkTaskID is the cost a task method adds before the backend call.
func BenchmarkTaskID(b *testing.B) {
	tk := mustKeys(b, "a secret for the benchmark, thirty-two bytes")
	id, _ := tk.Mint(Ref{Backend: "jobs", Method: "/lrotest.v1.Jobs/Run", Operation: "operations/job-123456", Started: time.Now()}, "https://as.example.com|alice")
	b.ReportAllocs()
	for b.Loop() {
		if _, err := tk.Parse(id, "https://as.example.com|alice"); err != nil {
			b.Fatal(err)
		}
	}
}
