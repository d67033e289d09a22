package main

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"

	"github.com/grpc-mcp-gateway/gateway/descriptors"
)

// version and commit are set at build time:
//
//	go build -ldflags "-X main.version=v1.2.3 -X main.commit=$(git rev-parse HEAD)"
//
// A build without -ldflags (go install, go run) falls back to the VCS
// revision the Go toolchain stamps into the binary.
var commit = ""

// versionString is what --version prints: enough to match a running
// binary to its source and toolchain in a bug report.
func versionString() string {
	c := commit
	if c == "" {
		c = "unknown"
		if info, ok := debug.ReadBuildInfo(); ok {
			var rev, modified string
			for _, s := range info.Settings {
				switch s.Key {
				case "vcs.revision":
					rev = s.Value
				case "vcs.modified":
					modified = s.Value
				}
			}
			if rev != "" {
				c = rev
				if modified == "true" {
					c += "-dirty"
				}
			}
		}
	}
	return fmt.Sprintf("grpc-mcp-gateway %s (commit %s, %s %s/%s)", version, c, runtime.Version(), runtime.GOOS, runtime.GOARCH)
}

// checkConfig is --check-config after the settings validated (which
// read the descriptor files and compiled the .proto files): it also
// builds each backend's client (which reads its TLS files) without
// connecting, waits for the compiles' cache entries to be written, then
// reports. Nothing is started.
func checkConfig(c *config, stdout, stderr io.Writer) int {
	backends, conns, err := c.backends.dial(c.tls)
	for _, conn := range conns {
		conn.Close()
	}
	if err != nil {
		fmt.Fprintln(stderr, "gateway:", c.inSettingWords(err))
		return 1
	}
	if err := checkToolOverrides(c, backends, stdout); err != nil {
		fmt.Fprintln(stderr, "gateway:", c.inSettingWords(err))
		return 1
	}
	note := ""
	if len(backends) == 0 {
		note = " (none given: the bundled demo backend would start)"
	}
	fmt.Fprintf(stdout, "config OK: %d backends%s\n", len(backends), note)
	seen := make(map[*descriptors.ProtoSource]bool)
	for _, b := range backends {
		ps, ok := b.Files.(*descriptors.ProtoSource)
		if !ok || seen[ps] {
			continue
		}
		seen[ps] = true
		// The files compiled when the settings were read: this Discover
		// returns that Result (or compiles again what changed since).
		res, err := ps.Discover(context.Background())
		if err != nil {
			fmt.Fprintln(stderr, "gateway:", c.inSettingWords(err))
			return 1
		}
		kept := "no --proto-cache: every start compiles them"
		if ps.CacheDir != "" {
			if err := ps.FlushCache(); err != nil {
				fmt.Fprintf(stderr, "gateway: --proto-cache %s: the compile of backend %s's .proto files could not be kept: %v\n", ps.CacheDir, b.Name, err)
				return 1
			}
			kept = "kept in the compile cache " + ps.CacheDir + ", which the next start with the same files reads instead of compiling"
		}
		fmt.Fprintf(stdout, "backend %s: .proto files compiled: %d services in %d files; %s\n", b.Name, len(res.Services), res.Files.NumFiles(), kept)
	}
	return 0
}
