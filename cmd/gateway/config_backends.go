package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
	"reflect"
	"slices"
	"time"

	"github.com/grpc-mcp-gateway/gateway/descriptors"
	"github.com/grpc-mcp-gateway/gateway/gateway"
	"github.com/grpc-mcp-gateway/gateway/gateway/auth"
	"github.com/grpc-mcp-gateway/gateway/gateway/backendconn"
	"github.com/grpc-mcp-gateway/gateway/internal/grpctarget"
	"github.com/grpc-mcp-gateway/gateway/internal/methodglob"
)

// fileBackends checks the file's backends and compiles each into what dial
// needs. Every error names the line and the key.
func fileBackends(ctx context.Context, backends []fileBackend, doc *configDoc, protoCache string, oauth bool) ([]backendAddr, error) {
	var out []backendAddr
	names := map[string]string{}
	for i, fb := range backends {
		key := fmt.Sprintf("backends[%d]", i)
		if fb.Address == "" {
			return nil, fmt.Errorf("%s: %s: address is required (HOST:PORT or a gRPC target such as dns:///HOST:PORT or unix:///PATH)", doc.at(key), key)
		}
		if err := grpctarget.Check(fb.Address); err != nil {
			return nil, doc.errorf(key+".address", "%w", err)
		}
		switch {
		case fb.Name == "" && len(backends) > 1:
			return nil, fmt.Errorf("%s: %s: name is required when there are several backends", doc.at(key), key)
		case fb.Name != "":
			if err := gateway.ValidBackendName(fb.Name); err != nil {
				return nil, doc.errorf(key+".name", "%w", err)
			}
			if first, dup := names[fb.Name]; dup {
				return nil, doc.errorf(key+".name", "the name %q is used twice (first at %s)", fb.Name, first)
			}
			names[fb.Name] = doc.at(key + ".name")
		}
		b := &fileBackendSettings{}
		var err error
		if b.tls, err = fb.checkTLS(doc, key); err != nil {
			return nil, err
		}
		if len(fb.Metadata) > 0 {
			if b.backend.Metadata, err = gateway.ParseMetadata(pairs(fb.Metadata)); err != nil {
				return nil, doc.errorf(key+".metadata", "%w", err)
			}
		}
		for _, l := range []struct {
			field    string
			patterns []string
		}{{"include", fb.Include}, {"exclude", fb.Exclude}} {
			for j, p := range l.patterns {
				k := fmt.Sprintf("%s.%s[%d]", key, l.field, j)
				if err := methodglob.Check(k, p); err != nil {
					return nil, fmt.Errorf("%s: %w", doc.at(k), err)
				}
			}
		}
		b.backend.Include, b.backend.Exclude = fb.Include, fb.Exclude
		if fb.TokenExchange != nil {
			if !oauth {
				return nil, doc.errorf(key+".token_exchange", "needs --oauth-jwks-url: it exchanges the caller's OAuth token")
			}
			setting := doc.at(key+".token_exchange") + ": " + key + ".token_exchange"
			if x := fb.TokenExchange; x.TokenURL == "" {
				// The flags give the endpoint and the client
				// (resolveExchanges, once the flags are known): a client
				// here would be half of another.
				if x.ClientID != "" || x.ClientSecretFile != "" || x.PrivateKeyFile != "" || x.KeyID != "" {
					return nil, fmt.Errorf("%s: client_id, client_secret_file, private_key_file and key_id go with token_url; without token_url the --backend-token-exchange flags give the token endpoint and the client, and this entry only names the backend's audience, resource and scope", setting)
				}
				if x.Audience == "" && x.Resource == "" {
					return nil, fmt.Errorf("%s: name the backend to the authorization server: an audience or a resource", setting)
				}
			} else if _, err := x.options(setting); err != nil {
				return nil, err
			}
			b.exchange, b.exchangeSetting = fb.TokenExchange, setting
		}
		if err := fb.checkOverrides(doc, key); err != nil {
			return nil, err
		}
		b.backend.CallTimeout, b.backend.StreamTimeout = time.Duration(fb.CallTimeout), time.Duration(fb.StreamTimeout)
		for j, m := range fb.Methods {
			mk := fmt.Sprintf("%s.methods[%d]", key, j)
			if m.Match == "" {
				return nil, fmt.Errorf("%s: %s: match is required (a glob on package.Service/Method)", doc.at(mk), mk)
			}
			if err := methodglob.Check(mk+".match", m.Match); err != nil {
				return nil, fmt.Errorf("%s: %w", doc.at(mk+".match"), err)
			}
			if m.CallTimeout < 0 || m.StreamTimeout < 0 {
				return nil, fmt.Errorf("%s: %s: timeouts must be positive durations", doc.at(mk), mk)
			}
			for _, sc := range m.TokenScope {
				if !auth.ValidScope(sc) {
					return nil, doc.errorf(mk+".token_scope", "%q is not an OAuth scope token", sc)
				}
			}
			b.backend.Methods = append(b.backend.Methods, gateway.MethodSettings{
				Match: m.Match, CallTimeout: time.Duration(m.CallTimeout), StreamTimeout: time.Duration(m.StreamTimeout), Hidden: m.Hidden,
				OperationWait: time.Duration(m.OperationWait), TokenScopes: m.TokenScope,
			})
		}
		if b.backend.Files, err = fb.descriptorFiles(ctx, doc, key, protoCache); err != nil {
			return nil, err
		}
		if fb.NoReflection && b.backend.Files == nil {
			return nil, doc.errorf(key+".no_reflection", "needs descriptor_set or proto on the same backend")
		}
		b.backend.NoReflection = fb.NoReflection
		if err := fb.checkConn(doc, key, &b.conn); err != nil {
			return nil, err
		}
		out = append(out, backendAddr{name: fb.Name, addr: fb.Address, file: b})
	}
	return out, nil
}

