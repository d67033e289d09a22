package main

import (
	"cmp"
	"crypto"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/grpc-mcp-gateway/gateway/gateway"
	"github.com/grpc-mcp-gateway/gateway/gateway/exchange"
	"github.com/grpc-mcp-gateway/gateway/gateway/telemetry"
)

// exchangeSettings are one backend's token exchange (RFC 8693): from the
// --backend-token-exchange flags, or from a backend's token_exchange: in
// the config file. An entry with token_url replaces the flags for its
// backend; one without names only the backend's audience, resource and
// scope, and takes the token endpoint and the client from the flags
// (resolveExchanges). Each field's help tag is its line in
// docs/configuration.md.
type exchangeSettings struct {
	TokenURL         string   `yaml:"token_url" help:"the authorization server's token endpoint (https, or http to loopback); without it, the --backend-token-exchange flags give the endpoint and the client (client_id, the secret or key), and this entry names the backend's own audience, resource and scope"`
	ClientID         string   `yaml:"client_id" help:"required: the gateway's client id at the authorization server"`
	ClientSecretFile string   `yaml:"client_secret_file" help:"file holding the client secret (client_secret_basic); or private_key_file"`
	PrivateKeyFile   string   `yaml:"private_key_file" help:"PEM private key (ECDSA P-256, RSA, Ed25519; PKCS#8, SEC 1 or PKCS#1) signing a client assertion (private_key_jwt); or client_secret_file"`
	KeyID            string   `yaml:"key_id" help:"the kid of private_key_file's key, as registered at the authorization server"`
	Audience         string   `yaml:"audience" help:"the backend's name at the authorization server (RFC 8693 audience); audience or resource is required"`
	Resource         string   `yaml:"resource" help:"the backend's URI (RFC 8707 resource)"`
	Scope            []string `yaml:"scope" help:"scopes asked for the backend's token"`
}

// exchangeFlags are the --backend-token-exchange flags.
type exchangeFlags struct {
	s     exchangeSettings
	scope stringList
}

// settings are the flags' settings, nil when --backend-token-exchange is
// not given; the other flags without it are an error.
func (f *exchangeFlags) settings() (*exchangeSettings, error) {
	if f.s.TokenURL == "" {
		s := f.s
		if s.ClientID != "" || s.ClientSecretFile != "" || s.PrivateKeyFile != "" || s.KeyID != "" || s.Audience != "" || s.Resource != "" || len(f.scope) > 0 {
			return nil, settingErrorf("the %s-* flags need %s (the token endpoint URL)", flagName("backend-token-exchange"), flagName("backend-token-exchange"))
		}
		return nil, nil
	}
	s := f.s
	s.Scope = f.scope
	return &s, nil
}

// options checks s and reads its files; setting names it in errors (as
// backendExchange.setting does).
func (s *exchangeSettings) options(setting any) (exchange.Options, error) {
	if s.Audience == "" && s.Resource == "" {
		return exchange.Options{}, settingErrorf("%s: name the backend to the authorization server: an audience (%s, audience) or a resource (%s, resource)", setting, flagName("backend-token-exchange-audience"), flagName("backend-token-exchange-resource"))
	}
	return s.client(setting)
}

// client checks s but for the backend it names (the flags' may name
// none: each backend's token_exchange names its own) and reads its files.
func (s *exchangeSettings) client(setting any) (exchange.Options, error) {
	o := exchange.Options{TokenURL: s.TokenURL, ClientID: s.ClientID, Audience: s.Audience, Resource: s.Resource, Scopes: s.Scope, KeyID: s.KeyID}
	switch {
	case s.ClientID == "":
		return o, settingErrorf("%s: the client id is required (%s, or client_id in a backend's token_exchange)", setting, flagName("backend-token-exchange-client-id"))
	case s.ClientSecretFile == "" && s.PrivateKeyFile == "":
		return o, settingErrorf("%s: a client credential is required: a secret file (%s, client_secret_file) or a private key file (%s, private_key_file)", setting, flagName("backend-token-exchange-secret-file"), flagName("backend-token-exchange-key-file"))
	case s.ClientSecretFile != "" && s.PrivateKeyFile != "":
		return o, settingErrorf("%s: give client_secret_file or private_key_file, not both", setting)
	case s.ClientSecretFile != "":
		b, err := os.ReadFile(s.ClientSecretFile)
		if err != nil {
			return o, settingErrorf("%s: client secret: %w", setting, err)
		}
		if o.ClientSecret = strings.TrimSpace(string(b)); o.ClientSecret == "" {
			return o, settingErrorf("%s: client secret file %s is empty", setting, s.ClientSecretFile)
		}
	case s.PrivateKeyFile != "":
		key, err := readPrivateKey(s.PrivateKeyFile)
		if err != nil {
			return o, settingErrorf("%s: private key: %w", setting, err)
		}
		o.PrivateKey = key
	}
	probe := o
	if probe.Audience == "" && probe.Resource == "" {
		probe.Audience = "-" // the backends name theirs
	}
	if _, err := exchange.New(probe); err != nil {
		return o, settingErrorf("%s: %w", setting, err)
	}
	return o, nil
}

