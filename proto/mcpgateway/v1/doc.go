// Package mcpgatewayv1 holds the Go code generated from
// mcpgateway/v1/annotations.proto: the method and service options through
// which a backend's owners shape the MCP tools the gateway derives from
// their API (see proto/README.md). Read them with reflection.ToolOptions
// and reflection.ServiceOptions, which also work on descriptors that came
// from a backend or a descriptor set rather than from this package.
package mcpgatewayv1
