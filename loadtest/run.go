package loadtest

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/grpc-mcp-gateway/gateway/gateway"
)

// Op is one kind of client action, timed as a whole.
type Op struct {
	Name   string
	Weight int
	Do     func(ctx context.Context, c Conn) error
}

// Call is an Op of one tools/call of tool with arguments args (JSON).
func Call(name, tool, args string, weight int) Op {
	params := `{"name":"` + tool + `","arguments":` + args + `}`
	return Op{Name: name, Weight: weight, Do: func(ctx context.Context, c Conn) error {
		_, err := c.Call(ctx, "tools/call", params)
		return err
	}}
}

// The zoo's operations the mixes are made of.
var (
	// Unary: a small unary call (GetAnimal, ~0.5 KB of result).
	Unary = Call("unary", "ZooService_GetAnimal", `{"id":"leo"}`, 1)
	// Stream: a server stream of 20 messages (WatchFeedings, no delay
	// between them), collected into one result, with a progress
	// notification per message.
	Stream = Op{Name: "stream", Weight: 1, Do: func(ctx context.Context, c Conn) error {
		_, err := c.Call(ctx, "tools/call", `{"name":"ZooService_WatchFeedings","arguments":{"count":20,"interval":"0s"},"_meta":{"progressToken":"p"}}`)
		return err
	}}
	// Kept: a result cut to the budget (ListAnimals, with the gateway's
	// --max-result-bytes at 1024), then the whole result read back
	// through its resource link.
	Kept = Op{Name: "kept", Weight: 1, Do: func(ctx context.Context, c Conn) error {
		res, err := c.Call(ctx, "tools/call", `{"name":"ZooService_ListAnimals","arguments":{"pageSize":100}}`)
		if err != nil {
			return err
		}
		uri := ResultURI(res)
		if uri == "" {
			return fmt.Errorf("a cut result without a resource link: %.200s", res)
		}
		_, err = c.Call(ctx, "resources/read", `{"uri":"`+uri+`"}`)
		return err
	}}
)

var resultURI = regexp.MustCompile(regexp.QuoteMeta(gateway.ResultURIPrefix) + `[A-Za-z0-9]+`)

// ResultURI is the resource link of a kept result in a tools/call
// result, or "".
func ResultURI(result []byte) string { return string(resultURI.Find(result)) }

// Search is an Op calling search_tools (search mode) with queries in turn.
func Search(queries []string) Op {
	var mu sync.Mutex
	i := 0
	return Op{Name: "search", Weight: 1, Do: func(ctx context.Context, c Conn) error {
		mu.Lock()
		q := queries[i%len(queries)]
		i++
		mu.Unlock()
		args, _ := json.Marshal(map[string]any{"query": q})
		_, err := c.Call(ctx, "tools/call", `{"name":"search_tools","arguments":`+string(args)+`}`)
		return err
	}}
}

// Mix is one load run.
type Mix struct {
	// IdleHTTP sessions each hold a Streamable HTTP GET stream, IdleWS
	// sessions a WebSocket and IdleSSE a legacy HTTP+SSE stream, for the
	// whole run, doing nothing.
	IdleHTTP, IdleWS, IdleSSE int
	// InFlight workers each run Ops (chosen by weight) one after another
	// in a session of their own; WSShare of them (0 to 1) over
	// WebSocket, the others over Streamable HTTP.
	InFlight int
	WSShare  float64
	Ops      []Op
	// The run ends after Duration or MaxOps operations, whichever first.
	Duration time.Duration
	MaxOps   int
	// Timeout bounds each operation (default 30s).
	Timeout time.Duration
}

// Report is what a run measured.
type Report struct {
	Mix     Mix
	Elapsed time.Duration
	Ops     []OpStats
	// GatewayCPU is the gateway's CPU time during the timed part.
	GatewayCPU time.Duration
	// Resident memory of the gateway: before the idle sessions opened,
	// with them open (before the workers), its peak during the run, and
	// after everything closed and settled.
	RSSBase, RSSIdle, RSSPeak, RSSAfter int64
	// Goroutines of the gateway (its go_goroutines metric), likewise.
	GoroutinesBase, GoroutinesIdle, GoroutinesAfter float64
	// The Go heap in use (go_memstats_heap_inuse_bytes) before and after,
	// each read after the same few hundred calls (heapAfterWork): what
	// returns to its baseline once the load is gone, where RSS keeps the
	// pages the runtime has not yet given back.
	HeapBase, HeapAfter float64
	// The heap and the goroutine stacks in use with the idle sessions
	// open: where an idle session's memory goes.
	HeapIdle, StackIdle float64
	Load                string // the machine's load average at the end
	// All is the percentiles over every operation.
	All OpStats
}

