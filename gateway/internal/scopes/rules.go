// Package scopes holds the rules that decide which tools a principal
// sees and may call by its OAuth scopes: the tool scope rules
// (auth.OAuthConfig.ToolScopes, --oauth-tool-scope), parsed and checked
// here and resolved against each catalog's tools into the scopes each
// tool needs, and the per-caller views that lists built from those
// scopes (Options.Scopes.ListVisibleOnly) are keyed by.
//
// It knows a tool only as a Target (its names and its method) or as the
// scopes it needs, nothing of the gateway's tools, calls or MCP; the
// gateway applies what it resolves to a catalog and enforces it on the
// call path.
package scopes

import (
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"
	"sync"

	"github.com/grpc-mcp-gateway/gateway/internal/option"

	"github.com/grpc-mcp-gateway/gateway/gateway/internal/toolname"
)

// Tool scopes (auth.OAuthConfig.ToolScopes, --oauth-tool-scope).
//
// A rule says which tools' calls need its scopes on top of the globally
// required ones. Its key names the tools in one of two ways:
//
//	ZooService_DeleteAnimal          a tool name
//	zoo.v1.ZooService/DeleteAnimal   a method: package.Service/Method
//	zoo.v1.ZooService/Delete*        methods, by glob
//	zoo.v1.ZooService/*              every method of a service
//	zoo.v1.ZooService                the same: a key without '/' names services
//	zoo.v1.*                         every service of package zoo.v1 and of
//	                                 the packages under it
//
// A key with '/' or '.' in it is a method pattern, matched against
// "package.Service/Method" with path.Match as --include is: '*' matches
// any run of characters but '/' (so it crosses the dots of a package,
// and zoo.v1.* also covers zoo.v1.admin.Admin), '?' one such character,
// '[...]' a class, '\' escapes. It has exactly one '/' (one is added,
// with '*' after it, to a key without), a service part and a method part,
// no '.' in the method part, and only the characters of full names
// (A-Z a-z 0-9 _ .) and of globs (* ? [ ] ^ - \). A service of the empty
// package is named with its '/': Greeter/*. Any other key is a tool name:
// 1 to 64 of A-Z a-z 0-9 _ -, the names the gateway emits, never a glob.
//
// A method rule applies to every tool its methods become, on every backend
// and whatever name collisions make of the tool names. A tool-name rule
// applies to the tool of that name and to the tools renamed from that name
// by a collision: across backends (Zoo_WhoAmI covers zoo_Zoo_WhoAmI and
// zoo2_Zoo_WhoAmI) or within one (another package's service of the same
// name makes v1_Zoo_WhoAmI and v2_Zoo_WhoAmI); and every method a
// tool-name rule has matched in any catalog stays covered by it (pins),
// so a rule written against a qualified name does not lapse when the
// collision ends or another changes the name. A collision never sheds a
// scope; it is logged, since a method rule says the same without
// depending on names. A tool matched by several rules needs every scope
// of each.
//
// Rules are resolved once per catalog (the gateway's assemble), into each tool's scopes;
// the call path only hands those to auth.Authenticator.Authorize. A rule
// that matches no tool is logged at start and at every catalog rebuild
// (Warn; Error with Options.Scopes.Strict, which also makes it fatal in
// New). It stays in force either way: it applies again as soon as a
// catalog has a tool it matches.

// ErrUnmatched is wrapped by the gateway's New error when
// Options.Scopes.Strict is set and a tool scope rule matches no tool of
// the first catalog (gateway.ErrUnmatchedScopeRule is this error).
var ErrUnmatched = errors.New("tool scope rule matches no tool")

// Rule is one compiled rule.
type Rule struct {
	// Key is the rule as configured, for logs and errors.
	Key string
	// Pattern is a path.Match pattern on "package.Service/Method"; empty
	// for a tool-name rule, which matches key.
	Pattern string
	// Scopes are what a call of a tool the rule matches needs.
	Scopes []string
}

// Rules are every rule, sorted by key so that logs and errors come
// in one order.
type Rules []Rule

// scopeRuleHint is what a rule may be, for every error about one.
const scopeRuleHint = "want a tool name (1-64 of A-Z a-z 0-9 _ -, e.g. ZooService_DeleteAnimal) or a method pattern " +
	"on package.Service/Method (e.g. zoo.v1.ZooService/DeleteAnimal, zoo.v1.ZooService/*, zoo.v1.*)"

// Check reports whether rule is a valid key of
// auth.OAuthConfig.ToolScopes as the gateway reads it (see "Tool scopes"
// above). Its error is an *option.Error naming opt, the option's path
// ("OAuthConfig.ToolScopes"), whose Err quotes the rule, says what is
// wrong with it and what a rule may be.
func Check(opt, rule string) error {
	_, err := parseScopeRule(opt, rule)
	return err
}

