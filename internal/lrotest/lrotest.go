// Package lrotest is a test backend with long-running operations (AIP-151):
// it serves google.longrunning.Operations and lrotest.v1.Jobs, whose Run
// method starts a job that finishes after a number of polls, fails, or
// never finishes, over real server reflection. Its descriptors are
// compiled at start from the .proto files beside it, so the gateway sees
// them exactly as it would a real API's, and every message is dynamic.
//
// Each GetOperation or WaitOperation of a running job advances it by one
// step (its metadata changes), so tests observe progress without timing.
package lrotest

import (
	"context"
	"fmt"
	"io"
	"net"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/reflection"
	refv1 "google.golang.org/grpc/reflection/grpc_reflection_v1"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/grpc-mcp-gateway/gateway/descriptors"
)

// Options shape the backend.
type Options struct {
	// NoWait answers WaitOperation with UNIMPLEMENTED, like a backend
	// that declares but does not implement it.
	NoWait bool
	// EagerWait answers WaitOperation at once, without advancing the job
	// or waiting out the timeout, like a backend whose Wait does not wait.
	EagerWait bool
	// FailCode is the code of a failing job's error; default
	// FAILED_PRECONDITION.
	FailCode codes.Code
	// ServerOptions are added to the gRPC server's, e.g. an interceptor
	// that records the calls a test counts.
	ServerOptions []grpc.ServerOption
}

// Server is a running backend.
type Server struct {
	Addr string
	opts Options

	files *protoregistry.Files
	types *dynamicpb.Types
	svcs  map[string]protoreflect.ServiceDescriptor

	mu     sync.Mutex
	jobs   map[string]*job
	order  []string
	cancel []string // names CancelOperation was called with
	polls  int      // GetOperation and WaitOperation calls
	waits  int      // WaitOperation calls answered
	// zonePolls are the (project, zone, operation) of each
	// ZoneOperations call.
	zonePolls [][3]string
	// md is the incoming metadata of the last call of each method
	// ("Service/Method").
	md map[string]metadata.MD
}

// Metadata returns the incoming metadata of the last call of method
// ("google.longrunning.Operations/GetOperation"), nil if none came.
func (s *Server) Metadata(method string) metadata.MD {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.md[method].Copy()
}

type job struct {
	zone        string // set for a Compute-style instance insert
	label       string
	steps, step int
	fail, never bool
	cancelled   bool
	created     time.Time
	updated     time.Time
	// until, when set, makes the job finish at that time instead of after
	// a number of polls (the conformance fixtures); seconds is its length.
	until   time.Time
	seconds float64
}

// ProtoDir is the import path of the backend's .proto files.
func ProtoDir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "proto")
}

// Start serves the backend on a loopback port until stop is called.
func Start(opts Options) (s *Server, stop func(), err error) {
	if opts.FailCode == 0 {
		opts.FailCode = codes.FailedPrecondition
	}
	src := descriptors.NewProtoSource([]string{ProtoDir()}, []string{"google/longrunning/operations.proto", "lrotest/v1/jobs.proto", "lrotest/v1/instances.proto", "lrotest/v1/fixture.proto"})
	res, err := src.Discover(context.Background())
	if err != nil {
		return nil, nil, fmt.Errorf("lrotest: compiling the protos: %w", err)
	}
	s = &Server{opts: opts, files: res.Files, types: dynamicpb.NewTypes(res.Files), svcs: map[string]protoreflect.ServiceDescriptor{}, jobs: map[string]*job{}}
	for _, svc := range res.Services {
		s.svcs[string(svc.FullName())] = svc
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, nil, err
	}
	gs := grpc.NewServer(append(slices.Clip(opts.ServerOptions), grpc.UnknownServiceHandler(s.handle))...)
	refv1.RegisterServerReflectionServer(gs, reflection.NewServerV1(reflection.ServerOptions{Services: s, DescriptorResolver: resolver{s.files}}))
	go func() { _ = gs.Serve(lis) }()
	s.Addr = lis.Addr().String()
	return s, gs.Stop, nil
}

