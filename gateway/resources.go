package gateway

import (
	"context"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/jhump/protoreflect/v2/protoprint"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"

	"github.com/grpc-mcp-gateway/gateway/descriptors"
	"github.com/grpc-mcp-gateway/gateway/gateway/internal/compiled"
	"github.com/grpc-mcp-gateway/gateway/gateway/mcp"
)

// The API as resources.
//
// Every exposed service (one with at least one exposed method) is an MCP
// resource at grpc://BACKEND/package.Service, of type text/x-protobuf, so
// an agent can read the API before calling it. Its content is .proto
// source printed (jhump/protoreflect/v2 protoprint) from a file made for
// the purpose: the service's own file reduced to the service, with only
// its exposed methods, and the messages and enums of that file those
// methods use, directly or through fields (each kept whole, nested types
// included). Types from other files stay references, with the file's
// imports, package and options as they were. Comments are included where
// the descriptors carry them (a descriptor set or .proto files, or the
// overlay of one on reflection); reflection alone usually has none.
//
// The reduction keeps a resource about the service rather than about
// whatever else its author put in the same file, and it never shows a
// method the gateway hides. The source is printed on the first read of
// each catalog generation, not at discovery, so a large estate costs
// nothing until someone reads it.

// ResourceMIMEType is the MIME type of the service resources.
const ResourceMIMEType = "text/x-protobuf"

// serviceResource is one service as a resource.
type serviceResource struct {
	uri, name, title, description string
	svc                           protoreflect.ServiceDescriptor
	exposed                       map[protoreflect.FullName]bool
	files                         *protoregistry.Files
	comments                      *descriptors.Comments
	// key identifies the content: the backend's descriptors fingerprint.
	key string

	once sync.Once
	text string
	err  error
}

// resourceCatalog is the resources of one catalog, sorted by URI.
type resourceCatalog struct {
	list  []*serviceResource
	byURI map[string]*serviceResource
	set   *mcp.ResourceSet
	// messages are, by backend, the messages bounded schemas name
	// (gateway/internal/compiled/toolsize.go): readable at messageURI, not listed.
	messages map[string]*compiled.MessageSet
}

// lookup returns the message resource at uri and its backend, nil when
// no bounded schema names it.
func (rc *resourceCatalog) lookup(uri string) (*compiled.Message, string) {
	rest, ok := strings.CutPrefix(uri, "grpc://")
	if !ok {
		return nil, ""
	}
	backend, name, ok := strings.Cut(rest, "/")
	s := rc.messages[backend]
	if !ok || s == nil {
		return nil, ""
	}
	return s.Lookup(protoreflect.FullName(name)), backend
}

// reaches reports whether a tool of l reaches the message name of
// backend through its request, its response or its operation's response
// and their fields: the messages its schemas may name. A toolset serves
// no other message resource, so its endpoints do not show a message of
// an API it leaves out (which would tell that the API exists). The sets
// are built on the first read of a message through l.
func (l *listing) reaches(backend string, name protoreflect.FullName) bool {
	l.reachOnce.Do(func() {
		l.reach = make(map[string]map[protoreflect.FullName]bool)
		for _, t := range l.tools {
			if t.Schemas == nil || t.Schemas.Method() == nil {
				continue
			}
			seen := l.reach[t.Backend]
			if seen == nil {
				seen = make(map[protoreflect.FullName]bool)
				l.reach[t.Backend] = seen
			}
			var walk func(md protoreflect.MessageDescriptor)
			walk = func(md protoreflect.MessageDescriptor) {
				if md == nil || seen[md.FullName()] {
					return
				}
				seen[md.FullName()] = true
				fields := md.Fields()
				for i := range fields.Len() {
					walk(fields.Get(i).Message())
				}
			}
			walk(t.Schemas.Method().Input())
			walk(t.Schemas.Method().Output())
			if t.LRO != nil {
				walk(t.LRO.ResponseDesc)
			}
		}
	})
	return l.reach[backend][name]
}

// printMessage prints r's definition as .proto source, with its
// comments when the descriptors carry them.
func printMessage(r *compiled.Message) (string, error) {
	md, err := withSourceInfo(r.MD, r.Set.Files, r.Set.Comments)
	if err != nil {
		return "", fmt.Errorf("resource %s: %w", r.MD.FullName(), err)
	}
	text, err := (&protoprint.Printer{Indent: "  ", Compact: true}).PrintProtoToString(md)
	if err != nil {
		return "", fmt.Errorf("resource %s: printing: %w", r.MD.FullName(), err)
	}
	f := r.MD.ParentFile()
	return fmt.Sprintf("// Message %s of %s (package %s). Field types are named in full in the same file or its imports; each message a bounded schema leaves out is a resource like this one.\n\n%s",
		r.MD.FullName(), f.Path(), f.Package(), text), nil
}

