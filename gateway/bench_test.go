package gateway_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/encoding/protowire"

	zoov1 "github.com/grpc-mcp-gateway/gateway/examples/zoo/gen/zoo/v1"
	"github.com/grpc-mcp-gateway/gateway/gateway/backendconn"
	"github.com/grpc-mcp-gateway/gateway/gateway/internal/transcode"
	"github.com/grpc-mcp-gateway/gateway/internal/jsonscan"
	"github.com/grpc-mcp-gateway/gateway/internal/testkit"
)

// BenchmarkUnary measures the same small unary call (GetAnimal) made
// directly over gRPC, as tools/call through the gateway over Streamable
// HTTP, and through "floor", the least an HTTP-to-gRPC hop can do for one
// JSON-RPC tools/call (floorHandler): the floor a gateway could reach
// without MCP's sessions, validation, limits or observation. Each runs
// against one in-process backend, at 1, 8 and 32 calls in flight. The
// HTTP client is a bare client posting a pre-encoded stateless
// (2026-07-28) request, so the difference is the server side's cost.
//
//	go test -run '^$' -bench '^BenchmarkUnary$' -benchmem ./gateway/
func BenchmarkUnary(b *testing.B) {
	conn, gw, fl := unaryRig(b)
	client := zoov1.NewZooServiceClient(conn)
	direct := func() error {
		_, err := client.GetAnimal(context.Background(), &zoov1.GetAnimalRequest{Id: "leo"})
		return err
	}
	if err := direct(); err != nil {
		b.Fatal(err)
	}
	viaGateway := func() error { return postGetAnimal(gw) }
	viaFloor := func() error { return postGetAnimal(fl) }

	for _, c := range []struct {
		name string
		call func() error
	}{{"direct", direct}, {"gateway", viaGateway}, {"floor", viaFloor}} {
		b.Run(c.name+"/inflight=1", func(b *testing.B) {
			lat := make([]time.Duration, 0, b.N)
			b.ReportAllocs()
			defer reportCPU(b)()
			for b.Loop() {
				start := time.Now()
				if err := c.call(); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(start))
			}
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
		})
		for _, n := range []int{8, 32} {
			b.Run(fmt.Sprintf("%s/inflight=%d", c.name, n), func(b *testing.B) {
				b.ReportAllocs()
				defer reportCPU(b)()
				b.SetParallelism((n + runtime.GOMAXPROCS(0) - 1) / runtime.GOMAXPROCS(0))
				var once sync.Once
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						if err := c.call(); err != nil {
							once.Do(func() { b.Error(err) })
							return
						}
					}
				})
			})
		}
	}
}

// BenchmarkUnaryPaired measures the gateway against the floor as
// BenchmarkUnary does, but in alternating batches of pairedBatch calls
// within one run, so both sides meet the same machine: on a shared
// machine the speed of a core drifts by 20% between runs a few seconds
// apart, which BenchmarkUnary's separate runs take for a difference. One
// op is one call through each. It reports each side's CPU per call (the
// whole process's, as BenchmarkUnary's cpu-µs/op) and the two ratios the
// goal is stated in: gateway-cpu/floor-cpu and throughput, floor time
// over gateway time (at least 1.0 meets the goal).
//
//	go test -run '^$' -bench '^BenchmarkUnaryPaired$' -benchtime 20000x -count 3 ./gateway/
func BenchmarkUnaryPaired(b *testing.B) {
	_, gw, fl := unaryRig(b)
	for _, n := range []int{1, 8, 32} {
		b.Run(fmt.Sprintf("inflight=%d", n), func(b *testing.B) {
			// One batch of each first, unmeasured, so both start warm.
			pairedBatch(b, gw, n, pairedBatchSize)
			pairedBatch(b, fl, n, pairedBatchSize)
			var gwCPU, flCPU, gwWall, flWall time.Duration
			for left := b.N; left > 0; left -= pairedBatchSize {
				k := min(left, pairedBatchSize)
				c, w := pairedBatch(b, gw, n, k)
				gwCPU, gwWall = gwCPU+c, gwWall+w
				c, w = pairedBatch(b, fl, n, k)
				flCPU, flWall = flCPU+c, flWall+w
			}
			if flCPU > 0 {
				b.ReportMetric(float64(gwCPU.Microseconds())/float64(b.N), "gw-cpu-µs/op")
				b.ReportMetric(float64(flCPU.Microseconds())/float64(b.N), "floor-cpu-µs/op")
				b.ReportMetric(float64(gwCPU)/float64(flCPU), "cpu-ratio")
			}
			b.ReportMetric(float64(flWall)/float64(gwWall), "throughput-ratio")
		})
	}
}

