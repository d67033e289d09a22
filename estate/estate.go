package estate

import (
	"cmp"
	"fmt"
	"slices"
	"sync"

	// Each import registers the published descriptors of one API.
	_ "cloud.google.com/go/aiplatform/apiv1/aiplatformpb"
	_ "cloud.google.com/go/compute/apiv1/computepb"
	_ "cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"
	_ "cloud.google.com/go/spanner/admin/database/apiv1/databasepb"
	_ "cloud.google.com/go/storage/control/apiv2/controlpb"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"
)

// Packages are the protobuf packages whose services make up the estate. The
// client modules also register services the estate leaves out
// (google.longrunning.Operations, google.iam.v1.IAMPolicy, ...); a test that
// wants one names it in [Options.Services].
var Packages = []protoreflect.FullName{
	"google.cloud.aiplatform.v1",
	"google.cloud.compute.v1",
	"google.pubsub.v1",
	"google.spanner.admin.database.v1",
	"google.storage.control.v2",
}

// The estate's size, as the descriptors of the pinned module versions give
// it; a test holds the estate to it so that a version bump that changes the
// figures the README reports is noticed.
const (
	NumServices = 168
	NumMethods  = 1450
)

var (
	servicesOnce sync.Once
	services     []protoreflect.ServiceDescriptor
)

// Services returns the estate's services, sorted by full name.
func Services() []protoreflect.ServiceDescriptor {
	servicesOnce.Do(func() {
		protoregistry.GlobalFiles.RangeFiles(func(fd protoreflect.FileDescriptor) bool {
			if !slices.Contains(Packages, fd.Package()) {
				return true
			}
			for i := range fd.Services().Len() {
				services = append(services, fd.Services().Get(i))
			}
			return true
		})
		slices.SortFunc(services, func(a, b protoreflect.ServiceDescriptor) int {
			return cmp.Compare(a.FullName(), b.FullName())
		})
	})
	return services
}

// ServiceNames returns the full names of [Services], in the same order.
func ServiceNames() []protoreflect.FullName {
	var names []protoreflect.FullName
	for _, s := range Services() {
		names = append(names, s.FullName())
	}
	return names
}

// Files returns the files that declare the estate's services, sorted by
// path. Their imports are reachable through each file's Imports.
func Files() []protoreflect.FileDescriptor {
	seen := map[string]bool{}
	var files []protoreflect.FileDescriptor
	for _, s := range Services() {
		fd := s.ParentFile()
		if !seen[fd.Path()] {
			seen[fd.Path()] = true
			files = append(files, fd)
		}
	}
	slices.SortFunc(files, func(a, b protoreflect.FileDescriptor) int {
		return cmp.Compare(a.Path(), b.Path())
	})
	return files
}

// DescriptorSet returns [Files] and everything they import as one
// self-contained descriptor set, dependencies before dependents: what
// `protoc --include_imports -o` would write (without source info, since the
// published descriptors carry none).
func DescriptorSet() *descriptorpb.FileDescriptorSet {
	set := &descriptorpb.FileDescriptorSet{}
	seen := map[string]bool{}
	var visit func(fd protoreflect.FileDescriptor)
	visit = func(fd protoreflect.FileDescriptor) {
		if seen[fd.Path()] {
			return
		}
		seen[fd.Path()] = true
		for i := range fd.Imports().Len() {
			visit(fd.Imports().Get(i).FileDescriptor)
		}
		set.File = append(set.File, protodesc.ToFileDescriptorProto(fd))
	}
	for _, fd := range Files() {
		visit(fd)
	}
	return set
}

// service finds a service by full name in the global registry, which holds
// the estate and everything the client modules register besides.
func service(name protoreflect.FullName) (protoreflect.ServiceDescriptor, error) {
	d, err := protoregistry.GlobalFiles.FindDescriptorByName(name)
	if err != nil {
		return nil, fmt.Errorf("estate: service %q: %w", name, err)
	}
	sd, ok := d.(protoreflect.ServiceDescriptor)
	if !ok {
		return nil, fmt.Errorf("estate: %q is a %T, not a service", name, d)
	}
	return sd, nil
}
