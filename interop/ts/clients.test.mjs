// Drives `wharf serve` over stdio with the official TypeScript SDK clients: v1 (2025 sessions)
// and v2 (2025 sessions, and 2026-07-28 stateless requests after `server/discover`). With
// WHARF_MCP_URL set, the same clients speak Streamable HTTP to that URL instead (scripts/test
// points it at a fleet of instances behind nginx); with WHARF_MCP_UNIX, to `wharf serve --unix`
// on that socket, through Node's `socketPath`.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport as StdioV1 } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport as HttpV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  LoggingMessageNotificationSchema,
  ResourceUpdatedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { Client as ClientV2, StreamableHTTPClientTransport as HttpV2 } from '@modelcontextprotocol/client';

import { unixTarget } from './unix-fetch.mjs';
import { StdioClientTransport as StdioV2 } from '@modelcontextprotocol/client/stdio';

const here = path.dirname(fileURLToPath(import.meta.url));
const wharf = process.env.WHARF_BIN ?? path.join(here, '../../target/debug/wharf');
const server = { command: wharf, args: ['serve'], stderr: 'inherit' };
const url = unixTarget?.url ?? process.env.WHARF_MCP_URL;
const transportV1 = () => (url ? new HttpV1(new URL(url), unixTarget?.options) : new StdioV1(server));
const transportV2 = () => (url ? new HttpV2(new URL(url), unixTarget?.options) : new StdioV2(server));
const capabilities = { elicitation: { form: {} }, sampling: {} };

function text(result) {
  return result.content.filter((block) => block.type === 'text').map((block) => block.text).join('\n');
}

/** Calls a tool with a progress callback; v1 takes a result schema before the options. */
function callWithProgress(client, params, onprogress) {
  return client instanceof ClientV1
    ? client.callTool(params, undefined, { onprogress })
    : client.callTool(params, { onprogress });
}

/** The checks every client and era must pass. */
async function exerciseCommonFeatures(client) {
  const tools = await client.listTools();
  const names = tools.tools.map((tool) => tool.name);
  for (const name of ['echo', 'calculator', 'countdown']) assert.ok(names.includes(name), `missing ${name}`);
  assert.deepEqual([...names].sort(), names, 'tools are listed in a deterministic order');

  assert.equal(text(await client.callTool({ name: 'echo', arguments: { message: 'hello' } })), 'hello');
  const sum = await client.callTool({ name: 'calculator', arguments: { operation: 'add', a: 2, b: 40 } });
  assert.equal(text(sum), '42');
  const divide = await client.callTool({ name: 'calculator', arguments: { operation: 'divide', a: 1, b: 0 } });
  assert.equal(divide.isError, true);
  assert.equal(text(divide), 'Division by zero');

  const progress = [];
  const counted = await callWithProgress(client, { name: 'countdown', arguments: { steps: 3 } }, (update) =>
    progress.push(update.progress),
  );
  assert.equal(text(counted), 'Counted down 3 steps');
  // Wharf sends all three notifications before the response (the stdio wire tests check the
  // bytes), but SDK v2 hands notifications to their handlers a tick later than responses, so
  // the last one can land after the call has settled and its progress handler is gone.
  assert.deepEqual(progress.slice(0, 2), [1, 2]);
  assert.ok(progress.length <= 3 && progress.every((value, index) => value === index + 1), `${progress}`);

  const prompt = await client.getPrompt({ name: 'code_review', arguments: { language: 'rust', code: 'fn main() {}' } });
  assert.match(prompt.messages[0].content.text, /rust code/);

  const config = await client.readResource({ uri: 'config://app' });
  assert.equal(JSON.parse(config.contents[0].text).name, 'wharf-demo');
  const profile = await client.readResource({ uri: 'users://3/profile' });
  assert.equal(JSON.parse(profile.contents[0].text).name, 'Grace Hopper');
  const templates = await client.listResourceTemplates();
  assert.equal(templates.resourceTemplates[0].uriTemplate, 'users://{id}/profile');

  const completion = await client.complete({
    ref: { type: 'ref/resource', uri: 'users://{id}/profile' },
    argument: { name: 'id', value: '' },
  });
  assert.deepEqual(completion.completion.values, ['1', '2', '3']);

  await assert.rejects(client.callTool({ name: 'no_such_tool', arguments: {} }), /no_such_tool/);
}

