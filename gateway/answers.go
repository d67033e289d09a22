package gateway

import (
	"context"
	"fmt"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/connectivity"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"
)

// A connection can look READY and answer nothing: a middlebox that drops
// the path's bytes without closing it (half-open) leaves grpc-go's
// connection state untouched until keepalive notices, minutes later, and
// every call meanwhile waits out its deadline. The gateway notices it the
// way a call does: when a call to a backend ends at DEADLINE_EXCEEDED, it
// asks the same connection for a grpc.health.v1 Check with answerTimeout.
// Any answer, an error status included (UNIMPLEMENTED from a backend
// without the health service), shows bytes flow, and a slow method's
// deadline is then no more than that. No answer marks the backend
// unanswering in /readyz (not ready, with the reason) and it is asked
// again every answerRetry until it answers; the backend_unanswered gauge
// is 1 meanwhile. A healthy backend whose calls do not time out is never
// asked anything.
const (
	answerTimeout = 5 * time.Second
	answerRetry   = time.Second
)

// watchAnswers asks b's connection whether it answers each time a call
// timed out, and keeps asking while it does not.
func (g *Gateway) watchAnswers(ctx context.Context, b *backendState) {
	metrics := g.opts.Telemetry.Metrics
	for {
		select {
		case <-ctx.Done():
			return
		case <-b.ask:
		}
		for {
			since := time.Now()
			answered := askBackend(ctx, b)
			if ctx.Err() != nil {
				return
			}
			b.mu.Lock()
			was := b.unanswered
			switch {
			case answered:
				b.unanswered = ""
			case was == "":
				b.unanswered = fmt.Sprintf("the connection is open but the backend answered no health check within %v (since %s): calls end at DEADLINE_EXCEEDED; a half-open connection or a stalled backend",
					answerTimeout, since.UTC().Format(time.RFC3339))
			}
			now := b.unanswered
			// Under b.mu, so the gauge never disagrees with what /readyz
			// read.
			metrics.SetBackendUnanswered(b.b.Name, now != "")
			b.mu.Unlock()
			switch {
			case was == "" && now != "":
				g.opts.Logger.Warn("backend does not answer; not ready until it does", "backend", b.b.Name, "timeout", answerTimeout.String())
			case was != "" && now == "":
				g.opts.Logger.Info("backend answers again", "backend", b.b.Name)
			}
			if answered {
				break
			}
			select {
			case <-ctx.Done():
				return
			case <-time.After(answerRetry):
			}
		}
		// Calls that timed out while it was being asked are answered by
		// the answer just had.
		select {
		case <-b.ask:
		default:
		}
	}
}

// askBackend reports whether b's connection answers a health check
// within answerTimeout, with any status, or is not READY.
func askBackend(ctx context.Context, b *backendState) bool {
	ctx, cancel := context.WithTimeout(ctx, answerTimeout)
	defer cancel()
	err := b.b.Conn.Invoke(ctx, healthpb.Health_Check_FullMethodName, &healthpb.HealthCheckRequest{}, &healthpb.HealthCheckResponse{})
	if status.Code(err) != codes.DeadlineExceeded {
		return true
	}
	// A connection still connecting also lets the deadline pass; its
	// state already says it is not ready, and says it better.
	return b.conn != nil && b.conn.GetState() != connectivity.Ready
}
