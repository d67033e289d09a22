// Package methodglob is the module's one definition of the globs that pick
// a backend's methods by "package.Service/Method": the library's
// Options.Catalog.Include, Exclude and MethodTimeouts and a Backend's Methods
// (gateway), and the command line's --include, --exclude, --method-timeout
// and the config file's backends (cmd/gateway), which check them as they
// are read so that a typo fails at start naming the setting as its user
// wrote it. The syntax, path.Match on that name, is described with the
// gateway's method filters (gateway/filter.go, Options.Catalog.Include).
package methodglob

import (
	"errors"
	"fmt"
	"path"
	"strings"

	"github.com/grpc-mcp-gateway/gateway/internal/option"
)

// Compile checks patterns and returns them in the form Match takes: a
// pattern without '/' names every method of a service ("zoo.v1.ZooService"
// is "zoo.v1.ZooService/*"). An empty pattern, or one path.Match cannot
// parse, is an error that starts with setting, the caller's word for where
// the patterns came from (an option, a flag, a config key).
func Compile(setting string, patterns []string) ([]string, error) {
	out := make([]string, 0, len(patterns))
	for _, p := range patterns {
		c, err := compile(p)
		if err != nil {
			if p == "" {
				return nil, fmt.Errorf("%s: %w", setting, err)
			}
			return nil, fmt.Errorf("%s %w", setting, err)
		}
		out = append(out, c)
	}
	return out, nil
}

// CompileOption is Compile for the patterns of a library option (opt is
// its path, "Options.Catalog.Include"): its error is an *option.Error
// naming opt, whose Err names the pattern and says what was expected, so
// a program that sets the option from a setting of its own names that
// setting (cmd/gateway: the flag, the variable or the config file's line).
func CompileOption(opt string, patterns []string) ([]string, error) {
	out := make([]string, 0, len(patterns))
	for _, p := range patterns {
		c, err := compile(p)
		if err != nil {
			return nil, &option.Error{Option: opt, Err: err}
		}
		out = append(out, c)
	}
	return out, nil
}

// errEmpty is compile's error for an empty pattern.
var errEmpty = errors.New("empty pattern (want a glob on package.Service/Method, e.g. zoo.v1.ZooService/*)")

// compile is one pattern in the form Match takes, or an error that names
// the pattern (as completed) and what was expected.
func compile(p string) (string, error) {
	if p == "" {
		return "", errEmpty
	}
	if !strings.Contains(p, "/") {
		p += "/*"
	}
	if _, err := path.Match(p, ""); err != nil {
		return "", fmt.Errorf("%q: %w (want a glob on package.Service/Method, e.g. zoo.v1.ZooService/*)", p, err)
	}
	return p, nil
}

// Check reports whether p is a valid pattern, with Compile's errors.
func Check(setting, p string) error {
	_, err := Compile(setting, []string{p})
	return err
}

// Match reports whether name ("package.Service/Method") matches pattern,
// which Compile returned.
func Match(pattern, name string) bool {
	ok, _ := path.Match(pattern, name)
	return ok
}

// MatchAny reports whether name matches one of patterns, which Compile
// returned.
func MatchAny(patterns []string, name string) bool {
	for _, p := range patterns {
		if Match(p, name) {
			return true
		}
	}
	return false
}
