package descriptors

import (
	"context"
	"crypto/sha256"
	"os"
	"path/filepath"
	"testing"
)

// FuzzCacheEntry: whatever an entry holds past its MAC (the MAC is made
// with the cache's key, so the decoding is what is exercised), the
// source reads it without panicking: it returns a Result or an error.
//
//	go test ./reflection -run '^$' -fuzz FuzzCacheEntry -fuzztime 30s
func FuzzCacheEntry(f *testing.F) {
	dir := f.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "api.proto"), []byte("syntax = \"proto3\";\npackage api.v1;\nimport \"google/protobuf/timestamp.proto\";\nmessage M { google.protobuf.Timestamp at = 1; }\nservice S {\n  rpc Get(M) returns (M);\n}\n"), 0o644); err != nil {
		f.Fatal(err)
	}
	cache := f.TempDir()
	src := NewProtoSource([]string{dir}, []string{"api.proto"})
	src.CacheDir = cache
	if _, err := src.Discover(context.Background()); err != nil {
		f.Fatal(err)
	}
	src.cacheWrites.Wait()
	key := src.cacheKey()
	entry, err := os.ReadFile(src.cachePath(key))
	if err != nil {
		f.Fatal(err)
	}
	macKey, err := src.cacheMACKey(false)
	if err != nil {
		f.Fatal(err)
	}
	body := entry[len(cacheMagic)+sha256.Size:]
	f.Add(body)
	f.Add(body[:len(body)/2])
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, body []byte) {
		path := filepath.Join(t.TempDir(), "entry"+cacheSuffix)
		if err := os.WriteFile(path, append(append([]byte(cacheMagic), cacheMAC(macKey, body)...), body...), 0o600); err != nil {
			t.Fatal(err)
		}
		run, err := src.readCache(key, path)
		if err == nil && (run.res == nil || run.in == nil) {
			t.Fatal("no error and no Result")
		}
	})
}
