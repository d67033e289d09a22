package scopes_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/grpc-mcp-gateway/gateway/gateway/internal/scopes"
	"github.com/grpc-mcp-gateway/gateway/internal/option"
)

func TestCheck(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		rule string
		bad  string // a fragment of the error; "" for a valid rule
	}{
		{rule: "ZooService_DeleteAnimal"},
		{rule: "zoo.v1.ZooService/DeleteAnimal"},
		{rule: "zoo.v1.ZooService/Delete*"},
		{rule: "zoo.v1.ZooService"},
		{rule: "zoo.v1.*"},
		{rule: "Greeter/*"},
		{rule: "", bad: "empty rule"},
		{rule: "has space", bad: "not a tool name"},
		{rule: "zoo.v1.Zoo/A/B", bad: "more than one '/'"},
		{rule: "/Get", bad: "no service before '/'"},
		{rule: "zoo.v1.Zoo/", bad: "no method after '/'"},
		{rule: "zoo.v1.Zoo/a.b", bad: "a '.' after '/'"},
		{rule: "zoo.v1.Zoo/Get$", bad: `"$" cannot appear`},
		{rule: "zoo.v1.Zoo/[", bad: "syntax error in pattern"},
	} {
		err := scopes.Check("OAuthConfig.ToolScopes", c.rule)
		var oe *option.Error
		switch {
		case c.bad == "" && err != nil:
			t.Errorf("Check(%q) = %v, want nil", c.rule, err)
		case c.bad != "" && (!errors.As(err, &oe) || oe.Option != "OAuthConfig.ToolScopes" || !strings.Contains(oe.Err.Error(), c.bad) ||
			!strings.HasPrefix(oe.Err.Error(), fmt.Sprintf("%q: ", c.rule))):
			t.Errorf("Check(%q) = %v, want an *option.Error on OAuthConfig.ToolScopes quoting the rule and saying %q", c.rule, err, c.bad)
		}
	}
}

func TestCompileSortsAndRefuses(t *testing.T) {
	t.Parallel()
	rs, err := scopes.Compile("ToolScopes", map[string][]string{"zoo.v1.*": {"a"}, "Zoo_Get": {"b"}, "Greeter/Say*": {"c"}})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := rs.Keys(), []string{"Greeter/Say*", "Zoo_Get", "zoo.v1.*"}; !slices.Equal(got, want) {
		t.Errorf("Keys() = %q, want %q", got, want)
	}
	if rs[2].Pattern != "zoo.v1.*/*" || rs[1].Pattern != "" {
		t.Errorf("patterns %q, %q: want zoo.v1.*/* and none for a tool name", rs[2].Pattern, rs[1].Pattern)
	}
	if _, err := scopes.Compile("ToolScopes", map[string][]string{"a b": {"x"}}); err == nil {
		t.Error("Compile accepted a bad rule")
	}
}

func TestResolve(t *testing.T) {
	t.Parallel()
	rs, err := scopes.Compile("ToolScopes", map[string][]string{
		"zoo.v1.*":     {"zoo"},
		"Zoo_Delete":   {"admin", "zoo"},
		"Zoo_WhoAmI":   {"me"},
		"Missing_Tool": {"x"},
	})
	if err != nil {
		t.Fatal(err)
	}
	targets := []scopes.Target{
		{Name: "Zoo_Delete", Local: "Zoo_Delete", Base: "Zoo_Delete", Method: "zoo.v1.Zoo/Delete"},
		{Name: "a_Zoo_WhoAmI", Local: "Zoo_WhoAmI", Base: "Zoo_WhoAmI", Method: "zoo.v1.Zoo/WhoAmI"},
		{Name: "Other_Get", Local: "Other_Get", Base: "Other_Get", Method: "other.Other/Get"},
	}
	var pins scopes.Pins
	res := rs.Resolve(targets, &pins)
	want := [][]string{{"admin", "zoo"}, {"me", "zoo"}, nil}
	for i := range want {
		if !slices.Equal(res.Scopes[i], want[i]) {
			t.Errorf("%s needs %q, want %q", targets[i].Name, res.Scopes[i], want[i])
		}
	}
	if got := res.Unmatched.Keys(); !slices.Equal(got, []string{"Missing_Tool"}) {
		t.Errorf("unmatched %q, want [Missing_Tool]", got)
	}
	if got := res.Renamed["Zoo_WhoAmI"]; !slices.Equal(got, []string{"a_Zoo_WhoAmI"}) {
		t.Errorf("renamed[Zoo_WhoAmI] = %q, want [a_Zoo_WhoAmI]", got)
	}

	// The collision is gone and another backend's tool now has a longer
	// name: the pin keeps the rule on the method it matched.
	later := []scopes.Target{{Name: "b_Zoo_WhoAmI2", Local: "Zoo_WhoAmI2", Base: "Zoo_WhoAmI2", Method: "zoo.v1.Zoo/WhoAmI"}}
	if got := rs.Resolve(later, &pins).Scopes[0]; !slices.Equal(got, []string{"me", "zoo"}) {
		t.Errorf("pinned method needs %q, want [me zoo]", got)
	}
	if got := rs.Resolve(later, nil).Scopes[0]; !slices.Equal(got, []string{"zoo"}) {
		t.Errorf("without pins the method needs %q, want [zoo]", got)
	}
	if !errors.Is(fmt.Errorf("x: %w", scopes.ErrUnmatched), scopes.ErrUnmatched) {
		t.Error("ErrUnmatched does not match itself wrapped")
	}
}

