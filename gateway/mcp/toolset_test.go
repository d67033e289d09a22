package mcp

import (
	"encoding/json"
	"fmt"
	"testing"
)

// TestToolSetListBytes: ListBytes, computed without encoding the pages, is
// the size of every page a 2025-06-18 client receives, for empty, one-page
// and many-page sets; and pages encoded on first use are the same on every
// call.
func TestToolSetListBytes(t *testing.T) {
	t.Parallel()
	for _, n := range []int{0, 1, 3, 7, 8} {
		var tools []Tool
		for i := range n {
			tl := testTools()[i%len(testTools())]
			tl.Name = fmt.Sprintf("%s_%d", tl.Name, i)
			tools = append(tools, tl)
		}
		ts, err := NewToolList(tools, &ToolListOptions{PageSize: 3})
		if err != nil {
			t.Fatal(err)
		}
		sum, cursor := 0, ""
		for {
			page, ok := ts.page(family20250618, cursor)
			if !ok {
				t.Fatalf("n=%d: cursor %q refused", n, cursor)
			}
			sum += len(page)
			cursor = nextCursorOf(t, page)
			if cursor == "" {
				break
			}
		}
		if got := ts.ListBytes(); got != sum {
			t.Errorf("n=%d: ListBytes %d, pages add up to %d", n, got, sum)
		}
		first, _ := ts.page(family20241105, "")
		again, _ := ts.page(family20241105, "")
		if &first[0] != &again[0] {
			t.Errorf("n=%d: the first page was encoded twice", n)
		}
	}
}

// TestToolSetLargeListNotKept: a list over the kept size is encoded at
// each request, into the same bytes a kept list serves, for every
// revision family and page, and none of it is kept.
func TestToolSetLargeListNotKept(t *testing.T) {
	t.Parallel()
	var tools []Tool
	for i := range 8 {
		tl := testTools()[i%len(testTools())]
		tl.Name = fmt.Sprintf("%s_%d", tl.Name, i)
		tools = append(tools, tl)
	}
	kept, err := NewToolList(tools, &ToolListOptions{PageSize: 3})
	if err != nil {
		t.Fatal(err)
	}
	large, err := NewToolList(tools, &ToolListOptions{PageSize: 3})
	if err != nil {
		t.Fatal(err)
	}
	large.keepLimit = large.ListBytes() - 1
	for f := range numFamilies {
		cursor := ""
		for pages := 0; ; pages++ {
			want, ok := kept.page(f, cursor)
			got, ok2 := large.page(f, cursor)
			if !ok || !ok2 || string(got) != string(want) {
				t.Fatalf("family %d, cursor %q: %s (%v), want %s (%v)", f, cursor, got, ok2, want, ok)
			}
			again, _ := large.page(f, cursor)
			if &again[0] == &got[0] {
				t.Errorf("family %d, cursor %q: the page was kept", f, cursor)
			}
			if cursor = nextCursorOf(t, want); cursor == "" {
				if pages != 2 {
					t.Errorf("family %d: %d pages, want 3", f, pages+1)
				}
				break
			}
		}
		if large.pages[f] != nil {
			t.Errorf("family %d: pages kept", f)
		}
	}
}

// TestToolSetSubset: a subset lists what NewToolList of the same tools
// lists, page by page, for every revision family (cache scope aside),
// measures the same, and refuses the whole set's cursors, as the whole
// set refuses its.
func TestToolSetSubset(t *testing.T) {
	t.Parallel()
	var tools, even []Tool
	for i := range 11 {
		tl := testTools()[i%len(testTools())]
		tl.Name = fmt.Sprintf("%s_%d", tl.Name, i)
		tools = append(tools, tl)
		if i%2 == 0 {
			even = append(even, tl)
		}
	}
	whole, err := NewToolList(tools, &ToolListOptions{PageSize: 2})
	if err != nil {
		t.Fatal(err)
	}
	want, err := NewToolList(even, &ToolListOptions{PageSize: 2, CacheScope: "private"})
	if err != nil {
		t.Fatal(err)
	}
	sub, err := whole.Subset(func(i int) bool { return i%2 == 0 }, "private")
	if err != nil {
		t.Fatal(err)
	}
	if sub.Len() != 6 || sub.ListBytes() != want.ListBytes() {
		t.Errorf("subset: %d tools, %d bytes; want 6, %d", sub.Len(), sub.ListBytes(), want.ListBytes())
	}
	for f := range numFamilies {
		cursor := ""
		for {
			w, ok := want.page(f, cursor)
			g, ok2 := sub.page(f, cursor)
			if !ok || !ok2 || string(g) != string(w) {
				t.Fatalf("family %d, cursor %q: %s (%v), want %s (%v)", f, cursor, g, ok2, w, ok)
			}
			if cursor = nextCursorOf(t, w); cursor == "" {
				break
			}
		}
	}
	first, _ := whole.page(family20250618, "")
	if _, ok := sub.page(family20250618, nextCursorOf(t, first)); ok {
		t.Error("the subset took a cursor of the whole set")
	}
	subFirst, _ := sub.page(family20250618, "")
	if _, ok := whole.page(family20250618, nextCursorOf(t, subFirst)); ok {
		t.Error("the whole set took a cursor of the subset")
	}
	if known, _, _ := sub.resolve(json.RawMessage(`"` + tools[1].Name + `"`)); known != nil {
		t.Errorf("the subset knows %s, which it left out", tools[1].Name)
	}
	if _, err := whole.Subset(func(int) bool { return true }, "shared"); err == nil {
		t.Error("cache scope \"shared\" was taken")
	}
}

func nextCursorOf(t *testing.T, page []byte) string {
	t.Helper()
	var p struct{ NextCursor string }
	if err := json.Unmarshal(page, &p); err != nil {
		t.Fatal(err)
	}
	return p.NextCursor
}

// TestSchemaCompactor: a compact schema comes back as the very slice
// given, a spaced one compacted, an empty one as the default, and what is
// not a JSON object is refused, each time it is asked (a refusal is not
// remembered as an answer).
func TestSchemaCompactor(t *testing.T) {
	var c SchemaCompactor
	compact := json.RawMessage(`{"type":"object"}`)
	for range 2 {
		got, err := c.Compact(compact, "")
		if err != nil || &got[0] != &compact[0] {
			t.Errorf("compact schema: %s %v, want the same slice", got, err)
		}
	}
	spaced := json.RawMessage(`{ "type" : "object" }`)
	for range 2 {
		if got, err := c.Compact(spaced, ""); err != nil || string(got) != `{"type":"object"}` {
			t.Errorf("spaced schema: %s %v", got, err)
		}
	}
	if got, err := c.Compact(nil, `{"type":"object"}`); err != nil || string(got) != `{"type":"object"}` {
		t.Errorf("empty schema: %s %v, want the default", got, err)
	}
	for _, bad := range []string{`{"type":`, `["object"]`} {
		for range 2 {
			if got, err := c.Compact(json.RawMessage(bad), ""); err == nil {
				t.Errorf("%s: %s, want an error", bad, got)
			}
		}
	}
}
