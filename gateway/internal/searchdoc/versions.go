package searchdoc

import (
	"cmp"
	"regexp"
	"strconv"
	"strings"
	"sync"
)

// API versions in search.
//
// A catalog of many APIs often holds the same method in several versions
// of one API: google.cloud.compute.v1 and v1beta both have Instances.Stop,
// Google Ads v23, v24 and v25 all have LabelService.MutateLabels. Their
// tools rank alike, so for a request that names no version the copies
// fill a short answer with one operation and push distinct matches out
// (issue 22: on the googleapis catalog, a third of a top 5 was such
// copies). search_tools ranks a tool lower when the catalog holds the same
// method (same service and method names, the package the same but for its
// version) in a version people would rather use: GA over beta over alpha,
// and within a stage the later version. The search package applies it
// (search.Document.Superseded) only when the request names no version.

// apiVersionRE matches a package segment that is an API version (the
// googleapis convention, AIP-185): v1, v2beta3, v1alpha, v1p1beta1.
// Compiled on first use: only a catalog indexed for search reads versions.
var apiVersionRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^v(\d+)(?:p(\d+))?(?:(alpha|beta)(\d*))?$`) })

// apiVersion is a version's place in the order of preference.
type apiVersion struct {
	stage        int // 2 GA, 1 beta, 0 alpha
	major, point int
	stageNum     int // the 3 of v2beta3
}

func (v apiVersion) compare(w apiVersion) int {
	return cmp.Or(cmp.Compare(v.stage, w.stage), cmp.Compare(v.major, w.major),
		cmp.Compare(v.point, w.point), cmp.Compare(v.stageNum, w.stageNum))
}

// versionedMethod splits a method's package at its last version segment:
// key is the method's full name with that segment left out, and ok is
// false for a package without one.
func versionedMethod(pkg, service, method string) (key string, v apiVersion, ok bool) {
	segs := strings.Split(pkg, ".")
	for i := len(segs) - 1; i >= 0; i-- {
		m := apiVersionRE().FindStringSubmatch(segs[i])
		if m == nil {
			continue
		}
		v.major, _ = strconv.Atoi(m[1])
		v.point, _ = strconv.Atoi(m[2])
		v.stageNum, _ = strconv.Atoi(m[4])
		switch m[3] {
		case "":
			v.stage = 2
		case "beta":
			v.stage = 1
		}
		rest := append(segs[:i:i], segs[i+1:]...)
		return strings.Join(rest, ".") + "/" + service + "." + method, v, true
	}
	return "", v, false
}

// Superseded reports, for each tool's facts, whether the catalog holds
// its method in a preferred version of the same API.
func Superseded(tools []*Facts) []bool {
	type entry struct {
		key string
		v   apiVersion
	}
	entries := make([]entry, len(tools))
	best := map[string]apiVersion{}
	for i, t := range tools {
		key, v, ok := versionedMethod(t.Pkg, t.Service, t.Method)
		if !ok {
			continue
		}
		entries[i] = entry{key, v}
		if b, seen := best[key]; !seen || v.compare(b) > 0 {
			best[key] = v
		}
	}
	out := make([]bool, len(tools))
	for i, e := range entries {
		out[i] = e.key != "" && e.v.compare(best[e.key]) < 0
	}
	return out
}
