package searchdoc

import (
	"slices"
	"testing"
)

// TestSupersededTools: a tool is superseded when the catalog has the same
// method (package equal but for its version segment, same service and
// method) in a preferred version: GA over beta over alpha, then the later
// version; a method alone in its version, or in an unversioned package,
// is not.
func TestSupersededTools(t *testing.T) {
	mk := func(pkg, svc, method string) *Facts {
		return &Facts{Pkg: pkg, Service: svc, Method: method}
	}
	tools := []*Facts{
		mk("google.cloud.compute.v1", "Instances", "Stop"),
		mk("google.cloud.compute.v1beta", "Instances", "Stop"),
		mk("google.cloud.compute.v1beta", "Instances", "Preview"), // only in beta
		mk("google.ads.googleads.v23.services", "LabelService", "MutateLabels"),
		mk("google.ads.googleads.v25.services", "LabelService", "MutateLabels"),
		mk("google.cloud.tasks.v2beta2", "CloudTasks", "RunTask"),
		mk("google.cloud.tasks.v2beta3", "CloudTasks", "RunTask"),
		mk("google.cloud.vision.v1p3beta1", "ImageAnnotator", "Annotate"),
		mk("google.cloud.vision.v1p4beta1", "ImageAnnotator", "Annotate"),
		mk("google.cloud.vision.v1alpha", "ImageAnnotator", "Annotate"),
		mk("google.cloud.other.v1", "Instances", "Stop"), // another API
		mk("zoo", "ZooService", "Feed"),
		mk("zoo.next", "ZooService", "Feed"),
	}
	want := []bool{false, true, false, true, false, true, false, true, false, true, false, false, false}
	if got := Superseded(tools); !slices.Equal(got, want) {
		t.Errorf("Superseded = %v, want %v", got, want)
	}
}
