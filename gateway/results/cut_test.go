package results_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"go.uber.org/goleak"

	"github.com/grpc-mcp-gateway/gateway/gateway/results"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// items is {"items":[{"id":"item-0","n":0},...],"nextPageToken":"t"}.
func items(n int) []byte {
	var b strings.Builder
	b.WriteString(`{"items":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"id":"item-%d","n":%d}`, i, i)
	}
	b.WriteString(`],"nextPageToken":"t"}`)
	return []byte(b.String())
}

func decode(t *testing.T, js []byte) map[string]any {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal(js, &v); err != nil {
		t.Fatalf("not a JSON object: %v\n%s", err, js)
	}
	return v
}

func TestFitUnderBudgetIsTheInput(t *testing.T) {
	js := items(10)
	f := results.Fit(js, len(js), results.Shape{Member: "truncated"})
	if &f.JSON[0] != &js[0] || f.Cut || len(f.Records) != 0 || f.Member != "" {
		t.Fatalf("a result within budget must come back as it is: %+v", f)
	}
	if f := results.Fit(js, 0, results.Shape{Member: "truncated"}); &f.JSON[0] != &js[0] {
		t.Fatal("budget 0 means no limit")
	}
}

func TestFitArrays(t *testing.T) {
	js := items(1200)
	f := results.Fit(js, 2000, results.Shape{Member: "truncated"})
	if len(f.JSON) > 2000 {
		t.Fatalf("%d bytes over the budget of 2000", len(f.JSON))
	}
	v := decode(t, f.JSON)
	kept := len(v["items"].([]any))
	if kept < 50 || kept > 120 {
		t.Fatalf("kept %d items; want as many as fit (about 80)", kept)
	}
	if v["nextPageToken"] != "t" {
		t.Fatal("members after the cut array must stay")
	}
	want := results.Record{Path: "items", Kept: kept, Total: 1200}
	if !f.Cut || f.Member != "truncated" || len(f.Records) != 1 || f.Records[0] != want {
		t.Fatalf("records %+v, want [%+v]", f.Records, want)
	}
	recs := v["truncated"].([]any)
	if got := recs[0].(map[string]any); got["path"] != "items" || got["kept"] != float64(kept) || got["total"] != 1200.0 {
		t.Fatalf("records member %v", recs)
	}
	// One more element must not have fitted.
	more := results.Fit(items(kept+1), 1<<20, results.Shape{Member: "truncated"})
	if len(more.JSON)+len(`,"truncated":[{"path":"items","kept":1000,"total":1200}]`) <= 2000 {
		t.Fatal("the cut kept fewer elements than fit")
	}
}

func TestFitNestedArraysAndPaths(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"groups":[`)
	for g := range 30 {
		if g > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"name":"g%d","tags":[`, g)
		for i := range 30 {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `"tag-%d"`, i)
		}
		b.WriteString(`],"labels":{"a.b":["x","y","z","w","v","u"]}}`)
	}
	b.WriteString(`]}`)
	f := results.Fit([]byte(b.String()), 700, results.Shape{Member: "truncated"})
	if len(f.JSON) > 700 {
		t.Fatalf("%d bytes", len(f.JSON))
	}
	decode(t, f.JSON)
	if f.Records[0].Path != "groups[0].tags" || f.Records[0].Total != 30 {
		t.Fatalf("first record %+v, want groups[0].tags of 30", f.Records[0])
	}
	found := false
	for _, r := range f.Records {
		if r.Path == `groups[0].labels["a.b"]` {
			found = true
		}
	}
	if !found {
		t.Fatalf(`no record for a member name that is not an identifier: %+v`, f.Records)
	}
}

func TestFitStrings(t *testing.T) {
	// Multi-byte characters and escapes count as one character each and
	// are never split.
	long := strings.Repeat(`é\n\ud83d\ude00x`, 2000) // 4 characters a round
	js := []byte(`{"name":"keep-me","body":"` + long + `","short":"` + strings.Repeat("s", 200) + `"}`)
	f := results.Fit(js, 3000, results.Shape{Member: "truncated"})
	if len(f.JSON) > 3000 {
		t.Fatalf("%d bytes", len(f.JSON))
	}
	v := decode(t, f.JSON)
	if !utf8.Valid(f.JSON) {
		t.Fatal("cut inside a UTF-8 sequence")
	}
	r := f.Records[0]
	if r.Path != "body" || r.Total != 8000 || r.Unit != results.UnitCharacters {
		t.Fatalf("record %+v", r)
	}
	if n := utf8.RuneCountInString(v["body"].(string)); n != r.Kept {
		t.Fatalf("body has %d characters, the record says %d", n, r.Kept)
	}
	var whole map[string]string
	if err := json.Unmarshal(js, &whole); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(whole["body"], v["body"].(string)) {
		t.Fatal("the kept body is not the start of the body")
	}
	// The largest cut that fits: one more character (at most 12 bytes,
	// a surrogate pair's escapes, and a digit more in "kept") would not.
	if slack := 3000 - len(f.JSON); slack >= 13 {
		t.Fatalf("%d bytes of the budget left unused: the body could keep more", slack)
	}
	if v["name"] != "keep-me" || len(v["short"].(string)) != 200 {
		t.Fatal("short strings must stay whole")
	}
}

