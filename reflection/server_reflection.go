package reflection

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"

	"github.com/jhump/protoreflect/v2/grpcreflect"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
)

// ServerReflectionOptions configures NewServerReflection. The zero value,
// like nil, gives the defaults.
type ServerReflectionOptions struct {
	// Logger receives warnings (a skipped service, a file taken from the
	// gateway's bundled copies). Nil discards them.
	Logger *slog.Logger
	// SkipBrokenServices makes Discover leave out, with a logged warning, a
	// service whose descriptors cannot be fetched or built, instead of
	// failing. Off by default: a gateway that silently drops tools is harder
	// to debug than one that refuses to start and says why.
	SkipBrokenServices bool
}

// bundledPrefixes are the files Discover may take from the gateway's own
// compiled-in copies (protoregistry.GlobalFiles) when the backend references
// but does not serve them. These are shared definitions whose content does
// not vary between backends; a backend's own files are never substituted,
// since a stale copy would silently change its API.
var bundledPrefixes = []string{"google/protobuf/", "google/rpc/"}

// bundledPackages are the proto packages of bundledPrefixes, for lookups by
// symbol.
var bundledPackages = []string{"google.protobuf.", "google.rpc."}

type serverReflection struct {
	conn   grpc.ClientConnInterface
	logger *slog.Logger
	skip   bool
}

// NewServerReflection returns a Source that asks the backend behind conn
// over gRPC server reflection, v1 first and v1alpha when v1 is
// Unimplemented. conn is not closed by the source. opts may be nil.
//
// Discover's errors name what failed and wrap its cause: a backend that
// cannot be reached gives an error whose status.Code is Unavailable (or
// DeadlineExceeded when ctx ran out first); a backend without reflection
// gives ErrReflectionNotSupported; a service whose files cannot be fetched
// or built gives an error naming the service (see SkipBrokenServices). Each
// Discover opens at most one reflection stream and closes it before
// returning.
func NewServerReflection(conn grpc.ClientConnInterface, opts *ServerReflectionOptions) Source {
	if opts == nil {
		opts = &ServerReflectionOptions{}
	}
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &serverReflection{conn: conn, logger: logger, skip: opts.SkipBrokenServices}
}

// Discover implements Source.
func (s *serverReflection) Discover(ctx context.Context) (*Result, error) {
	// The client keeps ctx for the stream it opens; Reset closes that
	// stream, so nothing outlives this call.
	client := grpcreflect.NewClientAuto(ctx, s.conn,
		grpcreflect.WithFallbackResolvers(&bundled{logger: s.logger}, protoregistry.GlobalTypes),
		// A file whose missing import only supplies custom options (say
		// google/api/annotations.proto) still builds; its options stay as
		// unknown fields, which the gateway does not read.
		grpcreflect.WithAllowMissingFileDescriptors(),
	)
	defer client.Reset()

	names, err := client.ListServices()
	if err != nil {
		return nil, listError(ctx, err)
	}
	slices.Sort(names)
	names = slices.Compact(names)

	res := &Result{Files: new(protoregistry.Files)}
	for _, name := range names {
		if strings.HasPrefix(string(name), "grpc.reflection.") {
			continue
		}
		sd, err := serviceDescriptor(client, name)
		if err == nil {
			err = addFileWithDeps(res.Files, sd.ParentFile())
		}
		if err != nil {
			if ctxErr := ctx.Err(); ctxErr != nil {
				return nil, fmt.Errorf("reflection: service %s: %w: %w", name, ctxErr, err)
			}
			if s.skip {
				s.logger.Warn("reflection: skipping service whose descriptors cannot be loaded", "service", string(name), "err", err)
				continue
			}
			return nil, fmt.Errorf("reflection: service %s: %w", name, err)
		}
		res.Services = append(res.Services, sd)
	}
	return res, nil
}

// listError classifies the first call's failure, the one that tells an
// unreachable backend and one without reflection from the rest.
func listError(ctx context.Context, err error) error {
	// Both ctx's error and the status are wrapped, so errors.Is(err,
	// context.DeadlineExceeded) and status.Code(err) both work.
	if ctxErr := ctx.Err(); ctxErr != nil && status.Code(err) != codes.Unimplemented {
		return fmt.Errorf("reflection: list services: %w: %w", ctxErr, err)
	}
	if status.Code(err) == codes.Unimplemented {
		return fmt.Errorf("reflection: list services: %w (neither grpc.reflection.v1 nor v1alpha): %w", ErrReflectionNotSupported, err)
	}
	return fmt.Errorf("reflection: list services: %w", err)
}

func serviceDescriptor(client *grpcreflect.Client, name protoreflect.FullName) (protoreflect.ServiceDescriptor, error) {
	fd, err := client.FileContainingSymbol(name)
	if err != nil {
		return nil, fmt.Errorf("fetch file: %w", err)
	}
	sd := fd.Services().ByName(name.Name())
	if sd == nil || sd.FullName() != name {
		return nil, fmt.Errorf("file %s does not declare service %s", fd.Path(), name)
	}
	return sd, nil
}

// addFileWithDeps registers fd and, first, everything it imports, skipping
// what is already there: services share most of their imports.
func addFileWithDeps(files *protoregistry.Files, fd protoreflect.FileDescriptor) error {
	if _, err := files.FindFileByPath(fd.Path()); err == nil {
		return nil
	}
	imports := fd.Imports()
	for i := range imports.Len() {
		imp := imports.Get(i)
		if imp.IsPlaceholder() {
			// A missing import tolerated by WithAllowMissingFileDescriptors.
			continue
		}
		if err := addFileWithDeps(files, imp.FileDescriptor); err != nil {
			return err
		}
	}
	if err := files.RegisterFile(fd); err != nil {
		return fmt.Errorf("register %s: %w", fd.Path(), err)
	}
	return nil
}

// bundled answers for the well-known files a backend references but does not
// serve (seen in grpcurl #459, #547), from the copies compiled into this
// binary, and for nothing else.
type bundled struct{ logger *slog.Logger }

var _ protodesc.Resolver = (*bundled)(nil)

func (b *bundled) FindFileByPath(path string) (protoreflect.FileDescriptor, error) {
	if !hasAnyPrefix(path, bundledPrefixes) {
		return nil, protoregistry.NotFound
	}
	fd, err := protoregistry.GlobalFiles.FindFileByPath(path)
	if err == nil {
		b.logger.Debug("reflection: backend did not serve a well-known file; using the bundled copy", "file", path)
	}
	return fd, err
}

func (b *bundled) FindDescriptorByName(name protoreflect.FullName) (protoreflect.Descriptor, error) {
	if !hasAnyPrefix(string(name), bundledPackages) {
		return nil, protoregistry.NotFound
	}
	d, err := protoregistry.GlobalFiles.FindDescriptorByName(name)
	if err == nil {
		b.logger.Debug("reflection: backend did not serve a well-known symbol; using the bundled copy", "symbol", string(name))
	}
	return d, err
}

func hasAnyPrefix(s string, prefixes []string) bool {
	return slices.ContainsFunc(prefixes, func(p string) bool { return strings.HasPrefix(s, p) })
}
