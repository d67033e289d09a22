package main

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/grpc-mcp-gateway/gateway/internal/testkit"

	"github.com/grpc-mcp-gateway/gateway/descriptors"
)

// TestProtoCacheSetting: --proto-cache (and proto_cache in the file)
// names the directory the .proto sources of the flags and of the config
// file's backends keep their compiles in; off is none; the default is the
// user cache directory's grpc-mcp-gateway/protos.
func TestProtoCacheSetting(t *testing.T) {
	protos := t.TempDir()
	if err := os.WriteFile(filepath.Join(protos, "api.proto"), []byte("syntax = \"proto3\";\npackage api.v1;\nmessage M {}\nservice S {\n  rpc Get(M) returns (M);\n}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	userCache, err := os.UserCacheDir()
	if err != nil {
		t.Fatal(err)
	}
	byDefault := filepath.Join(userCache, "grpc-mcp-gateway", "protos")
	mine := t.TempDir()
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"default", nil, byDefault},
		{"dir", []string{"--proto-cache", mine}, mine},
		{"off", []string{"--proto-cache", "off"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"--backend", "127.0.0.1:50051", "--proto-path", protos, "--proto", "api.proto"}, tc.args...)
			c, err := parseConfig(args, io.Discard, noEnv)
			if err != nil {
				t.Fatal(err)
			}
			if got := c.backends.files.(*descriptors.ProtoSource).CacheDir; got != tc.want {
				t.Errorf("flags: cache dir %q, want %q", got, tc.want)
			}

			cfg := "backends:\n  - name: api\n    address: 127.0.0.1:50051\n    proto_path: [" + protos + "]\n    proto: [api.proto]\n"
			if len(tc.args) > 0 {
				cfg += "proto_cache: " + tc.args[1] + "\n"
			}
			c, err = parseConfig([]string{"--config", writeFile(t, "gateway.yaml", cfg)}, io.Discard, noEnv)
			if err != nil {
				t.Fatal(err)
			}
			if got := c.backends.parsed[0].file.backend.Files.(*descriptors.ProtoSource).CacheDir; got != tc.want {
				t.Errorf("config file: cache dir %q, want %q", got, tc.want)
			}
		})
	}
}

// TestCheckConfigKeepsCompile: --check-config compiles the .proto files
// and waits for their compile cache entry, so that running it when a
// container image is built leaves a cache every start of the image reads
// instead of compiling; a file that does not compile fails it, named.
func TestCheckConfigKeepsCompile(t *testing.T) {
	protos := t.TempDir()
	if err := os.WriteFile(filepath.Join(protos, "api.proto"), []byte("syntax = \"proto3\";\npackage api.v1;\nmessage M {}\nservice S {\n  rpc Get(M) returns (M);\n}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(protos, "broken.proto"), []byte("syntax = \"proto3\";\nmessage {\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cache := t.TempDir()
	config := func(proto string) string {
		return writeFile(t, "gateway.yaml", "backends:\n  - name: api\n    address: 127.0.0.1:1\n    proto_path: ["+protos+"]\n    proto: ["+proto+"]\nproto_cache: "+cache+"\n")
	}
	out, err := exec.Command(binary, "--check-config", config("api.proto")).Output()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if want := "backend api: .proto files compiled: 1 services in "; !strings.Contains(string(out), want) || !strings.Contains(string(out), "kept in the compile cache "+cache) {
		t.Errorf("stdout %q, want %q and the cache named", out, want)
	}
	if entries, _ := filepath.Glob(filepath.Join(cache, "*.protocache")); len(entries) != 1 {
		t.Fatalf("cache entries %q, want one", entries)
	}
	// A start with the same files reads it.
	var logs testkit.SyncBuffer
	ps := descriptors.NewProtoSource([]string{protos}, []string{"api.proto"})
	ps.CacheDir = cache
	ps.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	if _, err := ps.Discover(context.Background()); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(logs.String(), "loaded the last compile from the cache") {
		t.Errorf("the next start compiled:\n%s", logs.String())
	}

	// A cache that cannot be written fails it: an image built so would
	// compile at every start.
	notDir := writeFile(t, "plain", "")
	bad := writeFile(t, "unwritable.yaml", "backends:\n  - name: api\n    address: 127.0.0.1:1\n    proto_path: ["+protos+"]\n    proto: [api.proto]\nproto_cache: "+filepath.Join(notDir, "sub")+"\n")
	unwritable := exec.Command(binary, "--check-config", bad)
	var unwritableErr strings.Builder
	unwritable.Stderr = &unwritableErr
	var exit *exec.ExitError
	if err := unwritable.Run(); !errors.As(err, &exit) || exit.ExitCode() != 1 || !strings.Contains(unwritableErr.String(), "--proto-cache "+filepath.Join(notDir, "sub")+": the compile of backend api's .proto files could not be kept") {
		t.Errorf("an unwritable cache: %v, stderr %s; want exit 1 naming --proto-cache", err, unwritableErr.String())
	}

	cmd := exec.Command(binary, "--check-config", config("broken.proto"))
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Run(); !errors.As(err, &exit) || exit.ExitCode() != 1 || !strings.Contains(stderr.String(), "broken.proto:2:") {
		t.Errorf("a file that does not compile: %v, stderr %s; want exit 1 naming broken.proto:2", err, stderr.String())
	}
}
