package main

import (
	"encoding/json"
	"fmt"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"

	"github.com/grpc-mcp-gateway/gateway/gateway"
	"github.com/grpc-mcp-gateway/gateway/internal/methodglob"
)

// fileTool is one entry of tools: (and of a toolset's tools:),
// correcting the tools of the methods it matches: gateway.ToolOverride.
// Each field's help tag is its line in docs/configuration.md.
type fileTool struct {
	Match             string                  `yaml:"match" help:"required: a glob on package.Service/Method, as --include takes them; every entry that matches a method applies, in order, a later one's keys over an earlier one's"`
	Name              string                  `yaml:"name" help:"the tool's name, 1-64 of a-z A-Z 0-9 _ -; the entry must then match one method per backend"`
	Title             string                  `yaml:"title" help:"the tool's human title"`
	Description       string                  `yaml:"description" help:"replaces the tool's description"`
	DescriptionAppend string                  `yaml:"description_append" help:"a sentence added to the tool's description (replaced or not)"`
	ReadOnlyHint      *bool                   `yaml:"read_only_hint" help:"true or false: the tool changes nothing (true also makes it not destructive and idempotent)"`
	DestructiveHint   *bool                   `yaml:"destructive_hint" help:"true or false: the tool may destroy or overwrite data"`
	IdempotentHint    *bool                   `yaml:"idempotent_hint" help:"true or false: calling it twice does what calling it once does; true also lets the gateway retry it on UNAVAILABLE"`
	OpenWorldHint     *bool                   `yaml:"open_world_hint" help:"true or false: the tool reaches beyond the backend's own data"`
	Arguments         map[string]fileArgument `yaml:"arguments" help:"PATH: {hidden: true} | {fixed: VALUE} | {default: VALUE}, by field (proto or JSON name, or names joined by dots through message fields); see docs/curation.md"`
}

// fileArgument is one entry of a tool's arguments:.
type fileArgument struct {
	Hidden  bool      `yaml:"hidden" help:"true: left out of the schema; a call that sends it is refused"`
	Fixed   *yamlJSON `yaml:"fixed" help:"the value the gateway sets in every call; left out of the schema, and a call that sends it is refused"`
	Default *yamlJSON `yaml:"default" help:"the value the gateway sets when a call leaves the argument out; shown as the schema's default"`
}

// yamlJSON is any YAML value, kept as JSON: a fixed or default argument,
// checked against its field's type at discovery.
type yamlJSON struct{ raw json.RawMessage }

func (j *yamlJSON) UnmarshalYAML(n ast.Node) error {
	var v any
	if err := yaml.NodeToValue(n, &v); err != nil {
		return &valueError{tok: n.GetToken(), msg: err.Error()}
	}
	b, err := json.Marshal(normalizeYAML(v))
	if err != nil {
		return &valueError{tok: n.GetToken(), msg: fmt.Sprintf("want a value JSON can hold: %v", err)}
	}
	j.raw = b
	return nil
}

// normalizeYAML makes the YAML library's maps JSON objects.
func normalizeYAML(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = normalizeYAML(e)
		}
		return x
	case map[any]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[fmt.Sprint(k)] = normalizeYAML(e)
		}
		return m
	case []any:
		for i, e := range x {
			x[i] = normalizeYAML(e)
		}
	}
	return v
}

// fileTools checks a tools: list (key is its path in the file: "tools" or
// "toolsets[0].tools") and makes it gateway.ToolOverride values, whose
// Origin names the file, the line and the key, so an error found at
// discovery does too.
func fileTools(list []fileTool, doc *configDoc, key string) ([]gateway.ToolOverride, error) {
	var out []gateway.ToolOverride
	for i, ft := range list {
		k := fmt.Sprintf("%s[%d]", key, i)
		if ft.Match == "" {
			return nil, fmt.Errorf("%s: %s: match is required (a glob on package.Service/Method)", doc.at(k), k)
		}
		if err := methodglob.Check(k+".match", ft.Match); err != nil {
			return nil, fmt.Errorf("%s: %w", doc.at(k+".match"), err)
		}
		o := gateway.ToolOverride{
			Match: ft.Match, Origin: doc.at(k) + ": " + k,
			Name: ft.Name, Title: ft.Title, Description: ft.Description, DescriptionAppend: ft.DescriptionAppend,
			ReadOnlyHint: ft.ReadOnlyHint, DestructiveHint: ft.DestructiveHint, IdempotentHint: ft.IdempotentHint, OpenWorldHint: ft.OpenWorldHint,
		}
		if len(ft.Arguments) > 0 {
			o.Arguments = make(map[string]gateway.ArgumentOverride, len(ft.Arguments))
			for path, a := range ft.Arguments {
				ao := gateway.ArgumentOverride{Hidden: a.Hidden}
				if a.Fixed != nil {
					ao.Fixed = a.Fixed.raw
				}
				if a.Default != nil {
					ao.Default = a.Default.raw
				}
				o.Arguments[path] = ao
			}
		}
		out = append(out, o)
	}
	// The library checks the rest of the syntax (names, one setting per
	// argument) and names the entry by its Origin.
	if err := gateway.CheckToolOverrides(out); err != nil {
		return nil, err
	}
	return out, nil
}
