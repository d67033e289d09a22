package main

import (
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestSettingErrorsNameEachSetting: an error about two settings names
// each as the operator gave it, wherever each came from, and still
// wraps its cause.
func TestSettingErrorsNameEachSetting(t *testing.T) {
	cases := []struct {
		name string
		args []string
		file string
		env  func(string) (string, bool)
		want string // "FILE" stands for the file's path
	}{
		{"flag and variable", []string{"--watch-window", "5m"}, "", env("GATEWAY_WATCH_MAX_WINDOW", "1m"),
			"--watch-window 5m0s: longer than GATEWAY_WATCH_MAX_WINDOW 1m0s"},
		{"variable and file", nil, "\nwatch_max_window: 1m\n", env("GATEWAY_WATCH_WINDOW", "5m"),
			"GATEWAY_WATCH_WINDOW 5m0s: longer than watch_max_window (FILE:2) 1m0s"},
		{"both in the file", nil, "watch_window: 5m\nwatch_max_window: 1m\n", noEnv,
			"FILE:1: watch_window 5m0s: longer than watch_max_window 1m0s"},
		{"file and flag", []string{"--watch-max-window", "1m"}, "watch_window: 5m\n", noEnv,
			"FILE:1: watch_window 5m0s: longer than --watch-max-window 1m0s"},
		{"both flags", []string{"--watch-window", "5m", "--watch-max-window", "1m"}, "", noEnv,
			"--watch-window 5m0s: longer than --watch-max-window 1m0s"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			args := tc.args
			var p string
			if tc.file != "" {
				p = writeFile(t, "gateway.yaml", tc.file)
				args = append([]string{"--config", p}, args...)
			}
			_, err := parseConfig(args, io.Discard, tc.env)
			want := strings.ReplaceAll(tc.want, "FILE", p)
			if err == nil || err.Error() != want {
				t.Errorf("error %v\nwant %s", err, want)
			}
		})
	}
	_, err := parseConfig(nil, io.Discard, env("GATEWAY_BEARER_TOKENS_FILE", "/absent/tokens"))
	if !errors.Is(err, os.ErrNotExist) || !strings.HasPrefix(err.Error(), "GATEWAY_BEARER_TOKENS_FILE: open /absent/tokens") {
		t.Errorf("a wrapped cause: %v", err)
	}
	// A missing config file is named by its path, however it was given.
	for _, args := range [][]string{{"--config", "/absent/gw.yaml"}, {"--check-config", "/absent/gw.yaml"}} {
		_, err := parseConfig(args, io.Discard, noEnv)
		if !errors.Is(err, os.ErrNotExist) || err.Error() != "reading the config file: open /absent/gw.yaml: no such file or directory" {
			t.Errorf("%v: %v", args, err)
		}
	}
}

// TestNoFlagNamesInErrorText: cmd/gateway's errors name settings as
// flagNames (settingErrorf) or options (about), never by "--name" in
// their text, which inSettingWords could not name as the operator gave
// it. Errors about the command line alone (--config, catalog's flags)
// and a config file's own keys are the exceptions, listed.
func TestNoFlagNamesInErrorText(t *testing.T) {
	allowed := map[string]bool{
		"--config and --check-config name different files: give one":    true,
		"catalog: --limit: want a whole number of at least 1, got %q":   true,
		"needs --oauth-jwks-url: it exchanges the caller's OAuth token": true,
		"needs --oauth-jwks-url (scopes come from OAuth tokens)":        true,
		"%s: client_id, client_secret_file, private_key_file and key_id go with token_url; without token_url the --backend-token-exchange flags give the token endpoint and the client, and this entry only names the backend's audience, resource and scope": true,
	}
	flagRE := regexp.MustCompile(`(^|[^-\w])--([a-z0-9][a-z0-9-]*)`)
	files, _ := filepath.Glob("*.go")
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok || len(call.Args) == 0 {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			switch sel.Sel.Name {
			case "Errorf", "New", "errorf":
			default:
				return true
			}
			text := ""
			ast.Inspect(call.Args[0], func(n ast.Node) bool {
				if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING {
					s, _ := strconv.Unquote(lit.Value)
					text += s
				}
				return true
			})
			if sel.Sel.Name == "errorf" && len(call.Args) > 1 {
				text = ""
				if lit, ok := call.Args[1].(*ast.BasicLit); ok {
					text, _ = strconv.Unquote(lit.Value)
				}
			}
			for _, m := range flagRE.FindAllStringSubmatch(text, -1) {
				if declared(strings.TrimRight(m[2], "-")) != nil && !allowed[text] {
					t.Errorf("%s: error text names --%s literally: %q", fset.Position(call.Pos()), m[2], text)
				}
			}
			return true
		})
	}
}

// TestSettingsBindTheirOption: a setting whose declaration names a field
// of gateway.Options is bound to that field itself, so nothing copies it
// by hand; the few whose flag's form differs from the field's are listed,
// each with its reason in its declaration.
func TestSettingsBindTheirOption(t *testing.T) {
	t.Parallel()
	shadows := map[string]bool{
		"metadata":       true, // KEY=VALUE values, parsed into a metadata.MD
		"forward-header": true, // the option also holds --forward-claim's headers
	}
	c := &config{}
	n := 0
	for _, s := range settings {
		path, ok := strings.CutPrefix(s.field, "Options.")
		if !ok {
			continue
		}
		v := reflect.ValueOf(&c.opts).Elem()
		for _, name := range strings.Split(path, ".") {
			v = v.FieldByName(name)
			if !v.IsValid() {
				t.Fatalf("%s: no field %s", s.name, s.field)
			}
		}
		bound := reflect.ValueOf(s.ptr(c)).Pointer() == v.Addr().Pointer()
		if bound == shadows[s.name] {
			t.Errorf("--%s: bound to %s is %v, want %v", s.name, s.field, bound, !shadows[s.name])
		}
		n++
	}
	if n == 0 {
		t.Fatal("no setting names a field of Options")
	}
}
