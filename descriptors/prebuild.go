package descriptors

import (
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
)

// prebuild builds the pool's files that names need, on every core, one
// level of imports at a time: a level's files import only files built
// before it, so building one (newFile) reads the registry while nothing writes
// it, and the level is registered once built, in path order. build then
// finds them built. A file prebuild cannot build so (a problem the
// repairs found, an import that failed, any error) is left to build,
// which builds it, or reports why not, exactly as without prebuild.
//
// It serves a restart over the compile cache, whose files come from a
// compile that succeeded: building the descriptors of the googleapis
// catalog (~6,000 files) one at a time was a third of the restart.
func (p *pool) prebuild(names []string) {
	if p.reg == nil {
		p.reg = new(protoregistry.Files)
		p.built = make(map[string]protoreflect.FileDescriptor)
		p.failed = make(map[string]error)
	}
	// The pool's files names need, each once.
	need := make(map[string]bool)
	var visit func(string)
	visit = func(path string) {
		fdp, ok := p.files[path]
		if !ok || need[path] {
			return
		}
		need[path] = true
		for _, dep := range fdp.GetDependency() {
			visit(dep)
		}
	}
	for _, name := range names {
		visit(name)
	}
	// Imports from outside the pool (the bundle, known files) first, by
	// build's own rules; a failure is left for build to report.
	for path := range need {
		for _, dep := range p.files[path].GetDependency() {
			if _, ok := p.files[dep]; !ok {
				_, _ = p.buildFile(dep, nil)
			}
		}
	}
	var remaining []string
	for path := range need {
		if _, ok := p.built[path]; !ok && len(p.problems[path]) == 0 {
			remaining = append(remaining, path)
		}
	}
	slices.Sort(remaining)
	for len(remaining) > 0 {
		var level, later []string
		for _, path := range remaining {
			ready := true
			for _, dep := range p.files[path].GetDependency() {
				if _, ok := p.built[dep]; !ok {
					ready = false
					break
				}
			}
			if ready {
				level = append(level, path)
			} else {
				later = append(later, path)
			}
		}
		if len(level) == 0 {
			return // what is left waits on a file that failed: build reports it
		}
		fds := make([]protoreflect.FileDescriptor, len(level))
		var next atomic.Int64
		var wg sync.WaitGroup
		for range min(runtime.GOMAXPROCS(0), len(level)) {
			wg.Go(func() {
				for i := int(next.Add(1) - 1); i < len(level); i = int(next.Add(1) - 1) {
					fds[i], _ = p.newFile(p.files[level[i]])
				}
			})
		}
		wg.Wait()
		for i, path := range level {
			if fds[i] != nil && p.reg.RegisterFile(fds[i]) == nil {
				p.built[path] = fds[i]
			}
		}
		remaining = later
	}
}