// GetServiceInfo lists the services for reflection.
func (s *Server) GetServiceInfo() map[string]grpc.ServiceInfo {
	m := make(map[string]grpc.ServiceInfo, len(s.svcs))
	for name := range s.svcs {
		m[name] = grpc.ServiceInfo{}
	}
	return m
}

// resolver serves the compiled files and, for their imports, the linked
// well-known ones.
type resolver struct{ files *protoregistry.Files }

func (r resolver) FindFileByPath(p string) (protoreflect.FileDescriptor, error) {
	if fd, err := r.files.FindFileByPath(p); err == nil {
		return fd, nil
	}
	return protoregistry.GlobalFiles.FindFileByPath(p)
}

func (r resolver) FindDescriptorByName(n protoreflect.FullName) (protoreflect.Descriptor, error) {
	if d, err := r.files.FindDescriptorByName(n); err == nil {
		return d, nil
	}
	return protoregistry.GlobalFiles.FindDescriptorByName(n)
}

// Cancelled returns the operation names CancelOperation was called with.
func (s *Server) Cancelled() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.cancel)
}

// Polls returns how many GetOperation and WaitOperation calls arrived.
func (s *Server) Polls() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.polls
}

// Waits returns how many WaitOperation calls were answered.
func (s *Server) Waits() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.waits
}

// ZonePolls returns the project, zone and operation of every
// ZoneOperations.Get or Wait call.
func (s *Server) ZonePolls() [][3]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.zonePolls)
}

// Jobs returns the names of the operations started, oldest first.
func (s *Server) Jobs() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.order)
}

func (s *Server) handle(_ any, stream grpc.ServerStream) error {
	full, _ := grpc.MethodFromServerStream(stream)
	svcName, methodName := splitMethod(full)
	svc := s.svcs[svcName]
	if svc == nil {
		return status.Errorf(codes.Unimplemented, "unknown service %s", svcName)
	}
	md := svc.Methods().ByName(protoreflect.Name(methodName))
	if md == nil {
		return status.Errorf(codes.Unimplemented, "unknown method %s", full)
	}
	if got, ok := metadata.FromIncomingContext(stream.Context()); ok {
		s.mu.Lock()
		if s.md == nil {
			s.md = map[string]metadata.MD{}
		}
		s.md[svcName+"/"+methodName] = got.Copy()
		s.mu.Unlock()
	}
	in := dynamicpb.NewMessage(md.Input())
	if err := stream.RecvMsg(in); err != nil && err != io.EOF {
		return err
	}
	js, err := s.serve(stream.Context(), svcName+"/"+methodName, in)
	if err != nil {
		return err
	}
	out := dynamicpb.NewMessage(md.Output())
	if err := (protojson.UnmarshalOptions{Resolver: s.types}).Unmarshal([]byte(js), out); err != nil {
		return status.Errorf(codes.Internal, "lrotest: building the response %s: %v", js, err)
	}
	return stream.SendMsg(out)
}

func splitMethod(full string) (string, string) {
	for i := len(full) - 1; i >= 0; i-- {
		if full[i] == '/' {
			return full[1:i], full[i+1:]
		}
	}
	return "", full
}

func field(m proto.Message, name string) protoreflect.Value {
	r := m.ProtoReflect()
	return r.Get(r.Descriptor().Fields().ByName(protoreflect.Name(name)))
}