// OpStats is one kind of operation's figures.
type OpStats struct {
	Name           string
	N, Errors      int
	FirstErrors    []string
	P50, P99, P999 time.Duration
}

// Total counts every operation and every error.
func (r *Report) Total() (n, errs int) {
	for _, o := range r.Ops {
		n += o.N
		errs += o.Errors
	}
	return n, errs
}

// PerCoreSecond is the operations per second of the gateway's CPU: what
// one core running the gateway alone serves.
func (r *Report) PerCoreSecond() float64 {
	n, _ := r.Total()
	if r.GatewayCPU <= 0 {
		return 0
	}
	return float64(n) / r.GatewayCPU.Seconds()
}

// Run holds mix's idle sessions, runs its workers against g, closes
// everything and waits (at most 10 s) for the gateway's goroutines to
// return to where they were before.
func Run(ctx context.Context, g *Gateway, mix Mix) (*Report, error) {
	if mix.Timeout == 0 {
		mix.Timeout = 30 * time.Second
	}
	hc := &http.Client{Transport: NewTransport()}
	defer hc.CloseIdleConnections()
	r := &Report{Mix: mix}
	var err error
	if r.RSSBase, err = g.RSS(); err != nil {
		return nil, err
	}
	if r.GoroutinesBase, err = g.Metric("go_goroutines", ""); err != nil {
		return nil, err
	}
	if r.HeapBase, err = heapAfterWork(ctx, hc, g); err != nil {
		return nil, err
	}

	idle, err := openIdle(ctx, hc, g.Base, mix.IdleHTTP, mix.IdleWS, mix.IdleSSE)
	defer func() {
		for _, c := range idle {
			_ = c.Close()
		}
	}()
	if err != nil {
		return nil, err
	}
	settle(g)
	r.RSSIdle, _ = g.RSS()
	r.GoroutinesIdle, _ = g.Metric("go_goroutines", "")
	r.HeapIdle, _ = g.Metric("go_memstats_heap_inuse_bytes", "")
	r.StackIdle, _ = g.Metric("go_memstats_stack_inuse_bytes", "")

	workers := make([]Conn, 0, mix.InFlight)
	defer func() {
		for _, c := range workers {
			_ = c.Close()
		}
	}()
	for i := range mix.InFlight {
		c, err := dial(ctx, hc, g.Base, float64(i) < mix.WSShare*float64(mix.InFlight))
		if err != nil {
			return nil, err
		}
		workers = append(workers, c)
	}

	stats := make([]*opRecorder, len(mix.Ops))
	for i, op := range mix.Ops {
		stats[i] = &opRecorder{name: op.Name}
	}
	total := 0
	for _, op := range mix.Ops {
		total += op.Weight
	}
	budget := make(chan struct{}, max(mix.MaxOps, 1))
	for range mix.MaxOps {
		budget <- struct{}{}
	}
	runCtx, cancel := context.WithTimeout(ctx, mix.Duration)
	defer cancel()
	peak := watchRSS(runCtx, g)
	cpu0, _ := g.CPU()
	start := time.Now()
	var wg sync.WaitGroup
	for wi, c := range workers {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(wi), 40))
			for runCtx.Err() == nil {
				if mix.MaxOps > 0 {
					select {
					case <-budget:
					default:
						return
					}
				}
				k := rng.IntN(total)
				i := 0
				for ; k >= mix.Ops[i].Weight; i++ {
					k -= mix.Ops[i].Weight
				}
				opCtx, opCancel := context.WithTimeout(ctx, mix.Timeout)
				t := time.Now()
				err := mix.Ops[i].Do(opCtx, c)
				stats[i].add(time.Since(t), err)
				opCancel()
			}
		})
	}
	wg.Wait()
	r.Elapsed = time.Since(start)
	cpu1, _ := g.CPU()
	r.GatewayCPU = cpu1 - cpu0
	cancel()
	r.RSSPeak = <-peak
	var all []time.Duration
	for _, s := range stats {
		st, lat := s.stats()
		r.Ops = append(r.Ops, st)
		all = append(all, lat...)
	}
	slices.Sort(all)
	r.All = OpStats{Name: "all", P50: Percentile(all, 0.5), P99: Percentile(all, 0.99), P999: Percentile(all, 0.999)}
	for _, c := range workers {
		_ = c.Close()
	}
	workers = workers[:0]
	for _, c := range idle {
		_ = c.Close()
	}
	idle = nil
	hc.CloseIdleConnections()
	r.GoroutinesAfter, err = g.WaitGoroutines(r.GoroutinesBase, 10*time.Second)
	r.RSSAfter, _ = g.RSS()
	if err == nil {
		r.HeapAfter, err = heapAfterWork(ctx, hc, g)
	}
	r.Load = LoadAverage()
	return r, err
}