// fileBackendSettings is what a config file backend adds to a --backend:
// its own TLS (nil: the gateway-wide flags) and the gateway.Backend
// fields dial copies.
type fileBackendSettings struct {
	tls     *backendconn.TLS
	conn    connOverrides
	backend gateway.Backend
	// exchange is the backend's token_exchange, nil when it has none;
	// exchangeSetting names it (file, line and key) in errors.
	exchange        *exchangeSettings
	exchangeSetting string
}

// checkOverrides refuses a negative duration for a key that overrides a
// gateway-wide setting which, by its declaration, may not be off (a
// backend's call_timeout as --call-timeout), as that setting's own check
// does; 0 leaves the gateway-wide setting in force.
func (fb *fileBackend) checkOverrides(doc *configDoc, key string) error {
	v := reflect.ValueOf(fb).Elem()
	for i := range v.NumField() {
		f := v.Type().Field(i)
		name := f.Tag.Get("setting")
		d, ok := v.Field(i).Interface().(duration)
		if name == "" || !ok || declared(name).offOK || d >= 0 {
			continue
		}
		if time.Duration(d) == gateway.Off {
			// The file's "off", which a setting that may not be off refuses.
			return doc.errorf(key+"."+f.Tag.Get("yaml"), "want a positive duration (this setting may not be off), got \"off\"")
		}
		return doc.errorf(key+"."+f.Tag.Get("yaml"), "want a positive duration, got %s", time.Duration(d))
	}
	return nil
}

// checkConn validates a backend's connection keys into c.
func (fb *fileBackend) checkConn(doc *configDoc, key string, c *connOverrides) error {
	if fb.LB != nil {
		if err := checkLB(key+".lb", *fb.LB); err != nil {
			return fmt.Errorf("%s: %w", doc.at(key+".lb"), err)
		}
		c.lb = fb.LB
	}
	// 0, the default, leaves the gateway-wide flag in force.
	if fb.Keepalive != nil && *fb.Keepalive != 0 {
		d := time.Duration(*fb.Keepalive)
		if err := checkKeepalive(key+".keepalive", d); err != nil {
			return fmt.Errorf("%s: %w", doc.at(key+".keepalive"), err)
		}
		c.keepalive = &d
	}
	for _, s := range []struct {
		field string
		v     *count
		to    **int
	}{{"max_recv_bytes", fb.MaxRecvBytes, &c.maxRecv}, {"max_send_bytes", fb.MaxSendBytes, &c.maxSend}} {
		if s.v == nil || *s.v == 0 {
			continue
		}
		n := int(*s.v)
		if err := checkMessageBytes(key+"."+s.field, n); err != nil {
			return fmt.Errorf("%s: %w", doc.at(key+"."+s.field), err)
		}
		*s.to = &n
	}
	if fb.Retry != nil {
		on, err := retryOn(key+".retry", *fb.Retry)
		if err != nil {
			return fmt.Errorf("%s: %w", doc.at(key+".retry"), err)
		}
		off := !on
		c.noRetry = &off
	}
	return nil
}

