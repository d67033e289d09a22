package claims

import (
	"bytes"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the claims table in docs/testing.md")

// root is the repository's top, from this package's directory.
const root = "../.."

const (
	source = "docs/claims.tsv"
	doc    = "docs/testing.md"
	begin  = "<!-- claims table: generated from docs/claims.tsv by `make generate`; do not edit -->\n"
	end    = "<!-- end of claims table -->\n"
)

// claim is one line of docs/claims.tsv.
type claim struct {
	area, text string
	tests      []string // DIR:Name, or a file's path
	line       int
}

func readClaims(t *testing.T) []claim {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, source))
	if err != nil {
		t.Fatal(err)
	}
	var out []claim
	for i, l := range strings.Split(string(b), "\n") {
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		f := strings.Split(l, "\t")
		if len(f) != 3 || f[0] == "" || f[1] == "" || len(strings.Fields(f[2])) == 0 {
			t.Errorf("%s:%d: want three tab-separated fields (area, claim, tests), got %q", source, i+1, l)
			continue
		}
		out = append(out, claim{area: f[0], text: f[1], tests: strings.Fields(f[2]), line: i + 1})
	}
	if len(out) == 0 {
		t.Fatalf("%s lists no claims", source)
	}
	return out
}

// funcsIn returns the files of dir's Go tests, by the name of each
// top-level function they declare.
func funcsIn(t *testing.T, dir string, cache map[string]map[string]string) map[string]string {
	t.Helper()
	if fs, ok := cache[dir]; ok {
		return fs
	}
	fs := map[string]string{}
	cache[dir] = fs
	files, err := filepath.Glob(filepath.Join(root, dir, "*_test.go"))
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, path := range files {
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv == nil {
				fs[fd.Name.Name] = filepath.ToSlash(filepath.Join(dir, filepath.Base(path)))
			}
		}
	}
	return fs
}

// render is the table docs/testing.md shows, each test linked to its file.
func render(t *testing.T, claims []claim) []byte {
	t.Helper()
	cache := map[string]map[string]string{}
	var b bytes.Buffer
	b.WriteString(begin)
	b.WriteString("| area | claim | held by |\n|---|---|---|\n")
	for _, c := range claims {
		var refs []string
		for _, ref := range c.tests {
			dir, name, isGo := strings.Cut(ref, ":")
			if !isGo {
				if _, err := os.Stat(filepath.Join(root, ref)); err != nil {
					t.Errorf("%s:%d: test file %s: %v", source, c.line, ref, err)
				}
				refs = append(refs, fmt.Sprintf("[`%s`](../%s)", filepath.Base(ref), ref))
				continue
			}
			file, ok := funcsIn(t, dir, cache)[name]
			if !ok || !isTestName(name) {
				t.Errorf("%s:%d: no test, benchmark or fuzz target %s in %s", source, c.line, name, dir)
				continue
			}
			refs = append(refs, fmt.Sprintf("[`%s`](../%s) (%s)", name, file, dir))
		}
		fmt.Fprintf(&b, "| %s | %s | %s |\n", c.area, strings.ReplaceAll(c.text, "|", `\|`), strings.Join(refs, ", "))
	}
	b.WriteString(end)
	return b.Bytes()
}

func isTestName(n string) bool {
	for _, p := range []string{"Test", "Benchmark", "Fuzz", "Example"} {
		if strings.HasPrefix(n, p) {
			return true
		}
	}
	return false
}

// TestClaimTable fails when a test docs/claims.tsv names no longer
// exists, or when docs/testing.md's table is not the one the file
// generates (run with -update, or `make generate`, to rewrite it).
func TestClaimTable(t *testing.T) {
	table := render(t, readClaims(t))
	path := filepath.Join(root, doc)
	cur, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	i, j := bytes.Index(cur, []byte(begin)), bytes.Index(cur, []byte(end))
	if i < 0 || j < i {
		t.Fatalf("%s has no claims table between the lines %q and %q", doc, strings.TrimSpace(begin), strings.TrimSpace(end))
	}
	got := cur[i : j+len(end)]
	if bytes.Equal(got, table) {
		return
	}
	if !*update {
		t.Fatalf("%s: the claims table is stale; run `make generate`", doc)
	}
	if t.Failed() {
		t.Fatal("not rewriting the table: fix docs/claims.tsv first")
	}
	next := append(append(append([]byte{}, cur[:i]...), table...), cur[j+len(end):]...)
	if err := os.WriteFile(path, next, 0o644); err != nil {
		t.Fatal(err)
	}
}

// testName is a Go test or fuzz target's name in prose.
var testName = regexp.MustCompile(`\b(Test|Fuzz)[A-Z][A-Za-z0-9_]*`)

// engineering are the pages written for the gateway's own engineers,
// whose subject is the tests themselves: the rest say what the gateway
// does, and leave the tests to the claims table.
var engineering = map[string]bool{"docs/testing.md": true, "docs/architecture.md": true}

// TestDocsNameNoTests fails when README.md or a page of docs/ names a
// test or fuzz target outside a command that runs it (a code span or
// block holding `go test`): a claim's tests belong in docs/claims.tsv.
// Benchmarks may be named, since a figure's benchmark is how to
// reproduce it.
func TestDocsNameNoTests(t *testing.T) {
	pages, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	pages = append(pages, filepath.Join(root, "README.md"))
	for _, path := range pages {
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if engineering[rel] {
			continue
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range proseTestNames(string(b)) {
			t.Errorf("%s:%d: names %s: say what the gateway does, and put the test in %s", rel, f.line, f.name, source)
		}
	}
}

type mention struct {
	line int
	name string
}

// proseTestNames lists the test names in md outside fenced code blocks
// and code spans that run tests.
func proseTestNames(md string) []mention {
	var out []mention
	fenced, comment := false, false
	for i, l := range strings.Split(md, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "```") {
			fenced = !fenced
			continue
		}
		if fenced {
			continue
		}
		// An HTML comment is not shown; the tests that read a page find
		// their markers in one.
		l, comment = uncommented(l, comment)
		for _, span := range codeSpan.FindAllString(l, -1) {
			if strings.Contains(span, "go test") || strings.Contains(span, "-run ") {
				l = strings.Replace(l, span, "", 1)
			}
		}
		for _, n := range testName.FindAllString(l, -1) {
			out = append(out, mention{i + 1, n})
		}
	}
	return out
}

var codeSpan = regexp.MustCompile("`[^`]+`")

// uncommented is what of line l is outside HTML comments, given whether
// l starts inside one, and whether the next line does.
func uncommented(l string, in bool) (string, bool) {
	var out strings.Builder
	for l != "" {
		if in {
			_, after, ok := strings.Cut(l, "-->")
			if !ok {
				return out.String(), true
			}
			l, in = after, false
			continue
		}
		before, after, ok := strings.Cut(l, "<!--")
		out.WriteString(before)
		if !ok {
			break
		}
		l, in = after, true
	}
	return out.String(), in
}

func TestProseTestNames(t *testing.T) {
	md := "`TestA` holds it.\n```\ngo test -run TestB\n```\nRun `go test -run TestC ./x`, not TestD.\n" +
		"<!-- TestE\nTestF --> TestG <!-- TestH --> TestI\n"
	got := proseTestNames(md)
	want := []mention{{1, "TestA"}, {5, "TestD"}, {7, "TestG"}, {7, "TestI"}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}
