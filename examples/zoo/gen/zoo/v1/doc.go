// Package zoov1 is the Go code generated from examples/zoo/proto/zoo/v1/zoo.proto
// (messages and the ZooService client and server). Do not edit the *.pb.go
// files; regenerate them as examples/zoo/README.md says. This file is
// hand-written and survives regeneration.
package zoov1
