package main

import (
	"flag"

	"github.com/grpc-mcp-gateway/gateway/internal/limit"
)

// Every numeric setting follows one rule, on the command line, in GATEWAY_*
// variables and in the config file (docs/configuration.md, "Defaults and
// off"), implemented once in internal/limit for the flags and the
// library's options alike:
//
//   - 0 means the default, the value --help shows.
//   - A setting that can be switched off or left unbounded says so with a
//     word: "off" for a duration, "unlimited" for a count or a size. A
//     negative number means the same.
//   - A setting that cannot be off refuses the word, and its check
//     refuses a negative number, naming the setting.
//
// The gateway then receives a positive value or gateway.Off, which its
// option structs read by the same rule. A numeric setting declared in
// settings.go is registered with limitVar, so it follows the rule too;
// never register one with fs.DurationVar or fs.IntVar.

// limitVar registers a numeric flag (a time.Duration, a count or a size)
// whose default is def; offOK says whether it may be off.
func limitVar[T limit.Number](fs *flag.FlagSet, p *T, name string, def T, offOK bool, usage string) {
	fs.Var(limit.NewVar(p, def, offOK), name, usage)
}

// settingKind is how --help names a flag's value: "duration|off",
// "n|unlimited", or "" for flag's own guess.
func settingKind(f *flag.Flag) string {
	if v, ok := f.Value.(interface{ Kind() string }); ok {
		return v.Kind()
	}
	return ""
}