func TestFitNameClash(t *testing.T) {
	js := []byte(`{"messages":[` + strings.Repeat(`"m",`, 300) + `"m"],"truncated":false}`)
	f := results.Fit(js, 500, results.Shape{Member: "truncated"})
	if !f.Cut || f.Member != "_truncated" {
		t.Fatalf("%+v", f)
	}
	v := decode(t, f.JSON)
	if v["truncated"] != false || v["_truncated"] == nil {
		t.Fatalf("the result's own member must stay, the records go beside it: %s", f.JSON)
	}
}

func TestFitMergesEarlierRecords(t *testing.T) {
	earlier := results.Record{Path: "messages", Kept: 301, Total: -1, Reason: "stopped"}.AppendJSON(nil)
	js := []byte(`{"messages":[` + strings.Repeat(`"m",`, 300) + `"m"],"truncated":[` + string(earlier) + `],"error":"x"}`)
	f := results.Fit(js, 500, results.Shape{Member: "truncated", Merge: true})
	if len(f.JSON) > 500 || f.Member != "truncated" {
		t.Fatalf("%d bytes, member %q", len(f.JSON), f.Member)
	}
	v := decode(t, f.JSON)
	recs := v["truncated"].([]any)
	first, second := recs[0].(map[string]any), recs[1].(map[string]any)
	if len(recs) != 2 || first["reason"] != "stopped" || first["total"] != nil || second["total"] != 301.0 || v["error"] != "x" {
		t.Fatalf("earlier record first, then the cut: %s", f.JSON)
	}
}

func TestFitWhole(t *testing.T) {
	var b strings.Builder
	b.WriteString("{")
	for i := range 400 {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"field%d":%d`, i, i)
	}
	b.WriteString("}")
	f := results.Fit([]byte(b.String()), 600, results.Shape{Member: "truncated"})
	v := decode(t, f.JSON)
	rec := v["truncated"].([]any)[0].(map[string]any)
	if len(v) != 1 || rec["path"] != "" || rec["kept"] != 0.0 || rec["total"] != 400.0 || rec["unit"] != "members" || len(f.JSON) > 600 {
		t.Fatalf("%s", f.JSON)
	}
}

// manyMembers is an object of n members, none of them an array or a long
// string, so only the last resort can make it smaller.
func manyMembers(n int) string {
	var b strings.Builder
	b.WriteString("{")
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"field%d":%d`, i, i)
	}
	b.WriteString("}")
	return b.String()
}

// TestFitLastResortKeepsRequired: the last resort keeps the root members
// the schema requires (cut as far as arrays and strings go) and drops the
// rest, so the result still matches its schema; when what is required is
// itself over the budget, the result is too, rather than not matching.
func TestFitLastResortKeepsRequired(t *testing.T) {
	long := strings.Repeat("x", 2000)
	js := []byte(`{"id":"` + long + `","tags":["a","b"],"attrs":` + manyMembers(400) + `,"note":"n"}`)
	f := results.Fit(js, 1024, results.Shape{Member: "truncated", Required: []string{"id", "tags", "absent"}})
	if len(f.JSON) > 1024 {
		t.Fatalf("%d bytes over the budget: %s", len(f.JSON), f.JSON)
	}
	v := decode(t, f.JSON)
	if len(v) != 3 || len(v["id"].(string)) != results.MinStringKeep || len(v["tags"].([]any)) != 0 {
		t.Fatalf("want id (shortened), tags (emptied) and the records only: %s", f.JSON)
	}
	first := f.Records[0]
	if first.Path != "" || first.Kept != 2 || first.Total != 4 || first.Unit != results.UnitMembers {
		t.Fatalf("first record %+v, want the whole result keeping 2 of 4 members", first)
	}
	if len(f.Records) != 3 {
		t.Fatalf("records %+v, want the whole result, then id and tags", f.Records)
	}

	js = []byte(`{"value":` + manyMembers(400) + `}`)
	f = results.Fit(js, 1024, results.Shape{Member: "truncated", Required: []string{"value"}})
	v = decode(t, f.JSON)
	if inner, _ := v["value"].(map[string]any); len(inner) != 400 || len(f.JSON) <= 1024 {
		t.Fatalf("a required member that cannot be cut stays whole, over the budget: %.300s", f.JSON)
	}
	if r := f.Records[0]; r.Kept != 1 || r.Total != 1 {
		t.Fatalf("record %+v, want 1 of 1 members kept", r)
	}

	// Earlier records of a stream are not the result's data: kept, and
	// not counted.
	earlier := results.Record{Path: "messages", Kept: 1, Total: -1, Reason: "stopped"}.AppendJSON(nil)
	js = []byte(`{"messages":["m"],"truncated":[` + string(earlier) + `],"extra":` + manyMembers(400) + `}`)
	f = results.Fit(js, 1024, results.Shape{Member: "truncated", Merge: true, Required: []string{"messages"}})
	v = decode(t, f.JSON)
	recs := v["truncated"].([]any)
	if len(v) != 2 || len(v["messages"].([]any)) != 0 || len(recs) < 2 || recs[0].(map[string]any)["reason"] != "stopped" {
		t.Fatalf("want the emptied messages and the earlier records first: %s", f.JSON)
	}
	if r := f.Records[0]; r.Kept != 1 || r.Total != 2 {
		t.Fatalf("record %+v, want 1 of 2 members kept (messages, of messages and extra)", r)
	}
}