func TestViews(t *testing.T) {
	t.Parallel()
	need := [][]string{nil, {"a"}, {"a", "b"}, {"a"}, {"c"}}
	ss := scopes.Index(len(need), func(i int) []string { return need[i] })
	if ss.Len() != 3 {
		t.Fatalf("Len() = %d, want 3 distinct sets", ss.Len())
	}
	holding := func(held ...string) func([]string) bool {
		return func(s []string) bool {
			for _, x := range s {
				if !slices.Contains(held, x) {
					return false
				}
			}
			return true
		}
	}
	if key, keep := ss.View(holding("a", "b", "c")); key != "" || keep != nil {
		t.Errorf("a caller holding every set got view %q", key)
	}
	keyA, keep := ss.View(holding("a"))
	var shown []int
	for i := range need {
		if keep(i) {
			shown = append(shown, i)
		}
	}
	if !slices.Equal(shown, []int{0, 1, 3}) {
		t.Errorf("holding a shows tools %v, want [0 1 3]", shown)
	}
	keyC, _ := ss.View(holding("c"))
	if keyA == keyC || keyA == "" || keyC == "" {
		t.Errorf("views of a and of c have keys %q and %q: want two distinct non-empty keys", keyA, keyC)
	}
	if key, keep := scopes.Index(2, func(int) []string { return nil }).View(holding()); key != "" || keep != nil {
		t.Error("without scoped tools a caller holding nothing does not see all")
	}

	var v scopes.Views[*int]
	one, two := new(int), new(int)
	if _, ok := v.Get("k"); ok {
		t.Error("empty Views has a list")
	}
	if got := v.Keep("k", one); got != one {
		t.Error("Keep did not keep the first list")
	}
	if got := v.Keep("k", two); got != one {
		t.Error("Keep replaced a kept list")
	}
	for i := range scopes.MaxKeptViews {
		v.Keep(fmt.Sprint(i), one)
	}
	if got := v.Keep("over", two); got != two {
		t.Error("Keep past the bound did not hand back the list")
	}
	if _, ok := v.Get("over"); ok {
		t.Errorf("Views kept more than %d lists", scopes.MaxKeptViews)
	}
}

func TestSame(t *testing.T) {
	t.Parallel()
	id := func(s []string) []string { return s }
	a := map[string][]string{"A": {"x"}, "B": nil, "Gone": {"y"}}
	for _, c := range []struct {
		b    map[string][]string
		want bool
	}{
		{map[string][]string{"A": {"x"}, "B": nil}, true},
		{map[string][]string{"A": {"x"}, "New": {"z"}}, true},
		{map[string][]string{"A": {"x", "z"}}, false},
		{map[string][]string{"B": {"x"}}, false},
	} {
		if got := scopes.Same(a, c.b, id); got != c.want {
			t.Errorf("Same(%v, %v) = %v, want %v", a, c.b, got, c.want)
		}
	}
}
