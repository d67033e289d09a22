package estate_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode"

	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	"github.com/grpc-mcp-gateway/gateway/estate"
	"github.com/grpc-mcp-gateway/gateway/gateway"
	"github.com/grpc-mcp-gateway/gateway/gateway/mcp"
	"github.com/grpc-mcp-gateway/gateway/internal/search"
)

// corpusGateway starts a gateway over every API of the corpus, served by
// one in-process server with reflection (no comments), in the given mode.
func corpusGateway(tb testing.TB, mode gateway.ToolMode) *gateway.Gateway {
	tb.Helper()
	return startGateway(tb, []gateway.Backend{servedBackend(tb, "corpus", estate.CorpusServices())}, &gateway.Options{Search: gateway.SearchOptions{ToolMode: mode}})
}

// corpusAPIGateway starts a gateway over one API of the corpus alone, as a
// team fronting its own service would.
func corpusAPIGateway(tb testing.TB, api estate.CorpusAPI, mode gateway.ToolMode) *gateway.Gateway {
	tb.Helper()
	return startGateway(tb, []gateway.Backend{servedBackend(tb, api.ID, api.Services)}, &gateway.Options{Search: gateway.SearchOptions{ToolMode: mode}})
}

// rankPerAPI ranks each API's requests on that API's own gateway and
// sums the figures.
func rankPerAPI(tb testing.TB, cases []relevanceCase) *relevanceReport {
	tb.Helper()
	all := &relevanceReport{perAPI: map[string]*rankStats{}}
	for _, api := range estate.Corpus {
		var mine []relevanceCase
		for _, c := range cases {
			if c.api != api.ID {
				continue
			}
			// Alone, no other API's service shares a name with this
			// one's, so no tool is qualified by a package segment
			// (v1_Snapshots_List is Snapshots_List).
			want := make([]string, len(c.want))
			for i, w := range c.want {
				if first, rest, ok := strings.Cut(w, "_"); ok && first != "" && unicode.IsLower(rune(first[0])) && strings.Contains(rest, "_") {
					w = rest
				}
				want[i] = w
			}
			c.want = want
			mine = append(mine, c)
		}
		r := rankRelevance(tb, corpusAPIGateway(tb, api, gateway.ToolModeSearch), mine)
		s := r.all
		all.perAPI[api.ID] = &s
		all.all.n += s.n
		all.all.top1 += s.top1
		all.all.top5 += s.top5
		all.all.top10 += s.top10
		all.all.rr += s.rr
		all.misses = append(all.misses, r.misses...)
		all.sizes = append(all.sizes, r.sizes...)
	}
	slices.Sort(all.sizes)
	return all
}

// corpusTool is one typed tool of the corpus with the method it calls.
type corpusTool struct {
	api    string
	tool   *mcp.Tool
	method protoreflect.MethodDescriptor
}

// corpusTools lists the corpus's tools in typed mode, each with its API
// and method: the tool named Service_Method, or qualified by package
// segments where two services share a name (gateway/internal/toolname).
func corpusTools(tb testing.TB, g *gateway.Gateway) []corpusTool {
	tb.Helper()
	byName := map[string]*mcp.Tool{}
	tools := g.Tools().Tools()
	for i := range tools {
		byName[tools[i].Name] = &tools[i]
	}
	var out []corpusTool
	for _, a := range estate.Corpus {
		for _, s := range a.Services {
			d, err := protoregistry.GlobalFiles.FindDescriptorByName(s)
			if err != nil {
				tb.Fatal(err)
			}
			sd := d.(protoreflect.ServiceDescriptor)
			for i := range sd.Methods().Len() {
				md := sd.Methods().Get(i)
				name := string(sd.Name()) + "_" + string(md.Name())
				segs := strings.Split(string(sd.ParentFile().Package()), ".")
				for byName[name] == nil && len(segs) > 0 {
					name = strings.ReplaceAll(segs[len(segs)-1], ".", "_") + "_" + name
					segs = segs[:len(segs)-1]
				}
				tl := byName[name]
				if tl == nil {
					tb.Fatalf("%s: no tool", md.FullName())
				}
				delete(byName, name)
				out = append(out, corpusTool{api: a.ID, tool: tl, method: md})
			}
		}
	}
	for name := range byName {
		tb.Errorf("tool %s: no corpus method", name)
	}
	return out
}

