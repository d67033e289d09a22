package main

import (
	"encoding/json"
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/grpc-mcp-gateway/gateway/examples/zoo/zootest"
	"github.com/grpc-mcp-gateway/gateway/gateway"
)

// runBinary runs the gateway binary with args and returns its exit code
// and output.
func runBinary(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	cmd := exec.Command(binary, args...)
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		code = exit.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return code, out.String(), errb.String()
}

// catalogConfig corrects the zoo as docs/curation.md shows on Temporal:
// a tool renamed, described again and fixed to one enclosure, a hint
// corrected and a sentence added.
const catalogConfig = `backends:
  - name: zoo
    address: %s
    plaintext: true
tools:
  - match: zoo.v1.ZooService/ListAnimals
    name: list_savanna_animals
    description: Lists the animals that live on the savanna, the big cats and the tall grazers.
    read_only_hint: true
    arguments:
      enclosure_id: {fixed: savanna}
      page_size: {default: 2}
  - match: zoo.v1.ZooService/FeedAnimal
    destructive_hint: false
    description_append: Feed each animal at most three times a day.
`

// TestCatalogCommand: gateway catalog, run as the real binary with a
// config file, reports what a model reads and where it came from, in
// text and JSON, and ranks the catalog offline with search mode's code.
func TestCatalogCommand(t *testing.T) {
	addr := zootest.Start(t)
	cfg := writeFile(t, "gateway.yaml", strings.Replace(catalogConfig, "%s", addr, 1))

	code, out, errs := runBinary(t, "catalog", "--config", cfg)
	if code != 0 {
		t.Fatalf("gateway catalog: exit %d\n%s", code, errs)
	}
	for _, want := range []string{
		"list_savanna_animals\n  method       zoo.v1.ZooService/ListAnimals (backend zoo)",
		"  name         [config]",
		"  description  [config] Lists the animals that live on the savanna",
		"  arguments    enclosureId: fixed, pageSize: default",
		"  description  [verb + config] Feeds an animal. Feed each animal at most three times a day.",
		"destructive=false [config]",
		"  check        verb not in the table",
		" tools, ",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the report lacks %q:\n%s", want, out)
		}
	}

	code, out, errs = runBinary(t, "catalog", "--json", "--config", cfg)
	if code != 0 {
		t.Fatalf("gateway catalog --json: exit %d\n%s", code, errs)
	}
	var reports []gateway.ToolReport
	if err := json.Unmarshal([]byte(out), &reports); err != nil {
		t.Fatalf("--json: %v\n%s", err, out)
	}
	found := false
	for _, r := range reports {
		if r.Name == "list_savanna_animals" {
			found = true
			if r.NameSource != gateway.SourceConfig || r.Hints[0].Source != gateway.SourceConfig || r.Bytes == 0 {
				t.Errorf("list_savanna_animals in JSON: %+v", r)
			}
		}
	}
	if !found {
		t.Fatalf("--json: no list_savanna_animals in %s", out)
	}

	// The report reads the flags serving reads: a --watch pattern makes
	// the bidirectional ChatWithKeeper a watch in the report as in
	// tools/list.
	code, out, errs = runBinary(t, "catalog", "--json", "--config", cfg, "--watch", "zoo.v1.ZooService/ChatWithKeeper")
	if code != 0 {
		t.Fatalf("gateway catalog --watch: exit %d\n%s", code, errs)
	}
	if err := json.Unmarshal([]byte(out), &reports); err != nil {
		t.Fatalf("--json: %v\n%s", err, out)
	}
	for _, r := range reports {
		if r.Name == "ZooService_ChatWithKeeper" && !strings.Contains(r.Description, "Open-ended stream (a watch)") {
			t.Errorf("--watch: ChatWithKeeper's description in the report is not a watch's: %q", r.Description)
		}
	}

	// The query's words are in the corrected description only.
	code, out, errs = runBinary(t, "catalog", "search", "tall grazers", "--config", cfg, "--json", "--limit", "3")
	if code != 0 {
		t.Fatalf("gateway catalog search: exit %d\n%s", code, errs)
	}
	if err := json.Unmarshal([]byte(out), &reports); err != nil || len(reports) == 0 || reports[0].Name != "list_savanna_animals" || reports[0].Score <= 0 || len(reports) > 3 {
		t.Fatalf("search ranks %s (%v)", out, err)
	}

	// A rule that does not fit its method stops the report, naming the
	// file, the line and the key (exit 2, as serving would).
	bad := writeFile(t, "bad.yaml", strings.Replace(strings.Replace(catalogConfig, "%s", addr, 1), "{default: 2}", "{default: many}", 1))
	code, _, errs = runBinary(t, "catalog", "--config", bad)
	if want := filepath.Base(bad) + ":6: tools[0]: arguments.page_size: zoo.v1.ZooService.ListAnimals: default: want a whole number, got \"many\""; code != 2 || !strings.Contains(errs, want) {
		t.Fatalf("exit %d, stderr %s\nwant exit 2 and %q", code, errs, want)
	}
}

