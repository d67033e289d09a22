package main

// The config file (--config FILE, YAML) can say everything the flags say,
// plus what only makes sense per backend. examples/config/gateway.yaml
// documents every key.
//
// How the file, the command line and the environment combine is in
// config_apply.go; how the file is decoded, in config_decode.go.
//
// Every scalar and list key is a flag's name in snake_case, and the file
// is applied by setting those flags, so one parser and one validation
// serve both; TestConfigCoversEveryFlag keeps the two in step. Errors name
// the file, the line and the key: "gateway.yaml:7: unknown key "plaintxt"
// in backends[0]".

// fileConfig is the schema of the config file. A nil pointer or an empty
// list means "not set", so the flag's default (or command line) stands.
type fileConfig struct {
	// Backends replaces --backend, with per-backend settings.
	Backends []fileBackend `yaml:"backends"`
	Demo     *bool         `yaml:"demo"`

	Listen            *string   `yaml:"listen"`
	Stdio             *bool     `yaml:"stdio"`
	Plaintext         *bool     `yaml:"plaintext"`
	BackendCA         *string   `yaml:"backend_ca"`
	BackendCert       *string   `yaml:"backend_cert"`
	BackendKey        *string   `yaml:"backend_key"`
	BackendServerName *string   `yaml:"backend_server_name"`
	CallTimeout       *duration `yaml:"call_timeout"`
	StreamTimeout     *duration `yaml:"stream_timeout"`
	MethodTimeout     []string  `yaml:"method_timeout"`
	OperationWait     *duration `yaml:"operation_wait"`
	OperationCancel   *bool     `yaml:"operation_cancel"`
	StreamMaxMessages *count    `yaml:"stream_max_messages"`
	StreamMaxBytes    *count    `yaml:"stream_max_bytes"`
	DiscoveryTimeout  *duration `yaml:"discovery_timeout"`
	ShutdownGrace     *duration `yaml:"shutdown_grace"`
	InputErrors       *string   `yaml:"input_errors"`
	ExposeHealth      *bool     `yaml:"expose_health"`
	ExposeInternal    *bool     `yaml:"expose_internal"`
	ExposeDebugInfo   *bool     `yaml:"expose_debug_info"`
	JSONNames         *string   `yaml:"json_names"`
	ToolMode          *string   `yaml:"tool_mode"`
	ToolBudget        *count    `yaml:"tool_budget"`

	SearchEmbeddings        *string `yaml:"search_embeddings"`
	SearchEmbeddingsModel   *string `yaml:"search_embeddings_model"`
	SearchEmbeddingsKeyFile *string `yaml:"search_embeddings_key_file"`

	MaxResultBytes            *count    `yaml:"max_result_bytes"`
	ResultTTL                 *duration `yaml:"result_ttl"`
	ResultStoreBytes          *count    `yaml:"result_store_bytes"`
	ResultStoreEntries        *count    `yaml:"result_store_entries"`
	ResultStoreBytesPerPrin   *count    `yaml:"result_store_bytes_per_principal"`
	ResultStoreEntriesPerPrin *count    `yaml:"result_store_entries_per_principal"`
	AllowOrigin               []string  `yaml:"allow_origin"`

	AllowedHost          []string `yaml:"allowed_host"`
	AllowUnauthenticated *bool    `yaml:"allow_unauthenticated"`
	AdminListen          *string  `yaml:"admin_listen"`

	MaxRequestBytes    *count    `yaml:"max_request_bytes"`
	WSMaxMessageBytes  *count    `yaml:"ws_max_message_bytes"`
	MaxConcurrentCalls *count    `yaml:"max_concurrent_calls"`
	SessionSecretFile  *string   `yaml:"session_secret_file"`
	SessionTTL         *duration `yaml:"session_ttl"`
	ReadTimeout        *duration `yaml:"read_timeout"`
	MaxInFlight        *count    `yaml:"max_in_flight"`
	MaxInFlightPerPrin *count    `yaml:"max_in_flight_per_principal"`
	MaxTaskPolls       *count    `yaml:"max_task_polls"`
	MaxBatch           *count    `yaml:"max_batch"`
	MaxSessions        *count    `yaml:"max_sessions"`
	MaxSessionsPerPrin *count    `yaml:"max_sessions_per_principal"`
	SessionIdleTimeout *duration `yaml:"session_idle_timeout"`
	WSMaxConnections   *count    `yaml:"ws_max_connections"`

	Include         []string  `yaml:"include"`
	Exclude         []string  `yaml:"exclude"`
	DescriptorSet   []string  `yaml:"descriptor_set"`
	ProtoPath       []string  `yaml:"proto_path"`
	Proto           []string  `yaml:"proto"`
	ProtoCache      *string   `yaml:"proto_cache"`
	NoReflection    *bool     `yaml:"no_reflection"`
	Refresh         *duration `yaml:"refresh"`
	RequireBackends *bool     `yaml:"require_backends"`

	BackendLB           *string   `yaml:"backend_lb"`
	BackendKeepalive    *duration `yaml:"backend_keepalive"`
	BackendMaxRecvBytes *count    `yaml:"backend_max_recv_bytes"`
	BackendMaxSendBytes *count    `yaml:"backend_max_send_bytes"`
	Retry               *string   `yaml:"retry"`

	TLSCert            *string           `yaml:"tls_cert"`
	TLSKey             *string           `yaml:"tls_key"`
	BearerTokensFile   *string           `yaml:"bearer_tokens_file"`
	OAuthJWKSURL       *string           `yaml:"oauth_jwks_url"`
	OAuthIssuer        *string           `yaml:"oauth_issuer"`
	OAuthAudience      *string           `yaml:"oauth_audience"`
	OAuthResource      *string           `yaml:"oauth_resource"`
	OAuthRequiredScope []string          `yaml:"oauth_required_scope"`
	OAuthToolScope     []string          `yaml:"oauth_tool_scope"`
	StrictScopes       *bool             `yaml:"strict_scopes"`
	ForwardClaim       []string          `yaml:"forward_claim"`
	ForwardHeader      []string          `yaml:"forward_header"`
	Metadata           map[string]string `yaml:"metadata"`

	Metrics      *bool   `yaml:"metrics"`
	LogArguments *bool   `yaml:"log_arguments"`
	LogLevel     *string `yaml:"log_level"`
	LogFormat    *string `yaml:"log_format"`
}

