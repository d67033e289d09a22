package descriptors

import (
	"cmp"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"
)

// DescriptorError reports a descriptor that cannot be used as delivered and
// that the repairs in this package could not fix unambiguously. The
// message names the file, the element and the problem, so an operator can
// take it to whoever runs the backend.
type DescriptorError struct {
	// File is the path of the file at fault, as the source named it.
	File string
	// Element is the full name of the message, field, method... at fault;
	// empty when the problem is the file as a whole.
	Element string
	// Problem says what is wrong, in a few words.
	Problem string
	// Err is the underlying cause, if any (protodesc's complaint, say).
	Err error
}

func (e *DescriptorError) Error() string {
	var b strings.Builder
	b.WriteString("file ")
	b.WriteString(e.File)
	if e.Element != "" {
		b.WriteString(": ")
		b.WriteString(e.Element)
	}
	b.WriteString(": ")
	b.WriteString(e.Problem)
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

func (e *DescriptorError) Unwrap() error { return e.Err }

// pool holds the FileDescriptorProtos one discovery gathered, by path, and
// turns them into descriptors. Every source goes through it, so a
// descriptor set, compiled .proto files and each reflection server get the
// same repairs, the same bundle fallback and the same errors.
type pool struct {
	logger *slog.Logger
	// origin names where the files came from in log records ("reflection",
	// "descriptor set api.binpb").
	origin string
	files  map[string]*descriptorpb.FileDescriptorProto
	// problems are the unrepairable faults found by repair, by file.
	problems map[string][]error

	// symbols indexes every declaration in files, by full name without
	// the leading dot.
	symbols map[string]symbol
	// services holds the full names of the services files declare, kept
	// as files arrive (unlike symbols, rebuilt after every change), since
	// discovery asks after each answer.
	services map[string]bool

	built  map[string]protoreflect.FileDescriptor
	failed map[string]error
	reg    *protoregistry.Files

	// known, when set, holds files built before, by another pool: a
	// TypeResolver's pool builds the files of one looked-up type against
	// the discovery's files and those of earlier lookups, which it takes
	// as they are instead of fetching and building them again. Nil for a
	// discovery.
	known protodesc.Resolver
	// knownComments holds the source info of known files.
	knownComments *Comments

	// info holds the source info of the files the pool built, which
	// their descriptors do not (newFile); Results hand it on as Comments.
	info   map[protoreflect.FileDescriptor]*fileInfo
	infoMu sync.Mutex
}

type symbolKind int

const (
	symMessage symbolKind = iota + 1
	symEnum
	symOther // service, method, field, enum value, extension: not a type
)

type symbol struct {
	file string
	kind symbolKind
}

func newPool(logger *slog.Logger, origin string) *pool {
	return &pool{
		logger: logger,
		origin: origin,
		files:  make(map[string]*descriptorpb.FileDescriptorProto),
	}
}

// add records fd unless a file of that path is already there: a server
// answering several requests sends the same files more than once, and the
// first copy is as good as any.
func (p *pool) add(fd *descriptorpb.FileDescriptorProto) bool {
	if _, ok := p.files[fd.GetName()]; ok {
		return false
	}
	p.files[fd.GetName()] = fd
	p.symbols = nil
	if p.services == nil {
		p.services = make(map[string]bool)
	}
	for _, sd := range fd.GetService() {
		p.services[join(fd.GetPackage(), sd.GetName())] = true
	}
	return true
}

func (p *pool) paths() []string {
	paths := make([]string, 0, len(p.files))
	for path := range p.files {
		paths = append(paths, path)
	}
	slices.Sort(paths)
	return paths
}

// index (re)builds the symbol table.
func (p *pool) index() {
	if p.symbols != nil {
		return
	}
	p.symbols = make(map[string]symbol)
	for _, path := range p.paths() {
		fd := p.files[path]
		pkg := fd.GetPackage()
		put := func(name string, k symbolKind) {
			if _, dup := p.symbols[name]; !dup {
				p.symbols[name] = symbol{file: path, kind: k}
			}
		}
		for _, m := range fd.GetMessageType() {
			indexMessage(join(pkg, m.GetName()), m, put)
		}
		for _, e := range fd.GetEnumType() {
			put(join(pkg, e.GetName()), symEnum)
		}
		for _, s := range fd.GetService() {
			put(join(pkg, s.GetName()), symOther)
			for _, m := range s.GetMethod() {
				put(join(pkg, s.GetName(), m.GetName()), symOther)
			}
		}
		for _, x := range fd.GetExtension() {
			put(join(pkg, x.GetName()), symOther)
		}
	}
}

func indexMessage(name string, m *descriptorpb.DescriptorProto, put func(string, symbolKind)) {
	put(name, symMessage)
	for _, n := range m.GetNestedType() {
		indexMessage(join(name, n.GetName()), n, put)
	}
	for _, e := range m.GetEnumType() {
		put(join(name, e.GetName()), symEnum)
	}
	for _, f := range m.GetField() {
		put(join(name, f.GetName()), symOther)
	}
	for _, x := range m.GetExtension() {
		put(join(name, x.GetName()), symOther)
	}
}

func join(parts ...string) string {
	var b strings.Builder
	for _, p := range parts {
		if p == "" {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(p)
	}
	return b.String()
}

// declaresService reports whether a file already in the pool declares the
// service name.
func (p *pool) declaresService(name string) bool {
	return p.services[name]
}

// lookup finds a declared type, in the pool first, then in the known
// files and then in the bundle, and says which file declares it.
func (p *pool) lookup(name string) (symbol, bool) {
	p.index()
	if s, ok := p.symbols[name]; ok {
		return s, true
	}
	if p.known != nil {
		if d, err := p.known.FindDescriptorByName(protoreflect.FullName(name)); err == nil {
			return symbolOf(d), true
		}
	}
	if d := bundledSymbol(protoreflect.FullName(name)); d != nil {
		return symbolOf(d), true
	}
	return symbol{}, false
}

// symbolOf is the pool's view of a declaration built before.
func symbolOf(d protoreflect.Descriptor) symbol {
	switch d.(type) {
	case protoreflect.MessageDescriptor:
		return symbol{file: d.ParentFile().Path(), kind: symMessage}
	case protoreflect.EnumDescriptor:
		return symbol{file: d.ParentFile().Path(), kind: symEnum}
	default:
		return symbol{file: d.ParentFile().Path(), kind: symOther}
	}
}

// knownFile returns the already built file at path, or nil.
func (p *pool) knownFile(path string) protoreflect.FileDescriptor {
	if p.known == nil {
		return nil
	}
	fd, err := p.known.FindFileByPath(path)
	if err != nil {
		return nil
	}
	return fd
}

// ref is one type reference in a file: a field's type, an extension's
// extendee, a method's input or output.
type ref struct {
	name *string // the type name, to rewrite in place
	// field is the referring field when the reference is a field's type,
	// whose kind may need setting.
	field   *descriptorpb.FieldDescriptorProto
	scope   string // where protobuf's scoping rules start looking
	element string // the referring element's full name, for messages
	what    string // "type", "extendee", "input type", "output type"
	// messageOnly: only a message can be the target.
	messageOnly bool
}

// refs lists every type reference in fd.
func refs(fd *descriptorpb.FileDescriptorProto) []ref {
	var out []ref
	pkg := fd.GetPackage()
	field := func(scope string, f *descriptorpb.FieldDescriptorProto) {
		el := join(scope, f.GetName())
		if f.TypeName != nil {
			out = append(out, ref{name: f.TypeName, field: f, scope: scope, element: el, what: "type"})
		}
		if f.Extendee != nil {
			out = append(out, ref{name: f.Extendee, scope: scope, element: el, what: "extendee", messageOnly: true})
		}
	}
	var message func(scope string, m *descriptorpb.DescriptorProto)
	message = func(scope string, m *descriptorpb.DescriptorProto) {
		name := join(scope, m.GetName())
		for _, f := range m.GetField() {
			field(name, f)
		}
		for _, x := range m.GetExtension() {
			field(name, x)
		}
		for _, n := range m.GetNestedType() {
			message(name, n)
		}
	}
	for _, m := range fd.GetMessageType() {
		message(pkg, m)
	}
	for _, x := range fd.GetExtension() {
		field(pkg, x)
	}
	for _, s := range fd.GetService() {
		for _, m := range s.GetMethod() {
			el := join(pkg, s.GetName(), m.GetName())
			if m.InputType != nil {
				out = append(out, ref{name: m.InputType, scope: pkg, element: el, what: "input type", messageOnly: true})
			}
			if m.OutputType != nil {
				out = append(out, ref{name: m.OutputType, scope: pkg, element: el, what: "output type", messageOnly: true})
			}
		}
	}
	return out
}

// resolve applies protobuf's scoping rules to a relative name: look in the
// innermost scope first, then in each enclosing one. It returns every
// declaration of a type named so, innermost first, with its kind.
func (p *pool) resolve(scope, name string) []scoped {
	var found []scoped
	for {
		full := join(scope, name)
		if s, ok := p.lookup(full); ok && (s.kind == symMessage || s.kind == symEnum) {
			found = append(found, scoped{full, s.kind})
		}
		if scope == "" {
			return found
		}
		if i := strings.LastIndexByte(scope, '.'); i >= 0 {
			scope = scope[:i]
		} else {
			scope = ""
		}
	}
}

type scoped struct {
	name string
	kind symbolKind
}

// wants says which kinds of type r may refer to.
func (r ref) wants(k symbolKind) bool {
	if r.messageOnly {
		return k == symMessage
	}
	if r.field != nil && r.field.Type != nil {
		switch r.field.GetType() {
		case descriptorpb.FieldDescriptorProto_TYPE_ENUM:
			return k == symEnum
		case descriptorpb.FieldDescriptorProto_TYPE_MESSAGE, descriptorpb.FieldDescriptorProto_TYPE_GROUP:
			return k == symMessage
		}
	}
	return k == symMessage || k == symEnum
}

// unresolved returns the full names the pool's files reference but nobody
// declares, with, for a relative reference, each name it could stand for:
// what a reflection client should ask the server for next.
func (p *pool) unresolved() [][]string {
	var out [][]string
	for _, path := range p.paths() {
		for _, r := range refs(p.files[path]) {
			name := *r.name
			if strings.HasPrefix(name, ".") {
				if _, ok := p.lookup(name[1:]); !ok {
					out = append(out, []string{name[1:]})
				}
				continue
			}
			if len(p.resolve(r.scope, name)) > 0 {
				continue
			}
			var candidates []string
			for scope := r.scope; ; {
				candidates = append(candidates, join(scope, name))
				if scope == "" {
					break
				}
				if i := strings.LastIndexByte(scope, '.'); i >= 0 {
					scope = scope[:i]
				} else {
					scope = ""
				}
			}
			out = append(out, candidates)
		}
	}
	return out
}

// missingImports returns the imports the pool's files name but that
// neither the pool, the known files nor the bundle holds.
func (p *pool) missingImports() []string {
	var out []string
	for _, path := range p.paths() {
		for _, dep := range p.files[path].GetDependency() {
			if _, ok := p.files[dep]; !ok && p.knownFile(dep) == nil && bundledFile(dep) == nil {
				out = append(out, dep)
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func (p *pool) repaired(file, element, what string, args ...any) {
	p.logger.Debug("reflection: repaired a descriptor", append([]any{"source", p.origin, "file", file, "element", element, "repair", what}, args...)...)
}

func (p *pool) problem(file, element, format string, args ...any) {
	if p.problems == nil {
		p.problems = make(map[string][]error)
	}
	p.problems[file] = append(p.problems[file], &DescriptorError{File: file, Element: element, Problem: fmt.Sprintf(format, args...)})
}

// repair rewrites, in place, what non-Go reflection servers are known to
// get wrong, where the intent is unambiguous, and records the rest as
// problems. The order matters: map entries are renamed before names are
// qualified (a field may name its entry relatively), and names are
// qualified before imports are inferred from them.
func (p *pool) repair() {
	p.useBundleForSharedFiles()
	for _, path := range p.paths() {
		p.removeCopiedExtensions(path)
		p.repairMapEntries(path)
	}
	p.symbols = nil
	for _, path := range p.paths() {
		p.qualifyNames(path)
	}
	for _, path := range p.paths() {
		p.repairImports(path)
	}
}

// useBundleForSharedFiles replaces a file that only declares shared types
// (google.protobuf, google.api, google.rpc, our options) under another path
// than theirs by the bundle's files declaring them, and points its
// importers there.
// Servers that regroup files by package (grpc-js serves one
// "google_protobuf.proto" with every well-known type, re-encoded by
// protobufjs with camelCase field names) make their copy unusable, and
// these definitions do not vary between backends anyway.
func (p *pool) useBundleForSharedFiles() {
	replaced := make(map[string][]string)
	for _, path := range p.paths() {
		fd := p.files[path]
		var names []string
		for _, m := range fd.GetMessageType() {
			names = append(names, join(fd.GetPackage(), m.GetName()))
		}
		for _, e := range fd.GetEnumType() {
			names = append(names, join(fd.GetPackage(), e.GetName()))
		}
		for _, x := range fd.GetExtension() {
			names = append(names, join(fd.GetPackage(), x.GetName()))
		}
		if len(names) == 0 || len(fd.GetService()) > 0 {
			continue
		}
		var files []string
		for _, n := range names {
			d := bundledSymbol(protoreflect.FullName(n))
			if d == nil {
				files = nil
				break
			}
			files = append(files, d.ParentFile().Path())
		}
		if files == nil {
			continue
		}
		slices.Sort(files)
		files = slices.Compact(files)
		if len(files) == 1 && files[0] == path {
			// The file under its usual path, as protoc wrote it (and
			// perhaps with comments): keep it.
			continue
		}
		replaced[path] = files
		p.logger.Debug("reflection: repaired a descriptor", "source", p.origin, "file", path,
			"repair", "replaced a served file of shared types by the bundled files", "bundled", files)
	}
	if len(replaced) == 0 {
		return
	}
	for path := range replaced {
		delete(p.files, path)
	}
	p.symbols = nil
	for _, path := range p.paths() {
		fd := p.files[path]
		var deps []string
		changed := false
		for _, dep := range fd.GetDependency() {
			if files, ok := replaced[dep]; ok {
				deps = append(deps, files...)
				changed = changed || len(files) != 1 || files[0] != dep
				continue
			}
			deps = append(deps, dep)
		}
		if changed {
			// Public and weak imports of a replaced file lose that
			// status; they only matter to compilers, not to the gateway.
			fd.PublicDependency, fd.WeakDependency = nil, nil
			slices.Sort(deps)
			fd.Dependency = slices.Compact(deps)
		}
	}
}

// removeCopiedExtensions drops fields whose name is a full name
// (".pkg.ext"): protobufjs copies every extension into the message it
// extends that way, where it is no field at all; the real declaration
// stays with the extension's own file.
func (p *pool) removeCopiedExtensions(path string) {
	var message func(scope string, m *descriptorpb.DescriptorProto)
	message = func(scope string, m *descriptorpb.DescriptorProto) {
		name := join(scope, m.GetName())
		kept := m.Field[:0]
		for _, f := range m.GetField() {
			if strings.HasPrefix(f.GetName(), ".") && f.OneofIndex == nil {
				p.repaired(path, name, "removed an extension copied into its extendee as a field", "field", f.GetName())
				continue
			}
			kept = append(kept, f)
		}
		m.Field = kept
		for _, n := range m.GetNestedType() {
			message(name, n)
		}
	}
	for _, m := range p.files[path].GetMessageType() {
		message(p.files[path].GetPackage(), m)
	}
}

// repairMapEntries renames map entry messages to the name protoc would
// give them (FooBarEntry for a field foo_bar), which protodesc insists on.
// Only a nested message with map_entry set, exactly the key and value
// fields and one repeated field of this message using it qualifies.
func (p *pool) repairMapEntries(path string) {
	fd := p.files[path]
	var message func(scope string, m *descriptorpb.DescriptorProto)
	message = func(scope string, m *descriptorpb.DescriptorProto) {
		name := join(scope, m.GetName())
		for _, n := range m.GetNestedType() {
			if !n.GetOptions().GetMapEntry() {
				continue
			}
			old := join(name, n.GetName())
			var users []*descriptorpb.FieldDescriptorProto
			for _, f := range m.GetField() {
				if t := f.GetTypeName(); t == "."+old || t == n.GetName() || t == join(m.GetName(), n.GetName()) {
					users = append(users, f)
				}
			}
			if len(users) != 1 || users[0].GetLabel() != descriptorpb.FieldDescriptorProto_LABEL_REPEATED || !isMapEntryShape(n) {
				continue
			}
			want := mapEntryName(users[0].GetName())
			if n.GetName() == want {
				continue
			}
			if slices.ContainsFunc(m.GetNestedType(), func(o *descriptorpb.DescriptorProto) bool { return o.GetName() == want }) ||
				slices.ContainsFunc(m.GetEnumType(), func(o *descriptorpb.EnumDescriptorProto) bool { return o.GetName() == want }) {
				p.problem(path, old, "map entry message should be named %s, which is taken", want)
				continue
			}
			n.Name = proto.String(want)
			users[0].TypeName = proto.String("." + join(name, want))
			p.repaired(path, old, "renamed map entry message", "to", want)
		}
		for _, n := range m.GetNestedType() {
			message(name, n)
		}
	}
	for _, m := range fd.GetMessageType() {
		message(fd.GetPackage(), m)
	}
}

func isMapEntryShape(m *descriptorpb.DescriptorProto) bool {
	if len(m.GetField()) != 2 || len(m.GetNestedType())+len(m.GetEnumType())+len(m.GetExtension()) > 0 {
		return false
	}
	k, v := m.GetField()[0], m.GetField()[1]
	return k.GetName() == "key" && k.GetNumber() == 1 && v.GetName() == "value" && v.GetNumber() == 2
}

// mapEntryName is protoc's name for the entry message of map field name
// (protobuf's internal/strs.MapEntryName).
func mapEntryName(name string) string {
	var b strings.Builder
	upper := true
	for _, c := range name {
		switch {
		case c == '_':
			upper = true
		case upper:
			b.WriteString(strings.ToUpper(string(c)))
			upper = false
		default:
			b.WriteRune(c)
		}
	}
	b.WriteString("Entry")
	return b.String()
}

// qualifyNames makes every type reference in the file fully qualified and
// sets each field's type (message or enum) when it was left out. A
// relative name is resolved by protobuf's scoping rules (the innermost
// scope declaring it wins), but only when that is unambiguous: when the
// innermost declaration is of the wrong kind for the reference (an enum
// where the field says message) while an outer one fits, protoc would
// reject the file, and picking the outer one would be a guess.
func (p *pool) qualifyNames(path string) {
	for _, r := range refs(p.files[path]) {
		name := *r.name
		if strings.HasPrefix(name, ".") {
			if s, ok := p.lookup(name[1:]); ok && r.field != nil && r.field.Type == nil {
				p.setKind(path, r, s.kind)
			}
			continue
		}
		found := p.resolve(r.scope, name)
		if len(found) == 0 {
			continue // left for protodesc, whose error names the element
		}
		if !r.wants(found[0].kind) {
			var alts []string
			for _, f := range found {
				alts = append(alts, f.name)
			}
			p.problem(path, r.element, "%s %q is ambiguous: the innermost match %s is not of the kind the descriptor says; candidates: %s",
				r.what, name, found[0].name, strings.Join(alts, ", "))
			continue
		}
		*r.name = "." + found[0].name
		p.repaired(path, r.element, "qualified a relative type name", "from", name, "to", found[0].name)
		if r.field != nil && r.field.Type == nil {
			p.setKind(path, r, found[0].kind)
		}
	}
}

func (p *pool) setKind(path string, r ref, k symbolKind) {
	switch k {
	case symMessage:
		r.field.Type = descriptorpb.FieldDescriptorProto_TYPE_MESSAGE.Enum()
	case symEnum:
		r.field.Type = descriptorpb.FieldDescriptorProto_TYPE_ENUM.Enum()
	default:
		return
	}
	p.repaired(path, r.element, "set the missing field type", "type", r.field.GetType().String())
}

// repairImports makes the file's import list match what it uses: a file
// that references another file's types imports it (some servers send no
// imports at all), and an import that nobody can supply is dropped when
// no type of the file comes from it (it typically only defined custom
// options, which then stay unknown fields).
func (p *pool) repairImports(path string) {
	fd := p.files[path]
	used := make(map[string]bool)
	unresolved := false
	for _, r := range refs(fd) {
		s, ok := p.lookup(strings.TrimPrefix(*r.name, "."))
		if !ok {
			unresolved = true
		} else if s.file != path {
			used[s.file] = true
		}
	}
	var drop []int
	for i, dep := range fd.GetDependency() {
		// When every type the file uses is accounted for, a file nobody
		// has cannot be needed for anything but options. Otherwise it is
		// kept, so that the error names it.
		if _, ok := p.files[dep]; !ok && p.knownFile(dep) == nil && bundledFile(dep) == nil && !unresolved {
			drop = append(drop, i)
			p.logger.Info("reflection: dropped an import nobody serves and nothing in the file uses; options it defines stay unread",
				"source", p.origin, "file", path, "import", dep)
		}
	}
	if len(drop) > 0 {
		dropImports(fd, drop)
	}
	have := make(map[string]bool)
	for _, dep := range fd.GetDependency() {
		have[dep] = true
	}
	var add []string
	for dep := range used {
		if !have[dep] {
			add = append(add, dep)
		}
	}
	slices.Sort(add)
	for _, dep := range add {
		fd.Dependency = append(fd.Dependency, dep)
		p.repaired(path, "", "added a missing import", "import", dep)
	}
}

// dropImports removes the imports at the given indexes, keeping
// public_dependency and weak_dependency, which hold indexes, pointing at
// the same files.
func dropImports(fd *descriptorpb.FileDescriptorProto, drop []int) {
	newIndex := make([]int32, len(fd.GetDependency()))
	var deps []string
	for i, dep := range fd.GetDependency() {
		if slices.Contains(drop, i) {
			newIndex[i] = -1
			continue
		}
		newIndex[i] = int32(len(deps))
		deps = append(deps, dep)
	}
	remap := func(idx []int32) []int32 {
		var out []int32
		for _, i := range idx {
			if int(i) < len(newIndex) && newIndex[i] >= 0 {
				out = append(out, newIndex[i])
			}
		}
		return out
	}
	fd.Dependency = deps
	fd.PublicDependency = remap(fd.PublicDependency)
	fd.WeakDependency = remap(fd.WeakDependency)
}

// errMissingFile marks a file neither the pool nor the bundle has; the
// importing file turns it into a DescriptorError naming both.
var errMissingFile = errors.New("file not found")

// build returns the descriptor of path, building and registering its
// imports first. Bundled files a file imports but the pool lacks are
// registered as the bundle's own descriptors, so a Result shares them with
// the Go types linked into the binary.
func (p *pool) build(path string) (protoreflect.FileDescriptor, error) {
	if p.reg == nil {
		p.reg = new(protoregistry.Files)
		p.built = make(map[string]protoreflect.FileDescriptor)
		p.failed = make(map[string]error)
	}
	return p.buildFile(path, nil)
}

func (p *pool) buildFile(path string, stack []string) (protoreflect.FileDescriptor, error) {
	if fd, ok := p.built[path]; ok {
		return fd, nil
	}
	if err, ok := p.failed[path]; ok {
		return nil, err
	}
	if slices.Contains(stack, path) {
		return nil, &DescriptorError{File: path, Problem: "import cycle: " + strings.Join(append(stack, path), " -> ")}
	}
	fdp, ok := p.files[path]
	if !ok {
		if fd := p.knownFile(path); fd != nil {
			p.registerKnown(fd)
			return fd, nil
		}
		if fd := bundledFile(path); fd != nil {
			if err := p.registerBundled(fd); err != nil {
				return nil, err
			}
			p.logger.Debug("reflection: using the bundled copy of a shared file the source did not include", "source", p.origin, "file", path)
			return fd, nil
		}
		return nil, errMissingFile
	}
	if fd := p.sameAsBundled(path, fdp); fd != nil {
		if err := p.registerBundled(fd); err != nil {
			return nil, err
		}
		return fd, nil
	}
	fd, err := p.buildProto(fdp, append(stack, path))
	if err != nil {
		p.failed[path] = err
		return nil, err
	}
	p.built[path] = fd
	return fd, nil
}

// sameAsBundled returns the bundle's copy of path when the source served
// exactly that file, or nil. Most backends serve the well-known types and
// google/api files they import, as linked into them: built again, each
// would be a second copy in memory of a descriptor the binary already
// holds, for the life of the catalog (the zoo serves nine, with
// descriptor.proto, which any file declaring options imports: about 230
// KB of live heap). A file that differs in anything (another version,
// source info kept, a problem found in it) is built from what was
// served, as before.
func (p *pool) sameAsBundled(path string, fdp *descriptorpb.FileDescriptorProto) protoreflect.FileDescriptor {
	if len(p.problems[path]) > 0 {
		return nil
	}
	fd := bundledFile(path)
	if fd == nil || !proto.Equal(fdp, protodesc.ToFileDescriptorProto(fd)) {
		return nil
	}
	return fd
}

func (p *pool) buildProto(fdp *descriptorpb.FileDescriptorProto, stack []string) (protoreflect.FileDescriptor, error) {
	path := fdp.GetName()
	var errs []error
	errs = append(errs, p.problems[path]...)
	for _, dep := range fdp.GetDependency() {
		if _, err := p.buildFile(dep, stack); err != nil {
			if err == errMissingFile {
				errs = append(errs, &DescriptorError{File: path, Problem: "imports " + dep + ", which the source does not include and the gateway does not bundle (only google/protobuf, google/api and google/rpc files are bundled)"})
				continue
			}
			errs = append(errs, fmt.Errorf("file %s: import %s: %w", path, dep, err))
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	fd, err := p.newFile(fdp)
	if err != nil {
		return nil, &DescriptorError{File: path, Problem: "invalid descriptor", Err: err}
	}
	if err := p.reg.RegisterFile(fd); err != nil {
		return nil, &DescriptorError{File: path, Problem: "conflicts with another file", Err: err}
	}
	return fd, nil
}

// newFile builds fdp's descriptor against the pool's registry, its source
// info kept apart from it (Comments says why). It is safe to run for
// several files at once, each with its own fdp.
func (p *pool) newFile(fdp *descriptorpb.FileDescriptorProto) (protoreflect.FileDescriptor, error) {
	info := fdp.SourceCodeInfo
	var fi *fileInfo
	if info != nil {
		var err error
		if fi, err = newFileInfo(info); err != nil {
			return nil, err
		}
	}
	fdp.SourceCodeInfo = nil
	fd, err := protodesc.NewFile(fdp, p.reg)
	fdp.SourceCodeInfo = info
	if err != nil || fi == nil {
		return fd, err
	}
	p.infoMu.Lock()
	defer p.infoMu.Unlock()
	if p.info == nil {
		p.info = make(map[protoreflect.FileDescriptor]*fileInfo)
	}
	p.info[fd] = fi
	return fd, nil
}

// comments returns the source info of the files the pool built or took
// as known.
func (p *pool) comments() *Comments {
	c := &Comments{}
	for _, fd := range p.built {
		if fi := p.info[fd]; fi != nil {
			c.add(fd, fi)
		} else {
			c.add(fd, p.knownComments.file(fd))
		}
	}
	return c
}

// registerBundled registers a bundled file and its imports.
func (p *pool) registerBundled(fd protoreflect.FileDescriptor) error {
	if _, ok := p.built[fd.Path()]; ok {
		return nil
	}
	imports := fd.Imports()
	for i := range imports.Len() {
		imp := imports.Get(i).FileDescriptor
		if _, ok := p.files[imp.Path()]; ok {
			// A served copy of something a bundled file imports: use it,
			// but the bundled file keeps pointing at its own.
			if _, err := p.buildFile(imp.Path(), nil); err != nil {
				return err
			}
			continue
		}
		if err := p.registerBundled(imp); err != nil {
			return err
		}
	}
	p.built[fd.Path()] = fd
	if _, err := p.reg.FindFileByPath(fd.Path()); err == nil {
		return nil
	}
	if err := p.reg.RegisterFile(fd); err != nil {
		// A served file already declares the same names: keep the served
		// one, which is what the backend really speaks.
		p.logger.Debug("reflection: not registering a bundled file whose names the source already declares", "file", fd.Path(), "err", err)
	}
	return nil
}

// registerKnown registers a file built before, and its imports, so that
// the pool's files can import it: the pool's descriptors then refer to the
// very descriptors the known files hold.
func (p *pool) registerKnown(fd protoreflect.FileDescriptor) {
	if _, ok := p.built[fd.Path()]; ok {
		return
	}
	p.built[fd.Path()] = fd
	imports := fd.Imports()
	for i := range imports.Len() {
		p.registerKnown(imports.Get(i).FileDescriptor)
	}
	if _, err := p.reg.FindFileByPath(fd.Path()); err == nil {
		return
	}
	if err := p.reg.RegisterFile(fd); err != nil {
		// Known files come from one registry, where they did not clash;
		// a clash is with a file of this pool, whose build reports it.
		p.logger.Debug("reflection: not registering a known file whose names a fetched file declares", "file", fd.Path(), "err", err)
	}
}

// result builds every file in the pool and lists the services they
// declare, leaving out grpc.reflection.*. It fails on the first file that
// cannot be built; sources that want per-service errors call build
// themselves.
func (p *pool) result() (*Result, error) {
	var errs []error
	for _, path := range p.paths() {
		if _, err := p.build(path); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(dedupe(errs)...)
	}
	res := &Result{Files: p.reg, Comments: p.comments()}
	if res.Files == nil {
		res.Files = new(protoregistry.Files)
	}
	for _, path := range p.paths() {
		svcs := p.built[path].Services()
		for i := range svcs.Len() {
			sd := svcs.Get(i)
			if strings.HasPrefix(string(sd.FullName()), "grpc.reflection.") {
				continue
			}
			res.Services = append(res.Services, sd)
		}
	}
	sortServices(res.Services)
	return res, nil
}

func sortServices(s []protoreflect.ServiceDescriptor) {
	slices.SortFunc(s, func(a, b protoreflect.ServiceDescriptor) int { return cmp.Compare(a.FullName(), b.FullName()) })
}

// dedupe drops repeats of the same error value: a file that fails is
// reported once even when several files import it.
func dedupe(errs []error) []error {
	var out []error
	for _, e := range errs {
		if !slices.ContainsFunc(out, func(o error) bool { return o == e || o.Error() == e.Error() }) {
			out = append(out, e)
		}
	}
	return out
}
