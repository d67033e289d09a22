package descriptors

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	refv1 "google.golang.org/grpc/reflection/grpc_reflection_v1"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"
)

// ServerReflectionOptions configures NewServerReflection. The zero value,
// like nil, gives the defaults.
type ServerReflectionOptions struct {
	// Logger receives repairs (debug), dropped imports and skipped
	// services (info, warn). Nil discards them.
	Logger *slog.Logger
	// SkipBrokenServices makes Discover leave out, with a logged warning, a
	// service whose descriptors cannot be fetched or built, instead of
	// failing. Off by default: a gateway that silently drops tools is harder
	// to debug than one that refuses to start and says why.
	SkipBrokenServices bool
	// LookupTimeout bounds each lookup of a type by Result.Resolver (see
	// TypeResolver), on top of its caller's ctx. Zero means
	// DefaultLookupTimeout (5s).
	LookupTimeout time.Duration
	// MaxLookups bounds the type names Result.Resolver asks the backend
	// about, described or not, for its life; past it, it asks nothing
	// more, so a backend that sends ever new type names costs the gateway
	// neither unbounded round trips nor memory. Zero means
	// DefaultMaxLookups (256).
	MaxLookups int
}

type serverReflection struct {
	conn   grpc.ClientConnInterface
	logger *slog.Logger
	skip   bool
	// lookupTimeout and maxLookups configure each Result's TypeResolver.
	lookupTimeout time.Duration
	maxLookups    int

	// mu guards last, the previous clean discovery (no service failed),
	// returned again when the backend answers exactly as it did then: a
	// refresh of an unchanged backend then costs the round trips and a
	// hash, not a rebuild of every descriptor.
	mu   sync.Mutex
	last *Result
	// script is every request the discovery of last made, in order, with
	// a hash of each answer. A refresh replays it, hashing the answers
	// without decoding a file; when every answer is the same, so is the
	// Result, and last is returned.
	script []step
}

// step is one request of a discovery and a hash of its answer.
type step struct {
	req *refv1.ServerReflectionRequest
	sum [sha256.Size]byte
}

// NewServerReflection returns a Source that asks the backend behind conn
// over gRPC server reflection, v1 first and v1alpha when v1 is
// Unimplemented. conn is not closed by the source. opts may be nil.
//
// It works with reflection servers other than grpc-go's (grpc-js, grpc-java,
// grpc-dotnet, tonic): the raw FileDescriptorProtos are fetched, then
// repaired where the intent is unambiguous (relative type names, missing
// imports, misnamed map entries; see the package doc) and completed from
// the bundled google.protobuf, google.api and google.rpc files before they
// are built.
//
// The Result's Resolver looks up, on the same backend and stream method,
// the message types its Files do not declare (see TypeResolver); a Result
// returned again for an unchanged backend keeps its Resolver, and with it
// what the Resolver learnt.
//
// Discover's errors name what failed and wrap its cause: a backend that
// cannot be reached gives an error whose status.Code is Unavailable (or
// DeadlineExceeded when ctx ran out first); a backend without reflection
// gives ErrReflectionNotSupported; a service whose files cannot be fetched,
// repaired or built gives an error naming the service and wrapping a
// *DescriptorError per fault (see SkipBrokenServices). Each Discover opens
// at most two reflection streams (v1, then v1alpha), one at a time, and
// closes them before returning.
func NewServerReflection(conn grpc.ClientConnInterface, opts *ServerReflectionOptions) Source {
	if opts == nil {
		opts = &ServerReflectionOptions{}
	}
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &serverReflection{conn: conn, logger: logger, skip: opts.SkipBrokenServices,
		lookupTimeout: opts.LookupTimeout, maxLookups: opts.MaxLookups}
}

var reflectionMethods = []string{
	"/grpc.reflection.v1.ServerReflection/ServerReflectionInfo",
	// v1alpha's messages are wire-identical to v1's, so one set of Go
	// types speaks both.
	"/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo",
}

// maxRounds bounds the follow-up requests for imports and symbols a server
// left out, so a server that keeps answering with new files cannot keep
// discovery going forever.
const maxRounds = 64