// TestCorpusDump writes the corpus's tools for a reader who labels
// requests and hints (CORPUS_DUMP=FILE): name, method, streaming, the
// request's fields and the response's message.
func TestCorpusDump(t *testing.T) {
	path := os.Getenv("CORPUS_DUMP")
	if path == "" {
		t.Skip("CORPUS_DUMP is not set")
	}
	g := corpusGateway(t, gateway.ToolModeTyped)
	var b strings.Builder
	for _, ct := range corpusTools(t, g) {
		md := ct.method
		var fields []string
		for i := range md.Input().Fields().Len() {
			fields = append(fields, string(md.Input().Fields().Get(i).Name()))
		}
		stream := ""
		switch {
		case md.IsStreamingClient() && md.IsStreamingServer():
			stream = "bidi-stream"
		case md.IsStreamingServer():
			stream = "server-stream"
		case md.IsStreamingClient():
			stream = "client-stream"
		}
		var outFields []string
		for i := range md.Output().Fields().Len() {
			outFields = append(outFields, string(md.Output().Fields().Get(i).Name()))
		}
		fmt.Fprintf(&b, "%s\t%s\t%s\t%s\trequest{%s}\t%s{%s}\n", ct.api, ct.tool.Name, md.FullName(), stream,
			strings.Join(fields, ","), md.Output().Name(), strings.Join(outFields, ","))
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestCorpusShow logs what a model reads of every corpus tool
// (CORPUS_SHOW=1): title, hints and description.
func TestCorpusShow(t *testing.T) {
	if os.Getenv("CORPUS_SHOW") == "" {
		t.Skip("CORPUS_SHOW is not set")
	}
	g := corpusGateway(t, gateway.ToolModeTyped)
	for _, ct := range corpusTools(t, g) {
		a := ct.tool.Annotations
		h := fmt.Sprintf("ro=%v de=%v id=%v", *a.ReadOnlyHint, *a.DestructiveHint, *a.IdempotentHint)
		d, _, _ := strings.Cut(ct.tool.Description, "\n\n")
		fmt.Printf("%s\t%s\t%s\t%s\t%s\n", ct.api, ct.tool.Name, ct.tool.Title, h, d)
	}
}

// The corpus's goals on its test half (issue 35): top-5 of at least 85%
// and top-1 of at least 60% in all, and top-5 of at least 70% on every
// API, measured with each API behind a gateway of its own, as a team
// fronting its own service has it. The requests' labels name only their
// own API's tools, so in one catalog of all twelve a request another
// API's tool also does (two container runtimes, two authorization
// services, two vector databases) counts as a miss; that catalog is
// reported and held to floors (docs/catalog.md).
const (
	corpusGoalTop1       = 0.60
	corpusGoalTop5       = 0.85
	corpusGoalTop5PerAPI = 0.70
	// Floors, not goals: a request or two under where the one-catalog
	// figures stood once SpiceDB's second batch joined the set, so that
	// a change that loses ground fails.
	corpusFloorTop1All = 0.55
	corpusFloorTop5All = 0.75
)

// TestCorpusSearch ranks both halves of the corpus's requests in search
// mode: each API behind a gateway of its own, and all twelve in one
// catalog (565 tools), over reflection without comments. The tuning half
// logs its misses; the test half logs only its totals, per API, and is
// held to the goals (each API alone) and the floors (one catalog).
func TestCorpusSearch(t *testing.T) {
	g := corpusGateway(t, gateway.ToolModeSearch)
	tune := loadCorpusRequests(t, "tune.tsv")
	test := loadCorpusRequests(t, "test.tsv")
	if len(tune)+len(test) < 300 {
		t.Fatalf("%d requests, want at least 300", len(tune)+len(test))
	}
	ra := rankPerAPI(t, tune)
	t.Logf("tuning half, each API alone:\n%s\nnot first:\n%s", ra, strings.Join(ra.misses, "\n"))
	rt := rankRelevance(t, g, tune)
	t.Logf("tuning half, one catalog:\n%s\nnot first:\n%s", rt, strings.Join(rt.misses, "\n"))

	alone := rankPerAPI(t, test)
	t.Logf("test half, each API alone (totals only):\n%s", alone)
	n := float64(alone.all.n)
	top1, top5 := float64(alone.all.top1)/n, float64(alone.all.top5)/n
	if top1 < corpusGoalTop1 || top5 < corpusGoalTop5 {
		t.Errorf("test half, each API alone: top-1 %.2f, top-5 %.2f: under the goals %.2f and %.2f", top1, top5, corpusGoalTop1, corpusGoalTop5)
	}
	for _, api := range estate.Corpus {
		s := alone.perAPI[api.ID]
		if top5 := float64(s.top5) / float64(s.n); top5 < corpusGoalTop5PerAPI {
			t.Errorf("test half, %s alone: top-5 %.2f, under the goal %.2f", api.ID, top5, corpusGoalTop5PerAPI)
		}
	}

	one := rankRelevance(t, g, test)
	t.Logf("test half, one catalog (totals only):\n%s", one)
	n = float64(one.all.n)
	if top1, top5 := float64(one.all.top1)/n, float64(one.all.top5)/n; top1 < corpusFloorTop1All || top5 < corpusFloorTop5All {
		t.Errorf("test half, one catalog: top-1 %.2f, top-5 %.2f: under the floors %.2f and %.2f", top1, top5, corpusFloorTop1All, corpusFloorTop5All)
	}
}

// loadCorpusRequests reads a half of the corpus's requests.
func loadCorpusRequests(tb testing.TB, name string) []relevanceCase {
	tb.Helper()
	return loadRelevance(tb, filepath.Join("..", "corpus", name))
}

// hintLabel is the second reader's hints of one method.
type hintLabel struct {
	readOnly, destructive, idempotent bool
	reason                            string
}

func loadHintLabels(tb testing.TB) map[string]hintLabel {
	tb.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "corpus", "hints.tsv"))
	if err != nil {
		tb.Fatal(err)
	}
	out := map[string]hintLabel{}
	for i, line := range strings.Split(string(data), "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		c := strings.Split(line, "\t")
		if len(c) != 6 {
			tb.Fatalf("hints.tsv:%d: want 6 columns, got %d", i+1, len(c))
		}
		out[c[1]] = hintLabel{c[2] == "y", c[3] == "y", c[4] == "y", c[5]}
	}
	return out
}

