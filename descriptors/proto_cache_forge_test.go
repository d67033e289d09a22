package descriptors

import (
	"bytes"
	"context"
	"crypto/sha256"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/grpc-mcp-gateway/gateway/internal/testkit"
)

// The API a cache entry is forged against, and the forger's: a method
// added, a declared scope dropped.
const (
	victimAPI = `syntax = "proto3";
package api.v1;
import "mcpgateway/v1/annotations.proto";
message M { string name = 1; }
service S {
  rpc Get(M) returns (M);
  rpc Delete(M) returns (M) { option (mcpgateway.v1.tool) = {scopes: "admin"}; }
}
`
	forgerAPI = `syntax = "proto3";
package api.v1;
import "mcpgateway/v1/annotations.proto";
message M { string name = 1; }
service S {
  rpc Get(M) returns (M);
  rpc Delete(M) returns (M);
  rpc Drop(M) returns (M);
}
`
)

// compiledAPI compiles api.proto of dir with the cache in cache, and
// waits for its entry; compiles counts the compiles that did not come
// from the cache.
func compiledAPI(t *testing.T, dir, cache string, logger *slog.Logger, compiles *atomic.Int32) (*ProtoSource, *Result) {
	t.Helper()
	src := NewProtoSource([]string{dir}, []string{"api.proto"})
	src.CacheDir, src.Logger = cache, logger
	src.compiled = func([]string, []string) { compiles.Add(1) }
	res, err := src.Discover(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	src.cacheWrites.Wait()
	return src, res
}

// entryParts splits the entry at path into its MAC, its record (with its
// length) and its descriptors.
func entryParts(t *testing.T, path string) (mac, record, descriptors []byte) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b = bytes.TrimPrefix(b, []byte(cacheMagic))
	mac, body := b[:sha256.Size], b[sha256.Size:]
	n, w := protowire.ConsumeVarint(body)
	return mac, body[:w+int(n)], body[w+int(n):]
}

// methods names S's methods, and the scopes Delete declares.
func methods(res *Result) string {
	ms := res.Services[0].Methods()
	var names []string
	for i := range ms.Len() {
		names = append(names, string(ms.Get(i).Name())+strings.Join(ToolOptions(ms.Get(i)).GetScopes(), ","))
	}
	return strings.Join(names, " ")
}

// TestProtoCacheForgedEntry: whoever can write the cache directory but
// not read the key beside it cannot make the gateway serve an API of its
// choosing. An entry that holds the victim's record (its key, its files'
// hashes, so it passes every check of the inputs) with the forger's
// descriptors (a method added, Delete's declared scope dropped) is
// served when it carries the cache key's MAC, which shows the forgery
// works; signed as the cache used to check entries (an unkeyed SHA-256,
// which anyone can compute) or with another key, it is refused with a
// warning, removed, and the files compiled: the gateway serves their API.
// The key is 0600, beside the directory.
func TestProtoCacheForgedEntry(t *testing.T) {
	victimDir, forgerDir := t.TempDir(), t.TempDir()
	for dir, api := range map[string]string{victimDir: victimAPI, forgerDir: forgerAPI} {
		if err := os.WriteFile(filepath.Join(dir, "api.proto"), []byte(api), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cache := filepath.Join(t.TempDir(), "protos")
	var compiles atomic.Int32
	victim, res := compiledAPI(t, victimDir, cache, nil, &compiles)
	const want = "Get Deleteadmin"
	if got := methods(res); got != want {
		t.Fatalf("the compile: %s, want %s", got, want)
	}
	if fi, err := os.Stat(cache + ".key"); err != nil || fi.Mode() != 0o600 {
		t.Errorf("the cache key: %v %v, want a file of mode 0600 beside the directory", fi, err)
	}
	forgerCache := t.TempDir()
	forger, _ := compiledAPI(t, forgerDir, forgerCache, nil, &compiles)

	path := victim.cachePath(victim.cacheKey())
	_, record, _ := entryParts(t, path)
	_, _, forged := entryParts(t, forger.cachePath(forger.cacheKey()))
	body := append(slices.Clone(record), forged...)
	victimKey, err := victim.cacheMACKey(false)
	if err != nil {
		t.Fatal(err)
	}
	forgerKey, err := forger.cacheMACKey(false)
	if err != nil {
		t.Fatal(err)
	}
	unkeyed := sha256.Sum256(body)
	for _, tc := range []struct {
		name   string
		mac    []byte
		served string
	}{
		{"the cache key's MAC", cacheMAC(victimKey, body), "Get Delete Drop"},
		{"an unkeyed SHA-256", unkeyed[:], want},
		{"another key's MAC", cacheMAC(forgerKey, body), want},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := os.WriteFile(path, slices.Concat([]byte(cacheMagic), tc.mac, body), 0o600); err != nil {
				t.Fatal(err)
			}
			var logs testkit.SyncBuffer
			compiles.Store(0)
			_, res := compiledAPI(t, victimDir, cache, slog.New(slog.NewTextHandler(&logs, nil)), &compiles)
			if got := methods(res); got != tc.served {
				t.Errorf("served %s, want %s", got, tc.served)
			}
			if tc.served != want {
				return // the control: the forgery itself works
			}
			if compiles.Load() != 1 {
				t.Errorf("%d compiles, want the files compiled", compiles.Load())
			}
			if !strings.Contains(logs.String(), `level=WARN msg="proto files: ignoring the compile cache entry; compiling"`) ||
				!strings.Contains(logs.String(), "its MAC does not match") {
				t.Errorf("no warning about the forged entry:\n%s", logs.String())
			}
		})
	}
}

// TestProtoCacheKeyPrivate: a cache key others may read or write is not
// used: the entries are not read (the files are compiled) nor written,
// and the warning says how to fix it.
func TestProtoCacheKeyPrivate(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "api.proto"), []byte(victimAPI), 0o644); err != nil {
		t.Fatal(err)
	}
	cache := filepath.Join(t.TempDir(), "protos")
	var compiles atomic.Int32
	compiledAPI(t, dir, cache, nil, &compiles)
	if err := os.Chmod(cache+".key", 0o644); err != nil {
		t.Fatal(err)
	}
	var logs testkit.SyncBuffer
	compiles.Store(0)
	compiledAPI(t, dir, cache, slog.New(slog.NewTextHandler(&logs, nil)), &compiles)
	if compiles.Load() != 1 {
		t.Errorf("%d compiles with a key others may read, want 1", compiles.Load())
	}
	if want := "others may read or write it (mode -rw-r--r--); it must be the gateway user's alone (chmod 600), or the cache is not used"; !strings.Contains(logs.String(), want) {
		t.Errorf("no warning saying %q:\n%s", want, logs.String())
	}
}
