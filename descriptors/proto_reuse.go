package descriptors

import (
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
)

// Reuse between compiles.
//
// A compile records, for every file name the compiler looked up, where it
// found it (resolution). When a later compile starts, the files the last
// successful one read are hashed again (inputs.changes); a file name whose
// own file changed or went away, or that was found further along the
// import paths than a path that now exists, is dirty, and so is every file
// importing a dirty one, transitively. Every other file read from disk is
// given to the compiler as the descriptor the last Result holds
// (protocompile.SearchResult.Desc), wrapped as protocompile's
// linker.File once per compile (compile.wrap), which protocompile v0.14.1
// takes as it is (linker.NewFileRecursive returns a File unchanged)
// without parsing, interpreting options or linking it again, and which
// the pool registers as it is (pool.known) instead of converting it to a
// FileDescriptorProto and back. Only the dirty files are parsed, linked
// and converted. The descriptors reused are those the last Result, which
// the gateway holds anyway, shares: the reuse keeps no AST, no linker
// result and no copy (the wrappers go with the compile).

// resolution is where a compile found one file name.
type resolution struct {
	// path is the file read, or "" when the name came from the bundle or
	// the compiler's own standard imports.
	path string
	// missed are the paths along the import paths tried before, where
	// there was no file.
	missed []string
	// unreadable: a path could not be read for another reason than its
	// absence; what it holds now cannot be told.
	unreadable bool
}

// reusable returns, of prev's files read from disk, those that neither
// changed nor import, transitively, a file that did, by file name; the
// descriptors are prev's. changed is prev.in.changes().
func reusable(prev *compileRun, changed map[string]bool) map[string]protoreflect.FileDescriptor {
	dirty := make(map[string]bool, len(prev.resolved))
	var isDirty func(name string) bool
	isDirty = func(name string) bool {
		if d, ok := dirty[name]; ok {
			return d
		}
		dirty[name] = true // an import cycle cannot compile: dirty
		r, ok := prev.resolved[name]
		if !ok {
			// Every import of a file compiled from source is looked up;
			// one that was not cannot be vouched for.
			return true
		}
		d := r.unreadable || changed[r.path]
		for _, m := range r.missed {
			d = d || changed[m]
		}
		if !d && r.path != "" {
			fd, err := prev.res.Files.FindFileByPath(name)
			if err != nil {
				return true
			}
			imports := fd.Imports()
			for i := range imports.Len() {
				// A bundled import (path "") is dirty only when a file on
				// disk now stands in for it.
				if isDirty(imports.Get(i).Path()) {
					d = true
					break
				}
			}
		}
		dirty[name] = d
		return d
	}
	reuse := make(map[string]protoreflect.FileDescriptor)
	for name, r := range prev.resolved {
		if r.path == "" || isDirty(name) {
			continue
		}
		if fd, err := prev.res.Files.FindFileByPath(name); err == nil {
			reuse[name] = fd
		}
	}
	return reuse
}

// reusedFiles is the pool's view (pool.known) of the descriptors a compile
// reused, so it registers them as they are.
type reusedFiles map[string]protoreflect.FileDescriptor

func (r reusedFiles) FindFileByPath(path string) (protoreflect.FileDescriptor, error) {
	if fd, ok := r[path]; ok {
		return fd, nil
	}
	return nil, protoregistry.NotFound
}

func (r reusedFiles) FindDescriptorByName(protoreflect.FullName) (protoreflect.Descriptor, error) {
	return nil, protoregistry.NotFound
}
