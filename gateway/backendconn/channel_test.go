package backendconn

import (
	"encoding/json"
	"slices"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

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