// serve answers one call with the response's protojson.
func (s *Server) serve(ctx context.Context, method string, in proto.Message) (string, error) {
	switch method {
	case "lrotest.v1.Jobs/Run", "lrotest.v1.Jobs/Peek":
		s.mu.Lock()
		defer s.mu.Unlock()
		name := "operations/job-" + strconv.Itoa(len(s.order)+1)
		now := time.Now().UTC()
		j := &job{label: field(in, "label").String(), steps: int(field(in, "steps").Int()),
			fail: field(in, "fail").Bool(), never: field(in, "never").Bool(), created: now, updated: now}
		s.jobs[name] = j
		s.order = append(s.order, name)
		return j.json(name, s.opts.FailCode), nil
	case "lrotest.v1.Instances/Insert":
		s.mu.Lock()
		defer s.mu.Unlock()
		name := "operation-" + strconv.Itoa(len(s.order)+1)
		j := &job{label: field(in, "instance_name").String(), zone: field(in, "zone").String(), steps: int(field(in, "steps").Int()),
			fail: field(in, "fail").Bool(), never: field(in, "never").Bool()}
		s.jobs[name] = j
		s.order = append(s.order, name)
		return j.computeJSON(name), nil
	case "lrotest.v1.ZoneOperations/Get", "lrotest.v1.ZoneOperations/Wait":
		name := field(in, "operation").String()
		s.mu.Lock()
		defer s.mu.Unlock()
		s.zonePolls = append(s.zonePolls, [3]string{field(in, "project").String(), field(in, "zone").String(), name})
		j := s.jobs[name]
		if j == nil || j.zone != field(in, "zone").String() {
			return "", status.Errorf(codes.NotFound, "operation %q not found in zone %q", name, field(in, "zone").String())
		}
		j.advance()
		return j.computeJSON(name), nil
	case "lrotest.v1.Fixture/Greet":
		return fmt.Sprintf(`{"message":%q}`, "Hello, "+field(in, "name").String()+"!"), nil
	case "lrotest.v1.Fixture/SlowCompute", "lrotest.v1.Fixture/FailingJob":
		s.mu.Lock()
		defer s.mu.Unlock()
		name := "operations/job-" + strconv.Itoa(len(s.order)+1)
		now := time.Now().UTC()
		j := &job{created: now, updated: now, seconds: 1, fail: method == "lrotest.v1.Fixture/FailingJob"}
		if !j.fail {
			j.label, j.seconds = field(in, "label").String(), field(in, "seconds").Float()
		}
		j.until = now.Add(time.Duration(j.seconds * float64(time.Second)))
		s.jobs[name] = j
		s.order = append(s.order, name)
		return j.json(name, s.opts.FailCode), nil
	case "google.longrunning.Operations/GetOperation":
		name := field(in, "name").String()
		s.mu.Lock()
		defer s.mu.Unlock()
		s.polls++
		j := s.jobs[name]
		if j == nil {
			return "", status.Errorf(codes.NotFound, "operation %q not found", name)
		}
		j.advance()
		return j.json(name, s.opts.FailCode), nil
	case "google.longrunning.Operations/WaitOperation":
		if s.opts.NoWait {
			return "", status.Error(codes.Unimplemented, "WaitOperation is not implemented")
		}
		name := field(in, "name").String()
		timeout := 5 * time.Second
		if d := field(in, "timeout").Message(); d.IsValid() {
			ds := d.Descriptor().Fields()
			timeout = time.Duration(d.Get(ds.ByName("seconds")).Int())*time.Second + time.Duration(d.Get(ds.ByName("nanos")).Int())
		}
		s.mu.Lock()
		s.polls++
		j := s.jobs[name]
		if j == nil {
			s.mu.Unlock()
			return "", status.Errorf(codes.NotFound, "operation %q not found", name)
		}
		if s.opts.EagerWait {
			defer s.mu.Unlock()
			s.waits++
			return j.json(name, s.opts.FailCode), nil
		}
		if j.never && !j.cancelled {
			s.mu.Unlock()
			// A job that never ends: wait out the timeout, as a real
			// backend would.
			t := time.NewTimer(timeout)
			defer t.Stop()
			select {
			case <-t.C:
			case <-ctx.Done():
				return "", status.FromContextError(ctx.Err()).Err()
			}
			s.mu.Lock()
		}
		defer s.mu.Unlock()
		s.waits++
		j.advance()
		return j.json(name, s.opts.FailCode), nil
	case "google.longrunning.Operations/CancelOperation":
		name := field(in, "name").String()
		s.mu.Lock()
		defer s.mu.Unlock()
		s.cancel = append(s.cancel, name)
		j := s.jobs[name]
		if j == nil {
			return "", status.Errorf(codes.NotFound, "operation %q not found", name)
		}
		if !j.done() {
			j.cancelled, j.updated = true, time.Now().UTC()
		}
		return "{}", nil
	case "google.longrunning.Operations/DeleteOperation":
		return "{}", nil
	case "google.longrunning.Operations/ListOperations":
		size := int(field(in, "page_size").Int())
		if size <= 0 {
			size = 50
		}
		from, _ := strconv.Atoi(field(in, "page_token").String())
		s.mu.Lock()
		defer s.mu.Unlock()
		js := `{"operations":[`
		end := min(from+size, len(s.order))
		for i := from; i < end; i++ {
			if i > from {
				js += ","
			}
			js += s.jobs[s.order[i]].json(s.order[i], s.opts.FailCode)
		}
		js += "]"
		if end < len(s.order) {
			js += fmt.Sprintf(`,"nextPageToken":"%d"`, end)
		}
		return js + "}", nil
	}
	return "", status.Errorf(codes.Unimplemented, "%s is not implemented", method)
}

