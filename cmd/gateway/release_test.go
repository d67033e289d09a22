package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestReleaseBuild holds what keeps the release binary small (issue 40:
// at most 40 MB, and what of it is resident at rest): the Dockerfile and
// `make build` build with -tags grpcnotrace, and with it nothing linked
// reaches html/template, whose templates call methods by name through
// reflect. A program that can reach reflect's method lookup keeps every
// exported method of every type, because the linker cannot tell which one
// a template names: 11 MB more binary (all of go-redis's command API, for
// one) and 2 MiB more resident at rest (docs/performance.md, "Goals").
func TestReleaseBuild(t *testing.T) {
	t.Parallel()
	const tags = "grpcnotrace"
	for _, file := range []string{"Dockerfile", "Makefile"} {
		raw, err := os.ReadFile(filepath.Join("..", "..", file))
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for line := range strings.Lines(string(raw)) {
			if strings.Contains(line, " build ") && strings.Contains(line, "./cmd/gateway") && !strings.HasPrefix(strings.TrimSpace(line), "#") {
				found = true
				if !strings.Contains(line, "-tags "+tags) {
					t.Errorf("%s builds the gateway without -tags %s: %s", file, tags, strings.TrimSpace(line))
				}
			}
		}
		if !found {
			t.Errorf("%s: no line building ./cmd/gateway found", file)
		}
	}
	out, err := exec.Command("go", "list", "-tags", tags, "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -tags %s -deps: %v", tags, err)
	}
	deps := strings.Fields(string(out))
	for _, pkg := range []string{"html/template", "golang.org/x/net/trace"} {
		if slices.Contains(deps, pkg) {
			t.Errorf("the release build (-tags %s) links %s: the linker then keeps every exported method", tags, pkg)
		}
	}
}
