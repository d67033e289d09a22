// Package anytypes resolves the types of google.protobuf.Any values for
// one backend, and renders messages holding them.
//
// A backend's error details, the Any fields of its responses and its
// operations' metadata and responses name their types by URL. The
// backend's discovered files declare most of them; some live in files no
// service imports (Temporal's error details), which only the backend's
// server reflection describes. Types renders both: the discovered
// types at once, and the others once descriptors.TypeResolver has looked
// them up. A rendering that fails on a type the gateway does not know
// yet walks the message for the types of its Any values, looks them up
// (Learn), and renders again: the first appearance of a type pays one
// lookup, every later one nothing, and a value whose types are known
// costs what it did before.
//
// It is the gateway's, below it: of this module it knows the descriptor
// sources and the transcoder, nothing of tools, calls or MCP.
package anytypes

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/grpc-mcp-gateway/gateway/descriptors"
	"github.com/grpc-mcp-gateway/gateway/gateway/internal/transcode"
	"github.com/grpc-mcp-gateway/gateway/internal/schema"
)

// anyTypeName is the full name of google.protobuf.Any.
const anyTypeName protoreflect.FullName = "google.protobuf.Any"

// maxLearn bounds the types one rendering looks up: a value naming more
// types than that is shown with the first it could not.
const maxLearn = 8

// learnBudget bounds the time one rendering spends looking types up: it
// starts no lookup once it has spent this long, so a value naming many
// types on a slow backend delays its call by at most learnBudget plus
// one lookup (descriptors.ServerReflectionOptions.LookupTimeout). What it
// learnt is kept; the next rendering goes on from there.
const learnBudget = 5 * time.Second

// Types resolves the types of a backend's Any values: from its
// discovered files, then from those its server reflection described on
// demand. It is the resolver of every encoder compiled for the backend,
// so what a lookup learnt serves every later rendering. A nil *Types
// resolves nothing.
type Types struct {
	local *dynamicpb.Types
	// remote asks the backend; nil for descriptors from files, which
	// have nobody to ask.
	remote *descriptors.TypeResolver
	// learnt holds, by full name, the message type of each name remote
	// described, so that rendering one costs a map read, not the
	// resolver's lock and a new dynamicpb.MessageType.
	learnt sync.Map // protoreflect.FullName -> protoreflect.MessageType
}

// New returns the resolver of the types of res's backend: its discovered
// files, and its server reflection's lookups when res has a resolver.
func New(res *descriptors.Result) *Types {
	return &Types{local: dynamicpb.NewTypes(res.Files), remote: res.Resolver}
}

// FindMessageByName implements protoregistry.MessageTypeResolver: the
// discovered type, or one a lookup described. It never asks the backend.
func (a *Types) FindMessageByName(name protoreflect.FullName) (protoreflect.MessageType, error) {
	if a == nil {
		return nil, protoregistry.NotFound
	}
	mt, err := a.local.FindMessageByName(name)
	if err == nil || a.remote == nil {
		return mt, err
	}
	if mt, ok := a.learnt.Load(name); ok {
		return mt.(protoreflect.MessageType), nil
	}
	if md := a.remote.Lookup(name); md != nil {
		mt, _ := a.learnt.LoadOrStore(name, dynamicpb.NewMessageType(md))
		return mt.(protoreflect.MessageType), nil
	}
	return nil, err
}

// Local is the types of the backend's discovered files, which never
// ask the backend.
func (a *Types) Local() *dynamicpb.Types { return a.local }

// HasRemote reports whether a's backend can be asked for types its
// discovered files lack (its server reflection).
func (a *Types) HasRemote() bool { return a != nil && a.remote != nil }

// FindMessageByURL implements protoregistry.MessageTypeResolver.
func (a *Types) FindMessageByURL(url string) (protoreflect.MessageType, error) {
	return a.FindMessageByName(TypeNameOf(url))
}