// applyTo copies the per-backend settings into b, which dial has filled
// with the name, address and connection.
func (s *fileBackendSettings) applyTo(b *gateway.Backend) {
	b.Metadata = s.backend.Metadata
	b.CallTimeout, b.StreamTimeout = s.backend.CallTimeout, s.backend.StreamTimeout
	b.Include, b.Exclude = s.backend.Include, s.backend.Exclude
	b.Methods = s.backend.Methods
	if s.backend.Files != nil {
		b.Files, b.NoReflection = s.backend.Files, s.backend.NoReflection
	}
}

// checkTLS validates a backend's TLS keys and loads the files they name,
// so a missing or malformed certificate is reported at its line before
// anything starts. It returns nil when the backend sets no TLS key.
func (fb *fileBackend) checkTLS(doc *configDoc, key string) (*backendconn.TLS, error) {
	if fb.Plaintext == nil && fb.CA == "" && fb.Cert == "" && fb.Key == "" && fb.ServerName == "" {
		return nil, nil
	}
	t := &backendconn.TLS{CAFile: fb.CA, CertFile: fb.Cert, KeyFile: fb.Key, ServerName: fb.ServerName}
	if fb.Plaintext != nil {
		t.Plaintext = *fb.Plaintext
	}
	if t.Plaintext && (fb.CA != "" || fb.Cert != "" || fb.Key != "" || fb.ServerName != "") {
		return nil, doc.errorf(key+".plaintext", "plaintext cannot be combined with ca, cert, key or server_name")
	}
	if fb.CA != "" {
		pem, err := os.ReadFile(fb.CA)
		if err != nil {
			return nil, doc.errorf(key+".ca", "%w", err)
		}
		if !x509.NewCertPool().AppendCertsFromPEM(pem) {
			return nil, doc.errorf(key+".ca", "%s: no PEM certificates found", fb.CA)
		}
	}
	if (fb.Cert == "") != (fb.Key == "") {
		k := key + ".cert"
		if fb.Cert == "" {
			k = key + ".key"
		}
		return nil, doc.errorf(k, "cert and key must be given together")
	}
	if fb.Cert != "" {
		if _, err := tls.LoadX509KeyPair(fb.Cert, fb.Key); err != nil {
			return nil, doc.errorf(key+".cert", "%w", err)
		}
	}
	return t, nil
}

// descriptorFiles reads or compiles a backend's own descriptor files.
func (fb *fileBackend) descriptorFiles(ctx context.Context, doc *configDoc, key, protoCache string) (descriptors.Source, error) {
	if len(fb.ProtoPath) > 0 && len(fb.Proto) == 0 {
		return nil, doc.errorf(key+".proto_path", "needs proto")
	}
	if len(fb.DescriptorSet) > 0 && len(fb.Proto) > 0 {
		return nil, doc.errorf(key+".proto", "descriptor_set and proto: choose one way to give descriptor files")
	}
	src, fromProto, err := descriptorSource(ctx, fb.DescriptorSet, fb.ProtoPath, fb.Proto, protoCache)
	switch {
	case err != nil && fromProto:
		return nil, doc.errorf(key+".proto", "%w", err)
	case err != nil:
		return nil, doc.errorf(key+".descriptor_set", "%w", err)
	}
	return src, nil
}

// pairs are a mapping's entries as KEY=VALUE, sorted by key.
func pairs(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k, v := range m {
		out = append(out, k+"="+v)
	}
	slices.Sort(out)
	return out
}
