// A grpc-js server with @grpc/reflection, the reflection implementation
// most Node backends use. descriptors/grpcjs_test.go starts it and discovers
// it through the gateway's reflection client: @grpc/reflection re-encodes
// descriptors through protobufjs, so the gateway's repairs are tested against
// what a real non-Go server sends, not against our guess of it.
//
// Usage: node server.js [PROTO_ROOT] [FILE...]
// Defaults to the zoo demo API (examples/zoo/proto/zoo/v1/zoo.proto) plus
// interop/v1/quirks.proto. It listens on a free loopback port and prints one
// line, "listening 127.0.0.1:PORT", on stdout once it serves; logs go to
// stderr. It stops on SIGTERM, SIGINT or when stdin closes, so a test that
// dies does not leave it behind.
'use strict';

const path = require('node:path');
const grpc = require('@grpc/grpc-js');
const protoLoader = require('@grpc/proto-loader');
const { ReflectionService } = require('@grpc/reflection');

const here = __dirname;
const roots = [
  path.join(here, '../../examples/zoo/proto'),
  path.join(here, '../../proto'), // mcpgateway/v1/annotations.proto, which zoo.proto imports
  path.join(here, 'proto'),
];
const files = process.argv.length > 2
  ? process.argv.slice(2)
  : ['zoo/v1/zoo.proto', 'interop/v1/quirks.proto'];

const definition = protoLoader.loadSync(files, {
  includeDirs: roots,
  keepCase: true,
  longs: String,
  enums: String,
  defaults: false,
  oneofs: true,
});
const loaded = grpc.loadPackageDefinition(definition);

const server = new grpc.Server();
new ReflectionService(definition).addToServer(server);

// GetAnimal answers one fixed animal so the test can make a real call with
// dynamic messages built from the reflected descriptors (maps, enums, nested
// messages and a Timestamp all cross the wire).
server.addService(loaded.zoo.v1.ZooService.service, {
  GetAnimal(call, callback) {
    if (call.request.id !== 'leo') {
      callback({ code: grpc.status.NOT_FOUND, details: `no animal ${call.request.id}` });
      return;
    }
    callback(null, {
      animal: {
        id: 'leo',
        name: 'Leo',
        species: 'SPECIES_LION',
        labels: { diet: 'carnivore' },
        birth_time: { seconds: '1546300800', nanos: 0 },
      },
    });
  },
});
server.addService(loaded.interop.v1.QuirkService.service, {
  Echo(call, callback) {
    callback(null, { outer: call.request.outer, by_name: call.request.by_name });
  },
});

server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, port) => {
  if (err) {
    console.error(`bind: ${err.message}`);
    process.exit(1);
  }
  process.stdout.write(`listening 127.0.0.1:${port}\n`);
});

function stop() {
  server.tryShutdown(() => process.exit(0));
  setTimeout(() => process.exit(0), 2000).unref();
}
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
process.stdin.on('end', stop);
process.stdin.resume();