// Discover implements Source.
func (s *serverReflection) Discover(ctx context.Context) (*Result, error) {
	s.mu.Lock()
	last, script := s.last, s.script
	s.mu.Unlock()
	if last != nil && s.replay(ctx, script) {
		return last, nil
	}
	st, names, err := s.open(ctx)
	if err != nil {
		return nil, err
	}
	defer st.close()

	p := newPool(s.logger, "reflection")
	serviceErr := make(map[protoreflect.FullName]error)
	var services []protoreflect.FullName
	for _, name := range names {
		if strings.HasPrefix(string(name), "grpc.reflection.") {
			continue
		}
		services = append(services, name)
		if p.declaresService(string(name)) {
			// A file already sent declares it: grpc-go's server would send
			// that whole file again (for Compute Engine, 1 MB for each of
			// its 129 services).
			continue
		}
		files, err := st.fileContainingSymbol(string(name))
		if err != nil {
			if isTransportError(err) {
				return nil, s.fail(ctx, name, err)
			}
			serviceErr[name] = fmt.Errorf("fetch file: %w", err)
			continue
		}
		for _, f := range files {
			p.add(f)
		}
	}
	if err := complete(st, p, s.logger); err != nil {
		return nil, fmt.Errorf("reflection: %w", ctxErr(ctx, err))
	}
	fp := st.fingerprint(services)
	if len(serviceErr) == 0 {
		s.mu.Lock()
		last := s.last
		s.mu.Unlock()
		if last != nil && last.Fingerprint == fp {
			s.remember(last, st.script)
			return last, nil
		}
	}
	p.repair()

	res := &Result{}
	for _, name := range services {
		sd, err := s.service(p, name, serviceErr[name])
		if err != nil {
			if c := ctx.Err(); c != nil {
				return nil, fmt.Errorf("reflection: service %s: %w: %w", name, c, err)
			}
			if s.skip {
				s.logger.Warn("reflection: skipping service whose descriptors cannot be loaded", "service", string(name), "err", err)
				continue
			}
			return nil, fmt.Errorf("reflection: service %s: %w", name, err)
		}
		res.Services = append(res.Services, sd)
	}
	res.Files = p.reg
	if res.Files == nil {
		res.Files = new(protoregistry.Files)
	}
	res.Comments = p.comments()
	res.Resolver = newTypeResolver(s.conn, st.method, res.Files, s.logger, s.lookupTimeout, s.maxLookups)
	sortServices(res.Services)
	if len(serviceErr) == 0 && len(res.Services) == len(services) {
		res.Fingerprint = fp
		s.remember(res, st.script)
	}
	return res, nil
}

func (s *serverReflection) remember(res *Result, script []step) {
	s.mu.Lock()
	s.last, s.script = res, script
	s.mu.Unlock()
}

// replay makes the requests of script again and reports whether every
// answer hashes as it did then. Any failure or difference says no: the
// full discovery that follows finds out what changed and reports errors.
func (s *serverReflection) replay(ctx context.Context, script []step) bool {
	if len(script) == 0 {
		return false
	}
	st, _, err := s.open(ctx)
	if err != nil {
		return false
	}
	defer st.close()
	if len(st.script) != 1 || st.script[0].sum != script[0].sum { // the service list
		return false
	}
	for _, want := range script[1:] {
		if _, err := st.roundTrip(proto.CloneOf(want.req)); err != nil && isTransportError(err) {
			return false
		}
		if got := st.script[len(st.script)-1]; got.sum != want.sum {
			return false
		}
	}
	return true
}

func (s *serverReflection) service(p *pool, name protoreflect.FullName, fetchErr error) (protoreflect.ServiceDescriptor, error) {
	if fetchErr != nil {
		return nil, fetchErr
	}
	sym, ok := p.lookup(string(name))
	if !ok || sym.kind != symOther {
		return nil, fmt.Errorf("the server listed it but sent no file declaring it")
	}
	fd, err := p.build(sym.file)
	if err != nil {
		return nil, err
	}
	sd := fd.Services().ByName(name.Name())
	if sd == nil || sd.FullName() != name {
		return nil, fmt.Errorf("file %s does not declare service %s", fd.Path(), name)
	}
	return sd, nil
}

func (s *serverReflection) fail(ctx context.Context, name protoreflect.FullName, err error) error {
	return fmt.Errorf("reflection: service %s: fetch file: %w", name, ctxErr(ctx, err))
}

// ctxErr puts ctx's error in front of err when ctx is done, so both
// errors.Is(err, context.DeadlineExceeded) and status.Code(err) work.
func ctxErr(ctx context.Context, err error) error {
	if c := ctx.Err(); c != nil {
		return fmt.Errorf("%w: %w", c, err)
	}
	return err
}

