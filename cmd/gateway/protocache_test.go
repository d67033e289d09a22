package main

import (
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/grpc-mcp-gateway/gateway/reflection"
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
			if got := c.backends.files.(*reflection.ProtoSource).CacheDir; got != tc.want {
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
			if got := c.backends.parsed[0].file.backend.Files.(*reflection.ProtoSource).CacheDir; got != tc.want {
				t.Errorf("config file: cache dir %q, want %q", got, tc.want)
			}
		})
	}
}