// The hint goals on the labelled corpus (issue 35): at least 95% of the
// hints agree with the labels, and no read-only method is marked
// destructive.
const corpusMinHintAgreement = 0.95

// disputedHints are labels the inference does not follow, with why: the
// method's name and request say nothing of what the label rests on.
var disputedHints = map[string]string{
	"Dapr_RegisterActorTimer":    "a timer registered under a taken name replaces it; Register elsewhere (Temporal's RegisterNamespace) refuses a taken name",
	"Dapr_RegisterActorReminder": "as Dapr_RegisterActorTimer",
}

// TestCorpusHints compares every corpus tool's readOnly, destructive and
// idempotent hints with the second reader's labels. It fails under the
// agreement goal, on a method the reader labelled read-only that the
// gateway marks destructive, and on a destructive method it marks
// non-destructive, except the disputed labels named in disputedHints.
func TestCorpusHints(t *testing.T) {
	labels := loadHintLabels(t)
	g := corpusGateway(t, gateway.ToolModeTyped)
	agree, total := 0, 0
	var wrong []string
	for _, ct := range corpusTools(t, g) {
		l, ok := labels[ct.tool.Name]
		if !ok {
			t.Errorf("%s: no label", ct.tool.Name)
			continue
		}
		a := ct.tool.Annotations
		ro, de, id := *a.ReadOnlyHint, *a.DestructiveHint, *a.IdempotentHint
		// destructiveHint means something only for a tool that is not
		// read-only.
		got := []bool{ro, de || ro && false, id}
		want := []bool{l.readOnly, l.destructive, l.idempotent}
		if ro {
			got[1] = false
		}
		for i := range got {
			total++
			if got[i] == want[i] {
				agree++
			}
		}
		if got[0] != want[0] || got[1] != want[1] || got[2] != want[2] {
			wrong = append(wrong, fmt.Sprintf("  %-50s got ro=%v de=%v id=%v, label ro=%v de=%v id=%v (%s)", ct.tool.Name, got[0], got[1], got[2], l.readOnly, l.destructive, l.idempotent, l.reason))
		}
		switch {
		case disputedHints[ct.tool.Name] != "":
		case l.readOnly && !ro && de:
			t.Errorf("%s: read-only by the label, marked destructive", ct.tool.Name)
		case !l.readOnly && l.destructive && (ro || !de):
			t.Errorf("%s: destructive by the label, marked read-only=%v destructive=%v", ct.tool.Name, ro, de)
		}
	}
	rate := float64(agree) / float64(total)
	t.Logf("hints agree with the labels: %d of %d (%.1f%%); methods with a hint that differs: %d\n%s", agree, total, 100*rate, len(wrong), strings.Join(wrong, "\n"))
	if rate < corpusMinHintAgreement {
		t.Errorf("agreement %.3f, under %.2f", rate, corpusMinHintAgreement)
	}
}