// complete asks for what the first answers lacked: imports not sent along
// (file_by_filename) and, for servers that send files without imports or
// with relative names, the files declaring referenced types
// (file_containing_symbol). Names the server does not know are left to
// repair and build, which fall back on the bundle or report them.
func complete(st *stream, p *pool, logger *slog.Logger) error {
	asked := make(map[string]bool)
	for range maxRounds {
		progress := false
		for _, dep := range p.missingImports() {
			if asked["file:"+dep] {
				continue
			}
			asked["file:"+dep] = true
			files, err := st.fileByFilename(dep)
			if err != nil {
				if isTransportError(err) {
					return fmt.Errorf("fetch import %s: %w", dep, err)
				}
				logger.Debug("reflection: the server does not serve an imported file", "file", dep, "err", err)
				continue
			}
			for _, f := range files {
				progress = p.add(f) || progress
			}
		}
		for _, candidates := range p.unresolved() {
			for _, sym := range candidates {
				if asked["sym:"+sym] {
					continue
				}
				asked["sym:"+sym] = true
				files, err := st.fileContainingSymbol(sym)
				if err != nil {
					if isTransportError(err) {
						return fmt.Errorf("fetch symbol %s: %w", sym, err)
					}
					continue
				}
				for _, f := range files {
					progress = p.add(f) || progress
				}
				break
			}
		}
		if !progress {
			return nil
		}
	}
	logger.Warn("reflection: stopped asking the server for missing files", "rounds", maxRounds)
	return nil
}

// stream is one open reflection stream. Requests go one at a time: the
// protocol answers in order, and a gateway discovers rarely enough that
// pipelining is not worth its complexity.
type stream struct {
	cs     grpc.ClientStream
	cancel context.CancelFunc
	host   string
	// method is the reflection method the stream speaks (v1 or v1alpha),
	// which later lookups of the same backend use.
	method string
	// script records every round trip, for the next discovery's replay.
	script []step
	// sums holds a hash of each file's bytes as the server sent them, by
	// file name (the first copy, as the pool keeps the first).
	sums map[string][sha256.Size]byte
}

// fingerprint hashes what the server answered: the services listed and
// every file received, in name order. Equal fingerprints mean the same
// bytes, so the same Result.
func (st *stream) fingerprint(services []protoreflect.FullName) [sha256.Size]byte {
	names := make([]string, 0, len(st.sums))
	for name := range st.sums {
		names = append(names, name)
	}
	slices.Sort(names)
	h := sha256.New()
	for _, name := range names {
		sum := st.sums[name]
		fmt.Fprintf(h, "%d:%s", len(name), name)
		h.Write(sum[:])
	}
	for _, name := range services {
		fmt.Fprintf(h, "%d:%s", len(name), name)
	}
	var fp [sha256.Size]byte
	h.Sum(fp[:0])
	return fp
}

func (st *stream) close() {
	_ = st.cs.CloseSend()
	st.cancel()
}

// open opens a stream on v1, or on v1alpha when v1 is Unimplemented, and
// lists the services with it.
func (s *serverReflection) open(ctx context.Context) (*stream, []protoreflect.FullName, error) {
	var errs []error
	for _, method := range reflectionMethods {
		st, err := openStream(ctx, s.conn, method)
		if err != nil {
			return nil, nil, listError(ctx, err)
		}
		resp, err := st.roundTrip(&refv1.ServerReflectionRequest{MessageRequest: &refv1.ServerReflectionRequest_ListServices{ListServices: "*"}})
		if status.Code(err) == codes.Unimplemented {
			st.close()
			errs = append(errs, err)
			continue
		}
		if err != nil {
			st.close()
			return nil, nil, listError(ctx, err)
		}
		var names []protoreflect.FullName
		for _, svc := range resp.GetListServicesResponse().GetService() {
			names = append(names, protoreflect.FullName(svc.GetName()))
		}
		slices.Sort(names)
		return st, slices.Compact(names), nil
	}
	return nil, nil, listError(ctx, errors.Join(errs...))
}

// openStream opens a reflection stream on method. The stream gets its own
// ctx so that close ends it even when the caller's ctx lives on: nothing
// outlives the Discover or the lookup that opened it.
func openStream(ctx context.Context, conn grpc.ClientConnInterface, method string) (*stream, error) {
	sctx, cancel := context.WithCancel(ctx)
	cs, err := conn.NewStream(sctx, &grpc.StreamDesc{ServerStreams: true, ClientStreams: true}, method)
	if err != nil {
		cancel()
		return nil, err
	}
	return &stream{cs: cs, cancel: cancel, method: method}, nil
}