func newResourceCatalog(parts []*compiled.Backend) (*resourceCatalog, error) {
	rc := &resourceCatalog{byURI: make(map[string]*serviceResource), messages: make(map[string]*compiled.MessageSet, len(parts))}
	for _, p := range parts {
		rc.messages[p.Name] = p.Messages
		key := hex.EncodeToString(p.Fingerprint[:])
		for _, svc := range p.Services {
			r := &serviceResource{
				uri:      serviceURI(p.Name, string(svc.ParentFile().Package()), string(svc.Name())),
				name:     string(svc.FullName()),
				title:    string(svc.Name()),
				svc:      svc,
				exposed:  p.Methods,
				files:    p.Files,
				comments: p.Comments,
				key:      key,
			}
			r.description = fmt.Sprintf("The gRPC service %s of backend %s, as .proto source: its exposed methods and the messages and enums they use.", svc.FullName(), p.Name)
			if c := compiled.Comment(p.Comments, svc); c != "" {
				r.description += " " + c
			}
			rc.list = append(rc.list, r)
			rc.byURI[r.uri] = r
		}
	}
	slices.SortFunc(rc.list, func(a, b *serviceResource) int { return strings.Compare(a.uri, b.uri) })
	defs := make([]mcp.Resource, len(rc.list))
	for i, r := range rc.list {
		defs[i] = mcp.Resource{URI: r.uri, Name: r.name, Title: r.title, Description: r.description, MIMEType: ResourceMIMEType}
	}
	set, err := mcp.NewResourceSet(defs, nil)
	if err != nil {
		return nil, err
	}
	rc.set = set
	return rc, nil
}

// sameAs reports whether rc and o list the same resources with the same
// content, so a refresh that changed neither sends no list_changed. Since
// the gateway offers no resources/subscribe, a changed content is also
// announced as a list change: it is the only signal a client gets.
func (rc *resourceCatalog) sameAs(o *resourceCatalog) bool {
	if rc == nil || o == nil {
		return rc == o
	}
	return slices.EqualFunc(rc.list, o.list, func(a, b *serviceResource) bool {
		return a.uri == b.uri && a.key == b.key && a.description == b.description
	})
}

// source prints the resource's .proto source once.
func (r *serviceResource) source() (string, error) {
	r.once.Do(func() { r.text, r.err = serviceProto(r.svc, r.exposed, r.files, r.comments) })
	return r.text, r.err
}

// serviceProto prints svc reduced as described in "The API as resources".
func serviceProto(svc protoreflect.ServiceDescriptor, exposed map[protoreflect.FullName]bool, files *protoregistry.Files, comments *descriptors.Comments) (string, error) {
	fd := svc.ParentFile()
	src := descriptors.ToFileDescriptorProto(fd, comments)

	// The file's top-level messages and enums the exposed methods need.
	keepMsg := make(map[int]bool)
	keepEnum := make(map[int]bool)
	seen := make(map[protoreflect.FullName]bool)
	var visit func(d protoreflect.Descriptor)
	visit = func(d protoreflect.Descriptor) {
		if d == nil || seen[d.FullName()] || d.ParentFile().Path() != fd.Path() {
			return
		}
		seen[d.FullName()] = true
		top := d
		for {
			p := top.Parent()
			if _, ok := p.(protoreflect.FileDescriptor); ok {
				break
			}
			top = p
		}
		switch t := top.(type) {
		case protoreflect.MessageDescriptor:
			if !keepMsg[t.Index()] {
				keepMsg[t.Index()] = true
				walkMessage(t, visit)
			}
		case protoreflect.EnumDescriptor:
			keepEnum[t.Index()] = true
		}
	}
	methods := svc.Methods()
	keepMethod := make(map[int]bool)
	for i := range methods.Len() {
		m := methods.Get(i)
		if exposed[m.FullName()] {
			keepMethod[i] = true
			visit(m.Input())
			visit(m.Output())
		}
	}

	out := proto.CloneOf(src)
	out.MessageType, out.EnumType, out.Extension = nil, nil, nil
	msgIdx := remap(len(src.MessageType), keepMsg)
	enumIdx := remap(len(src.EnumType), keepEnum)
	methodIdx := remap(methods.Len(), keepMethod)
	for i, m := range src.MessageType {
		if keepMsg[i] {
			out.MessageType = append(out.MessageType, m)
		}
	}
	for i, e := range src.EnumType {
		if keepEnum[i] {
			out.EnumType = append(out.EnumType, e)
		}
	}
	s := proto.CloneOf(src.Service[svc.Index()])
	s.Method = nil
	for i, m := range src.Service[svc.Index()].Method {
		if keepMethod[i] {
			s.Method = append(s.Method, m)
		}
	}
	out.Service = []*descriptorpb.ServiceDescriptorProto{s}

	// Source info paths index the file's elements, which just moved.
	const (
		pathMessage   = 4
		pathEnum      = 5
		pathService   = 6
		pathExtension = 7
		pathMethod    = 2
	)
	if sci := src.GetSourceCodeInfo(); sci != nil {
		kept := &descriptorpb.SourceCodeInfo{}
		for _, loc := range sci.GetLocation() {
			p := slices.Clone(loc.GetPath())
			ok := true
			if len(p) >= 2 {
				switch p[0] {
				case pathMessage:
					p[1], ok = msgIdx[int(p[1])]
				case pathEnum:
					p[1], ok = enumIdx[int(p[1])]
				case pathExtension:
					ok = false
				case pathService:
					if ok = int(p[1]) == svc.Index(); ok {
						p[1] = 0
						if len(p) >= 4 && p[2] == pathMethod {
							p[3], ok = methodIdx[int(p[3])]
						}
					}
				}
			} else if len(p) == 1 && (p[0] == pathMessage || p[0] == pathEnum || p[0] == pathService || p[0] == pathExtension) {
				ok = false
			}
			if ok {
				l := proto.CloneOf(loc)
				l.Path = p
				kept.Location = append(kept.Location, l)
			}
		}
		out.SourceCodeInfo = kept
	}

	var resolver protodesc.Resolver = files
	if files == nil {
		resolver = protoregistry.GlobalFiles
	}
	reduced, err := protodesc.NewFile(out, resolver)
	if err != nil {
		return "", fmt.Errorf("resource %s: rebuilding its file: %w", svc.FullName(), err)
	}
	var b strings.Builder
	if err := (&protoprint.Printer{Indent: "  ", Compact: true}).PrintProtoFile(reduced, &b); err != nil {
		return "", fmt.Errorf("resource %s: printing: %w", svc.FullName(), err)
	}
	return b.String(), nil
}