func dial(ctx context.Context, hc *http.Client, base string, ws bool) (Conn, error) {
	if ws {
		return DialWS(ctx, base)
	}
	return DialHTTP(ctx, hc, base)
}

// openIdle opens the idle sessions, 32 at a time.
func openIdle(ctx context.Context, hc *http.Client, base string, nHTTP, nWS, nSSE int) ([]Conn, error) {
	out := make([]Conn, nHTTP+nWS+nSSE)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var firstErr error
	sem := make(chan struct{}, 32)
	for i := range out {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			var c Conn
			var err error
			if i < nHTTP {
				var s *HTTPSession
				if s, err = DialHTTP(ctx, hc, base); err == nil {
					c = s
					if err = s.OpenStream(ctx); err != nil {
						_ = s.Close()
					}
				}
			} else if i < nHTTP+nWS {
				c, err = DialWS(ctx, base)
			} else {
				c, err = DialSSE(ctx, hc, base)
			}
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				firstErr = cmpErr(firstErr, fmt.Errorf("idle session %d: %w", i, err))
				return
			}
			out[i] = c
		})
	}
	wg.Wait()
	out = slices.DeleteFunc(out, func(c Conn) bool { return c == nil })
	return out, firstErr
}

func cmpErr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

// heapAfterWork makes small calls in a session of its own until the
// gateway's garbage collector has run twice (at most 20,000 calls), then
// reads its heap in use: the Go runtime collects only as a program
// allocates, so right after a load the heap still holds its garbage;
// after this work it holds what is live, plus at most one cycle's
// garbage. The same work comes before the baseline.
func heapAfterWork(ctx context.Context, hc *http.Client, g *Gateway) (float64, error) {
	gc0, err := g.Metric("go_gc_duration_seconds_count", "")
	if err != nil {
		return 0, err
	}
	s, err := DialHTTP(ctx, hc, g.Base)
	if err != nil {
		return 0, err
	}
	defer s.Close()
	for range 100 {
		for range 200 {
			if err := Unary.Do(ctx, s); err != nil {
				return 0, fmt.Errorf("loadtest: a call to read the heap after: %w", err)
			}
		}
		if gc, err := g.Metric("go_gc_duration_seconds_count", ""); err != nil || gc >= gc0+2 {
			break
		}
	}
	return g.Metric("go_memstats_heap_inuse_bytes", "")
}

// settle lets the gateway's memory figures settle after a burst: its
// goroutine count stops moving (at most 2 s).
func settle(g *Gateway) {
	prev := -1.0
	for range 20 {
		n, err := g.Metric("go_goroutines", "")
		if err != nil || n == prev {
			return
		}
		prev = n
		time.Sleep(100 * time.Millisecond) // polling another process
	}
}