// parseScopeRule returns rule's method pattern, or "" for a tool name.
func parseScopeRule(opt, rule string) (string, error) {
	bad := func(why string) error {
		return &option.Error{Option: opt, Err: fmt.Errorf("%q: %s; %s", rule, why, scopeRuleHint)}
	}
	if rule == "" {
		return "", bad("empty rule")
	}
	if !strings.ContainsAny(rule, "/.") {
		if !toolname.Valid(rule) {
			return "", bad("not a tool name, and without '/' or '.' not a method pattern either")
		}
		return "", nil
	}
	if i := strings.IndexFunc(rule, func(r rune) bool { return !patternChar(r) }); i >= 0 {
		return "", bad(fmt.Sprintf("%q cannot appear in a method name or a glob", rule[i:i+1]))
	}
	p := rule
	if !strings.Contains(p, "/") {
		p += "/*"
	}
	svc, method, _ := strings.Cut(p, "/")
	switch {
	case strings.Contains(method, "/"):
		return "", bad("more than one '/'")
	case svc == "":
		return "", bad("no service before '/'")
	case method == "":
		return "", bad("no method after '/' (write Service/* for all of them)")
	case strings.Contains(method, "."):
		return "", bad("a '.' after '/': a method name has none")
	}
	if _, err := path.Match(p, ""); err != nil {
		return "", bad(err.Error())
	}
	return p, nil
}

// patternChar reports whether r may appear in a method pattern: in a full
// name, or in glob syntax.
func patternChar(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("_./*?[]^-\\", r)
}

// Compile checks and compiles the rules (keys: see "Tool
// scopes"; values: the scopes, checked by the auth package); opt is the
// option's path, which Check's errors name.
func Compile(opt string, rules map[string][]string) (Rules, error) {
	out := make(Rules, 0, len(rules))
	for key, scopes := range rules {
		p, err := parseScopeRule(opt, key)
		if err != nil {
			return nil, err
		}
		out = append(out, Rule{Key: key, Pattern: p, Scopes: scopes})
	}
	slices.SortFunc(out, func(a, b Rule) int { return strings.Compare(a.Key, b.Key) })
	return out, nil
}

// Target is one tool as the rules see it.
type Target struct {
	// Name is the tool's final name; local its name before a collision
	// across backends renamed it, base its name before any collision
	// (toolname.Base); all three are equal for most tools.
	Name, Local, Base string
	// Method is "package.Service/Method".
	Method string
}

// Resolution is the rules resolved against one catalog.
type Resolution struct {
	// Scopes[i] is what a call of the i-th target needs (sorted, no
	// duplicates); nil when no rule matches it.
	Scopes [][]string
	// Unmatched are the rules that match no target.
	Unmatched Rules
	// Renamed maps the key of a tool-name rule that matched tools by the
	// name they had before a collision to those tools' final names.
	Renamed map[string][]string
}

// Pins remember the methods each tool-name rule has matched, in
// any catalog so far, so the rule keeps applying to them whatever later
// collisions name their tools: a rule written against a name that a
// collision qualified (v1_S_A, zoo_Zoo_WhoAmI) must not lapse when the
// collision goes away or another makes the name longer. A method stays
// pinned for the life of the gateway: failing closed, it needs the
// rule's scopes even if a later catalog gives the name to another tool.
type Pins struct {
	mu sync.Mutex
	m  map[string]map[string]bool // rule key -> "package.Service/Method"
}

// Resolve applies every rule to every target; pins, when set, are read
// and updated for the tool-name rules.
func (rs Rules) Resolve(targets []Target, pins *Pins) Resolution {
	res := Resolution{Scopes: make([][]string, len(targets))}
	if len(rs) == 0 {
		return res
	}
	if pins != nil {
		pins.mu.Lock()
		defer pins.mu.Unlock()
		if pins.m == nil {
			pins.m = make(map[string]map[string]bool)
		}
	}
	for _, r := range rs {
		matched := false
		for i, t := range targets {
			var hit bool
			switch {
			case r.Pattern != "":
				hit, _ = path.Match(r.Pattern, t.Method)
			case t.Name == r.Key:
				hit = true
			case t.Local == r.Key || t.Base == r.Key:
				hit = true
				if res.Renamed == nil {
					res.Renamed = make(map[string][]string)
				}
				res.Renamed[r.Key] = append(res.Renamed[r.Key], t.Name)
			case pins != nil && pins.m[r.Key][t.Method]:
				hit = true
				if res.Renamed == nil {
					res.Renamed = make(map[string][]string)
				}
				res.Renamed[r.Key] = append(res.Renamed[r.Key], t.Name)
			}
			if hit && r.Pattern == "" && pins != nil {
				if pins.m[r.Key] == nil {
					pins.m[r.Key] = make(map[string]bool)
				}
				pins.m[r.Key][t.Method] = true
			}
			if hit {
				matched = true
				res.Scopes[i] = append(res.Scopes[i], r.Scopes...)
			}
		}
		if !matched {
			res.Unmatched = append(res.Unmatched, r)
		}
	}
	for i, s := range res.Scopes {
		if len(s) > 1 {
			slices.Sort(s)
			res.Scopes[i] = slices.Compact(s)
		}
	}
	return res
}

// Keys are the rules' keys, for one line naming them all.
func (rs Rules) Keys() []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.Key
	}
	return out
}
