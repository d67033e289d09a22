package main

import (
	"io"
	"strings"
	"testing"
	"time"
)

// TestWatchFlags: --watch-window, --watch-max-window, --watch and
// --watch-ignore-names reach gateway.Options.Calls.Watch, from the command line
// or a GATEWAY_* variable, and a bad value fails at start naming its flag.
func TestWatchFlags(t *testing.T) {
	t.Parallel()
	c, err := parseConfig([]string{"--backend", "127.0.0.1:2", "--watch-window", "30s", "--watch-max-window", "10m",
		"--watch", "pkg.Events/Stream*", "--watch", "pkg.Log", "--watch-ignore-names"}, io.Discard, env("GATEWAY_STREAM_TIMEOUT", "20m"))
	if err != nil {
		t.Fatal(err)
	}
	w := c.watch.options()
	if w.Window != 30*time.Second || w.MaxWindow != 10*time.Minute || !w.IgnoreNames || strings.Join(w.Methods, " ") != "pkg.Events/Stream* pkg.Log" {
		t.Errorf("options: %+v", w)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--watch-window", "5m", "--watch-max-window", "1m"}, "--watch-window 5m0s: longer than --watch-max-window 1m0s"},
		{[]string{"--watch", "pkg.[Svc"}, "--watch"},
		{[]string{"--watch-window", "soon"}, "watch-window"},
	} {
		_, err := parseConfig(append([]string{"--backend", "127.0.0.1:2"}, tc.args...), io.Discard, noEnv)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want an error with %q", tc.args, err, tc.want)
		}
	}
}