// FindExtensionByName implements protoregistry.ExtensionTypeResolver,
// with the discovered files' extensions.
func (a *Types) FindExtensionByName(field protoreflect.FullName) (protoreflect.ExtensionType, error) {
	if a == nil {
		return nil, protoregistry.NotFound
	}
	return a.local.FindExtensionByName(field)
}

// FindExtensionByNumber implements protoregistry.ExtensionTypeResolver.
func (a *Types) FindExtensionByNumber(message protoreflect.FullName, field protoreflect.FieldNumber) (protoreflect.ExtensionType, error) {
	if a == nil {
		return nil, protoregistry.NotFound
	}
	return a.local.FindExtensionByNumber(message, field)
}

// TypeNameOf is the message name at the end of a type URL.
func TypeNameOf(url string) protoreflect.FullName {
	if i := strings.LastIndexByte(url, '/'); i >= 0 {
		url = url[i+1:]
	}
	return protoreflect.FullName(url)
}

// UnknownTypeError is a value the gateway cannot render: it holds an Any
// of a type neither the backend's descriptors nor its server reflection
// describe.
type UnknownTypeError struct {
	Name protoreflect.FullName
	// cause is the failed lookup; nil when there was nobody to ask (the
	// backend's descriptors come from files).
	cause error
}

func (e *UnknownTypeError) Error() string {
	if e.cause == nil {
		return fmt.Sprintf("type %s is not in the backend's descriptors", e.Name)
	}
	return fmt.Sprintf("type %s: %v", e.Name, e.cause)
}

func (e *UnknownTypeError) Unwrap() error { return e.cause }

// Sentence says in words a model understands what the backend sent and
// why it cannot be shown: "the backend sent <what> of type T that it
// does not describe". The lookup's own error stays in the logs.
func (e *UnknownTypeError) Sentence(what string) string {
	switch {
	case e.cause == nil:
		return fmt.Sprintf("the backend sent %s of type %s, which the backend's descriptor files do not declare", what, e.Name)
	case errors.Is(e.cause, descriptors.ErrTypeNotDescribed):
		return fmt.Sprintf("the backend sent %s of type %s that it does not describe", what, e.Name)
	default:
		return fmt.Sprintf("the backend sent %s of type %s, which the gateway could not look up in the backend's server reflection just now", what, e.Name)
	}
}

// Learn looks up the types of the Any values in m, and in the values they
// hold, that the gateway does not know yet. learnt says whether it
// learnt one, so that a rendering that failed is worth trying again;
// missing is the first type that could not be learnt (without a remote,
// the first unknown one), nil when none. ctx bounds the lookups.
func (a *Types) Learn(ctx context.Context, m protoreflect.Message) (learnt bool, missing *UnknownTypeError) {
	if a == nil {
		return false, nil
	}
	l := learner{ctx: ctx, a: a, start: time.Now()}
	l.message(m, 0)
	return l.learnt, l.missing
}

// learnWire is Learn for a message in wire form; md is its type.
func (a *Types) learnWire(ctx context.Context, md protoreflect.MessageDescriptor, wire []byte) (learnt bool, missing *UnknownTypeError) {
	m := dynamicpb.NewMessage(md)
	if err := (proto.UnmarshalOptions{AllowPartial: true, Resolver: a}).Unmarshal(wire, m); err != nil {
		return false, nil // not a matter of types: the rendering's error says what
	}
	return a.Learn(ctx, m)
}

type learner struct {
	ctx     context.Context
	a       *Types
	start   time.Time
	asked   int
	learnt  bool
	missing *UnknownTypeError
}