// TestCheckConfigToolOverrides: --check-config checks the tool overrides
// against backends described by descriptor files, without connecting:
// an unknown argument, a value of the wrong type and a rule that matches
// no method are refused naming the file, the line and the key.
func TestCheckConfigToolOverrides(t *testing.T) {
	set, err := filepath.Abs("../../descriptors/testdata/zoo.binpb")
	if err != nil {
		t.Fatal(err)
	}
	head := `backends:
  - name: zoo
    address: 127.0.0.1:1
    plaintext: true
    no_reflection: true
    descriptor_set: [` + set + `]
tools:
`
	for _, tc := range []struct {
		name, tools string
		code        int
		stdout      string
		stderr      string
	}{
		{"valid", "  - match: zoo.v1.ZooService/ListAnimals\n    arguments:\n      enclosure_id: {fixed: savanna}\n", 0, "tool overrides: checked against every backend's descriptor files", ""},
		{"unknown argument", "  - match: zoo.v1.ZooService/ListAnimals\n    arguments:\n      enclosure: {hidden: true}\n", 1, "",
			`:8: tools[0]: arguments.enclosure: zoo.v1.ZooService.ListAnimals: zoo.v1.ListAnimalsRequest has no field "enclosure" (it has: species, enclosureId, pageSize, pageToken)`},
		{"wrong type", "  - match: zoo.v1.ZooService/ListAnimals\n    arguments:\n      species: {fixed: lion}\n", 1, "",
			`arguments.species: zoo.v1.ZooService.ListAnimals: fixed: want a list, each one of SPECIES_UNSPECIFIED, SPECIES_LION`},
		{"matches nothing", "  - match: zoo.v1.ZooService/ListAnimal\n    title: Animals\n", 1, "", `:8: tools[0] (match "zoo.v1.ZooService/ListAnimal"): matches no method`},
		{"two settings", "  - match: zoo.v1.ZooService/ListAnimals\n    arguments:\n      page_size: {hidden: true, default: 3}\n", 1, "", "arguments.page_size: want exactly one of hidden, fixed or default, got 2"},
		{"toolset's own", "  - match: zoo.v1.ZooService/ListAnimals\n    title: Animals\n" +
			"toolsets:\n  - name: keepers\n    include: [zoo.v1.ZooService/ListAnimals]\n    tools:\n      - match: zoo.v1.ZooService/ListAnimals\n        arguments:\n          keeper: {fixed: ann}\n",
			1, "", `:14: toolsets[0].tools[0]: arguments.keeper: zoo.v1.ZooService.ListAnimals: zoo.v1.ListAnimalsRequest has no field "keeper"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := writeFile(t, "gateway.yaml", head+tc.tools)
			code, out, errs := runBinary(t, "--check-config", cfg)
			if code != tc.code || !strings.Contains(out, tc.stdout) || !strings.Contains(errs, tc.stderr) {
				t.Fatalf("exit %d (want %d)\nstdout: %s\nstderr: %s\nwant %q / %q", code, tc.code, out, errs, tc.stdout, tc.stderr)
			}
		})
	}
}
