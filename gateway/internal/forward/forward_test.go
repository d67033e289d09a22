package forward

import (
	"context"
	"maps"
	"net/http"
	"reflect"
	"slices"
	"testing"

	"google.golang.org/grpc/metadata"
)

// TestOutgoingContext pins the per-call metadata: what ctx already
// carries, then Options.Calls.Metadata, the forwarded headers and the backend's
// own Metadata, in that order; nothing at all when none applies; and the
// shared static and backend metadata never written to.
func TestOutgoingContext(t *testing.T) {
	t.Parallel()
	static := metadata.Pairs("x-k", "static", "x-static", "s")
	backend := metadata.Pairs("x-k", "backend", "x-backend", "b")
	header := http.Header{"X-K": {"fwd"}, "X-Other": {"o"}}
	cases := []struct {
		name    string
		forward []string
		static  metadata.MD
		backend metadata.MD
		old     metadata.MD
		want    metadata.MD // nil: ctx returned as is
	}{
		{"nothing", nil, nil, nil, nil, nil},
		{"backend only", nil, nil, backend, nil, metadata.Pairs("x-k", "backend", "x-backend", "b")},
		{"static and backend", nil, static, backend, nil,
			metadata.Pairs("x-k", "static", "x-k", "backend", "x-static", "s", "x-backend", "b")},
		{"all, after ctx's own", []string{"x-k"}, static, backend, metadata.Pairs("x-k", "old"),
			metadata.Pairs("x-k", "old", "x-k", "static", "x-k", "fwd", "x-k", "backend", "x-static", "s", "x-backend", "b")},
		{"forwarded header absent", []string{"x-absent"}, nil, nil, nil, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o, err := New(c.forward, c.static)
			if err != nil {
				t.Fatal(err)
			}
			staticBefore, backendBefore := c.static.Copy(), c.backend.Copy()
			ctx := context.Background()
			if c.old != nil {
				ctx = metadata.NewOutgoingContext(ctx, c.old)
			}
			for range 2 {
				got := o.Context(ctx, header, c.backend)
				if c.want == nil {
					if got != ctx {
						t.Errorf("ctx replaced with nothing to send")
					}
					continue
				}
				md, _ := metadata.FromOutgoingContext(got)
				if !reflect.DeepEqual(md, c.want) {
					t.Errorf("metadata\n got %v\nwant %v", md, c.want)
				}
			}
			if !maps.EqualFunc(c.static, staticBefore, slices.Equal) || !maps.EqualFunc(c.backend, backendBefore, slices.Equal) {
				t.Errorf("shared metadata written to: static %v, backend %v", c.static, c.backend)
			}
		})
	}
}
