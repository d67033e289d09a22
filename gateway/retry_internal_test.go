package gateway

import (
	"encoding/json"

	"google.golang.org/protobuf/proto"
	"slices"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/grpc-mcp-gateway/gateway/gateway/describe"
	mcpgatewayv1 "github.com/grpc-mcp-gateway/gateway/proto/mcpgateway/v1"
)

// TestSafeToRepeat: the gateway repeats a call only when the method's
// owners declared it idempotent (the option, idempotency_level, the HTTP
// verb), never on a guess from the name's verb, even where the model is
// told the tool is idempotent.
func TestSafeToRepeat(t *testing.T) {
	svc := hintsService(t)
	analyze := func(method string) *describe.Method {
		return describe.Analyze(svc.Methods().ByName(protoreflect.Name(method)), nil)
	}
	for _, m := range []string{"Get", "Put", "Delete", "GetButIdempotent", "RunNoSideEffects"} {
		if !safeToRepeat(analyze(m), nil) {
			t.Errorf("%s: not safe to repeat", m)
		}
	}
	for _, m := range []string{"Post", "Patch", "Frobnicate", "NoRule"} {
		if safeToRepeat(analyze(m), nil) {
			t.Errorf("%s: safe to repeat", m)
		}
	}
	// A read guessed from a name alone is told idempotent but not
	// repeated.
	a := analyze("ListWithoutRule")
	if ann := methodAnnotations(a, nil); !*ann.IdempotentHint || safeToRepeat(a, nil) {
		t.Errorf("ListWithoutRule: idempotentHint %v, repeated %v; want told idempotent, not repeated", *ann.IdempotentHint, safeToRepeat(a, nil))
	}
	// The option wins.
	if !safeToRepeat(a, &mcpgatewayv1.Tool{IdempotentHint: proto.Bool(true)}) || !safeToRepeat(a, &mcpgatewayv1.Tool{ReadOnlyHint: proto.Bool(true)}) {
		t.Error("the option's idempotent_hint or read_only_hint does not make the call repeatable")
	}
	if safeToRepeat(analyze("Get"), &mcpgatewayv1.Tool{IdempotentHint: proto.Bool(false)}) {
		t.Error("the option's idempotent_hint false is not heeded")
	}
}

// TestServiceConfig: the config the gateway gives grpc-go retries exactly
// the safe methods, only on UNAVAILABLE, checks health only when the
// backend serves it, and is one grpc-go accepts.
func TestServiceConfig(t *testing.T) {
	ch := newChannel(LBRoundRobin, true)
	ch.discovered([]string{"/zoo.v1.ZooService/GetAnimal", "/zoo.v1.ZooService/ListAnimals"}, true)
	var sc struct {
		LoadBalancingConfig []map[string]replicasConfig
		HealthCheckConfig   *struct{ ServiceName string }
		MethodConfig        []struct {
			Name        []struct{ Service, Method string }
			RetryPolicy struct {
				MaxAttempts                int
				InitialBackoff, MaxBackoff string
				BackoffMultiplier          float64
				RetryableStatusCodes       []string
			}
		}
	}
	if err := json.Unmarshal([]byte(ch.config), &sc); err != nil {
		t.Fatal(err)
	}
	if len(sc.MethodConfig) != 1 || len(sc.MethodConfig[0].Name) != 2 || sc.MethodConfig[0].Name[0].Method != "GetAnimal" ||
		sc.MethodConfig[0].RetryPolicy.MaxAttempts != retryAttempts || !slices.Equal(sc.MethodConfig[0].RetryPolicy.RetryableStatusCodes, []string{"UNAVAILABLE"}) {
		t.Fatalf("method config %+v", sc.MethodConfig)
	}
	// The policy the README documents: 3 attempts in all, backoff from
	// 0.1s doubling up to 1s.
	if p := sc.MethodConfig[0].RetryPolicy; p.MaxAttempts != 3 || p.InitialBackoff != "0.1s" || p.MaxBackoff != "1s" || p.BackoffMultiplier != 2 {
		t.Errorf("retry policy %+v, want 3 attempts, backoff 0.1s doubling to 1s", p)
	}
	if sc.HealthCheckConfig == nil || sc.LoadBalancingConfig[0][replicasPolicy] != (replicasConfig{Child: LBRoundRobin, Health: true}) {
		t.Errorf("health %+v, balancing %+v", sc.HealthCheckConfig, sc.LoadBalancingConfig)
	}
	cc, err := grpc.NewClient("passthrough:///127.0.0.1:1", grpc.WithTransportCredentials(insecure.NewCredentials()), grpc.WithDefaultServiceConfig(ch.config))
	if err != nil {
		t.Fatalf("grpc-go refuses the service config %s: %v", ch.config, err)
	}
	cc.Close()

	off := newChannel(LBPickFirst, false)
	off.discovered([]string{"/zoo.v1.ZooService/GetAnimal"}, false)
	if off.config != `{"loadBalancingConfig":[{"grpc_mcp_gateway_replicas":{"child":"pick_first"}}]}` {
		t.Errorf("with retries off and no health service: %s", off.config)
	}
}