// WaitGoroutines waits until the gateway's goroutines are at most base+2
// (its own timers come and go), for at most d, and returns the last count;
// an error when they did not get there.
func (g *Gateway) WaitGoroutines(base float64, d time.Duration) (float64, error) {
	deadline := time.Now().Add(d)
	for {
		n, err := g.Metric("go_goroutines", "")
		if err != nil {
			return n, err
		}
		if n <= base+2 {
			return n, nil
		}
		if time.Now().After(deadline) {
			return n, fmt.Errorf("loadtest: the gateway has %v goroutines %v after the load, %v before", n, d, base)
		}
		time.Sleep(50 * time.Millisecond) // polling another process
	}
}

// watchRSS samples g's RSS every 100 ms until ctx ends, then sends the
// highest.
func watchRSS(ctx context.Context, g *Gateway) <-chan int64 {
	out := make(chan int64, 1)
	go func() {
		var peak int64
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for {
			if rss, err := g.RSS(); err == nil {
				peak = max(peak, rss)
			}
			select {
			case <-ctx.Done():
				out <- peak
				return
			case <-t.C:
			}
		}
	}()
	return out
}

type opRecorder struct {
	name string
	mu   sync.Mutex
	lat  []time.Duration
	errs int
	some []string
}

func (o *opRecorder) add(d time.Duration, err error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if err != nil {
		o.errs++
		if len(o.some) < 3 {
			o.some = append(o.some, err.Error())
		}
		return
	}
	o.lat = append(o.lat, d)
}

func (o *opRecorder) stats() (OpStats, []time.Duration) {
	o.mu.Lock()
	defer o.mu.Unlock()
	sort.Slice(o.lat, func(i, j int) bool { return o.lat[i] < o.lat[j] })
	s := OpStats{Name: o.name, N: len(o.lat) + o.errs, Errors: o.errs, FirstErrors: o.some}
	s.P50, s.P99, s.P999 = Percentile(o.lat, 0.5), Percentile(o.lat, 0.99), Percentile(o.lat, 0.999)
	return s, o.lat
}

// Percentile of sorted latencies (nearest rank); 0 for none.
func Percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(float64(len(sorted))*p+0.5) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

// MiB formats bytes as MiB with one decimal.
func MiB(b int64) string { return fmt.Sprintf("%.1f", float64(b)/(1<<20)) }

func ms(d time.Duration) string { return fmt.Sprintf("%.2f", float64(d)/float64(time.Millisecond)) }

// TableHeader is the header of the Markdown table Row writes.
const TableHeader = "| run | ops | ops/s | ops per gateway CPU-s | errors | p50 ms | p99 ms | p99.9 ms | RSS base / idle / peak / after MiB | heap in use base / after MiB | goroutines base / idle / after | load avg |\n|---|---|---|---|---|---|---|---|---|---|---|---|"

// Row is the report as one row of a Markdown table (TableHeader), named
// name, with per-operation rows after it when the mix has several.
func (r *Report) Row(name string) string {
	n, errs := r.Total()
	var b strings.Builder
	all := r.All
	fmt.Fprintf(&b, "| %s | %d | %.0f | %.0f | %d | %s | %s | %s | %s / %s / %s / %s | %s / %s | %.0f / %.0f / %.0f | %s |",
		name, n, float64(n)/r.Elapsed.Seconds(), r.PerCoreSecond(), errs, ms(all.P50), ms(all.P99), ms(all.P999),
		MiB(r.RSSBase), MiB(r.RSSIdle), MiB(r.RSSPeak), MiB(r.RSSAfter), MiB(int64(r.HeapBase)), MiB(int64(r.HeapAfter)),
		r.GoroutinesBase, r.GoroutinesIdle, r.GoroutinesAfter, r.Load)
	for _, o := range r.Ops {
		if len(o.FirstErrors) > 0 {
			fmt.Fprintf(&b, "\n| ↳ %s: first error | %.300q | | | | | | | | | | |", o.Name, o.FirstErrors[0])
		}
	}
	if len(r.Ops) > 1 {
		for _, o := range r.Ops {
			fmt.Fprintf(&b, "\n| ↳ %s | %d | %.0f | | %d | %s | %s | %s | | | | |", o.Name, o.N, float64(o.N)/r.Elapsed.Seconds(), o.Errors, ms(o.P50), ms(o.P99), ms(o.P999))
		}
	}
	return b.String()
}