// descriptionStopwords are words that carry no fact about a method: the
// function words of a sentence and the frame of the notes.
var descriptionStopwords = map[string]bool{
	"a": true, "an": true, "the": true, "of": true, "in": true, "on": true, "to": true, "from": true, "with": true,
	"for": true, "by": true, "and": true, "or": true, "it": true, "its": true, "is": true, "as": true, "at": true,
	"several": true, "one": true, "call": true, "more": true, "takes": true, "returns": true, "requires": true,
	"streams": true, "messages": true, "nothing": true, "service": true, "method": true, "operation": true,
	"performs": true, "stream": true, "through": true, "every": true, "location": true, "follow": true,
}

// addsToName reports whether a description says something its tool's
// name does not, by the rule docs/catalog.md writes down: after the words
// of the method's, service's and package's names, their plurals and verb
// forms, and the words that only frame a sentence are taken out, a word
// is left (an input, an output, a scope, a rule), or the description says
// the call takes no arguments or returns nothing.
func addsToName(desc string, md protoreflect.MethodDescriptor) bool {
	if strings.Contains(desc, "Takes no arguments") || strings.Contains(desc, "Returns nothing") {
		return true
	}
	name := map[string]bool{}
	for _, s := range []string{string(md.Name()), string(md.Parent().Name()), string(md.Parent().ParentFile().Package())} {
		for _, w := range search.Terms(s) {
			name[w] = true
		}
	}
	for _, w := range strings.FieldsFunc(desc, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9')
	}) {
		if descriptionStopwords[strings.ToLower(w)] {
			continue
		}
		for _, p := range search.Terms(w) {
			if !name[p] {
				return true
			}
		}
	}
	return false
}

// TestCorpusDescriptions: every method of the corpus, described from its
// structure alone (reflection carries no comments), gets a description
// that adds something to its name, and whose verb is English ("Looks
// up", never "Lookups").
func TestCorpusDescriptions(t *testing.T) {
	g := corpusGateway(t, gateway.ToolModeTyped)
	tools := corpusTools(t, g)
	for _, ct := range tools {
		d, _, _ := strings.Cut(ct.tool.Description, "\n\n")
		if !addsToName(d, ct.method) {
			t.Errorf("%s: %q adds nothing to the name", ct.tool.Name, d)
		}
		first, _, _ := strings.Cut(d, " ")
		for _, bad := range []string{"Lookups", "Shutdowns", "Cleanups", "Backups", "Setups", "Rollbacks", "Logins"} {
			if first == bad {
				t.Errorf("%s: %q starts with a noun for a verb", ct.tool.Name, d)
			}
		}
	}
	if len(tools) < 500 {
		t.Fatalf("%d corpus tools, want the whole corpus", len(tools))
	}
}

// BenchmarkCorpus reports the corpus's figures as metrics (make
// bench-corpus): search top-1 and top-5 on each half, each API alone and
// in one catalog, the hints' agreement with the labels, and the share of
// descriptions that add to their tool's name. It measures quality, not
// time; one iteration gives the figures.
func BenchmarkCorpus(b *testing.B) {
	tune := loadCorpusRequests(b, "tune.tsv")
	test := loadCorpusRequests(b, "test.tsv")
	labels := loadHintLabels(b)
	for b.Loop() {
		one := corpusGateway(b, gateway.ToolModeSearch)
		for _, run := range []struct {
			name string
			r    *relevanceReport
		}{
			{"tune-alone", rankPerAPI(b, tune)},
			{"test-alone", rankPerAPI(b, test)},
			{"tune-one", rankRelevance(b, one, tune)},
			{"test-one", rankRelevance(b, one, test)},
		} {
			n := float64(run.r.all.n)
			b.ReportMetric(100*float64(run.r.all.top1)/n, run.name+"-top1-%")
			b.ReportMetric(100*float64(run.r.all.top5)/n, run.name+"-top5-%")
		}
		typed := corpusGateway(b, gateway.ToolModeTyped)
		agree, total, adds, tools := 0, 0, 0, 0
		for _, ct := range corpusTools(b, typed) {
			tools++
			d, _, _ := strings.Cut(ct.tool.Description, "\n\n")
			if addsToName(d, ct.method) {
				adds++
			}
			l, ok := labels[ct.tool.Name]
			if !ok {
				continue
			}
			a := ct.tool.Annotations
			got := []bool{*a.ReadOnlyHint, *a.DestructiveHint && !*a.ReadOnlyHint, *a.IdempotentHint}
			for i, want := range []bool{l.readOnly, l.destructive, l.idempotent} {
				total++
				if got[i] == want {
					agree++
				}
			}
		}
		b.ReportMetric(100*float64(agree)/float64(total), "hints-agree-%")
		b.ReportMetric(100*float64(adds)/float64(tools), "descriptions-add-%")
	}
}
