package gateway

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"

	"google.golang.org/protobuf/reflect/protoreflect"
)

// MaxToolNameLength is the longest tool name the gateway emits. MCP allows
// 128 characters, but the Anthropic and OpenAI function-calling APIs (and
// the MCP conformance suite) accept at most 64 of ^[a-zA-Z0-9_-].
const MaxToolNameLength = 64

// hashSuffixLength is the number of hex digits of the stable hash that
// replaces the tail of an over-long name.
const hashSuffixLength = 8

// toolNames assigns every method a tool name that is portable to every LLM
// API and deterministic for a given set of methods:
//
//   - the default is Service_Method (the service's simple name);
//   - when two methods would get the same name, those methods are qualified
//     with package segments from the right (v1_Zoo_Get, v2_Zoo_Get), one
//     segment at a time, until the names differ;
//   - characters outside [a-zA-Z0-9_-] become '_';
//   - a name longer than 64 characters keeps its first 55 and ends in '_'
//     plus 8 hex digits of the SHA-256 of the full method name.
//
// Only methods that collide are qualified, so adding an unrelated service
// never renames existing tools.
func toolNames(methods []protoreflect.MethodDescriptor) []string {
	levels := make([]int, len(methods))
	names := make([]string, len(methods))
	for {
		for i, m := range methods {
			names[i] = qualifiedName(m, levels[i])
		}
		groups := make(map[string][]int, len(names))
		for i, n := range names {
			groups[n] = append(groups[n], i)
		}
		bumped := false
		for _, idx := range groups {
			if len(idx) < 2 {
				continue
			}
			for _, i := range idx {
				if levels[i] < packageDepth(methods[i]) {
					levels[i]++
					bumped = true
				}
			}
		}
		if !bumped {
			break
		}
	}
	for i, m := range methods {
		names[i] = shortenName(names[i], string(m.FullName()))
	}
	return names
}

// qualifiedName is Service_Method preceded by the last level segments of
// the method's package.
func qualifiedName(m protoreflect.MethodDescriptor, level int) string {
	svc := m.Parent().(protoreflect.ServiceDescriptor)
	var parts []string
	if level > 0 {
		segs := strings.Split(string(svc.ParentFile().Package()), ".")
		parts = append(parts, segs[len(segs)-level:]...)
	}
	parts = append(parts, string(svc.Name()), string(m.Name()))
	return sanitizeName(strings.Join(parts, "_"))
}

func packageDepth(m protoreflect.MethodDescriptor) int {
	pkg := m.Parent().ParentFile().Package()
	if pkg == "" {
		return 0
	}
	return strings.Count(string(pkg), ".") + 1
}

// sanitizeName replaces every character an LLM API would reject.
func sanitizeName(s string) string {
	b := []byte(s)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			b[i] = '_'
		}
	}
	return string(b)
}

// shortenName caps name at MaxToolNameLength. The hash is of the method's
// full name, so the shortened name is stable across restarts and distinct
// for methods whose long names share a prefix.
func shortenName(name, fullName string) string {
	if len(name) <= MaxToolNameLength {
		return name
	}
	sum := sha256.Sum256([]byte(fullName))
	suffix := hex.EncodeToString(sum[:])[:hashSuffixLength]
	return name[:MaxToolNameLength-hashSuffixLength-1] + "_" + suffix
}
