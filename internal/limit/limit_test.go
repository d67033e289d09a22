package limit_test

import (
	"flag"
	"strings"
	"testing"
	"time"

	"github.com/grpc-mcp-gateway/gateway/internal/limit"
)

// TestVar: the rule as a flag reads it: 0 is the default, the word and
// any negative number are Off where the setting allows it, and a setting
// that does not keeps a negative number for its own check to refuse.
func TestVar(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in    string
		offOK bool
		want  time.Duration
		err   string
	}{
		{"10s", false, 10 * time.Second, ""},
		{"0", false, 30 * time.Second, ""},
		{"0s", true, 30 * time.Second, ""},
		{"off", true, limit.Off, ""},
		{"-5s", true, limit.Off, ""},
		{"-5s", false, -5 * time.Second, ""},
		{"off", false, 0, "want a duration such as 30s, or 0 for the default (30s)"},
		{"soon", true, 0, `want a duration such as 30s, 0 for the default (30s), or "off"`},
	} {
		var d time.Duration
		v := limit.NewVar(&d, 30*time.Second, tc.offOK)
		err := v.Set(tc.in)
		if tc.err != "" {
			if err == nil || err.Error() != tc.err {
				t.Errorf("Set(%q) offOK=%v: error %v, want %q", tc.in, tc.offOK, err, tc.err)
			}
			continue
		}
		if err != nil || d != tc.want {
			t.Errorf("Set(%q) offOK=%v: %v, %v; want %v", tc.in, tc.offOK, d, err, tc.want)
		}
	}

	var n int
	v := limit.NewVar(&n, 64, true)
	if n != 64 || v.String() != "64" || v.Kind() != "n|unlimited" {
		t.Errorf("count: %d %q %q", n, v.String(), v.Kind())
	}
	if err := v.Set("unlimited"); err != nil || n != limit.Off || v.String() != "unlimited" {
		t.Errorf("unlimited: %d %q %v", n, v.String(), err)
	}
	if err := v.Set("1.5"); err == nil || !strings.Contains(err.Error(), "whole number") {
		t.Errorf("1.5: %v", err)
	}
	var d time.Duration
	if k := limit.NewVar(&d, time.Second, false).Kind(); k != "duration" {
		t.Errorf("Kind %q", k)
	}
	var _ flag.Value = v
}

// TestOptionRule: Or, OrDefault and Check, as the option structs read the
// rule.
func TestOptionRule(t *testing.T) {
	t.Parallel()
	if limit.Or(0, 5) != 5 || limit.Or(limit.Off, 5) != limit.Off || limit.Or(7, 5) != 7 {
		t.Error("Or")
	}
	if limit.OrDefault(0, 5) != 5 || limit.OrDefault(-3, 5) != 5 || limit.OrDefault(7, 5) != 7 {
		t.Error("OrDefault")
	}
	if err := limit.Check("Options.Calls.Timeout", time.Duration(limit.Off), "a call always has a deadline"); err == nil ||
		err.Error() != "Options.Calls.Timeout is -1ns: it cannot be off (a call always has a deadline); 0 means the default" {
		t.Errorf("Check: %v", err)
	}
	if err := limit.Check("Options.MaxBatch", 0, ""); err != nil {
		t.Errorf("Check(0): %v", err)
	}
}