// readPrivateKey reads a PEM private key: PKCS#8, SEC 1 (EC) or PKCS#1
// (RSA).
func readPrivateKey(path string) (crypto.Signer, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	block, _ := pem.Decode(data)
	if block == nil {
		return nil, fmt.Errorf("%s: no PEM block", path)
	}
	var key any
	switch block.Type {
	case "PRIVATE KEY":
		key, err = x509.ParsePKCS8PrivateKey(block.Bytes)
	case "EC PRIVATE KEY":
		key, err = x509.ParseECPrivateKey(block.Bytes)
	case "RSA PRIVATE KEY":
		key, err = x509.ParsePKCS1PrivateKey(block.Bytes)
	default:
		return nil, fmt.Errorf("%s: a PEM %q block; want PRIVATE KEY, EC PRIVATE KEY or RSA PRIVATE KEY", path, block.Type)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	signer, ok := key.(crypto.Signer)
	if !ok {
		return nil, fmt.Errorf("%s: a %T cannot sign", path, key)
	}
	return signer, nil
}

// backendExchange is the token exchange one backend is called with.
type backendExchange struct {
	s *exchangeSettings
	// setting names where it is configured, for errors: a flagName, or
	// the config file's words for a backend's token_exchange (a string,
	// or a settingError that also names a flag).
	setting any
	// o is s checked, its files read.
	o exchange.Options
}

// resolveExchanges decides each backend's token exchange (parsed[i]'s at
// out[i], nil for none) from its token_exchange entry and the flags'
// settings (nil when not given): an entry with token_url is its own, one
// without takes the flags' endpoint and client and names the backend's
// audience, resource and scope, and a backend without an entry takes the
// flags whole.
//
// Two backends are never given the same audience or resource: a token
// the authorization server issues for an audience is good at every
// backend that accepts that audience, so each of the two would receive
// its callers' tokens that are valid at the other, and the less trusted
// one could replay them there. The flags name one audience, so they
// serve one backend whole; with several, each names its own.
func resolveExchanges(parsed []backendAddr, flags *exchangeSettings) ([]*backendExchange, error) {
	out := make([]*backendExchange, len(parsed))
	var whole []string // the backends taking the flags whole
	for i, p := range parsed {
		name := cmp.Or(p.name, p.addr)
		switch f := p.file; {
		case f != nil && f.exchange != nil && f.exchange.TokenURL != "":
			out[i] = &backendExchange{s: f.exchange, setting: f.exchangeSetting}
		case f != nil && f.exchange != nil:
			if flags == nil {
				return nil, settingErrorf("%s: token_url is required, or give %s (with its client id and secret or key) for the token endpoint and client, and name only this backend's audience or resource here", f.exchangeSetting, flagName("backend-token-exchange"))
			}
			s := *flags
			s.Audience, s.Resource, s.Scope = f.exchange.Audience, f.exchange.Resource, f.exchange.Scope
			out[i] = &backendExchange{s: &s, setting: settingErrorf("%s (with %s)", f.exchangeSetting, flagName("backend-token-exchange"))}
		case flags != nil:
			out[i] = &backendExchange{s: flags, setting: flagName("backend-token-exchange")}
			whole = append(whole, name)
		}
	}
	if len(whole) > 1 {
		const fix = "with several backends, name each one's own audience or resource in its token_exchange in the config file (backends[].token_exchange.audience or .resource; the token endpoint and client still come from these flags)"
		if target := cmp.Or(flags.Audience, flags.Resource); target != "" {
			return nil, settingErrorf("%s: backends %s would all be called with tokens for one audience (%s), so each would receive its callers' tokens that are valid at the others; %s", flagName("backend-token-exchange"), strings.Join(whole, ", "), target, fix)
		}
		return nil, settingErrorf("%s: backends %s name no audience or resource; %s", flagName("backend-token-exchange"), strings.Join(whole, ", "), fix)
	}
	// The first backend of each audience and of each resource.
	first := map[[2]string]string{}
	for i, x := range out {
		if x == nil {
			continue
		}
		var err error
		if x.o, err = x.s.options(x.setting); err != nil {
			return nil, err
		}
		for _, target := range [][2]string{{"audience", x.s.Audience}, {"resource", x.s.Resource}} {
			if target[1] == "" {
				continue
			}
			name := cmp.Or(parsed[i].name, parsed[i].addr)
			if other, dup := first[target]; dup {
				return nil, settingErrorf("%s: backend %s: the %s %q is also backend %s's: two backends must not receive tokens for the same %s, or each could use its callers' tokens at the other; give each backend its own",
					x.setting, name, target[0], target[1], other, target[0])
			}
			first[target] = name
		}
	}
	return out, nil
}

// attachExchangers gives each backend that is called as the end user its
// exchanger (resolveExchanges: backends[i] is parsed[i]), reporting to
// metrics.
func attachExchangers(backends []gateway.Backend, parsed []backendAddr, flags *exchangeSettings, metrics *telemetry.Metrics) error {
	xs, err := resolveExchanges(parsed, flags)
	if err != nil {
		return err
	}
	for i := range backends {
		b := &backends[i]
		x := xs[i]
		if x == nil {
			continue
		}
		o := x.o
		name := b.Name
		o.Observe = func(outcome string, d time.Duration) { metrics.TokenExchange(name, outcome, d) }
		if b.TokenExchange, err = exchange.New(o); err != nil {
			return err
		}
	}
	return nil
}
