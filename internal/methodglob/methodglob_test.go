package methodglob_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/grpc-mcp-gateway/gateway/internal/methodglob"
	"github.com/grpc-mcp-gateway/gateway/internal/option"
)

func TestCompile(t *testing.T) {
	t.Parallel()
	got, err := methodglob.Compile("--include", []string{"zoo.v1.ZooService", "zoo.v1.*/*", "*/Get*"})
	if want := []string{"zoo.v1.ZooService/*", "zoo.v1.*/*", "*/Get*"}; err != nil || !slices.Equal(got, want) {
		t.Errorf("Compile = %q, %v, want %q", got, err, want)
	}
	for p, want := range map[string]string{
		"":  "--include: empty pattern",
		"[": `--include "[/*": syntax error in pattern (want a glob on package.Service/Method, e.g. zoo.v1.ZooService/*)`,
	} {
		if err := methodglob.Check("--include", p); err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("Check(%q) = %v, want %s", p, err, want)
		}
	}
}

// TestCompileOption: the patterns of a library option are refused with
// an *option.Error naming the option, whose Err names the pattern and
// what was expected, and nothing else.
func TestCompileOption(t *testing.T) {
	t.Parallel()
	if got, err := methodglob.CompileOption("Options.Catalog.Include", []string{"zoo.v1.ZooService"}); err != nil || !slices.Equal(got, []string{"zoo.v1.ZooService/*"}) {
		t.Errorf("CompileOption = %q, %v", got, err)
	}
	for p, want := range map[string]string{
		"":  "empty pattern (want a glob on package.Service/Method",
		"[": `"[/*": syntax error in pattern (want a glob on package.Service/Method, e.g. zoo.v1.ZooService/*)`,
	} {
		_, err := methodglob.CompileOption("Options.Catalog.Include", []string{"a.B/C", p})
		var oe *option.Error
		if !errors.As(err, &oe) || oe.Option != "Options.Catalog.Include" || !strings.HasPrefix(oe.Err.Error(), want) {
			t.Errorf("CompileOption(%q) = %v, want an *option.Error on Options.Catalog.Include saying %s", p, err, want)
		}
	}
}

func TestMatch(t *testing.T) {
	t.Parallel()
	patterns, err := methodglob.Compile("p", []string{"zoo.v1.ZooService", "*/Get*"})
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]bool{
		"zoo.v1.ZooService/ListAnimals": true,  // a service's every method
		"shop.v1.Shop/GetItem":          true,  // '*' within the service part
		"shop.v1.Shop/ListItems":        false, // no pattern
		"zoo.v1.ZooServiceX/List":       false, // the service exactly
	} {
		if got := methodglob.MatchAny(patterns, name); got != want {
			t.Errorf("MatchAny(%q) = %v, want %v", name, got, want)
		}
	}
	if methodglob.Match("zoo.v1.*", "zoo.v1.ZooService/Get") {
		t.Error("'*' matched across '/'")
	}
}
