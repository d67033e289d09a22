package compiled

import (
	"sync"

	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	"github.com/grpc-mcp-gateway/gateway/descriptors"
)

// MessageSet is the messages one discovery's bounded schemas name, which
// the gateway serves as resources. It grows as schemas are built
// (schemas.go), so it is safe for concurrent use.
type MessageSet struct {
	// Files and Comments are the discovery's, which the printed messages
	// read their comments from.
	Files    *protoregistry.Files
	Comments *descriptors.Comments

	mu sync.Mutex
	m  map[protoreflect.FullName]*Message
}

func (s *MessageSet) add(md protoreflect.MessageDescriptor) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = make(map[protoreflect.FullName]*Message)
	}
	if s.m[md.FullName()] == nil {
		s.m[md.FullName()] = &Message{MD: md, Set: s}
	}
}

// Lookup is the message of that name a bounded schema names, nil when
// none does.
func (s *MessageSet) Lookup(name protoreflect.FullName) *Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.m[name]
}

// Message is one message as a resource: its definition, printed once, on
// first read.
type Message struct {
	MD   protoreflect.MessageDescriptor
	Set  *MessageSet
	once sync.Once
	text string
	err  error
}

// Source is the message printed by print, which runs on the first read
// only.
func (r *Message) Source(print func(r *Message) (string, error)) (string, error) {
	r.once.Do(func() { r.text, r.err = print(r) })
	return r.text, r.err
}
