package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"reflect"
	"strings"
	"testing"
)

var updateReference = flag.Bool("update-reference", false, "rewrite docs/configuration.md from the flag set")

// referencePath is the generated configuration reference.
const referencePath = "../../docs/configuration.md"

// TestConfigurationReference: docs/configuration.md is what the flag set,
// its help groups and the backends: schema say, so it cannot drift from
// them. After changing a flag, its usage, its default or its group, run
//
//	go test ./cmd/gateway -run TestConfigurationReference -update-reference
//
// (or make generate) and commit the result.
func TestConfigurationReference(t *testing.T) {
	t.Parallel()
	got := configurationReference((&config{}).flagSet(io.Discard))
	if *updateReference {
		if err := os.WriteFile(referencePath, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(referencePath)
	if err != nil {
		t.Fatalf("%v: run go test ./cmd/gateway -run TestConfigurationReference -update-reference", err)
	}
	if string(want) != got {
		t.Errorf("docs/configuration.md is stale: run go test ./cmd/gateway -run TestConfigurationReference -update-reference (or make generate)")
	}
}

// configurationReference renders docs/configuration.md.
func configurationReference(fs *flag.FlagSet) string {
	var b strings.Builder
	b.WriteString(`# Configuration reference

<!-- Generated from the flag set of cmd/gateway by
     go test ./cmd/gateway -run TestConfigurationReference -update-reference
     (make generate); edit the flags, not this file. -->

Every setting is a command-line flag, a key of the config file and an
environment variable, all three read by the flag's own parser:

- **Config file** (` + "`--config FILE`" + `, YAML): each top-level key is the flag's
  name in snake_case (` + "`call_timeout`" + ` is ` + "`--call-timeout`" + `); a list flag takes a
  list (or one value), and a mapping of ` + "`KEY: VALUE`" + ` as its ` + "`KEY=VALUE`" + `
  values. Backends, with settings of their own, are the list under
  ` + "`backends:`" + ` ([below](#backends-in-the-config-file)).
  [examples/config/gateway.yaml](../examples/config/gateway.yaml) shows every
  key at its default. An unknown key, or a bad value, is an error naming the
  file, the line and the key; ` + "`gateway --check-config FILE`" + ` checks a file and exits.
- **Environment**: ` + "`GATEWAY_`" + ` and the flag's name upper-cased with ` + "`-`" + ` as
  ` + "`_`" + ` (` + "`GATEWAY_CALL_TIMEOUT=10s`" + `); a list flag's variable holds its values
  separated by whitespace (` + "`GATEWAY_INCLUDE=\"zoo.v1.* shop.v1.*\"`" + `).
- **Precedence**: command line > environment > file > default. A list given
  on the command line or in a variable replaces the file's list, and
  ` + "`--backend`" + ` or ` + "`GATEWAY_BACKEND`" + ` replaces the file's backends.

## Defaults and off

Every numeric setting follows one rule (internal/limit, for the flags and
the library's options alike):

- **0 means the default**, the one listed here: ` + "`--call-timeout 0`" + ` is ` + "`--call-timeout " + fs.Lookup("call-timeout").DefValue + "`" + `.
- **Off is spelled out**: a setting whose value below reads ` + "`duration|off`" + ` or
  ` + "`n|unlimited`" + ` can be switched off or left unbounded with that word; a
  negative number means the same.
- **Settings that cannot be off refuse both**, naming themselves: a call
  always has a deadline, a stream and a request are always bounded.

Durations are written as Go spells them: ` + "`500ms`" + `, ` + "`30s`" + `, ` + "`1m30s`" + `.
`)
	for _, g := range groupedFlags(fs) {
		fmt.Fprintf(&b, "\n## %s\n\n", g.title)
		b.WriteString("| flag | file key, variable | default | |\n|---|---|---|---|\n")
		for _, f := range g.flags {
			fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", referenceFlag(f), referenceKeys(f), referenceDefault(f), cell(usageText(f)))
		}
	}
	b.WriteString(`
## Backends in the config file

` + "`backends:`" + ` is a list of backends, each a mapping of these keys; it
replaces ` + "`--backend`" + `. A key left out is the gateway-wide setting named.

| key | |
|---|---|
`)
	writeStructKeys(&b, reflect.TypeFor[fileBackend](), "")
	b.WriteString(`
Each entry of a backend's ` + "`methods:`" + ` overrides its settings for the methods
it matches; the first entry that matches a method applies.

| key | |
|---|---|
`)
	writeStructKeys(&b, reflect.TypeFor[fileMethod](), "methods[].")
	b.WriteString(`
A backend's ` + "`token_exchange:`" + ` calls it as the end user (RFC 8693 token
exchange; see [docs/security.md](security.md#three-ways-the-backend-learns-who-calls)).

| key | |
|---|---|
`)
	writeStructKeys(&b, reflect.TypeFor[exchangeSettings](), "token_exchange.")
	b.WriteString(`
## Toolsets in the config file

` + "`toolsets:`" + ` is a list of named views of the catalog, each served at its own
endpoints (` + "`/mcp/NAME`, `/ws/NAME`, `/sse/NAME`" + `) while ` + "`/mcp`" + ` stays the whole
catalog; see [docs/toolsets.md](toolsets.md). Each is a mapping of these keys.

| key | |
|---|---|
`)
	writeStructKeys(&b, reflect.TypeFor[fileToolset](), "")
	b.WriteString(`
## Tool corrections in the config file

` + "`tools:`" + ` (and a toolset's ` + "`tools:`" + `) corrects what a model reads of the tools
of the methods each entry matches, without touching the backend; see
[docs/curation.md](curation.md), and ` + "`gateway catalog`" + ` for what the gateway
made of each tool. Every entry that matches a method applies, in order.

| key | |
|---|---|
`)
	writeStructKeys(&b, reflect.TypeFor[fileTool](), "")
	b.WriteString(`
Each entry of ` + "`arguments:`" + ` takes exactly one of these keys.

| key | |
|---|---|
`)
	writeStructKeys(&b, reflect.TypeFor[fileArgument](), "arguments.PATH.")
	return b.String()
}

// writeStructKeys writes a table row per yaml key of t, from its help tag.
func writeStructKeys(b *strings.Builder, t reflect.Type, prefix string) {
	for i := range t.NumField() {
		f := t.Field(i)
		fmt.Fprintf(b, "| `%s%s` | %s |\n", prefix, f.Tag.Get("yaml"), cell(keyHelp(f)))
	}
}

func referenceFlag(f *flag.Flag) string {
	if v := valueName(f); v != "" {
		return fmt.Sprintf("`--%s %s`", f.Name, v)
	}
	return fmt.Sprintf("`--%s`", f.Name)
}

func referenceKeys(f *flag.Flag) string {
	switch {
	case metaFlags[f.Name]:
		return "command line only"
	case f.Name == "backend":
		return "`backends:` (a list), `" + envName(f.Name) + "`"
	}
	return "`" + flagKey(f.Name) + "`, `" + envName(f.Name) + "`"
}

func referenceDefault(f *flag.Flag) string {
	switch f.DefValue {
	case "", "[]":
		return ""
	}
	return "`" + f.DefValue + "`"
}

func usageText(f *flag.Flag) string {
	_, usage := flag.UnquoteUsage(f)
	if isListFlag(f) && !strings.Contains(usage, "repeatable") {
		usage += " (repeatable)"
	}
	return usage
}

// cell escapes text for a Markdown table cell.
func cell(s string) string {
	return strings.NewReplacer("|", `\|`, "*", `\*`, "\n", " ").Replace(s)
}
