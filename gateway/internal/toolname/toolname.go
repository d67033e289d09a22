// Package toolname names the gateway's tools.
//
// Every name the gateway emits is portable to every LLM API
// (^[a-zA-Z0-9_-]{1,64}$), unique, and deterministic for a given set of
// backends and methods. Within one backend:
//
//   - a method whose (mcpgateway.v1.tool) option sets a name gets it as
//     given, unless the name is not portable, is claimed by another method
//     too, or equals a derived name; then a warning is logged and the
//     method falls back to its derived name;
//   - the derived name is Service_Method (the service's simple name),
//     preceded by the service's (mcpgateway.v1.service) name_prefix;
//   - when two derived names are the same, those methods (only those) are
//     qualified with package segments from the right (v1_Zoo_Get,
//     v2_Zoo_Get), one segment at a time, until the names differ;
//   - characters outside [a-zA-Z0-9_-] become '_';
//   - a name longer than 64 characters keeps its first 55 and ends in '_'
//     plus 8 hex digits of the SHA-256 of the full method name.
//
// Across backends, only tools whose names collide are renamed: each is
// prefixed with its backend's name (zoo_ZooService_GetAnimal), shortened by
// the same hash rule (hashing "backend/full method name"), and in the
// unlikely case that the prefixed names still collide, suffixed with that
// hash. So adding an unrelated service or backend never renames existing
// tools, and a collision renames only the tools involved.
//
// It knows the methods' descriptors and the gateway's own method options
// (proto/mcpgateway/v1), nothing of tools, calls or MCP; the gateway's
// catalog applies the names it gives.
package toolname

import (
	"crypto/sha256"
	"encoding/hex"
	"log/slog"
	"strings"

	"google.golang.org/protobuf/reflect/protoreflect"

	mcpgatewayv1 "github.com/grpc-mcp-gateway/gateway/proto/mcpgateway/v1"
)

// MaxLength is the longest tool name the gateway emits. MCP allows
// 128 characters, but the Anthropic and OpenAI function-calling APIs (and
// the MCP conformance suite) accept at most 64 of ^[a-zA-Z0-9_-].
const MaxLength = 64

// hashSuffixLength is the number of hex digits of the stable hash that
// replaces the tail of an over-long name.
const hashSuffixLength = 8

// Local names one backend's methods: explicit names where valid,
// derived names otherwise (see the package doc).
func Local(methods []protoreflect.MethodDescriptor, opts map[protoreflect.FullName]*mcpgatewayv1.Tool, prefixes map[protoreflect.FullName]string, logger *slog.Logger) []string {
	explicit := make(map[int]string)
	claimed := make(map[string][]int)
	for i, m := range methods {
		name := opts[m.FullName()].GetName()
		if name == "" {
			continue
		}
		if !Valid(name) {
			logger.Warn("(mcpgateway.v1.tool).name is not a portable tool name (^[a-zA-Z0-9_-]{1,64}$); using the derived name", "method", m.FullName(), "name", name)
			continue
		}
		explicit[i] = name
		claimed[name] = append(claimed[name], i)
	}
	for name, idx := range claimed {
		if len(idx) < 2 {
			continue
		}
		for _, i := range idx {
			logger.Warn("(mcpgateway.v1.tool).name is set on several methods; using their derived names", "method", methods[i].FullName(), "name", name)
			delete(explicit, i)
		}
	}
	for {
		var derived []protoreflect.MethodDescriptor
		var at []int
		for i, m := range methods {
			if _, ok := explicit[i]; !ok {
				derived = append(derived, m)
				at = append(at, i)
			}
		}
		dnames := derivedNames(derived, prefixes)
		taken := make(map[string]bool, len(dnames))
		for _, n := range dnames {
			taken[n] = true
		}
		conflict := false
		for i, n := range explicit {
			if taken[n] {
				logger.Warn("(mcpgateway.v1.tool).name equals another method's derived name; using the derived name", "method", methods[i].FullName(), "name", n)
				delete(explicit, i)
				conflict = true
			}
		}
		if conflict {
			continue // the fallen-back method joins the derived ones
		}
		names := make([]string, len(methods))
		for k, i := range at {
			names[i] = dnames[k]
		}
		for i, n := range explicit {
			names[i] = n
		}
		return names
	}
}

// Base is the name m has when no other method's name collides
// with it: its explicit name when that is portable, else Service_Method
// with the service's name_prefix, unqualified. A collision, within the
// backend or across backends, renames the tool but never changes this, so
// a tool scope rule naming a tool follows it through renames (gateway/internal/scopes).
func Base(m protoreflect.MethodDescriptor, opt *mcpgatewayv1.Tool, prefix string) string {
	if name := opt.GetName(); Valid(name) {
		return name
	}
	return shortenName(qualifiedName(m, 0, prefix), string(m.FullName()))
}

// Valid is the rule model APIs apply to function names.
func Valid(name string) bool {
	if len(name) == 0 || len(name) > MaxLength {
		return false
	}
	return sanitizeName(name) == name
}

// derivedNames is the Service_Method rule with collision qualification and
// the length cap; prefixes holds each service's name_prefix.
func derivedNames(methods []protoreflect.MethodDescriptor, prefixes map[protoreflect.FullName]string) []string {
	levels := make([]int, len(methods))
	names := make([]string, len(methods))
	for {
		for i, m := range methods {
			names[i] = qualifiedName(m, levels[i], prefixes[m.Parent().FullName()])
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

// qualifiedName is prefix, then Service_Method preceded by the last level
// segments of the method's package.
func qualifiedName(m protoreflect.MethodDescriptor, level int, prefix string) string {
	svc := m.Parent().(protoreflect.ServiceDescriptor)
	var parts []string
	if level > 0 {
		segs := strings.Split(string(svc.ParentFile().Package()), ".")
		parts = append(parts, segs[len(segs)-level:]...)
	}
	parts = append(parts, string(svc.Name()), string(m.Name()))
	return sanitizeName(prefix + strings.Join(parts, "_"))
}

// BackendQualified renames the tools whose names collide across backends
// (see the package doc). names[i] is the local name of the tool at i, served
// by backends[i] for the method fullNames[i]; the result is the final name
// of each.
func BackendQualified(names, backends, fullNames []string) []string {
	owners := make(map[string]map[string]bool, len(names))
	for i, n := range names {
		if owners[n] == nil {
			owners[n] = make(map[string]bool, 1)
		}
		owners[n][backends[i]] = true
	}
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = n
		if len(owners[n]) > 1 {
			out[i] = shortenName(sanitizeName(backends[i]+"_"+n), backends[i]+"/"+fullNames[i])
		}
	}
	count := make(map[string]int, len(out))
	for _, n := range out {
		count[n]++
	}
	for i, n := range out {
		if count[n] > 1 {
			suffix := "_" + hashSuffix(backends[i]+"/"+fullNames[i])
			out[i] = n[:min(len(n), MaxLength-len(suffix))] + suffix
		}
	}
	return out
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

// shortenName caps name at MaxLength. The hash is of the method's
// full name, so the shortened name is stable across restarts and distinct
// for methods whose long names share a prefix.
func shortenName(name, fullName string) string {
	if len(name) <= MaxLength {
		return name
	}
	return name[:MaxLength-hashSuffixLength-1] + "_" + hashSuffix(fullName)
}

// hashSuffix is the stable tail that tells apart names cut or collided:
// the first hashSuffixLength hex digits of the SHA-256 of key.
func hashSuffix(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:])[:hashSuffixLength]
}