func (j *job) done() bool {
	if !j.until.IsZero() {
		return j.cancelled || !time.Now().Before(j.until)
	}
	return j.cancelled || !j.never && j.step >= j.steps
}

func (j *job) advance() {
	if !j.done() && j.until.IsZero() {
		j.step++
		j.updated = j.updated.Add(time.Second)
	}
}

// json is the job's google.longrunning.Operation as protojson.
func (j *job) json(name string, failCode codes.Code) string {
	meta := fmt.Sprintf(`{"@type":"type.googleapis.com/lrotest.v1.RunMetadata","step":%d,"createTime":%q,"updateTime":%q}`,
		j.step, j.created.Format(time.RFC3339Nano), j.updated.Format(time.RFC3339Nano))
	js := fmt.Sprintf(`{"name":%q,"metadata":%s`, name, meta)
	switch {
	case j.cancelled:
		js += fmt.Sprintf(`,"done":true,"error":{"code":%d,"message":"the job was cancelled"}`, codes.Canceled)
	case !j.done():
	case j.fail:
		js += fmt.Sprintf(`,"done":true,"error":{"code":%d,"message":"job %s failed at step %d"}`, failCode, j.label, j.step)
	case !j.until.IsZero():
		js += fmt.Sprintf(`,"done":true,"response":{"@type":"type.googleapis.com/lrotest.v1.SlowComputeResponse","label":%q,"seconds":%g}`, j.label, j.seconds)
	default:
		js += fmt.Sprintf(`,"done":true,"response":{"@type":"type.googleapis.com/lrotest.v1.RunResponse","label":%q,"stepsDone":%d}`, j.label, j.step)
	}
	return js + "}"
}

// computeJSON is the job as a Compute Engine style Operation.
func (j *job) computeJSON(name string) string {
	js := fmt.Sprintf(`{"name":%q,"zone":%q,"progress":%d`, name, j.zone, j.step*100/max(j.steps, 1))
	switch {
	case !j.done():
		return js + `,"status":"RUNNING"}`
	case j.fail:
		return js + fmt.Sprintf(`,"status":"DONE","httpErrorStatusCode":412,"httpErrorMessage":"instance %s cannot be created"}`, j.label)
	}
	return js + fmt.Sprintf(`,"status":"DONE","targetLink":"zones/%s/instances/%s"}`, j.zone, j.label)
}