// unaryRig starts what BenchmarkUnary and BenchmarkUnaryPaired measure:
// a backend, the gateway in front of it and the floor handler, with a
// connection to the backend for the floor (and direct calls), gw and fl
// posting stateless GetAnimal calls to the gateway and to the floor. Both
// have answered once, the same structuredContent, so a benchmark cannot
// time failures.
func unaryRig(b *testing.B) (conn *backendconn.Conn, gw, fl *testkit.Client) {
	bk, _, url := startGateway(b, nil)
	conn, err := backendconn.Dial(bk.addr, backendconn.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { conn.Close() })
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	b.Cleanup(hc.CloseIdleConnections)
	gw = statelessCaller(hc, url, "ZooService_GetAnimal", "")
	fh, err := newFloorHandler(conn.ClientConn)
	if err != nil {
		b.Fatal(err)
	}
	floor := httptest.NewServer(fh)
	b.Cleanup(floor.Close)
	fl = statelessCaller(hc, floor.URL, "ZooService_GetAnimal", "")
	if gwOut, flOut := structuredContent(b, gw), structuredContent(b, fl); gwOut != flOut {
		b.Fatalf("the floor answers %s, the gateway %s", flOut, gwOut)
	}
	return conn, gw, fl
}

// pairedBatchSize is BenchmarkUnaryPaired's batch: long enough (tens of
// milliseconds) that starting and ending one costs little, short enough
// that the machine's speed does not change within a pair.
const pairedBatchSize = 500

// pairedBatch makes k calls through c, n in flight, and returns the
// process CPU and the wall time they took.
func pairedBatch(b *testing.B, c *testkit.Client, n, k int) (cpu, wall time.Duration) {
	var next atomic.Int64
	var wg sync.WaitGroup
	var once sync.Once
	cpu0, start := processCPU(b), time.Now()
	for range n {
		wg.Go(func() {
			for next.Add(1) <= int64(k) {
				if err := postGetAnimal(c); err != nil {
					once.Do(func() { b.Error(err) })
					return
				}
			}
		})
	}
	wg.Wait()
	return processCPU(b) - cpu0, time.Since(start)
}

