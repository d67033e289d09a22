package estate

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"

	"google.golang.org/grpc"
	"google.golang.org/grpc/reflection"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/dynamicpb"
)

// UnaryHandler answers one unary call in place of the empty response. req is
// the decoded request, of the method's generated input type.
type UnaryHandler func(ctx context.Context, req proto.Message) (proto.Message, error)

// Options shape a [Serve]d estate. The zero value serves every service of
// [Services] on a free loopback port.
type Options struct {
	// Listen is the address to listen on; empty means "127.0.0.1:0".
	Listen string
	// Services are the services to serve, by full name; empty means
	// [ServiceNames]. Any service the client modules register may be named,
	// such as "google.longrunning.Operations".
	Services []protoreflect.FullName
	// Unary overrides the answer of unary methods, keyed by the gRPC method
	// path ("/google.cloud.compute.v1.Instances/Insert"). A key naming no
	// served unary method is an error, so a typo cannot go unnoticed.
	Unary map[string]UnaryHandler
	// ServerOptions are passed to grpc.NewServer (interceptors, limits).
	ServerOptions []grpc.ServerOption
}

// Server is a running estate.
type Server struct {
	// Addr is the address the server listens on (host:port).
	Addr string
	srv  *grpc.Server
	done chan struct{}
}

// Serve starts a gRPC server with server reflection (v1 and v1alpha) that
// answers every method of the estate, and returns once it accepts
// connections. Stop it with [Server.Stop].
func Serve(opts *Options) (*Server, error) {
	if opts == nil {
		opts = &Options{}
	}
	names := opts.Services
	if len(names) == 0 {
		names = ServiceNames()
	}
	srv := grpc.NewServer(opts.ServerOptions...)
	unused := map[string]bool{}
	for path := range opts.Unary {
		unused[path] = true
	}
	for _, name := range names {
		sd, err := service(name)
		if err != nil {
			return nil, err
		}
		desc, err := serviceDesc(sd, opts.Unary, unused)
		if err != nil {
			return nil, err
		}
		srv.RegisterService(desc, struct{}{})
	}
	for path := range unused {
		return nil, fmt.Errorf("estate: Options.Unary names %q, which is no unary method of the served services", path)
	}
	reflection.Register(srv)
	addr := opts.Listen
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	lis, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("estate: listen on %s: %w", addr, err)
	}
	s := &Server{Addr: lis.Addr().String(), srv: srv, done: make(chan struct{})}
	go func() {
		defer close(s.done)
		_ = srv.Serve(lis) // returns nil after Stop; a listener error ends the server all the same
	}()
	return s, nil
}

// Stop closes every connection and waits until the server has stopped.
func (s *Server) Stop() {
	s.srv.Stop()
	<-s.done
}

// serviceDesc builds a grpc.ServiceDesc whose handlers answer every method
// of sd; overrides used are crossed off unused.
func serviceDesc(sd protoreflect.ServiceDescriptor, overrides map[string]UnaryHandler, unused map[string]bool) (*grpc.ServiceDesc, error) {
	desc := &grpc.ServiceDesc{
		ServiceName: string(sd.FullName()),
		HandlerType: (*any)(nil),
		Metadata:    sd.ParentFile().Path(),
	}
	for i := range sd.Methods().Len() {
		m := sd.Methods().Get(i)
		in, err := messageType(m.Input())
		if err != nil {
			return nil, err
		}
		out, err := messageType(m.Output())
		if err != nil {
			return nil, err
		}
		path := "/" + string(sd.FullName()) + "/" + string(m.Name())
		if !m.IsStreamingClient() && !m.IsStreamingServer() {
			h := overrides[path]
			delete(unused, path)
			desc.Methods = append(desc.Methods, grpc.MethodDesc{
				MethodName: string(m.Name()),
				Handler:    unaryHandler(path, in, out, h),
			})
			continue
		}
		desc.Streams = append(desc.Streams, grpc.StreamDesc{
			StreamName:    string(m.Name()),
			Handler:       streamHandler(m, in, out),
			ServerStreams: m.IsStreamingServer(),
			ClientStreams: m.IsStreamingClient(),
		})
	}
	return desc, nil
}

// messageType prefers the generated type, so that an [UnaryHandler] can
// type-assert its request; a message without one (none in the pinned
// modules) falls back to a dynamic message.
func messageType(md protoreflect.MessageDescriptor) (protoreflect.MessageType, error) {
	mt, err := protoregistry.GlobalTypes.FindMessageByName(md.FullName())
	if errors.Is(err, protoregistry.NotFound) {
		return dynamicpb.NewMessageType(md), nil
	}
	if err != nil {
		return nil, fmt.Errorf("estate: message %s: %w", md.FullName(), err)
	}
	return mt, nil
}

func unaryHandler(path string, in, out protoreflect.MessageType, h UnaryHandler) func(any, context.Context, func(any) error, grpc.UnaryServerInterceptor) (any, error) {
	if h == nil {
		h = func(context.Context, proto.Message) (proto.Message, error) {
			return out.New().Interface(), nil
		}
	}
	return func(_ any, ctx context.Context, dec func(any) error, icpt grpc.UnaryServerInterceptor) (any, error) {
		req := in.New().Interface()
		if err := dec(req); err != nil {
			return nil, err
		}
		if icpt == nil {
			return h(ctx, req)
		}
		info := &grpc.UnaryServerInfo{Server: struct{}{}, FullMethod: path}
		return icpt(ctx, req, info, func(ctx context.Context, req any) (any, error) {
			return h(ctx, req.(proto.Message))
		})
	}
}

// streamHandler answers a stream: a server stream with one message after
// its request, a client stream with one message after its last request, and
// a bidirectional stream with one message per request.
func streamHandler(m protoreflect.MethodDescriptor, in, out protoreflect.MessageType) grpc.StreamHandler {
	return func(_ any, stream grpc.ServerStream) error {
		switch {
		case !m.IsStreamingClient():
			if err := stream.RecvMsg(in.New().Interface()); err != nil {
				return err
			}
			return stream.SendMsg(out.New().Interface())
		case !m.IsStreamingServer():
			if err := drain(stream, in, nil); err != nil {
				return err
			}
			return stream.SendMsg(out.New().Interface())
		default:
			return drain(stream, in, func() error { return stream.SendMsg(out.New().Interface()) })
		}
	}
}

// drain reads requests until the client closes its side, calling each (if
// any) after every request.
func drain(stream grpc.ServerStream, in protoreflect.MessageType, each func() error) error {
	for {
		err := stream.RecvMsg(in.New().Interface())
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if each != nil {
			if err := each(); err != nil {
				return err
			}
		}
	}
}
