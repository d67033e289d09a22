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
	"fmt"
	"path"
	"strings"
)

// Compile checks patterns and returns them in the form Match takes: a
// pattern without '/' names every method of a service ("zoo.v1.ZooService"
// is "zoo.v1.ZooService/*"). An empty pattern, or one path.Match cannot
// parse, is an error that starts with setting, the caller's word for where
// the patterns came from (an option, a flag, a config key).
func Compile(setting string, patterns []string) ([]string, error) {
	out := make([]string, 0, len(patterns))
	for _, p := range patterns {
		if p == "" {
			return nil, fmt.Errorf("%s: empty pattern", setting)
		}
		if !strings.Contains(p, "/") {
			p += "/*"
		}
		if _, err := path.Match(p, ""); err != nil {
			return nil, fmt.Errorf("%s %q: %w (want a glob on package.Service/Method, e.g. zoo.v1.ZooService/*)", setting, p, err)
		}
		out = append(out, p)
	}
	return out, nil
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