// message walks m's message fields, as deep as the wire format's
// recursion limit, which decoding m already held to.
func (l *learner) message(m protoreflect.Message, depth int) {
	if depth > protowire.DefaultRecursionLimit || l.missing != nil {
		return
	}
	if m.Descriptor().FullName() == anyTypeName {
		l.anyValue(m, depth)
		return
	}
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		switch {
		case fd.IsMap():
			if fd.MapValue().Message() != nil {
				v.Map().Range(func(_ protoreflect.MapKey, mv protoreflect.Value) bool {
					l.message(mv.Message(), depth+1)
					return l.missing == nil
				})
			}
		case fd.Message() == nil:
		case fd.IsList():
			list := v.List()
			for i := 0; i < list.Len() && l.missing == nil; i++ {
				l.message(list.Get(i).Message(), depth+1)
			}
		default:
			l.message(v.Message(), depth+1)
		}
		return l.missing == nil
	})
}

// anyValue learns the type of the Any m, then walks what it holds.
func (l *learner) anyValue(m protoreflect.Message, depth int) {
	fields := m.Descriptor().Fields()
	urlField, valueField := fields.ByNumber(1), fields.ByNumber(2)
	if urlField == nil || valueField == nil {
		return
	}
	url := m.Get(urlField).String()
	if url == "" {
		return
	}
	mt, err := l.a.FindMessageByURL(url)
	if err != nil {
		name := TypeNameOf(url)
		if l.a.remote == nil {
			l.missing = &UnknownTypeError{Name: name}
			return
		}
		if l.asked == maxLearn {
			l.missing = &UnknownTypeError{Name: name, cause: errTooManyTypes}
			return
		}
		if l.asked > 0 && time.Since(l.start) >= learnBudget {
			l.missing = &UnknownTypeError{Name: name, cause: errLearnBudget}
			return
		}
		l.asked++
		md, err := l.a.remote.Resolve(l.ctx, name)
		if err != nil {
			l.missing = &UnknownTypeError{Name: name, cause: err}
			return
		}
		l.learnt = true
		mt = dynamicpb.NewMessageType(md)
	}
	inner := mt.New()
	if err := (proto.UnmarshalOptions{AllowPartial: true, Resolver: l.a}).Unmarshal(m.Get(valueField).Bytes(), inner.Interface()); err != nil {
		return // its bytes are the rendering's problem, not its type
	}
	l.message(inner, depth+1)
}

// errTooManyTypes is the cause of a type left unlooked-up because the
// value named more than maxLearn unknown types.
var errTooManyTypes = fmt.Errorf("the value names more than %d types the gateway did not know", maxLearn)

// errLearnBudget is the cause of a type left unlooked-up because the
// rendering had spent learnBudget on lookups.
var errLearnBudget = fmt.Errorf("the lookups of this value's types took longer than %s", learnBudget)

// AppendWrapped is appendWrapped for a backend whose types a
// lookup may complete: when the rendering fails and the walk of the
// message learns a type, it renders again. A value holding a type that
// cannot be learnt is an *UnknownTypeError. Without a remote, the
// rendering's error is returned as it is.
func (a *Types) AppendWrapped(ctx context.Context, b []byte, enc *transcode.Encoder, wire []byte, wrap bool) ([]byte, error) {
	out, err := appendWrapped(b, enc, wire, wrap)
	if err == nil || a == nil || a.remote == nil {
		return out, err
	}
	learnt, missing := a.learnWire(ctx, enc.Descriptor(), wire)
	if learnt {
		if out, err = appendWrapped(b, enc, wire, wrap); err == nil {
			return out, nil
		}
	}
	if missing != nil {
		return nil, missing
	}
	return nil, err
}

// appendWrapped appends the JSON enc renders of the wire-form message to
// b, wrapped as {"value": ...} in the same buffer when wrap is set (the
// message's type is not a JSON object in protojson). Tool responses,
// operation responses and the messages in operations' Anys all go
// through it.
func appendWrapped(b []byte, enc *transcode.Encoder, wire []byte, wrap bool) ([]byte, error) {
	if wrap {
		b = append(b, `{"`+schema.WrapperProperty+`":`...)
	}
	b, err := enc.AppendJSON(b, wire)
	if err != nil {
		return nil, err
	}
	if wrap {
		b = append(b, '}')
	}
	return b, nil
}
