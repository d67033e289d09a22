package main

import (
	"errors"
	"strings"
	"time"

	"github.com/grpc-mcp-gateway/gateway/gateway"
	"github.com/grpc-mcp-gateway/gateway/internal/methodglob"
)

// methodTimeoutExample is the one place --method-timeout's example is
// written, for its help and its errors alike.
const methodTimeoutExample = "'temporal.api.workflowservice.v1.WorkflowService/Poll*=70s'"

// parseMethodTimeouts reads --method-timeout's GLOB=DURATION values. A
// duration must be positive: a call always has a deadline, and a rule
// that set none would only hide the deadline the call gets instead.
func parseMethodTimeouts(values []string) ([]gateway.MethodTimeout, error) {
	var out []gateway.MethodTimeout
	for _, v := range values {
		// The last '=' splits: a duration has none, and neither has a
		// method name.
		i := strings.LastIndexByte(v, '=')
		if i <= 0 {
			return nil, settingErrorf("%s: want GLOB=DURATION, e.g. %s, got %q", flagName("method-timeout"), methodTimeoutExample, v)
		}
		glob, ds := v[:i], v[i+1:]
		if err := checkGlob("method-timeout", glob); err != nil {
			return nil, err
		}
		d, err := time.ParseDuration(ds)
		if err != nil || d <= 0 {
			return nil, settingErrorf("%s %s: want a positive duration such as 70s after '=' (a call always has a deadline), got %q", flagName("method-timeout"), glob, ds)
		}
		out = append(out, gateway.MethodTimeout{Match: glob, Timeout: d})
	}
	return out, nil
}

// checkGlob is methodglob.Check for a glob given to the setting f, its
// error naming f as Check names its setting.
func checkGlob(f flagName, p string) error {
	_, err := methodglob.CompileOption("", []string{p})
	var oe *gateway.OptionError
	if !errors.As(err, &oe) {
		return err
	}
	if p == "" {
		return settingErrorf("%s: %w", f, oe.Err)
	}
	return settingErrorf("%s %w", f, oe.Err)
}
