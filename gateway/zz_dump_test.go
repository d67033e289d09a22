package gateway_test
import ("testing";"context";"fmt";"github.com/grpc-mcp-gateway/gateway/gateway")
func TestZZDump(t *testing.T) {
	b := startBackend(t)
	g, _ := newGateway(t, []gateway.Backend{dialBackend(t, "zoo", b.addr)}, &gateway.Options{Include: []string{"*/GetAnimal"}})
	rc, err := g.ReadResource(context.Background(), "grpc://zoo/zoo.v1.ZooService")
	fmt.Println(rc.Text, err)
}
