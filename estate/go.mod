module github.com/grpc-mcp-gateway/gateway/estate

go 1.26.8

replace github.com/grpc-mcp-gateway/gateway => ../

require (
	cloud.google.com/go/aiplatform v1.127.1
	cloud.google.com/go/compute v1.75.0
	cloud.google.com/go/pubsub/v2 v2.9.0
	cloud.google.com/go/spanner v1.96.1
	cloud.google.com/go/storage v1.71.0
	github.com/grpc-mcp-gateway/gateway v0.0.0-00010101000000-000000000000
	go.uber.org/goleak v1.3.0
	google.golang.org/grpc v1.85.0
	google.golang.org/protobuf v1.36.12
)

require (
	cloud.google.com/go/iam v1.15.1 // indirect
	cloud.google.com/go/longrunning v1.5.0 // indirect
	github.com/bufbuild/protocompile v0.14.1 // indirect
	golang.org/x/net v0.62.0 // indirect
	golang.org/x/sync v0.25.0 // indirect
	golang.org/x/sys v0.49.0 // indirect
	golang.org/x/text v0.43.0 // indirect
	google.golang.org/genproto v0.0.0-20261012220534-4341edf3f941 // indirect
	google.golang.org/genproto/googleapis/api v0.0.0-20261110000943-09e21b237f2c // indirect
	google.golang.org/genproto/googleapis/rpc v0.0.0-20261110000943-09e21b237f2c // indirect
)
