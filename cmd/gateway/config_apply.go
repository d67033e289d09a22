package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/goccy/go-yaml/ast"
)

// Precedence, for each setting, as kubectl, Prometheus and most Go tools
// have it: the command line, then GATEWAY_* environment variables (the
// flag name upper-cased with '-' as '_', e.g. GATEWAY_CALL_TIMEOUT), then
// the config file, then the default. A list given on the command line or
// in a variable (--include, --backend...) replaces the file's list rather
// than adding to it; a --backend or GATEWAY_BACKEND replaces the file's
// backends.

// metaFlags are flags that say what the program does rather than how the
// gateway runs, so no config key or environment variable sets them: the
// settings declared cmdLineOnly.
var metaFlags = func() map[string]bool {
	m := map[string]bool{}
	for _, s := range settings {
		if s.cmdLineOnly {
			m[s.name] = true
		}
	}
	return m
}()

// flagKey is the config key of a flag: --call-timeout is call_timeout.
func flagKey(name string) string { return strings.ReplaceAll(name, "-", "_") }

// envName is the environment variable of a flag: --call-timeout is
// GATEWAY_CALL_TIMEOUT.
func envName(name string) string { return "GATEWAY_" + strings.ToUpper(flagKey(name)) }

// origins records where a flag's value came from when it was not the
// command line, so a validation error names the file line or variable.
type origins map[string]string

// applyFile sets, from the file's top-level keys, every flag the command
// line or a variable did not set. Each key is a flag's name in snake_case
// and each value is read by that flag's own Set, so the file, the
// command line and the environment share one parser and one set of
// errors; a list flag takes a list (or one value), and a mapping of
// KEY: VALUE as its KEY=VALUE values. A key that explicit holds is still
// read, by a fresh flag set from scratch, so a bad value in the file is
// reported even where it is overridden. Errors name the file, the line
// and the key.
func applyFile(fs *flag.FlagSet, cf *configFile, explicit map[string]bool, from origins, scratch func() *flag.FlagSet) error {
	doc := cf.doc
	for _, kv := range cf.settings {
		key := kv.Key.GetToken().Value
		line := kv.Key.GetToken().Position.Line
		f := settingFlag(fs, key)
		if f == nil {
			return fmt.Errorf("%s:%d: %w", doc.name, line, unknownKey(fs, key))
		}
		vals, err := flagValues(f, kv.Value)
		if err != nil {
			return doc.yamlError(err)
		}
		target := fs
		if explicit[f.Name] {
			target = scratch()
		}
		for _, v := range vals {
			if err := setFlag(target, f.Name, v.text); err != nil {
				return fmt.Errorf("%s:%d: %s: invalid value %q: %w", doc.name, v.line, key, v.text, err)
			}
		}
		if !explicit[f.Name] && len(vals) > 0 {
			from[f.Name] = doc.at(key) + ": " + key
		}
	}
	return nil
}

// settingFlag is the flag a top-level key sets, nil for none: the key is
// the declared setting's name in snake_case, and neither a setting for
// the command line only nor one the file gives as a section of its own
// (--backend, the file's backends:) is a key.
func settingFlag(fs *flag.FlagSet, key string) *flag.Flag {
	name := strings.ReplaceAll(key, "_", "-")
	s := declared(name)
	if flagKey(name) != key || s == nil || s.cmdLineOnly || s.fileSection != "" {
		return nil
	}
	return fs.Lookup(name)
}

// unknownKey is the error of a key that is no setting, with a hint where
// the key is near one.
func unknownKey(fs *flag.FlagSet, key string) error {
	name := strings.ReplaceAll(key, "_", "-")
	s := declared(name)
	switch {
	case s != nil && s.fileSection != "":
		return fmt.Errorf("unknown key %q: %s are a list under %s: (see examples/config/gateway.yaml)", key, s.fileSection, s.fileSection)
	case metaFlags[name]:
		return fmt.Errorf("unknown key %q: --%s is for the command line only", key, name)
	case fs.Lookup(name) != nil:
		return fmt.Errorf("unknown key %q: keys are written in snake_case, %s", key, flagKey(name))
	}
	return fmt.Errorf("unknown key %q", key)
}

// fileValue is one value of a key, with its line.
type fileValue struct {
	text string
	line int
}

