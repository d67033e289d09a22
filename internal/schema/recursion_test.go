package schema

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/types/descriptorpb"
)

// TestRandomGraphs: for random message graphs (self loops, cycles through
// singular, repeated and map fields, shared subtrees), every schema is
// finite, compiles, passes Lint, and its $defs are exactly the messages
// reachable from the root that can reach themselves, plus those the schema
// would otherwise write more than once (found by sharedDefs, a slower and
// independent way than the builder's).
func TestRandomGraphs(t *testing.T) {
	t.Parallel()
	for seed := range uint64(40) {
		r := rand.New(rand.NewPCG(seed, 1))
		const n = 9
		file := &descriptorpb.FileDescriptorProto{
			Name:    proto.String(fmt.Sprintf("graph%d.proto", seed)),
			Package: proto.String("graph"),
			Syntax:  proto.String("proto3"),
		}
		edges := make([][]int, n)
		for i := range n {
			m := msg(fmt.Sprintf("M%d", i), field("id", 1, tString))
			for j := range r.IntN(3) {
				to := r.IntN(n)
				edges[i] = append(edges[i], to)
				num := int32(j + 2)
				name := fmt.Sprintf("f%d", j)
				typ := fmt.Sprintf(".graph.M%d", to)
				switch r.IntN(3) {
				case 0:
					m.Field = append(m.Field, field(name, num, tMessage, typ))
				case 1:
					m.Field = append(m.Field, repeated(field(name, num, tMessage, typ)))
				case 2:
					f, e := mapField(name, num, tInt32, tMessage, fmt.Sprintf(".graph.M%d", i), typ)
					m.Field = append(m.Field, f)
					m.NestedType = append(m.NestedType, e)
				}
			}
			file.MessageType = append(file.MessageType, m)
		}
		fd, err := protodesc.NewFile(file, nil)
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		reach := func(from int) []bool {
			seen := make([]bool, n)
			stack := slices.Clone(edges[from])
			for len(stack) > 0 {
				v := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				if !seen[v] {
					seen[v] = true
					stack = append(stack, edges[v]...)
				}
			}
			return seen
		}
		for root := range n {
			md := fd.Messages().Get(root)
			fromRoot := reach(root)
			fromRoot[root] = true
			defs := make([]bool, n)
			for v := range n {
				defs[v] = fromRoot[v] && reach(v)[v]
			}
			sharedDefs(root, edges, defs, reach)
			var want []string
			for v := range n {
				if defs[v] {
					want = append(want, fmt.Sprintf("graph.M%d", v))
				}
			}
			for _, dir := range []string{"input", "output"} {
				s := mustBuild(t, md, nil, dir)
				compile(t, s)
				if p := Lint(s); len(p) > 0 {
					t.Fatalf("seed %d root M%d: lint %q", seed, root, p)
				}
				var doc struct {
					Defs map[string]json.RawMessage `json:"$defs"`
				}
				if err := json.Unmarshal(s, &doc); err != nil {
					t.Fatal(err)
				}
				var got []string
				for k := range doc.Defs {
					got = append(got, k)
				}
				slices.Sort(got)
				if diff := cmp.Diff(want, got); diff != "" {
					t.Fatalf("seed %d root %s %s: $defs (-want +got):\n%s", seed, md.FullName(), dir, diff)
				}
			}
		}
	}
}

// sharedDefs adds to defs, one at a time, the messages that writing the
// schema would write more than once: it writes the schema (the root inline,
// every def once, and the root again when it is a def), counting each
// message's references, and moves into defs a message referenced at least
// twice that no other such message reaches (so that its count is final),
// until there is none.
func sharedDefs(root int, edges [][]int, defs []bool, reach func(int) []bool) {
	n := len(edges)
	for {
		count := make([]int, n)
		var walk func(v int)
		walk = func(v int) {
			for _, w := range edges[v] {
				count[w]++
				if !defs[w] {
					walk(w)
				}
			}
		}
		walk(root)
		for d := range n {
			if defs[d] {
				walk(d)
			}
		}
		var cands []int
		for v := range n {
			if !defs[v] && v != root && count[v] >= 2 {
				cands = append(cands, v)
			}
		}
		picked := -1
		for _, w := range cands {
			top := true
			for _, u := range cands {
				if u != w && reach(u)[w] {
					top = false
				}
			}
			if top {
				picked = w
				break
			}
		}
		if picked < 0 {
			return
		}
		defs[picked] = true
	}
}