// withSourceInfo returns md as declared in its file built again with the
// source info comments holds for it (the discovery's descriptors carry
// none: descriptors.Comments), for protoprint, which reads comments and
// the declarations' order from a message's file. md itself when comments
// holds none for its file.
func withSourceInfo(md protoreflect.MessageDescriptor, files *protoregistry.Files, comments *descriptors.Comments) (protoreflect.MessageDescriptor, error) {
	fdp := descriptors.ToFileDescriptorProto(md.ParentFile(), comments)
	if fdp.SourceCodeInfo == nil || md.ParentFile().SourceLocations().Len() > 0 {
		return md, nil // no comments, or the descriptors' own
	}
	var resolver protodesc.Resolver = files
	if files == nil {
		resolver = protoregistry.GlobalFiles
	}
	fd, err := protodesc.NewFile(fdp, resolver)
	if err != nil {
		return nil, fmt.Errorf("rebuilding its file with its comments: %w", err)
	}
	var own protoregistry.Files
	if err := own.RegisterFile(fd); err != nil {
		return nil, fmt.Errorf("rebuilding its file with its comments: %w", err)
	}
	d, err := own.FindDescriptorByName(md.FullName())
	if err != nil {
		return nil, fmt.Errorf("rebuilding its file with its comments: %w", err)
	}
	return d.(protoreflect.MessageDescriptor), nil
}

// remap gives the new index of each kept element.
func remap(n int, keep map[int]bool) map[int]int32 {
	m := make(map[int]int32, len(keep))
	next := int32(0)
	for i := range n {
		if keep[i] {
			m[i] = next
			next++
		}
	}
	return m
}

// walkMessage visits the message and enum types m's fields (and its nested
// messages' fields) use.
func walkMessage(m protoreflect.MessageDescriptor, visit func(protoreflect.Descriptor)) {
	fields := m.Fields()
	for i := range fields.Len() {
		f := fields.Get(i)
		if md := f.Message(); md != nil {
			visit(md)
		}
		if ed := f.Enum(); ed != nil {
			visit(ed)
		}
	}
	nested := m.Messages()
	for i := range nested.Len() {
		walkMessage(nested.Get(i), visit)
	}
}

// notifyResourceListChanged tells clients the resources changed.
func (g *Gateway) notifyResourceListChanged() { g.server.NotifyResourceListChanged() }

// readResource serves resources/read in rc for the endpoint listing in:
// the .proto source of one exposed service, printed on the first read of
// each catalog generation, of a message a bounded schema leaves out
// (gateway/internal/compiled/toolsize.go), or a result kept whole after a cut (budget.go). A
// toolset's listing serves only its services and the messages its tools
// reach.
func (g *Gateway) readResource(ctx context.Context, rc *resourceCatalog, in *listing, req *mcp.ReadResourceRequest) (*mcp.ResourceContents, error) {
	uri := req.URI
	if strings.HasPrefix(uri, ResultURIPrefix) {
		return g.readResult(ctx, req)
	}
	var text string
	var err error
	mr, backend := rc.lookup(uri)
	if r := rc.byURI[uri]; r != nil && (!in.restricted || in.services[uri]) {
		text, err = r.source()
	} else if mr != nil && (!in.restricted || in.reaches(backend, mr.MD.FullName())) {
		text, err = mr.Source(printMessage)
	} else {
		return nil, fmt.Errorf("%w: %s", mcp.ErrResourceNotFound, uri)
	}
	if err != nil {
		return nil, err
	}
	return &mcp.ResourceContents{URI: uri, MIMEType: ResourceMIMEType, Text: text}, nil
}

// serviceURI is the resource URI of a backend's service.
func serviceURI(backend, pkg, service string) string {
	full := service
	if pkg != "" {
		full = pkg + "." + service
	}
	return "grpc://" + backend + "/" + full
}