// flagValues are the values a key's node gives its flag: none for null,
// one for a scalar, one per entry of a list (or KEY=VALUE per entry of a
// mapping) for a list flag.
func flagValues(f *flag.Flag, n ast.Node) ([]fileValue, error) {
	list := isListFlag(f)
	one := func(n ast.Node) (fileValue, error) {
		s, ok := scalarText(n)
		if !ok {
			return fileValue{}, &valueError{tok: n.GetToken(), msg: fmt.Sprintf("want %s, got %s", flagWants(f, false), nodeKind(n))}
		}
		return fileValue{text: s, line: n.GetToken().Position.Line}, nil
	}
	switch v := n.(type) {
	case *ast.NullNode:
		return nil, nil
	case *ast.TagNode:
		return flagValues(f, v.Value)
	case *ast.SequenceNode:
		if !list {
			return nil, &valueError{tok: n.GetToken(), msg: fmt.Sprintf("want %s, got a list", flagWants(f, true))}
		}
		var out []fileValue
		for _, e := range v.Values {
			fv, err := one(e)
			if err != nil {
				return nil, err
			}
			out = append(out, fv)
		}
		return out, nil
	case *ast.MappingNode, *ast.MappingValueNode:
		if !list {
			return nil, &valueError{tok: n.GetToken(), msg: fmt.Sprintf("want %s, got a mapping", flagWants(f, true))}
		}
		var kvs []*ast.MappingValueNode
		if m, ok := v.(*ast.MappingNode); ok {
			kvs = m.Values
		} else {
			kvs = []*ast.MappingValueNode{v.(*ast.MappingValueNode)}
		}
		var out []fileValue
		for _, kv := range kvs {
			fv, err := one(kv.Value)
			if err != nil {
				return nil, err
			}
			fv.text = kv.Key.GetToken().Value + "=" + fv.text
			out = append(out, fv)
		}
		return out, nil
	}
	fv, err := one(n)
	if err != nil {
		return nil, err
	}
	return []fileValue{fv}, nil
}

// isListFlag reports whether f is repeatable, each value adding one.
func isListFlag(f *flag.Flag) bool {
	_, ok := f.Value.(*stringList)
	return ok
}

// flagWants names the value f takes, for "want X, got Y"; whole, for a
// list flag, names the list rather than one of its values.
func flagWants(f *flag.Flag, whole bool) string {
	if isListFlag(f) {
		if whole {
			return "a list"
		}
		return "a string"
	}
	if b, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
		return "true or false"
	}
	switch k := settingKind(f); {
	case strings.HasPrefix(k, "duration"):
		return "a duration such as 30s"
	case k != "":
		return "a whole number"
	}
	return "a string"
}

// setFlag sets a flag from a variable or the file, restating the flag
// package's bare "parse error" of a boolean.
func setFlag(fs *flag.FlagSet, name, v string) error {
	err := fs.Set(name, v)
	if err != nil {
		if b, ok := fs.Lookup(name).Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
			return errors.New("want true or false")
		}
	}
	return err
}

// applyEnv sets, from its GATEWAY_* variable, every flag the command
// line did not set. A list flag's variable holds its values separated by
// whitespace (spaces, tabs or newlines), since commas are part of some
// values (a --backend of replicas HOST:PORT,HOST:PORT); the variable
// replaces the file's list, as a list on the command line does.
func applyEnv(fs *flag.FlagSet, getenv func(string) (string, bool), explicit map[string]bool, from origins) error {
	var err error
	fs.VisitAll(func(f *flag.Flag) {
		if err != nil || metaFlags[f.Name] || explicit[f.Name] {
			return
		}
		env := envName(f.Name)
		v, ok := getenv(env)
		if !ok {
			return
		}
		vals := []string{v}
		if _, list := f.Value.(*stringList); list {
			vals = strings.Fields(v)
		}
		for _, v := range vals {
			if serr := setFlag(fs, f.Name, v); serr != nil {
				err = fmt.Errorf("%s: invalid value %q: %w", env, v, serr)
				return
			}
		}
		from[f.Name] = env
	})
	return err
}

// sourcedError is a validation error restated with its value's origin.
type sourcedError struct {
	msg string
	err error
}

func (e *sourcedError) Error() string { return e.msg }
func (e *sourcedError) Unwrap() error { return e.err }

// explicitFlags are the flags the command line set.
func explicitFlags(fs *flag.FlagSet) map[string]bool {
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	return set
}

// configure applies the GATEWAY_* variables under the command line, then
// the config file (when --config or --check-config names one) under both.
// It returns where each value that did not come from the command line
// came from, for error messages.
func (c *config) configure(ctx context.Context, fs *flag.FlagSet, getenv func(string) (string, bool)) (origins, error) {
	from := origins{}
	set := explicitFlags(fs)
	path := c.configFile
	if c.checkConfig != "" {
		if path != "" && path != c.checkConfig {
			return nil, errors.New("--config and --check-config name different files: give one")
		}
		path = c.checkConfig
	}
	if err := applyEnv(fs, getenv, set, from); err != nil {
		return nil, err
	}
	// What the command line or a variable set, the file does not.
	for name := range from {
		set[name] = true
	}
	if path != "" {
		cf, err := loadConfig(path)
		if err != nil {
			return nil, err
		}
		scratch := func() *flag.FlagSet { return (&config{}).flagSet(io.Discard) }
		if err := applyFile(fs, cf, set, from, scratch); err != nil {
			return nil, err
		}
		if !set["backend"] && len(cf.backends) > 0 {
			if c.backends.parsed, err = fileBackends(ctx, cf.backends, cf.doc, c.backends.cacheDir(), c.front.oauthJWKSURL != ""); err != nil {
				return nil, err
			}
		}
		if c.opts.FrontDoor.Toolsets, err = fileToolsets(cf.toolsets, cf.doc, c.front.oauthJWKSURL != ""); err != nil {
			return nil, err
		}
		if c.opts.Catalog.Tools, err = fileTools(cf.tools, cf.doc, "tools"); err != nil {
			return nil, err
		}
	}
	return from, nil
}
