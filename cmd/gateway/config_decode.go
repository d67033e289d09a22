package main

import (
	"errors"
	"fmt"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"
	"github.com/goccy/go-yaml/token"

	"github.com/grpc-mcp-gateway/gateway/internal/limit"
)

// duration is a time.Duration written as Go spells it ("30s", "1m30s"),
// or "off", read by the rule's parser (internal/limit). Its own decoder
// keeps the position of a bad value, which the YAML library drops for
// other errors.
type duration time.Duration

func (d *duration) UnmarshalYAML(n ast.Node) error {
	v, err := parseNode[time.Duration](n)
	*d = duration(v)
	return err
}

// count is a count or a size: a whole number, or "unlimited" (stored as
// gateway.Off) where the setting allows it (see convention.go).
type count int64

func (c *count) UnmarshalYAML(n ast.Node) error {
	v, err := parseNode[int64](n)
	*c = count(v)
	return err
}

// parseNode reads a scalar node by the rule, the word for Off included;
// the setting's own check refuses Off where it does not allow it.
func parseNode[T limit.Number](n ast.Node) (T, error) {
	s, ok := scalarText(n)
	if !ok {
		return 0, &valueError{tok: n.GetToken(), msg: fmt.Sprintf("want %s, got %s", limit.Expected[T](true), nodeKind(n))}
	}
	v, err := limit.Parse[T](s, true)
	if err != nil {
		return 0, &valueError{tok: n.GetToken(), msg: fmt.Sprintf("%v, got %q", err, s)}
	}
	return v, nil
}

// scalarText is a scalar node's value as written (a bare "off", which
// YAML 1.1 readers take for false, included); ok is false for a list, a
// mapping or null.
func scalarText(n ast.Node) (string, bool) {
	switch v := n.(type) {
	case *ast.StringNode:
		return v.Value, true
	case *ast.LiteralNode:
		return v.Value.Value, true
	case *ast.IntegerNode, *ast.FloatNode, *ast.BoolNode, *ast.InfinityNode, *ast.NanNode:
		if tk := n.GetToken(); tk != nil {
			return tk.Value, true
		}
	}
	return "", false
}

// nodeKind names what a node holds, for "want X, got Y".
func nodeKind(n ast.Node) string {
	switch n.(type) {
	case *ast.SequenceNode:
		return "a list"
	case *ast.MappingNode, *ast.MappingValueNode:
		return "a mapping"
	case *ast.NullNode:
		return "nothing"
	}
	if s, ok := scalarText(n); ok {
		return strconv.Quote(s)
	}
	return n.Type().String()
}

// valueError is a bad value found while decoding, with its position.
type valueError struct {
	tok *token.Token
	msg string
}

func (e *valueError) Error() string { return e.msg }

// configDoc is a parsed config file: its name for messages and where each
// key is, for errors found after decoding.
type configDoc struct {
	name  string
	lines map[string]int          // "backends[0].address" -> line
	paths map[*token.Token]string // a node's token -> its path
}

// at prefixes a message with the file and the line of key (a path such as
// "backends[1].name"); a key not in the file gets the file alone.
func (d *configDoc) at(key string) string {
	if l, ok := d.lines[key]; ok {
		return fmt.Sprintf("%s:%d", d.name, l)
	}
	return d.name
}

func (d *configDoc) errorf(key, format string, args ...any) error {
	return fmt.Errorf("%s: %s: %w", d.at(key), key, fmt.Errorf(format, args...))
}

