package main

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"

	"google.golang.org/grpc"

	"github.com/grpc-mcp-gateway/gateway/descriptors"
	"github.com/grpc-mcp-gateway/gateway/gateway"
	"github.com/grpc-mcp-gateway/gateway/gateway/backendconn"
	"github.com/grpc-mcp-gateway/gateway/internal/grpctarget"
	"github.com/grpc-mcp-gateway/gateway/internal/methodglob"
)

// backendFlags are the flags that say what the gateway fronts and how it
// learns and refreshes their APIs.
type backendFlags struct {
	backends       stringList
	descriptorSets stringList
	protoPaths     stringList
	protos         stringList
	protoCache     string
	noReflection   bool
	conn           connFlags

	// Derived by check.
	parsed []backendAddr
	files  descriptors.Source
}

// backendAddr is one --backend, or one backend of the config file, which
// may carry settings of its own (file; nil for --backend).
type backendAddr struct {
	name, addr string
	file       *fileBackendSettings
}

// check validates the flags and, for descriptor files, reads or compiles
// them once, so that a bad file is reported at start naming its flag.
func (f *backendFlags) check(ctx context.Context, catalog *gateway.CatalogOptions) error {
	for _, b := range f.backends {
		name, addr, named := grpctarget.SplitBackendFlag(b)
		if !named && len(f.backends) > 1 {
			return settingErrorf("%s: with several backends each needs a name, as NAME=TARGET; got %q", flagName("backend"), b)
		}
		if named {
			if err := gateway.ValidBackendName(name); err != nil {
				return settingErrorf("%s %s: %w", flagName("backend"), b, err)
			}
		}
		if err := grpctarget.Check(addr); err != nil {
			return settingErrorf("%s: %w", flagName("backend"), err)
		}
		for _, p := range f.parsed {
			if named && p.name == name {
				return settingErrorf("%s: the name %q is used twice", flagName("backend"), name)
			}
		}
		f.parsed = append(f.parsed, backendAddr{name: name, addr: addr})
	}
	if err := f.conn.check(); err != nil {
		return err
	}
	// The library's own check, so its error names the setting as given.
	if _, err := methodglob.CompileOption(declared("include").field, catalog.Include); err != nil {
		return err
	}
	if _, err := methodglob.CompileOption(declared("exclude").field, catalog.Exclude); err != nil {
		return err
	}
	if len(f.protoPaths) > 0 && len(f.protos) == 0 {
		return settingErrorf("%s needs %s", flagName("proto-path"), flagName("proto"))
	}
	if len(f.descriptorSets) > 0 && len(f.protos) > 0 {
		return settingErrorf("%s and %s: choose one way to give descriptor files", flagName("descriptor-set"), flagName("proto"))
	}
	src, fromProto, err := descriptorSource(ctx, f.descriptorSets, f.protoPaths, f.protos, f.cacheDir())
	switch {
	case err != nil && fromProto:
		return settingErrorf("%s: %w", flagName("proto"), err)
	case err != nil:
		return settingErrorf("%s: %w", flagName("descriptor-set"), err)
	case src != nil:
		f.files = src
	}
	if f.noReflection {
		if f.files == nil {
			return settingErrorf("%s needs %s or %s", flagName("no-reflection"), flagName("descriptor-set"), flagName("proto"))
		}
		if len(f.parsed) > 1 {
			return settingErrorf("%s: the descriptor files would describe every backend alike; with several backends, give each its own files in the config file", flagName("no-reflection"))
		}
	}
	return nil
}

// setLogger sends the descriptor sources' repair and fallback records to
// logger, once it exists: those of the flags and of the config file's
// backends.
func (f *backendFlags) setLogger(logger *slog.Logger) {
	sources := []descriptors.Source{f.files}
	for _, p := range f.parsed {
		if p.file != nil {
			sources = append(sources, p.file.backend.Files)
		}
	}
	usesProto := false
	for _, src := range sources {
		switch s := src.(type) {
		case *descriptors.DescriptorSetSource:
			s.Logger = logger
		case *descriptors.ProtoSource:
			s.Logger = logger
			usesProto = true
		}
	}
	if _, err := protoCacheDir(f.protoCache); err != nil && usesProto {
		logger.Warn("--proto-cache: no default cache directory; compiling .proto files at every start (set --proto-cache DIR, or off)", "err", err)
	}
}

// cacheDir is the directory ProtoSources keep their compiles in, "" for
// none.
func (f *backendFlags) cacheDir() string {
	dir, _ := protoCacheDir(f.protoCache)
	return dir
}

// protoCacheDir is --proto-cache's directory: flag itself, none for off,
// and by default the user cache directory's grpc-mcp-gateway/protos (the
// XDG cache directory on Linux, ~/Library/Caches on macOS, %LocalAppData%
// on Windows): compiled descriptors are derived data, safe to lose, and
// kept per user (the directory is made 0700). err says why there is no
// default.
func protoCacheDir(flag string) (string, error) {
	switch flag {
	case "off":
		return "", nil
	case "":
		dir, err := os.UserCacheDir()
		if err != nil {
			return "", err
		}
		return filepath.Join(dir, "grpc-mcp-gateway", "protos"), nil
	}
	return flag, nil
}

// dial connects to every backend. close closes what was opened, also
// after an error.
func (f *backendFlags) dial(tls backendconn.TLS, opts ...grpc.DialOption) (backends []gateway.Backend, conns []*backendconn.Conn, err error) {
	checked := false
	for _, p := range f.parsed {
		o := f.conn.options(tls)
		if p.file != nil {
			if p.file.tls != nil {
				o.TLS = *p.file.tls
			}
			p.file.conn.apply(&o)
		}
		// A file backend's own TLS keys were checked where the file was
		// read; the flags are checked here, once, for the backends that
		// use them.
		if (p.file == nil || p.file.tls == nil) && !checked {
			if err := checkFlagTLS(tls); err != nil {
				return nil, conns, err
			}
			checked = true
		}
		conn, err := backendconn.Dial(p.addr, o, opts...)
		if err != nil {
			return nil, conns, err
		}
		conns = append(conns, conn)
		b := gateway.Backend{
			Name:         p.name,
			Address:      p.addr,
			Conn:         conn,
			Files:        f.files,
			NoReflection: f.noReflection,
		}
		if p.file != nil {
			p.file.applyTo(&b)
		}
		backends = append(backends, b)
	}
	return backends, conns, nil
}

// descriptorSource is the source of the descriptor files given either as
// descriptor sets or as .proto files compiled against protoPaths ("." by
// default), for the flags and the config file alike. The files are read
// or compiled here, once, so that a bad one is reported at start; src is
// nil when neither is given, and fromProto says which one err is about.
// .proto files are compiled with protoCache as their cache directory
// ("" for none).
func descriptorSource(ctx context.Context, sets, protoPaths, protos []string, protoCache string) (src descriptors.Source, fromProto bool, err error) {
	switch {
	case len(sets) > 0:
		src = descriptors.NewDescriptorSetSource(sets...)
	case len(protos) > 0:
		if len(protoPaths) == 0 {
			protoPaths = []string{"."}
		}
		ps := descriptors.NewProtoSource(protoPaths, protos)
		ps.CacheDir = protoCache
		src, fromProto = ps, true
	default:
		return nil, false, nil
	}
	if _, err := src.Discover(ctx); err != nil {
		return nil, fromProto, err
	}
	return src, fromProto, nil
}
