package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/grpc-mcp-gateway/gateway/gateway"
	"github.com/grpc-mcp-gateway/gateway/gateway/backendconn"
)

// TestSettingsCannotBeOff: every numeric setting declared as not off is
// refused when negative, before the library sees it, named as it was
// given: the flag, the variable, or the file's line and key.
func TestSettingsCannotBeOff(t *testing.T) {
	t.Parallel()
	checked := 0
	for _, s := range settings {
		if s.offOK {
			continue
		}
		neg := "-1"
		switch s.ptr(&config{}).(type) {
		case *time.Duration:
			neg = "-1s"
		case *int, *int64:
		default:
			continue
		}
		checked++
		_, err := parseConfig([]string{"--" + s.name, neg}, io.Discard, noEnv)
		if want := "--" + s.name + ": want a positive "; err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("--%s %s: %v, want an error starting %q", s.name, neg, err, want)
		}
		env := envName(s.name)
		_, err = parseConfig(nil, io.Discard, func(k string) (string, bool) {
			if k == env {
				return neg, true
			}
			return "", false
		})
		if want := env + ": want a positive "; err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%s=%s: %v, want an error starting %q", env, neg, err, want)
		}
		file := filepath.Join(t.TempDir(), "gateway.yaml")
		if err := os.WriteFile(file, []byte(flagKey(s.name)+": "+neg+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err = parseConfig([]string{"--config", file}, io.Discard, noEnv)
		if want := file + ":1: " + flagKey(s.name) + ": want a positive "; err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%s: %s in the file: %v, want an error starting %q", flagKey(s.name), neg, err, want)
		}
	}
	if checked == 0 {
		t.Fatal("no setting declared as not off")
	}
}

// TestSettingsDeclaredOnce: each declaration is one flag, in one help
// group, with a config key and variable unless it is for the command
// line only.
func TestSettingsDeclaredOnce(t *testing.T) {
	t.Parallel()
	fs := (&config{}).flagSet(io.Discard)
	n := 0
	for _, s := range settings {
		f := fs.Lookup(s.name)
		if f == nil {
			t.Errorf("setting %s: no flag", s.name)
			continue
		}
		n++
		if s.group == "" || s.usage == "" {
			t.Errorf("setting %s: no help group or text", s.name)
		}
		if got := settingFlag(fs, flagKey(s.name)) != nil; got == s.cmdLineOnly && s.name != "backend" {
			t.Errorf("setting %s: config key %s sets it: %v, want %v", s.name, flagKey(s.name), got, !s.cmdLineOnly)
		}
	}
	all := 0
	fs.VisitAll(func(*flag.Flag) { all++ })
	if all != n {
		t.Errorf("%d flags, %d declared settings", all, n)
	}
}

// TestSettingsNameTheirOption: an error the library raises about an
// option a setting sets (a *gateway.OptionError) reaches the operator
// naming the setting, for every declaration that names its option, the
// longer of two options that share a prefix included: the flag when
// the command line gave it, else the variable or the file's line and
// key.
func TestSettingsNameTheirOption(t *testing.T) {
	t.Parallel()
	n := 0
	for _, s := range settings {
		if s.field == "" {
			continue
		}
		n++
		err := fmt.Errorf("gateway: %w", &gateway.OptionError{Option: s.field, Err: errors.New("bad; raise it")})
		for _, from := range []origins{{}, {s.name: envName(s.name)}, {s.name: "gateway.yaml:3: " + flagKey(s.name)}} {
			where, ok := from[s.name]
			if !ok {
				where = "--" + s.name
			}
			got := (&config{from: from}).inSettingWords(err)
			if want := where + ": bad; raise it"; got.Error() != want {
				t.Errorf("%s: %q, want %q", s.field, got, want)
			}
		}
	}
	if n == 0 {
		t.Fatal("no setting names its option")
	}
}

// TestFlagTLSInFlagWords: the backend TLS flags are refused in their own
// words, before the backend connection reads them.
func TestFlagTLSInFlagWords(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	notPEM := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(notPEM, []byte("not a certificate\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		tls  backendconn.TLS
		want string
	}{
		{backendconn.TLS{Plaintext: true, ServerName: "x"}, "--plaintext cannot be combined with --backend-ca, --backend-cert, --backend-key or --backend-server-name"},
		{backendconn.TLS{CAFile: filepath.Join(dir, "absent.pem")}, "--backend-ca: open "},
		{backendconn.TLS{CAFile: notPEM}, "--backend-ca " + notPEM + ": no PEM certificates found"},
		{backendconn.TLS{KeyFile: notPEM}, "--backend-cert and --backend-key must be given together"},
		{backendconn.TLS{CertFile: notPEM, KeyFile: notPEM}, "--backend-cert/--backend-key: "},
	} {
		err := checkFlagTLS(tc.tls)
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) || strings.Contains(err.Error(), "TLS.") {
			t.Errorf("%+v: %v, want %q", tc.tls, err, tc.want)
		}
	}
	if err := checkFlagTLS(backendconn.TLS{}); err != nil {
		t.Errorf("no TLS flags: %v", err)
	}
}

// TestSettingsOffAgreesWithTheLibrary: whether a numeric setting may be
// off is declared twice, by its offOK here and by gateway.New, which
// refuses Off for an option that may not be (mustNotBeOff in
// gateway/gateway.go). For every numeric setting bound to a field of
// gateway.Options, New given that field Off must refuse it, naming the
// option, exactly when the declaration says it may not be off.
func TestSettingsOffAgreesWithTheLibrary(t *testing.T) {
	t.Parallel()
	n := 0
	for _, s := range settings {
		path, ok := strings.CutPrefix(s.field, "Options.")
		if !ok {
			continue
		}
		switch s.ptr(&config{}).(type) {
		case *time.Duration, *int, *int64:
		default:
			continue
		}
		n++
		var opts gateway.Options
		v := reflect.ValueOf(&opts).Elem()
		for _, name := range strings.Split(path, ".") {
			v = v.FieldByName(name)
		}
		v.SetInt(gateway.Off)
		g, err := gateway.New(context.Background(), nil, &opts)
		if g != nil {
			g.Close()
		}
		var oe *gateway.OptionError
		refused := errors.As(err, &oe) && oe.Option == s.field
		if refused == s.offOK {
			t.Errorf("--%s: declared offOK %v, but gateway.New given %s Off: %v", s.name, s.offOK, s.field, err)
		}
	}
	if n == 0 {
		t.Fatal("no numeric setting names a field of Options")
	}
}

// TestBackendKeysNameTheirSetting: a backend's key that overrides a
// gateway-wide setting names a declared one, settable in the file.
func TestBackendKeysNameTheirSetting(t *testing.T) {
	t.Parallel()
	n := 0
	for f := range reflect.TypeFor[fileBackend]().Fields() {
		name := f.Tag.Get("setting")
		if name == "" {
			continue
		}
		n++
		if s := declared(name); s == nil || s.cmdLineOnly || s.fileSection != "" {
			t.Errorf("backends[].%s: setting %q is no setting of the file", f.Tag.Get("yaml"), name)
		}
	}
	if n == 0 {
		t.Fatal("no backend key names its setting")
	}
}
