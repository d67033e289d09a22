package descriptors_test

import (
	"context"
	"fmt"
	"log"

	"github.com/grpc-mcp-gateway/gateway/descriptors"
)

// A backend's API from its .proto sources, with their comments, when the
// backend has no reflection service or the sources say more than it does.
// Every source returns the same Result.
func ExampleNewProtoSource() {
	src := descriptors.NewProtoSource([]string{"../examples/zoo/proto"}, []string{"zoo/v1/zoo.proto"})
	res, err := src.Discover(context.Background())
	if err != nil {
		log.Fatal(err)
	}
	for _, s := range res.Services {
		fmt.Println(s.FullName(), s.Methods().Len(), "methods")
		m := s.Methods().ByName("GetAnimal")
		fmt.Println(res.Comments.Location(m).LeadingComments != "")
	}
	// Output:
	// zoo.v1.ZooService 12 methods
	// true
}
