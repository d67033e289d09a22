package main

import (
	"errors"
	"fmt"
	"os"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"
	"github.com/goccy/go-yaml/token"

	"github.com/grpc-mcp-gateway/gateway/gateway"
)

// duration is a time.Duration written as Go spells it ("30s", "1m30s").
// Its own decoder keeps the position of a bad value, which the YAML
// library drops for time.ParseDuration's errors.
type duration time.Duration

func (d *duration) UnmarshalYAML(n ast.Node) error {
	if isWord(n, offWord) {
		*d = gateway.Off
		return nil
	}
	s, ok := n.(*ast.StringNode)
	if !ok {
		if i, isInt := n.(*ast.IntegerNode); isInt && fmt.Sprint(i.Value) == "0" {
			*d = 0
			return nil
		}
		return &valueError{tok: n.GetToken(), msg: fmt.Sprintf("want a duration such as 30s or 1m30s, got %s", n)}
	}
	v, err := time.ParseDuration(s.Value)
	if err != nil {
		return &valueError{tok: n.GetToken(), msg: fmt.Sprintf("want a duration such as 30s or 1m30s, got %q", s.Value)}
	}
	*d = duration(v)
	return nil
}

// count is a count or a size: a whole number, or "unlimited" (stored as
// gateway.Off) where the setting allows it (see convention.go).
type count int64

func (c *count) UnmarshalYAML(n ast.Node) error {
	if isWord(n, unlimitedWord) {
		*c = gateway.Off
		return nil
	}
	i, ok := n.(*ast.IntegerNode)
	if !ok {
		return &valueError{tok: n.GetToken(), msg: fmt.Sprintf(`want a whole number (or "unlimited" where allowed), got %s`, n)}
	}
	v, err := strconv.ParseInt(fmt.Sprint(i.Value), 10, 64)
	if err != nil {
		return &valueError{tok: n.GetToken(), msg: fmt.Sprintf("want a whole number, got %s", n)}
	}
	*c = count(v)
	return nil
}

// isWord reports whether n is the bare word w. YAML 1.1 readers take
// "off" for false, so a boolean node spelled w counts too.
func isWord(n ast.Node, w string) bool {
	switch v := n.(type) {
	case *ast.StringNode:
		return v.Value == w
	case *ast.BoolNode:
		return v.GetToken() != nil && v.GetToken().Value == w
	}
	return false
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

// loadConfig reads and decodes path strictly: unknown keys, duplicate keys
// and values of the wrong type are errors naming the line and the key.
func loadConfig(path string) (*fileConfig, *configDoc, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, fmt.Errorf("--config: %w", err)
	}
	doc := &configDoc{name: path, lines: map[string]int{}, paths: map[*token.Token]string{}}
	f, err := parser.ParseBytes(data, 0)
	if err != nil {
		return nil, nil, doc.yamlError(err)
	}
	var cfg fileConfig
	if len(f.Docs) > 1 {
		return nil, nil, fmt.Errorf("%s: want one YAML document, got %d", path, len(f.Docs))
	}
	if len(f.Docs) == 0 || f.Docs[0].Body == nil {
		return &cfg, doc, nil
	}
	ast.Walk(doc, f.Docs[0].Body)
	if _, ok := f.Docs[0].Body.(*ast.MappingNode); !ok {
		if _, ok := f.Docs[0].Body.(*ast.MappingValueNode); !ok {
			return nil, nil, fmt.Errorf("%s: want a mapping of settings (key: value) at the top level", path)
		}
	}
	if err := yaml.NodeToValue(f.Docs[0].Body, &cfg, yaml.DisallowUnknownField()); err != nil {
		return nil, nil, doc.yamlError(err)
	}
	return &cfg, doc, nil
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
