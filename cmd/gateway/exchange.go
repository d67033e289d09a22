package main

import (
	"crypto"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/grpc-mcp-gateway/gateway/gateway"
	"github.com/grpc-mcp-gateway/gateway/gateway/exchange"
	"github.com/grpc-mcp-gateway/gateway/gateway/telemetry"
)

// exchangeSettings are one backend's token exchange (RFC 8693): from the
// --backend-token-exchange flags for every backend, or from a backend's
// token_exchange: in the config file, which replaces them for it. Each
// field's help tag is its line in docs/configuration.md.
type exchangeSettings struct {
	TokenURL         string   `yaml:"token_url" help:"required: the authorization server's token endpoint (https, or http to loopback)"`
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

func (f *exchangeFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.s.TokenURL, "backend-token-exchange", "", "call every backend as the end user: exchange each caller's OAuth token at this token endpoint URL (RFC 8693) for one meant for the backend, sent as its authorization; needs --oauth-jwks-url. A backend's token_exchange in the config file replaces these flags for it")
	fs.StringVar(&f.s.ClientID, "backend-token-exchange-client-id", "", "the gateway's client id at the authorization server")
	fs.StringVar(&f.s.ClientSecretFile, "backend-token-exchange-secret-file", "", "FILE holding the client secret (client_secret_basic)")
	fs.StringVar(&f.s.PrivateKeyFile, "backend-token-exchange-key-file", "", "PEM private key FILE signing a client assertion instead of a secret (private_key_jwt)")
	fs.StringVar(&f.s.KeyID, "backend-token-exchange-key-id", "", "the kid of --backend-token-exchange-key-file's key")
	fs.StringVar(&f.s.Audience, "backend-token-exchange-audience", "", "the backend's name at the authorization server (audience)")
	fs.StringVar(&f.s.Resource, "backend-token-exchange-resource", "", "the backend's URI (resource, RFC 8707)")
	fs.Var(&f.scope, "backend-token-exchange-scope", "a scope asked for the backend's token (repeatable)")
}

// settings are the flags' settings, nil when --backend-token-exchange is
// not given; the other flags without it are an error.
func (f *exchangeFlags) settings() (*exchangeSettings, error) {
	if f.s.TokenURL == "" {
		s := f.s
		if s.ClientID != "" || s.ClientSecretFile != "" || s.PrivateKeyFile != "" || s.KeyID != "" || s.Audience != "" || s.Resource != "" || len(f.scope) > 0 {
			return nil, errors.New("the --backend-token-exchange-* flags need --backend-token-exchange (the token endpoint URL)")
		}
		return nil, nil
	}
	s := f.s
	s.Scope = f.scope
	return &s, nil
}

// options checks s and reads its files; setting names it in errors.
func (s *exchangeSettings) options(setting string) (exchange.Options, error) {
	o := exchange.Options{TokenURL: s.TokenURL, ClientID: s.ClientID, Audience: s.Audience, Resource: s.Resource, Scopes: s.Scope, KeyID: s.KeyID}
	switch {
	case s.ClientID == "":
		return o, fmt.Errorf("%s: the client id is required (--backend-token-exchange-client-id, or client_id in a backend's token_exchange)", setting)
	case s.ClientSecretFile == "" && s.PrivateKeyFile == "":
		return o, fmt.Errorf("%s: a client credential is required: a secret file (--backend-token-exchange-secret-file, client_secret_file) or a private key file (--backend-token-exchange-key-file, private_key_file)", setting)
	case s.Audience == "" && s.Resource == "":
		return o, fmt.Errorf("%s: name the backend to the authorization server: an audience (--backend-token-exchange-audience, audience) or a resource (--backend-token-exchange-resource, resource)", setting)
	case s.ClientSecretFile != "" && s.PrivateKeyFile != "":
		return o, fmt.Errorf("%s: give client_secret_file or private_key_file, not both", setting)
	case s.ClientSecretFile != "":
		b, err := os.ReadFile(s.ClientSecretFile)
		if err != nil {
			return o, fmt.Errorf("%s: client secret: %w", setting, err)
		}
		if o.ClientSecret = strings.TrimSpace(string(b)); o.ClientSecret == "" {
			return o, fmt.Errorf("%s: client secret file %s is empty", setting, s.ClientSecretFile)
		}
	case s.PrivateKeyFile != "":
		key, err := readPrivateKey(s.PrivateKeyFile)
		if err != nil {
			return o, fmt.Errorf("%s: private key: %w", setting, err)
		}
		o.PrivateKey = key
	}
	if _, err := exchange.New(o); err != nil {
		return o, fmt.Errorf("%s: %w", setting, err)
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

// attachExchangers gives each backend that is called as the end user its
// exchanger, reporting to metrics: the one its config file entry sets
// (parsed[i].file, for backends[i]), else the flags' (flags, nil for
// none).
func attachExchangers(backends []gateway.Backend, parsed []backendAddr, flags *exchangeSettings, metrics *telemetry.Metrics) error {
	for i := range backends {
		b := &backends[i]
		s, setting := flags, "--backend-token-exchange"
		if f := parsed[i].file; f != nil && f.exchange != nil {
			s, setting = f.exchange, fmt.Sprintf("backend %s: token_exchange", b.Name)
		}
		if s == nil {
			continue
		}
		o, err := s.options(setting)
		if err != nil {
			return err
		}
		name := b.Name
		o.Observe = func(outcome string, d time.Duration) { metrics.TokenExchange(name, outcome, d) }
		if b.TokenExchange, err = exchange.New(o); err != nil {
			return err
		}
	}
	return nil
}