/** Elicitation, sampling and logging, which need a 2025 session. */
async function exerciseSessionFeatures(client, schemas) {
  const logs = [];
  client.setNotificationHandler(schemas.logging, (notification) => logs.push(notification.params));
  await client.setLoggingLevel('info');
  await client.callTool({ name: 'log', arguments: { level: 'warning', message: 'careful' } });
  await client.callTool({ name: 'log', arguments: { level: 'debug', message: 'filtered out' } });
  // Notifications travel before the response on the same stream; give the handler a tick.
  await new Promise((resolve) => setTimeout(resolve, 50));
  assert.deepEqual(logs.map((log) => log.data), ['careful']);

  const greeting = await client.callTool({ name: 'greet_interactively', arguments: {} });
  assert.equal(text(greeting), 'Hello, Ada!');
  const summary = await client.callTool({ name: 'summarize', arguments: { text: 'A long text.' } });
  assert.equal(text(summary), 'Summary from test-model: Short.');

  // Subscribed, the client hears that demo://clock changed when `tick` says so. Over HTTP the
  // update comes on the GET stream, which the client opens on its own after initializing, so
  // `tick` is called again until the update is heard (20 times at most).
  const updates = [];
  client.setNotificationHandler(schemas.updated, (notification) => updates.push(notification.params.uri));
  await client.subscribeResource({ uri: 'demo://clock' });
  for (let attempt = 0; attempt < 20 && updates.length === 0; attempt += 1) {
    await client.callTool({ name: 'tick', arguments: {} });
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  assert.ok(updates.includes('demo://clock'), `resources/updated for demo://clock: ${updates}`);
  await client.unsubscribeResource({ uri: 'demo://clock' });
}

function answerElicitationAndSampling(client, schemas) {
  client.setRequestHandler(schemas.elicit, async () => ({ action: 'accept', content: { name: 'Ada' } }));
  client.setRequestHandler(schemas.sample, async () => ({
    role: 'assistant',
    content: { type: 'text', text: 'Short.' },
    model: 'test-model',
    stopReason: 'endTurn',
  }));
}

/** A tool call as a 2025-11-25 task, through the SDK's experimental tasks API: created,
 * polled (`tasks/get`), its result fetched (`tasks/result`), and listed (`tasks/list`). */
async function exerciseTasks(client) {
  const messages = [];
  const stream = client.experimental.tasks.callToolStream(
    { name: 'countdown', arguments: { steps: 5 } },
    undefined,
    { task: { ttl: 60000 } },
  );
  for await (const message of stream) messages.push(message);
  const kinds = messages.map((message) => message.type);
  assert.equal(kinds[0], 'taskCreated', `${kinds}`);
  assert.equal(kinds.at(-1), 'result', `${kinds}: ${JSON.stringify(messages.at(-1))}`);
  assert.equal(text(messages.at(-1).result), 'Counted down 5 steps');
  const taskId = messages[0].task.taskId;
  assert.equal((await client.experimental.tasks.getTask(taskId)).status, 'completed');
  const listed = await client.experimental.tasks.listTasks();
  assert.ok(listed.tasks.some((task) => task.taskId === taskId), 'the task is listed');
}

test('TypeScript SDK v1 in a 2025-11-25 session', async () => {
  const client = new ClientV1({ name: 'interop-v1', version: '1.0.0' }, { capabilities });
  const schemas = {
    elicit: ElicitRequestSchema,
    sample: CreateMessageRequestSchema,
    logging: LoggingMessageNotificationSchema,
    updated: ResourceUpdatedNotificationSchema,
  };
  answerElicitationAndSampling(client, schemas);
  await client.connect(transportV1());
  try {
    assert.equal(client.getServerVersion().name, 'wharf-demo');
    await exerciseCommonFeatures(client);
    await exerciseSessionFeatures(client, schemas);
    await exerciseTasks(client);
  } finally {
    await client.close();
  }
});

test('TypeScript SDK v2 in a legacy session', async () => {
  const client = new ClientV2({ name: 'interop-v2', version: '2.0.0' }, { capabilities });
  const schemas = {
    elicit: 'elicitation/create',
    sample: 'sampling/createMessage',
    logging: 'notifications/message',
    updated: 'notifications/resources/updated',
  };
  answerElicitationAndSampling(client, schemas);
  await client.connect(transportV2());
  try {
    assert.ok(!client.getNegotiatedProtocolVersion()?.startsWith('2026'));
    await exerciseCommonFeatures(client);
    await exerciseSessionFeatures(client, schemas);
  } finally {
    await client.close();
  }
});

test('TypeScript SDK v2 pinned to 2026-07-28 (stateless)', async () => {
  const client = new ClientV2(
    { name: 'interop-v2-modern', version: '2.0.0' },
    { capabilities: {}, versionNegotiation: { mode: { pin: '2026-07-28' } } },
  );
  await client.connect(transportV2());
  try {
    assert.equal(client.getNegotiatedProtocolVersion(), '2026-07-28');
    assert.equal(client.getServerVersion()?.name, 'wharf-demo');
    await exerciseCommonFeatures(client);
  } finally {
    await client.close();
  }
});

test('TypeScript SDK v2 in auto mode discovers the modern era', async () => {
  const client = new ClientV2(
    { name: 'interop-v2-auto', version: '2.0.0' },
    { capabilities: {}, versionNegotiation: { mode: 'auto' } },
  );
  await client.connect(transportV2());
  try {
    assert.equal(client.getNegotiatedProtocolVersion(), '2026-07-28');
    assert.equal(text(await client.callTool({ name: 'echo', arguments: { message: 'auto' } })), 'auto');
  } finally {
    await client.close();
  }
});
