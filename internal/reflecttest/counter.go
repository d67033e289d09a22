// Package reflecttest helps tests watch what a client asks a gRPC server
// reflection service: how many times each symbol's file was asked for,
// and a way to hold those requests while a test looks at the client.
package reflecttest

import (
	"sync"

	"google.golang.org/grpc"
	refv1 "google.golang.org/grpc/reflection/grpc_reflection_v1"
)

// SymbolCounter counts the file_containing_symbol requests a reflection
// server receives, by symbol, and can hold those for one symbol until
// released. Install Interceptor as the server's stream interceptor. The
// zero value is ready to use.
type SymbolCounter struct {
	mu    sync.Mutex
	asked map[string]int
	// symbol's requests wait for hold to close; held hears of each.
	symbol string
	hold   chan struct{}
	held   chan<- string
}

// Count returns how many times symbol's file was asked for.
func (c *SymbolCounter) Count(symbol string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.asked[symbol]
}

// Counts returns every symbol asked for, with its count.
func (c *SymbolCounter) Counts() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string]int, len(c.asked))
	for s, n := range c.asked {
		out[s] = n
	}
	return out
}

// Hold makes the requests for symbol that arrive from now on wait until
// release is called (or their stream ends), sending symbol on held as
// each starts to wait; held must have room, or the test must receive.
// A later Hold replaces symbol; requests already waiting keep waiting
// for their own release.
func (c *SymbolCounter) Hold(symbol string, held chan<- string) (release func()) {
	hold := make(chan struct{})
	c.mu.Lock()
	c.symbol, c.hold, c.held = symbol, hold, held
	c.mu.Unlock()
	var once sync.Once
	return func() { once.Do(func() { close(hold) }) }
}

// Interceptor is a grpc.StreamServerInterceptor that counts, and holds,
// the reflection requests of every stream.
func (c *SymbolCounter) Interceptor(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
	return handler(srv, &countedStream{ServerStream: ss, c: c})
}

type countedStream struct {
	grpc.ServerStream
	c *SymbolCounter
}

func (s *countedStream) RecvMsg(m any) error {
	if err := s.ServerStream.RecvMsg(m); err != nil {
		return err
	}
	req, ok := m.(*refv1.ServerReflectionRequest)
	if !ok || req.GetFileContainingSymbol() == "" {
		return nil
	}
	sym := req.GetFileContainingSymbol()
	s.c.mu.Lock()
	if s.c.asked == nil {
		s.c.asked = map[string]int{}
	}
	s.c.asked[sym]++
	hold, held := s.c.hold, s.c.held
	if sym != s.c.symbol {
		hold = nil
	}
	s.c.mu.Unlock()
	if hold != nil {
		held <- sym
		select {
		case <-hold:
		case <-s.Context().Done():
			return s.Context().Err()
		}
	}
	return nil
}
