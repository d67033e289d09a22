package backendconn

import (
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// TestExceededLimit: grpc-go's own size checks, in the words grpc-go
// v1.85 uses, are recognised by the limit they name; a backend's
// RESOURCE_EXHAUSTED (its quota, its own receive limit) or another code
// with the same words is not.
func TestExceededLimit(t *testing.T) {
	t.Parallel()
	c := &Conn{limits: limits{recv: 8, send: 16}}
	for _, tc := range []struct {
		code  codes.Code
		msg   string
		limit int
		sent  bool
	}{
		{codes.ResourceExhausted, "grpc: received message larger than max (9 vs. 8)", 8, false},
		{codes.ResourceExhausted, "grpc: message after decompression larger than max (9 vs. 8)", 8, false},
		{codes.ResourceExhausted, "grpc: received message after decompression larger than max 8", 8, false},
		{codes.ResourceExhausted, "trying to send message larger than max (17 vs. 16)", 16, true},
		// The backend's own receive limit, which is not the gateway's.
		{codes.ResourceExhausted, "grpc: received message larger than max (17 vs. 4)", 0, false},
		{codes.ResourceExhausted, "trying to send message larger than max (9 vs. 8)", 0, false},
		{codes.ResourceExhausted, "quota exceeded", 0, false},
		{codes.Unavailable, "grpc: received message larger than max (9 vs. 8)", 0, false},
	} {
		limit, sent := c.ExceededLimit(status.New(tc.code, tc.msg))
		if limit != tc.limit || sent != tc.sent {
			t.Errorf("%s %q: limit %d sent %v, want %d %v", tc.code, tc.msg, limit, sent, tc.limit, tc.sent)
		}
	}
}
