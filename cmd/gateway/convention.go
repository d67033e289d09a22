package main

import (
	"flag"
	"fmt"
	"strconv"
	"time"

	"github.com/grpc-mcp-gateway/gateway/gateway"
)

// Every numeric setting follows one rule, on the command line, in GATEWAY_*
// variables and in the config file (README "Settings: defaults and off"):
//
//   - 0 means the default, the value --help shows.
//   - A setting that can be switched off or left unbounded says so with a
//     word: "off" for a duration, "unlimited" for a count or a size. A
//     negative number means the same.
//   - A setting that cannot be off refuses the word, and its check
//     refuses a negative number, naming the setting.
//
// The gateway then receives a positive value or gateway.Off, which its
// option structs read by the same rule (gateway/convention.go). Register
// a new numeric flag with durationVar or countVar, never fs.DurationVar or
// fs.IntVar, so it follows the rule too.

// Words that spell gateway.Off.
const (
	offWord       = "off"
	unlimitedWord = "unlimited"
)

// durationSetting is a duration flag under the rule.
type durationSetting struct {
	p   *time.Duration
	def time.Duration
	off bool // "off" (or a negative duration) is allowed
}

// durationVar registers a duration flag whose default is def; off says
// whether it may be "off".
func durationVar(fs *flag.FlagSet, p *time.Duration, name string, def time.Duration, off bool, usage string) {
	*p = def
	fs.Var(&durationSetting{p: p, def: def, off: off}, name, usage)
}

func (d *durationSetting) Set(s string) error {
	if d.off && s == offWord {
		*d.p = gateway.Off
		return nil
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		if d.off {
			return fmt.Errorf(`want a duration such as 30s, 0 for the default (%s), or "off"`, d.def)
		}
		return fmt.Errorf("want a duration such as 30s, or 0 for the default (%s)", d.def)
	}
	switch {
	case v == 0:
		*d.p = d.def
	case v < 0 && d.off:
		*d.p = gateway.Off
	default:
		*d.p = v // a negative one is refused by the setting's check, which names it
	}
	return nil
}

func (d *durationSetting) String() string {
	if d == nil || d.p == nil {
		return ""
	}
	if d.off && *d.p < 0 {
		return offWord
	}
	return d.p.String()
}

// countSetting is a count or size flag under the rule.
type countSetting[T int | int64] struct {
	p         *T
	def       T
	unlimited bool // "unlimited" (or a negative number) is allowed
}

// countVar registers a count or size flag whose default is def; unlimited
// says whether it may be "unlimited".
func countVar[T int | int64](fs *flag.FlagSet, p *T, name string, def T, unlimited bool, usage string) {
	*p = def
	fs.Var(&countSetting[T]{p: p, def: def, unlimited: unlimited}, name, usage)
}

func (c *countSetting[T]) Set(s string) error {
	if c.unlimited && s == unlimitedWord {
		*c.p = gateway.Off
		return nil
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil || int64(T(v)) != v {
		// A default of 0 is derived from another setting, which the
		// flag's usage names.
		def := fmt.Sprintf(" (%d)", c.def)
		if c.def == 0 {
			def = ""
		}
		if c.unlimited {
			return fmt.Errorf(`want a whole number, 0 for the default%s, or "unlimited"`, def)
		}
		return fmt.Errorf("want a whole number, or 0 for the default%s", def)
	}
	switch {
	case v == 0:
		*c.p = c.def
	case v < 0 && c.unlimited:
		*c.p = gateway.Off
	default:
		*c.p = T(v) // a negative one is refused by the setting's check, which names it
	}
	return nil
}

func (c *countSetting[T]) String() string {
	if c == nil || c.p == nil {
		return ""
	}
	if c.unlimited && *c.p < 0 {
		return unlimitedWord
	}
	return strconv.FormatInt(int64(*c.p), 10)
}

// settingKind is how --help names a flag's value: "duration|off",
// "n|unlimited", or "" for flag's own guess.
func settingKind(f *flag.Flag) string {
	switch v := f.Value.(type) {
	case *durationSetting:
		if v.off {
			return "duration|off"
		}
		return "duration"
	case *countSetting[int]:
		if v.unlimited {
			return "n|unlimited"
		}
		return "n"
	case *countSetting[int64]:
		if v.unlimited {
			return "n|unlimited"
		}
		return "n"
	}
	return ""
}
