package descriptors

import (
	"context"
	"log/slog"
	"sync"
)

// maxHeldRecords bounds what heldLog keeps: a compile logs a few records
// and one per compiler warning.
const maxHeldRecords = 1000

// heldLog is the log of a compile that started before its ProtoSource had
// a Logger (the gateway compiles its files once while it checks its
// flags, before its logger exists): it keeps the records, and once
// release gives it a handler, replays them there and sends it every
// record after (a compile's cache write goes on in the background). Safe
// for concurrent use.
type heldLog struct {
	mu      sync.Mutex
	records []slog.Record
	dropped int
	to      slog.Handler // set by release
}

func (h *heldLog) logger() *slog.Logger { return slog.New(heldHandler{log: h}) }

// release replays the records kept to to, in order, and sends it the ones
// after.
func (h *heldLog) release(to slog.Handler) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.to != nil {
		return
	}
	h.to = to
	ctx := context.Background()
	for _, r := range h.records {
		if to.Enabled(ctx, r.Level) {
			_ = to.Handle(ctx, r)
		}
	}
	if h.dropped > 0 {
		slog.New(to).Warn("proto files: records of the first compile were not kept", "dropped", h.dropped)
	}
	h.records, h.dropped = nil, 0
}

func (h *heldLog) handle(ctx context.Context, r slog.Record) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	switch {
	case h.to != nil:
		if !h.to.Enabled(ctx, r.Level) {
			return nil
		}
		return h.to.Handle(ctx, r)
	case len(h.records) < maxHeldRecords:
		h.records = append(h.records, r.Clone())
	default:
		h.dropped++
	}
	return nil
}

// heldHandler is a heldLog's slog.Handler, with the attributes of the
// logger it was derived for. A group qualifies the keys after it
// ("group.key", as slog's text handler writes them) instead of nesting
// them: nothing in this package logs in groups.
type heldHandler struct {
	log    *heldLog
	attrs  []slog.Attr
	prefix string
}

func (h heldHandler) Enabled(context.Context, slog.Level) bool { return true }

func (h heldHandler) Handle(ctx context.Context, r slog.Record) error {
	if len(h.attrs) > 0 || h.prefix != "" {
		n := slog.NewRecord(r.Time, r.Level, r.Message, r.PC)
		n.AddAttrs(h.attrs...)
		r.Attrs(func(a slog.Attr) bool {
			a.Key = h.prefix + a.Key
			n.AddAttrs(a)
			return true
		})
		r = n
	}
	return h.log.handle(ctx, r)
}

func (h heldHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	all := append([]slog.Attr(nil), h.attrs...)
	for _, a := range attrs {
		a.Key = h.prefix + a.Key
		all = append(all, a)
	}
	return heldHandler{log: h.log, attrs: all, prefix: h.prefix}
}

func (h heldHandler) WithGroup(name string) slog.Handler {
	if name == "" {
		return h
	}
	return heldHandler{log: h.log, attrs: h.attrs, prefix: h.prefix + name + "."}
}
