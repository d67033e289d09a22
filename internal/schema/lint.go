package schema

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
)

// LintMaxDepth is the deepest nesting of subschemas Lint allows, counting the
// root as depth 0 and each properties member, items, additionalProperties,
// $defs entry and so on as one level. No provider documents a limit for
// ordinary tool schemas (OpenAI's strict mode allows 10 levels of objects),
// but very deep schemas are a sign of runaway inlining and are slow or
// rejected in practice; 32 is far above any hand-written API.
const LintMaxDepth = 32

// propertyNameRE is the property-name rule Anthropic enforces on tool input
// schemas (and the strictest among the major LLM APIs).
// Compiled on first use: Lint is a check, and the gateway, which links this
// package for its schemas, would otherwise compile it at every start.
var propertyNameRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-zA-Z0-9_.-]{1,64}$`) })

// defsKeyRE is the set of characters that survive every API's handling of
// $defs keys and $ref pointers (no escaping is needed in the pointer).
var defsKeyRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-zA-Z0-9_.-]+$`) })

// Lint reports what the major LLM APIs (OpenAI, Anthropic, Bedrock, Gemini)
// are known to reject in a tool schema, one human-readable problem per entry,
// each starting with a JSON pointer into schema. An empty result means none
// was found; it does not prove a provider will accept the schema. It checks:
//
//   - the document is a JSON object whose "type" is "object" (MCP requires it
//     of inputSchema and outputSchema; APIs reject anything else at the root);
//   - the root has no anyOf, oneOf or allOf (OpenAI, Anthropic and Bedrock
//     reject them even when every branch is an object);
//   - every "$ref" is "#/$defs/<name>" with <name> defined in the root's $defs
//     (APIs resolve only local refs and fail on dangling ones), and every $defs
//     key uses only letters, digits, '.', '_' and '-';
//   - every name under "properties" matches ^[a-zA-Z0-9_.-]{1,64}$;
//   - no subschema is nested deeper than LintMaxDepth.
//
// Schemas built by Input and Output pass Lint unless the descriptors use a
// json_name or field name that breaks the property-name rule.
func Lint(schema json.RawMessage) []string {
	dec := json.NewDecoder(bytes.NewReader(schema))
	dec.UseNumber()
	var root any
	if err := dec.Decode(&root); err != nil {
		return []string{fmt.Sprintf("(root): not valid JSON: %v", err)}
	}
	l := &linter{}
	m, ok := root.(map[string]any)
	if !ok {
		return []string{"(root): schema is not a JSON object"}
	}
	if m["type"] != "object" {
		l.addf("", `root "type" must be "object", got %s`, brief(m["type"]))
	}
	for _, k := range []string{"anyOf", "oneOf", "allOf"} {
		if _, ok := m[k]; ok {
			l.addf("/"+k, "root %s is rejected by LLM APIs", k)
		}
	}
	if defs, ok := m["$defs"].(map[string]any); ok {
		l.defs = defs
		for name := range defs {
			if !defsKeyRE().MatchString(name) {
				l.addf("/$defs/"+escape(name), "$defs key %q has characters outside [a-zA-Z0-9_.-]", name)
			}
		}
	}
	l.walk(m, "", 0)
	slices.Sort(l.problems)
	return l.problems
}

type linter struct {
	defs     map[string]any
	problems []string
}

func (l *linter) addf(ptr, format string, args ...any) {
	if ptr == "" {
		ptr = "(root)"
	}
	l.problems = append(l.problems, ptr+": "+fmt.Sprintf(format, args...))
}

// Keywords whose value is a subschema, a map of subschemas, or a list of them.
var (
	schemaKeywords = []string{"items", "additionalProperties", "propertyNames", "not",
		"if", "then", "else", "contains", "unevaluatedProperties", "unevaluatedItems",
		"contentSchema", "additionalItems"}
	schemaMapKeywords  = []string{"properties", "patternProperties", "$defs", "definitions", "dependentSchemas"}
	schemaListKeywords = []string{"anyOf", "oneOf", "allOf", "prefixItems"}
)

func (l *linter) walk(v any, ptr string, depth int) {
	m, ok := v.(map[string]any)
	if !ok {
		return // true/false schemas and non-schemas have nothing to check
	}
	if depth > LintMaxDepth {
		l.addf(ptr, "schema nested deeper than %d levels", LintMaxDepth)
		return
	}
	if ref, ok := m["$ref"]; ok {
		l.checkRef(ptr, ref)
	}
	for _, k := range schemaKeywords {
		if sub, ok := m[k]; ok {
			l.walk(sub, ptr+"/"+k, depth+1)
		}
	}
	for _, k := range schemaMapKeywords {
		subs, ok := m[k].(map[string]any)
		if !ok {
			continue
		}
		names := make([]string, 0, len(subs))
		for name := range subs {
			names = append(names, name)
		}
		slices.Sort(names)
		for _, name := range names {
			p := ptr + "/" + k + "/" + escape(name)
			if k == "properties" && !propertyNameRE().MatchString(name) {
				l.addf(p, "property name %q does not match %s", name, propertyNameRE())
			}
			l.walk(subs[name], p, depth+1)
		}
	}
	for _, k := range schemaListKeywords {
		subs, ok := m[k].([]any)
		if !ok {
			continue
		}
		for i, sub := range subs {
			l.walk(sub, fmt.Sprintf("%s/%s/%d", ptr, k, i), depth+1)
		}
	}
}

func (l *linter) checkRef(ptr string, ref any) {
	s, ok := ref.(string)
	if !ok {
		l.addf(ptr+"/$ref", "$ref is not a string")
		return
	}
	name, ok := strings.CutPrefix(s, defsPrefix)
	if !ok {
		l.addf(ptr+"/$ref", "$ref %q is not of the form %s<name>", s, defsPrefix)
		return
	}
	if _, ok := l.defs[name]; !ok {
		l.addf(ptr+"/$ref", "$ref %q names no entry of the root $defs", s)
	}
}

// escape encodes a JSON pointer token (RFC 6901).
func escape(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

func brief(v any) string {
	if v == nil {
		return "nothing"
	}
	b, _ := json.Marshal(v)
	if len(b) > 40 {
		b = append(b[:40], "..."...)
	}
	return string(b)
}