func TestFitRecordCap(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"rows":[`)
	for r := range 100 {
		if r > 0 {
			b.WriteByte(',')
		}
		b.WriteString("[" + strings.Repeat("1,", 49) + "1]")
	}
	b.WriteString(`]}`)
	f := results.Fit([]byte(b.String()), 2500, results.Shape{Member: "truncated"})
	decode(t, f.JSON)
	if len(f.Records) != results.MaxRecords || f.Unlisted == 0 || len(f.JSON) > 2500 {
		t.Fatalf("%d records, %d unlisted, %d bytes", len(f.Records), f.Unlisted, len(f.JSON))
	}
}

// FuzzFit: whatever JSON object comes in, the output is a JSON object
// within the budget whose records member lists what was cut.
func FuzzFit(f *testing.F) {
	f.Add(string(items(100)), 400)
	f.Add(`{"a":"`+strings.Repeat("é", 900)+`","b":[[[1,2],[3]],{"c":["\u00e9\"x"]}]}`, 300)
	f.Add(`{"a" : [ 1 , 2 , 3 ] , "b" : "x" }`, 20)
	f.Fuzz(func(t *testing.T, in string, budget int) {
		if !json.Valid([]byte(in)) || !strings.HasPrefix(in, "{") || budget < 512 || budget > 1<<20 {
			return
		}
		var compact bytes.Buffer
		_ = json.Compact(&compact, []byte(in))
		js := compact.Bytes()
		fit := results.Fit(js, budget, results.Shape{Member: "truncated"})
		if !json.Valid(fit.JSON) {
			t.Fatalf("invalid JSON out of %s:\n%s", js, fit.JSON)
		}
		if len(fit.JSON) > budget {
			t.Fatalf("%d bytes over a budget of %d", len(fit.JSON), budget)
		}
		if len(js) > budget && fit.Member == "" {
			t.Fatal("a cut result must say so")
		}
		// Whatever the cut, a required root member stays.
		var root map[string]json.RawMessage
		if json.Unmarshal(js, &root) != nil {
			return // duplicate names
		}
		for name := range root {
			fit = results.Fit(js, budget, results.Shape{Member: "truncated", Required: []string{name}})
			var out map[string]json.RawMessage
			if err := json.Unmarshal(fit.JSON, &out); err != nil || out[name] == nil {
				t.Fatalf("required %q is missing (%v) from the cut of %s:\n%s", name, err, js, fit.JSON)
			}
			break
		}
	})
}

// BenchmarkFitUnderBudget is the cost every result within its budget pays.
func BenchmarkFitUnderBudget(b *testing.B) {
	js := items(100)
	b.ReportAllocs()
	for b.Loop() {
		results.Fit(js, 1<<20, results.Shape{Member: "truncated"})
	}
}

// BenchmarkFitLongString cuts a result whose one string is 5 MiB to the
// default budget: each pass of the search reads only what the budget can
// hold of it.
func BenchmarkFitLongString(b *testing.B) {
	js := []byte(`{"id":"huge","displayName":"` + strings.Repeat("x", 5<<20) + `"}`)
	b.SetBytes(int64(len(js)))
	b.ReportAllocs()
	for b.Loop() {
		results.Fit(js, 40000, results.Shape{Member: "truncated"})
	}
}

// BenchmarkFitCut cuts a 4 MB result (the stream byte limit) to the
// default budget.
func BenchmarkFitCut(b *testing.B) {
	js := items(150000)
	b.SetBytes(int64(len(js)))
	b.ReportAllocs()
	for b.Loop() {
		results.Fit(js, 40000, results.Shape{Member: "truncated"})
	}
}
