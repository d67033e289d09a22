package gateway_test

import (
	"net"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/net/dns/dnsmessage"

	"github.com/grpc-mcp-gateway/gateway/gateway"
	"github.com/grpc-mcp-gateway/gateway/gateway/backendconn"
	"github.com/grpc-mcp-gateway/gateway/internal/testkit"
)

// dnsServer is a DNS server on a loopback UDP port that answers every A
// query with its addresses (set, to change them), and every other query
// with no records: the smallest real resolver for grpc-go's dns resolver
// to ask.
type dnsServer struct {
	addr    string
	queries atomic.Int32 // A queries answered
	ips     atomic.Pointer[[]net.IP]
}

// set makes the server answer with ips from now on.
func (s *dnsServer) set(ips ...net.IP) { s.ips.Store(&ips) }

func startDNS(t *testing.T, ips ...net.IP) *dnsServer {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &dnsServer{addr: pc.LocalAddr().String()}
	s.set(ips...)
	done := make(chan struct{})
	t.Cleanup(func() {
		pc.Close()
		<-done
	})
	go func() {
		defer close(done)
		buf := make([]byte, 1500)
		for {
			n, from, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			if resp, ok := s.answer(buf[:n], *s.ips.Load()); ok {
				_, _ = pc.WriteTo(resp, from)
			}
		}
	}()
	return s
}

func (s *dnsServer) answer(query []byte, ips []net.IP) ([]byte, bool) {
	var p dnsmessage.Parser
	h, err := p.Start(query)
	if err != nil {
		return nil, false
	}
	q, err := p.Question()
	if err != nil {
		return nil, false
	}
	b := dnsmessage.NewBuilder(nil, dnsmessage.Header{ID: h.ID, Response: true, Authoritative: true, RecursionDesired: h.RecursionDesired, RecursionAvailable: true})
	b.EnableCompression()
	_ = b.StartQuestions()
	_ = b.Question(q)
	_ = b.StartAnswers()
	if q.Type == dnsmessage.TypeA {
		s.queries.Add(1)
		for _, ip := range ips {
			var a [4]byte
			copy(a[:], ip.To4())
			_ = b.AResource(dnsmessage.ResourceHeader{Name: q.Name, Class: dnsmessage.ClassINET, TTL: 1}, dnsmessage.AResource{A: a})
		}
	}
	msg, err := b.Finish()
	return msg, err == nil
}

// TestDNSTargetTwoAddresses: dns://SERVER/zoo.test:PORT, where the DNS
// server answers with two addresses (127.0.0.1 and 127.0.0.2, each a zoo
// on PORT), gives a backend with two replicas, both serving and both
// getting calls.
func TestDNSTargetTwoAddresses(t *testing.T) {
	t.Parallel()
	lisA := listenLoopback(t)
	port := lisA.Addr().(*net.TCPAddr).Port
	lisB, err := net.Listen("tcp", net.JoinHostPort("127.0.0.2", strconv.Itoa(port)))
	if err != nil {
		t.Skipf("127.0.0.2:%d is not available here: %v", port, err)
	}
	a, b := startReplica(t, lisA, nil), startReplica(t, lisB, nil)
	dns := startDNS(t, net.IPv4(127, 0, 0, 1), net.IPv4(127, 0, 0, 2))

	target := "dns://" + dns.addr + "/zoo.test:" + strconv.Itoa(port)
	// Both addresses are loopback, but the gateway cannot know that of a
	// name before resolving it: plaintext is asked for.
	_, base := newGateway(t, []gateway.Backend{dialTarget(t, "zoo", target, backendconn.Options{TLS: backendconn.TLS{Plaintext: true}})}, nil)
	waitServing(t, base, 2, 2)
	cs := connect(t, base+"/mcp", "2025-11-25")
	for range 10 {
		if res := call(t, cs, "ZooService_GetAnimal", map[string]any{"id": "leo"}); res.IsError {
			t.Fatal(text(t, res))
		}
	}
	if a.count("GetAnimal") == 0 || b.count("GetAnimal") == 0 {
		t.Errorf("calls per replica: %d and %d, want both > 0", a.count("GetAnimal"), b.count("GetAnimal"))
	}
	if dns.queries.Load() == 0 {
		t.Error("the DNS server was never asked")
	}
}

// TestDNSTargetScaledUp: when the name gains an address (a Deployment
// scaled up behind a headless Service), the new replica is picked up at
// the next refresh, though no connection failed: grpc-go re-resolves only
// when asked, and a refresh asks.
func TestDNSTargetScaledUp(t *testing.T) {
	t.Parallel()
	lisA := listenLoopback(t)
	port := lisA.Addr().(*net.TCPAddr).Port
	lisB, err := net.Listen("tcp", net.JoinHostPort("127.0.0.2", strconv.Itoa(port)))
	if err != nil {
		t.Skipf("127.0.0.2:%d is not available here: %v", port, err)
	}
	startReplica(t, lisA, nil)
	b := startReplica(t, lisB, nil)
	dns := startDNS(t, net.IPv4(127, 0, 0, 1))
	target := "dns://" + dns.addr + "/zoo.test:" + strconv.Itoa(port)
	_, base := newGateway(t, []gateway.Backend{dialTarget(t, "zoo", target, backendconn.Options{TLS: backendconn.TLS{Plaintext: true}})},
		&gateway.Options{Catalog: gateway.CatalogOptions{Refresh: 50 * time.Millisecond}})
	waitServing(t, base, 1, 1)

	dns.set(net.IPv4(127, 0, 0, 1), net.IPv4(127, 0, 0, 2))
	waitServing(t, base, 2, 2)
	cs := connect(t, base+"/mcp", "2025-11-25")
	testkit.WaitFor(t, "a call to reach the new replica", func() bool {
		if res := call(t, cs, "ZooService_GetAnimal", map[string]any{"id": "leo"}); res.IsError {
			t.Fatal(text(t, res))
		}
		return b.count("GetAnimal") > 0
	})
}
