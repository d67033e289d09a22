package schema

import (
	"bytes"
	"errors"
	"runtime"
	"strings"
	"testing"

	"google.golang.org/protobuf/types/dynamicpb"
)

// hostileArgs are 4 MiB arguments of Kitchen that are wrong everywhere,
// in the shapes that cost most to explain: many small wrong values in a
// list, many unknown members, many objects each missing something, many
// values a rule rejects after conversion, stringified documents.
func hostileArgs() map[string][]byte {
	const size = 4 << 20
	fill := func(head, item, tail string) []byte {
		var b bytes.Buffer
		b.WriteString(head)
		for i := 0; b.Len()+len(item)+len(tail) < size; i++ {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(item)
		}
		b.WriteString(tail)
		return b.Bytes()
	}
	return map[string][]byte{
		"wrong list elements":    fill(`{"doubles":[`, `"x"`, `]}`),
		"wrong map values":       fill(`{"strMap":{`, `"k":1`, `}}`),
		"unknown members":        fill(`{`, `"nope":1`, `}`),
		"objects with bad parts": fill(`{"nestedList":[`, `{"label":1,"counts":["x"],"z":0}`, `]}`),
		"closed enum in list":    fill(`{"colors":[`, `"PURPLE"`, `]}`),
		"stringified list":       []byte(`{"doubles":` + strings.ReplaceAll(string(fill(`"[`, `\"x\"`, `]"`)), "\n", "") + `}`),
	}
}

// TestExplainCostIsBounded: a 4 MiB argument with hundreds of thousands
// of invalid values is answered with MaxExplained violations and a count
// of the rest, and the whole Decode allocates a small multiple of the
// input. Bytes allocated in total bound the peak heap from above whatever
// the garbage collector does, so the assertion is about memory, not time,
// and cannot flake on a loaded machine. (The time is shown by
// BenchmarkDecodeHostile.)
func TestExplainCostIsBounded(t *testing.T) {
	md := testMessage(t, "schematest.v1.Kitchen")
	v := mustValidator(t, md, nil)
	for name, args := range hostileArgs() {
		t.Run(name, func(t *testing.T) {
			m := dynamicpb.NewMessage(md)
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			err := v.Decode(args, m)
			runtime.ReadMemStats(&after)
			var ve *ValidationError
			if !errors.As(err, &ve) {
				t.Fatalf("Decode = %v, want a ValidationError", err)
			}
			if len(ve.Violations) != MaxExplained || ve.Omitted < 100_000 {
				t.Errorf("%d explained, %d omitted; want %d explained and the rest (>100000) counted", len(ve.Violations), ve.Omitted, MaxExplained)
			}
			if !strings.HasSuffix(ve.Error(), " more") {
				t.Errorf("Error() does not end with the count of the rest: ...%s", ve.Error()[max(0, len(ve.Error())-80):])
			}
			// 48 MiB = twelve times the input, in total: protojson's
			// first attempt (which copies strings as it parses), the
			// repaired copy, the conversion of what survives, and garbage.
			const budget = 48 << 20
			if got := after.TotalAlloc - before.TotalAlloc; got > budget {
				t.Errorf("Decode of %d bytes allocated %d MiB, want at most %d MiB", len(args), got>>20, budget>>20)
			}
		})
	}
}

// BenchmarkDecodeHostile is the time and memory of explaining each
// hostile 4 MiB argument (the goal: under 1 s and 64 MiB).
func BenchmarkDecodeHostile(b *testing.B) {
	md := testMessage(b, "schematest.v1.Kitchen")
	v := mustValidator(b, md, nil)
	for name, args := range hostileArgs() {
		b.Run(strings.ReplaceAll(name, " ", "-"), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(args)))
			for b.Loop() {
				if v.Decode(args, dynamicpb.NewMessage(md)) == nil {
					b.Fatal("accepted")
				}
			}
		})
	}
}
