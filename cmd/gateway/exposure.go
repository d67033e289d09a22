package main

import (
	"net"
	"net/url"
	"strings"

	"github.com/grpc-mcp-gateway/gateway/internal/loopback"
)

// exposure holds the flags that decide who can reach the HTTP endpoints:
// the Host names accepted, whether an address others can reach may serve
// without authentication, and where the operational endpoints listen.
type exposure struct {
	allowedHosts         stringList
	allowUnauthenticated bool
	adminListen          string
}

// check refuses what would expose the tools to anyone who can connect,
// and malformed values.
func (e *exposure) check(c *config) error {
	for _, h := range e.allowedHosts {
		if h == "" || strings.ContainsAny(h, "/ \t@?#") {
			return settingErrorf("%s: want a host name such as mcp.example.com or mcp.example.com:8443, got %q", flagName("allowed-host"), h)
		}
	}
	if c.stdio {
		return nil
	}
	if !loopback.Addr(c.listen) && c.front.bearerTokensFile == "" && c.front.oauthJWKSURL == "" && !e.allowUnauthenticated {
		return settingErrorf("%s %s: not a loopback address, and no authentication is configured, so anyone who can connect could call every tool; "+
			"add %s FILE or %s URL, or listen on 127.0.0.1, "+
			"or pass %s when a proxy or network policy in front already restricts who can connect", flagName("listen"), c.listen, flagName("bearer-tokens-file"), flagName("oauth-jwks-url"), flagName("allow-unauthenticated"))
	}
	if e.adminListen != "" {
		if _, _, err := net.SplitHostPort(e.adminListen); err != nil {
			return settingErrorf("%s: want HOST:PORT, got %q: %w", flagName("admin-listen"), e.adminListen, err)
		}
		if e.adminListen == c.listen {
			return settingErrorf("%s %s: the same address as %s; leave %s out to serve both there", flagName("admin-listen"), e.adminListen, flagName("listen"), flagName("admin-listen"))
		}
	}
	return nil
}

// hosts is the Host allow-list: --allowed-host and the host of
// --oauth-resource, the name clients are told to use.
func (e *exposure) hosts(oauthResource string) []string {
	hosts := append([]string(nil), e.allowedHosts...)
	if u, err := url.Parse(oauthResource); err == nil && u.Host != "" {
		hosts = append(hosts, u.Host)
	}
	return hosts
}