// structuredContent posts getAnimalBody with c (a statelessCaller of
// ZooService_GetAnimal) and returns the answer's structuredContent.
func structuredContent(b *testing.B, c *testkit.Client) string {
	req, err := c.NewRequest(b.Context(), getAnimalBody)
	if err != nil {
		b.Fatal(err)
	}
	resp, err := c.HTTP.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		Result struct {
			StructuredContent json.RawMessage `json:"structuredContent"`
		} `json:"result"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || len(out.Result.StructuredContent) == 0 {
		b.Fatalf("%s: no structuredContent (%v)", c.URL, err)
	}
	return string(out.Result.StructuredContent)
}

// floorHandler is BenchmarkUnary's floor: the least an HTTP-to-gRPC hop
// does for a JSON-RPC tools/call of GetAnimal. It reads the POST into a
// pooled buffer, takes the request's id and its arguments' id with a
// scan, encodes the gRPC request by hand, calls the backend with a codec
// that passes wire bytes through (prepared once), renders the response
// with the gateway's own transcoder (compiled once) and writes the
// JSON-RPC answer with the result as text and as structuredContent, as
// the gateway does. No sessions, validation, limits, logs or metrics;
// bad input is answered 400, not diagnosed.
type floorHandler struct {
	conn *grpc.ClientConn
	enc  *transcode.Encoder
	bufs sync.Pool // *floorBufs
}

type floorBufs struct{ body, req, js, out []byte }

var (
	floorCall = grpc.ForceCodecV2(floorCodec{})
	hvJSON    = []string{"application/json"}
)

func newFloorHandler(conn *grpc.ClientConn) (*floorHandler, error) {
	enc, err := transcode.Compile((&zoov1.GetAnimalResponse{}).ProtoReflect().Descriptor(), nil)
	if err != nil {
		return nil, err
	}
	h := &floorHandler{conn: conn, enc: enc}
	h.bufs.New = func() any {
		return &floorBufs{body: make([]byte, 0, 1024), js: make([]byte, 0, 1024), out: make([]byte, 0, 4096)}
	}
	return h, nil
}

func (h *floorHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	bufs := h.bufs.Get().(*floorBufs)
	defer h.bufs.Put(bufs)
	body := bufs.body[:0]
	for {
		if len(body) == cap(body) {
			body = slices.Grow(body, 1024)
		}
		n, err := r.Body.Read(body[len(body):cap(body)])
		body = body[:len(body)+n]
		if err == io.EOF {
			break
		}
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
	}
	bufs.body = body
	var rpcID, animal []byte
	jsonscan.Object(body, func(key, val []byte) {
		switch string(key) {
		case "id":
			rpcID = val
		case "params":
			jsonscan.Object(val, func(key, val []byte) {
				if string(key) == "arguments" {
					jsonscan.Object(val, func(key, val []byte) {
						if string(key) == "id" && len(val) >= 2 {
							animal = val[1 : len(val)-1] // the zoo's ids need no unescaping
						}
					})
				}
			})
		}
	})
	if rpcID == nil || animal == nil {
		http.Error(w, "not a tools/call of GetAnimal", http.StatusBadRequest)
		return
	}
	bufs.req = protowire.AppendBytes(protowire.AppendTag(bufs.req[:0], 1, protowire.BytesType), animal)
	var resp floorFrame
	if err := h.conn.Invoke(r.Context(), "/zoo.v1.ZooService/GetAnimal", floorFrame(bufs.req), &resp, floorCall); err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	js, err := h.enc.AppendJSON(bufs.js[:0], resp)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	bufs.js = js
	out := append(bufs.out[:0], `{"jsonrpc":"2.0","id":`...)
	out = append(out, rpcID...)
	out = append(out, `,"result":{"content":[{"type":"text","text":"`...)
	out = appendEscaped(out, js)
	out = append(out, `"}],"structuredContent":`...)
	out = append(out, js...)
	out = append(out, `}}`...)
	bufs.out = out
	w.Header()["Content-Type"] = hvJSON
	_, _ = w.Write(out)
}

// appendEscaped appends JSON text src as the inside of a JSON string:
// quotes and backslashes escaped (transcoded JSON holds no control
// characters outside its strings' escapes).
func appendEscaped(dst, src []byte) []byte {
	start := 0
	for i, c := range src {
		if c == '"' || c == '\\' {
			dst = append(dst, src[start:i]...)
			dst = append(dst, '\\', c)
			start = i + 1
		}
	}
	return append(dst, src[start:]...)
}

// floorFrame is a message in wire form, both ways.
type floorFrame []byte

// floorCodec passes floorFrames through: the request as encoded, the
// response copied out of gRPC's buffers.
type floorCodec struct{}

func (floorCodec) Marshal(v any) (mem.BufferSlice, error) {
	return mem.BufferSlice{mem.SliceBuffer(v.(floorFrame))}, nil
}

func (floorCodec) Unmarshal(data mem.BufferSlice, v any) error {
	*v.(*floorFrame) = data.Materialize()
	return nil
}

func (floorCodec) Name() string { return "proto" }

// getAnimalBody is a stateless (2026-07-28) tools/call of GetAnimal,
// encoded once so the benchmarks time the gateway, not the client.
var getAnimalBody = []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ZooService_GetAnimal","arguments":{"id":"leo"},` +
	`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`)

// statelessCaller is a raw client of the MCP endpoint at url that sends
// stateless (2026-07-28) tools/calls of tool through hc, with token as a
// bearer token unless it is empty. Its headers are made once, so a
// benchmark's loop pays only for the request.
func statelessCaller(hc *http.Client, url, tool, token string) *testkit.Client {
	h := testkit.MethodHeaders("tools/call", tool)
	if token != "" {
		h["Authorization"] = []string{"Bearer " + token}
	}
	return &testkit.Client{URL: url, Header: h, Version: "2026-07-28", HTTP: hc}
}

// postGetAnimal posts getAnimalBody with c (a statelessCaller of
// ZooService_GetAnimal) and reads the whole answer; an answer other than
// 200 is an error.
func postGetAnimal(c *testkit.Client) error {
	req, err := c.NewRequest(context.Background(), getAnimalBody)
	if err != nil {
		return err
	}
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return err
	}
	_, err = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return &httpStatusError{resp.StatusCode}
	}
	return err
}

type httpStatusError struct{ code int }

func (e *httpStatusError) Error() string { return http.StatusText(e.code) }
