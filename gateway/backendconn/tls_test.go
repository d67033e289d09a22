package backendconn

import (
	"testing"

	"github.com/grpc-mcp-gateway/gateway/internal/grpctarget"
)

// TestTransportCredentialsDefault: with no TLS settings a loopback or
// unix-socket backend is plaintext and any other is TLS; --plaintext makes
// any backend plaintext, and a TLS setting makes a loopback one TLS.
func TestTransportCredentialsDefault(t *testing.T) {
	for _, tc := range []struct {
		target string
		cfg    TLS
		want   string // credentials.ProtocolInfo.SecurityProtocol
	}{
		{"api.internal:443", TLS{}, "tls"},
		{"dns:///zoo.default.svc.cluster.local:50051", TLS{}, "tls"},
		{"10.0.0.1:1,10.0.0.2:1", TLS{}, "tls"},
		{"127.0.0.1:50051", TLS{}, "insecure"},
		{"unix:///run/zoo/zoo.sock", TLS{}, "insecure"},
		{"api.internal:443", TLS{Plaintext: true}, "insecure"},
		{"127.0.0.1:50051", TLS{ServerName: "zoo.internal"}, "tls"},
	} {
		tg, err := grpctarget.Parse(tc.target)
		if err != nil {
			t.Fatal(err)
		}
		creds, err := transportCredentials(tg, tc.cfg)
		if err != nil {
			t.Fatal(err)
		}
		if got := creds.Info().SecurityProtocol; got != tc.want {
			t.Errorf("%s %+v: %s, want %s", tc.target, tc.cfg, got, tc.want)
		}
	}
}