// loadConfig reads and parses path: one YAML document holding a mapping
// of settings. backends: is decoded strictly here (unknown keys, and
// values of the wrong type, are errors naming the line and the key); the
// other keys are flags' names, applied by applyFile. Duplicate keys are
// the parser's errors.
func loadConfig(path string) (*configFile, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		// Named by its path, not by a flag: it may come from --config,
		// --check-config or GATEWAY_CONFIG.
		return nil, fmt.Errorf("reading the config file: %w", err)
	}
	doc := &configDoc{name: path, lines: map[string]int{}, paths: map[*token.Token]string{}}
	cf := &configFile{doc: doc}
	f, err := parser.ParseBytes(data, 0)
	if err != nil {
		return nil, doc.yamlError(err)
	}
	if len(f.Docs) > 1 {
		return nil, fmt.Errorf("%s: want one YAML document, got %d", path, len(f.Docs))
	}
	if len(f.Docs) == 0 || f.Docs[0].Body == nil {
		return cf, nil
	}
	body := f.Docs[0].Body
	ast.Walk(doc, body)
	switch m := body.(type) {
	case *ast.MappingNode:
		cf.settings = m.Values
	case *ast.MappingValueNode:
		cf.settings = []*ast.MappingValueNode{m}
	default:
		return nil, fmt.Errorf("%s: want a mapping of settings (key: value) at the top level", path)
	}
	// The keys with a schema of their own are decoded here; the others
	// are flags' names.
	lists := map[string]any{"backends": &cf.backends, "toolsets": &cf.toolsets, "tools": &cf.tools}
	cf.settings = slices.DeleteFunc(slices.Clone(cf.settings), func(kv *ast.MappingValueNode) bool {
		dst, ok := lists[kv.Key.GetToken().Value]
		if ok && err == nil {
			err = yaml.NodeToValue(kv.Value, dst, yaml.DisallowUnknownField())
		}
		return ok
	})
	if err != nil {
		return nil, doc.yamlError(err)
	}
	return cf, nil
}

// Visit indexes every node's path and line.
func (d *configDoc) Visit(n ast.Node) ast.Visitor {
	tk := n.GetToken()
	if tk == nil {
		return d
	}
	p := strings.TrimPrefix(strings.TrimPrefix(n.GetPath(), "$"), ".")
	if _, seen := d.lines[p]; !seen && p != "" {
		d.lines[p] = tk.Position.Line
	}
	d.paths[tk] = p
	return d
}

// yamlError rephrases the YAML library's errors (which speak of Go types
// and struct fields) in the file's terms.
func (d *configDoc) yamlError(err error) error {
	var ve *valueError
	if errors.As(err, &ve) {
		key := d.paths[ve.tok]
		return fmt.Errorf("%s:%d: %s: %s", d.name, ve.tok.Position.Line, key, ve.msg)
	}
	var ye yaml.Error
	if !errors.As(err, &ye) || ye.GetToken() == nil {
		return fmt.Errorf("%s: %w", d.name, err)
	}
	line := ye.GetToken().Position.Line
	key := d.paths[ye.GetToken()]
	var unknown *yaml.UnknownFieldError
	var typ *yaml.TypeError
	switch {
	case errors.As(err, &unknown):
		parent, name := "", key
		if i := strings.LastIndexByte(key, '.'); i >= 0 {
			parent, name = key[:i], key[i+1:]
		}
		if parent == "" {
			return fmt.Errorf("%s:%d: unknown key %q", d.name, line, name)
		}
		return fmt.Errorf("%s:%d: unknown key %q in %s", d.name, line, name, parent)
	case errors.As(err, &typ):
		return fmt.Errorf("%s:%d: %s: want %s, got %s", d.name, line, key, yamlTypeName(typ.DstType), yamlTypeName(typ.SrcType))
	}
	return fmt.Errorf("%s:%d: %s", d.name, line, ye.GetMessage())
}

func yamlTypeName(t reflect.Type) string {
	if t == nil {
		return "nothing"
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int64, reflect.Uint64, reflect.Int32, reflect.Uint32:
		return "a whole number"
	case reflect.Float64, reflect.Float32:
		return "a number"
	case reflect.Slice:
		return "a list"
	case reflect.Map, reflect.Struct:
		return "a mapping"
	}
	return t.String()
}
