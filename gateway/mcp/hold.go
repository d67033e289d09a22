package mcp

import (
	"context"
	"errors"
	"time"
)

// Held requests.
//
// Most requests end when their work does. A few wait on something else
// and would otherwise hold their connection, a slot of MaxInFlight and
// the backend polls they make for as long as the client cares to wait:
// tasks/result waits for a task to finish, subscriptions/listen for
// changes. So every task method is bounded by TaskWaitTimeout and every
// listen by ListenTimeout, and both end when the caller's credential
// expires or is revoked (see [Principal]), exactly as the connections it
// opened do: a credential that ends cannot keep a request polling.

// Why a held request ended, as its context's cause.
var (
	errHeldTooLong       = errors.New("held for its whole limit")
	errCredentialExpired = errors.New(reasonExpired)
	errCredentialRevoked = errors.New(reasonRevoked)
)

// holdContext bounds a request the server holds open: ctx ends after
// limit or when the credential of ctx's principal expires or is revoked,
// whichever comes first, and [context.Cause] tells which
// (errHeldTooLong, errCredentialExpired, errCredentialRevoked). The
// deadline is ctx's own, so what the handler does under it (a
// WaitOperation that lasts the remaining time) sees it. stop releases
// it.
func (s *Server) holdContext(ctx context.Context, limit time.Duration) (held context.Context, stop context.CancelFunc) {
	who := s.principalOf(ctx)
	deadline, cause := time.Now().Add(limit), errHeldTooLong
	if end := who.callEnd(); !end.IsZero() && end.Before(deadline) {
		deadline, cause = end, errCredentialExpired
	}
	ctx, cancel := context.WithCancelCause(ctx)
	ctx, cancelDeadline := context.WithDeadlineCause(ctx, deadline, cause)
	if who.Revoked != nil {
		go func() {
			select {
			case <-who.Revoked:
				cancel(errCredentialRevoked)
			case <-ctx.Done():
			}
		}()
	}
	return ctx, func() {
		cancelDeadline()
		cancel(nil)
	}
}

// heldEnd is the error of a held request whose context ended before its
// handler answered, nil when it has not ended. The client is told why,
// and what to do: ask again, or authenticate again.
func (s *Server) heldEnd(ctx context.Context, info *methodInfo, limit time.Duration) *Error {
	if ctx.Err() == nil {
		return nil
	}
	method := info.name
	switch cause := context.Cause(ctx); cause {
	case errHeldTooLong:
		if info.handler == serveTasksResult {
			return errorf(CodeInternalError, "tasks/result: the task is still working after %s, the longest a request waits for it; call tasks/result again, or poll it with tasks/get", limit)
		}
		return errorf(CodeInternalError, "%s: no answer within %s, the longest a task request may take; retry shortly", method, limit)
	case errCredentialExpired, errCredentialRevoked:
		return errorf(CodeInternalError, "%s: %s; authenticate again and repeat the request", method, cause)
	}
	return errorf(CodeInternalError, "request cancelled")
}
