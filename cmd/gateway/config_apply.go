package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/grpc-mcp-gateway/gateway/internal/limit"
)

// Precedence, for each setting, as kubectl, Prometheus and most Go tools
// have it: the command line, then GATEWAY_* environment variables (the
// flag name upper-cased with '-' as '_', e.g. GATEWAY_CALL_TIMEOUT), then
// the config file, then the default. A list given on the command line or
// in a variable (--include, --backend...) replaces the file's list rather
// than adding to it; a --backend or GATEWAY_BACKEND replaces the file's
// backends.

// metaFlags are flags that say what the program does rather than how the
// gateway runs, so no config key or environment variable sets them.
var metaFlags = map[string]bool{"config": true, "check-config": true, "version": true, "probe": true}

// flagKey is the config key of a flag: --call-timeout is call_timeout.
func flagKey(name string) string { return strings.ReplaceAll(name, "-", "_") }

// envName is the environment variable of a flag: --call-timeout is
// GATEWAY_CALL_TIMEOUT.
func envName(name string) string { return "GATEWAY_" + strings.ToUpper(flagKey(name)) }

// origins records where a flag's value came from when it was not the
// command line, so a validation error names the file line or variable.
type origins map[string]string

// applyFile sets, from cfg, every flag the command line did not set.
func applyFile(fs *flag.FlagSet, cfg *fileConfig, doc *configDoc, explicit map[string]bool, from origins) error {
	v := reflect.ValueOf(cfg).Elem()
	for i := range v.NumField() {
		key := v.Type().Field(i).Tag.Get("yaml")
		if key == "backends" {
			continue
		}
		name := strings.ReplaceAll(key, "_", "-")
		if explicit[name] {
			continue
		}
		vals := fieldStrings(v.Field(i))
		for _, s := range vals {
			if err := fs.Set(name, s); err != nil {
				return doc.errorf(key, "%w", err)
			}
		}
		if len(vals) > 0 {
			from[name] = doc.at(key) + ": " + key
		}
	}
	return nil
}

// fieldStrings renders a config field as the flag values that set it; nil
// when the field is unset.
func fieldStrings(f reflect.Value) []string {
	switch f.Kind() {
	case reflect.Pointer:
		if f.IsNil() {
			return nil
		}
		e := f.Elem()
		switch v := e.Interface().(type) {
		case duration:
			if v < 0 {
				return []string{limit.OffWord}
			}
			return []string{time.Duration(v).String()}
		case count:
			if v < 0 {
				return []string{limit.UnlimitedWord}
			}
			return []string{strconv.FormatInt(int64(v), 10)}
		}
		return []string{fmt.Sprint(e.Interface())}
	case reflect.Slice:
		return f.Interface().([]string)
	case reflect.Map:
		m := f.Interface().(map[string]string)
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		out := make([]string, len(keys))
		for i, k := range keys {
			out[i] = k + "=" + m[k]
		}
		return out
	}
	panic("config: unsupported field kind " + f.Kind().String())
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
			if serr := fs.Set(f.Name, v); serr != nil {
				err = fmt.Errorf("%s: invalid value %q: %w", env, v, serr)
				return
			}
		}
		from[f.Name] = env
	})
	return err
}

var flagRE = regexp.MustCompile(`--[a-z0-9][a-z0-9-]*`)

// attribute rewrites a validation error that names flags ("--call-timeout:
// want ...") to name where their values came from, when that was the file
// or the environment: "gateway.yaml:3: call_timeout: want ...".
func (from origins) attribute(err error) error {
	if err == nil || len(from) == 0 {
		return err
	}
	msg := err.Error()
	first := flagRE.FindString(msg)
	where, ok := from[strings.TrimPrefix(first, "--")]
	if !ok || !strings.HasPrefix(msg, first) {
		return err
	}
	rest := flagRE.ReplaceAllStringFunc(msg[len(first):], func(f string) string {
		name := strings.TrimPrefix(f, "--")
		if o, ok := from[name]; ok {
			if strings.HasPrefix(o, "GATEWAY_") {
				return o
			}
			return flagKey(name)
		}
		return f
	})
	return &sourcedError{msg: where + rest, err: err}
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
		cfg, doc, err := loadConfig(path)
		if err != nil {
			return nil, err
		}
		if err := applyFile(fs, cfg, doc, set, from); err != nil {
			return nil, err
		}
		if !set["backend"] && len(cfg.Backends) > 0 {
			if c.backends.parsed, err = fileBackends(ctx, cfg, doc, c.backends.cacheDir()); err != nil {
				return nil, err
			}
		}
	}
	return from, nil
}
