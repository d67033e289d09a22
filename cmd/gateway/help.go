package main

import (
	"encoding"
	"flag"
	"fmt"
	"io"
	"strings"
)

// helpGroups orders -h by purpose, as kubectl and Prometheus do, instead
// of flag's alphabetical list: the groups of the settings' declarations
// (settings.go), in their order. A flag declared nowhere is still listed,
// under "Other", so a new flag is never hidden.
var helpGroups []struct {
	title string
	flags []string
}

func init() {
	// In init, not the var's initializer: the flag set's Usage reads
	// helpGroups, and settings are registered on the flag set.
	index := map[string]int{}
	for _, s := range settings {
		i, ok := index[s.group]
		if !ok {
			i = len(helpGroups)
			index[s.group] = i
			helpGroups = append(helpGroups, struct {
				title string
				flags []string
			}{title: s.group})
		}
		helpGroups[i].flags = append(helpGroups[i].flags, s.name)
	}
}

// flagGroup is one group of -h and of docs/configuration.md.
type flagGroup struct {
	title string
	flags []*flag.Flag
}

// groupedFlags are fs's flags in helpGroups' order, with any flag left
// out of them under "Other" at the end.
func groupedFlags(fs *flag.FlagSet) []flagGroup {
	var out []flagGroup
	listed := map[string]bool{}
	for _, g := range helpGroups {
		fg := flagGroup{title: g.title}
		for _, name := range g.flags {
			if f := fs.Lookup(name); f != nil && !listed[name] {
				listed[name] = true
				fg.flags = append(fg.flags, f)
			}
		}
		if len(fg.flags) > 0 {
			out = append(out, fg)
		}
	}
	other := flagGroup{title: "Other"}
	fs.VisitAll(func(f *flag.Flag) {
		if !listed[f.Name] {
			other.flags = append(other.flags, f)
		}
	})
	if len(other.flags) > 0 {
		out = append(out, other)
	}
	return out
}

// printHelp writes -h: usage, then the flags by group.
func printHelp(w io.Writer, fs *flag.FlagSet) {
	fmt.Fprint(w, `Usage: gateway [flags]
       gateway catalog [--json] [--toolset NAME] [search "QUERY"] [flags]

Serves the methods of gRPC backends as MCP tools. With no backend named
anywhere, starts the bundled demo backend (examples/zoo). Every flag is
also a config-file key (snake_case) and a GATEWAY_* variable; flags win
over variables, variables over the file. A list flag's variable holds its
values separated by spaces. For numbers, 0 means the default;
"off" and "unlimited" switch a setting off where it allows it.
Reference: docs/configuration.md. gateway catalog prints what a model
reads of each tool, with its sources, and exits (docs/curation.md).
`)
	for _, g := range groupedFlags(fs) {
		var b strings.Builder
		for _, f := range g.flags {
			writeFlag(&b, f)
		}
		fmt.Fprintf(w, "\n%s:\n%s", g.title, b.String())
	}
}

// valueName is how -h and the reference name a flag's value: the
// setting's kind (duration|off, n|unlimited) or flag's own guess from
// the usage's `back-quoted` word or the value's type ("" for a boolean).
func valueName(f *flag.Flag) string {
	if k := settingKind(f); k != "" {
		return k
	}
	// A setting bound to an option type by flag.TextVar takes its name.
	if g, ok := f.Value.(flag.Getter); ok {
		if _, text := g.Get().(encoding.TextMarshaler); text {
			return "string"
		}
	}
	name, _ := flag.UnquoteUsage(f)
	return name
}

// writeFlag writes one flag as flag.PrintDefaults does, naming the value
// of a setting that takes a word (duration|off, n|unlimited).
func writeFlag(b *strings.Builder, f *flag.Flag) {
	_, usage := flag.UnquoteUsage(f)
	name := valueName(f)
	fmt.Fprintf(b, "  -%s", f.Name)
	if name != "" {
		fmt.Fprintf(b, " %s", name)
	}
	b.WriteString("\n    \t")
	b.WriteString(strings.ReplaceAll(usage, "\n", "\n    \t"))
	if f.DefValue != "" && f.DefValue != "false" && f.DefValue != "0" && f.DefValue != "[]" {
		fmt.Fprintf(b, " (default %s)", f.DefValue)
	}
	b.WriteString("\n")
}
