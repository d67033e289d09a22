// Package etcd runs the gateway in front of a real etcd server, started in
// the test process by etcd's own embed package: its key-value store,
// transactions, leases and, above all, its Watch, an open-ended stream the
// gateway serves as a watch window (docs/etcd.md, docs/streaming.md). etcd
// serves no gRPC reflection, so the gateway reads its API from
// testdata/etcd.binpb, the descriptor set of the etcd API module's
// registered files (TestEtcdDescriptorSet keeps it current). It holds
// tests only.
package etcd