// listError classifies the first call's failure, the one that tells an
// unreachable backend and one without reflection from the rest.
func listError(ctx context.Context, err error) error {
	unimplemented := status.Code(err) == codes.Unimplemented
	if !unimplemented {
		// errors.Join hides the status from status.Code; a lone one
		// does not need it.
		var st interface{ GRPCStatus() *status.Status }
		if errors.As(err, &st) && st.GRPCStatus().Code() == codes.Unimplemented {
			unimplemented = true
			err = st.(error)
		}
	}
	if ctxE := ctx.Err(); ctxE != nil && !unimplemented {
		return fmt.Errorf("reflection: list services: %w: %w", ctxE, err)
	}
	if unimplemented {
		return fmt.Errorf("reflection: list services: %w (neither grpc.reflection.v1 nor v1alpha): %w", ErrReflectionNotSupported, err)
	}
	return fmt.Errorf("reflection: list services: %w", err)
}

// inBandError is a reflection ErrorResponse: the stream is fine, the
// server just does not know the name asked for.
type inBandError struct{ st *status.Status }

func (e *inBandError) Error() string              { return e.st.Err().Error() }
func (e *inBandError) GRPCStatus() *status.Status { return e.st }

func isTransportError(err error) bool {
	var ib *inBandError
	return !errors.As(err, &ib)
}

func (st *stream) roundTrip(req *refv1.ServerReflectionRequest) (*refv1.ServerReflectionResponse, error) {
	req.Host = st.host
	if err := st.cs.SendMsg(req); err != nil {
		// SendMsg reports io.EOF when the stream failed; RecvMsg has the
		// real status.
		resp := new(refv1.ServerReflectionResponse)
		if rerr := st.cs.RecvMsg(resp); rerr != nil {
			return nil, rerr
		}
		return nil, err
	}
	resp := new(refv1.ServerReflectionResponse)
	if err := st.cs.RecvMsg(resp); err != nil {
		return nil, err
	}
	st.script = append(st.script, step{req: req, sum: answerSum(resp)})
	if e := resp.GetErrorResponse(); e != nil {
		return nil, &inBandError{status.New(codes.Code(e.GetErrorCode()), e.GetErrorMessage())}
	}
	return resp, nil
}

// answerSum hashes what an answer says: the files' bytes, the services
// listed, or the error.
func answerSum(resp *refv1.ServerReflectionResponse) [sha256.Size]byte {
	h := sha256.New()
	switch r := resp.GetMessageResponse().(type) {
	case *refv1.ServerReflectionResponse_FileDescriptorResponse:
		for _, b := range r.FileDescriptorResponse.GetFileDescriptorProto() {
			fmt.Fprintf(h, "f%d:", len(b))
			h.Write(b)
		}
	case *refv1.ServerReflectionResponse_ListServicesResponse:
		for _, svc := range r.ListServicesResponse.GetService() {
			fmt.Fprintf(h, "s%d:%s", len(svc.GetName()), svc.GetName())
		}
	case *refv1.ServerReflectionResponse_ErrorResponse:
		fmt.Fprintf(h, "e%d:%s", r.ErrorResponse.GetErrorCode(), r.ErrorResponse.GetErrorMessage())
	default:
		fmt.Fprintf(h, "%T", r)
	}
	var sum [sha256.Size]byte
	h.Sum(sum[:0])
	return sum
}

func (st *stream) fileContainingSymbol(name string) ([]*descriptorpb.FileDescriptorProto, error) {
	return st.files(&refv1.ServerReflectionRequest{MessageRequest: &refv1.ServerReflectionRequest_FileContainingSymbol{FileContainingSymbol: name}})
}

func (st *stream) fileByFilename(name string) ([]*descriptorpb.FileDescriptorProto, error) {
	return st.files(&refv1.ServerReflectionRequest{MessageRequest: &refv1.ServerReflectionRequest_FileByFilename{FileByFilename: name}})
}

func (st *stream) files(req *refv1.ServerReflectionRequest) ([]*descriptorpb.FileDescriptorProto, error) {
	resp, err := st.roundTrip(req)
	if err != nil {
		return nil, err
	}
	raw := resp.GetFileDescriptorResponse().GetFileDescriptorProto()
	out := make([]*descriptorpb.FileDescriptorProto, 0, len(raw))
	for _, b := range raw {
		fd := new(descriptorpb.FileDescriptorProto)
		if err := unmarshalFile(b, fd); err != nil {
			// The stream itself is fine; the server sent garbage for
			// this name, which the caller reports like a missing file.
			return nil, &inBandError{status.Newf(codes.DataLoss, "undecodable FileDescriptorProto: %v", err)}
		}
		if fd.GetName() == "" {
			return nil, &inBandError{status.New(codes.DataLoss, "FileDescriptorProto without a name")}
		}
		if _, seen := st.sums[fd.GetName()]; !seen {
			if st.sums == nil {
				st.sums = make(map[string][sha256.Size]byte)
			}
			st.sums[fd.GetName()] = sha256.Sum256(b)
		}
		out = append(out, fd)
	}
	return out, nil
}
