package main

import (
	"flag"
	"io"
	"strings"
	"testing"
	"time"
)

// TestSettingsCannotBeOff: every numeric setting declared as not off is
// refused when negative, before the library sees it, by the flag's name
// on the command line and by the variable's in the environment.
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
