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
// reachable from the root that can reach themselves.
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
			var want []string
			for v := range n {
				if fromRoot[v] && reach(v)[v] {
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