// fileBackend is one entry of backends:. TLS keys left out inherit the
// gateway-wide ones (plaintext, backend_ca...) only when the entry sets
// none of its own, so a backend's TLS is always read from one place.
type fileBackend struct {
	Name          string            `yaml:"name"`
	Address       string            `yaml:"address"`
	Plaintext     *bool             `yaml:"plaintext"`
	CA            string            `yaml:"ca"`
	Cert          string            `yaml:"cert"`
	Key           string            `yaml:"key"`
	ServerName    string            `yaml:"server_name"`
	Metadata      map[string]string `yaml:"metadata"`
	Include       []string          `yaml:"include"`
	Exclude       []string          `yaml:"exclude"`
	CallTimeout   duration          `yaml:"call_timeout"`
	StreamTimeout duration          `yaml:"stream_timeout"`
	DescriptorSet []string          `yaml:"descriptor_set"`
	ProtoPath     []string          `yaml:"proto_path"`
	Proto         []string          `yaml:"proto"`
	NoReflection  bool              `yaml:"no_reflection"`
	Methods       []fileMethod      `yaml:"methods"`

	// Connection settings; each left out is the gateway-wide one
	// (backend_lb, backend_keepalive, ...).
	LB           *string   `yaml:"lb"`
	Keepalive    *duration `yaml:"keepalive"`
	MaxRecvBytes *count    `yaml:"max_recv_bytes"`
	MaxSendBytes *count    `yaml:"max_send_bytes"`
	Retry        *string   `yaml:"retry"`
}

// fileMethod is one entry of a backend's methods:, overriding its
// settings for the methods Match selects (the first match wins).
type fileMethod struct {
	Match         string   `yaml:"match"`
	CallTimeout   duration `yaml:"call_timeout"`
	StreamTimeout duration `yaml:"stream_timeout"`
	Hidden        bool     `yaml:"hidden"`
	// OperationWait overrides operation_wait for a long-running method.
	OperationWait duration `yaml:"operation_wait"`
}
