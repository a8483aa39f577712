// Drives `wharf gateway` over stdio with the official TypeScript SDK clients, the gateway
// mounting two servers written by others side by side: the reference server-everything (npm
// `@modelcontextprotocol/server-everything`, on SDK v1) under `everything_`, and a FastMCP server
// on the Python SDK 1.x (interop/py1/server.py, which speaks only the 2025 protocol) under `py_`.
// The v1 client opens a 2025 session, where what an upstream asks of the client during a tool
// call (elicitation, sampling, roots) reaches it as a request; the v2 client is pinned to
// 2026-07-28, where the same questions come back as `input_required` rounds, which the SDK
// answers with the same handlers and retries. Progress notifications, log messages and
// cancellation cross the gateway too. Every process started (the gateway and its upstreams)
// carries the temporary directory in its command line, and each test checks that none is left
// once its client is closed. Needs interop/py1/.venv (see scripts/test). Run with
// `node --test gateway-clients.mjs`; WHARF_BIN names the wharf binary.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { closeSync, existsSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport as StdioV1 } from '@modelcontextprotocol/sdk/client/stdio.js';
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ListRootsRequestSchema,
  LoggingMessageNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { Client as ClientV2 } from '@modelcontextprotocol/client';
import { StdioClientTransport as StdioV2 } from '@modelcontextprotocol/client/stdio';

const here = path.dirname(fileURLToPath(import.meta.url));
const wharf = process.env.WHARF_BIN ?? path.join(here, '../../target/debug/wharf');
const everything = path.join(here, 'node_modules/@modelcontextprotocol/server-everything/dist/index.js');
const py1 = path.join(here, '../py1');
const python = path.join(py1, '.venv/bin/python');
const capabilities = { elicitation: { form: {} }, sampling: {}, roots: {} };
const ROOTS = [{ uri: 'file:///tmp/ada', name: 'ada' }];
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

let dir;
let config;
let log;

before(() => {
  const setup = 'python3 -m venv interop/py1/.venv, then pip install -r interop/py1/requirements.txt';
  assert.ok(existsSync(python), `${python} is missing: ${setup}`);
  dir = mkdtempSync(path.join(os.tmpdir(), 'wharf-gateway-interop-'));
  config = path.join(dir, 'gateway.toml');
  log = path.join(dir, 'gateway.log');
  // The last argument of each command is ignored by the server; it marks the process as this
  // file's, for the check that nothing is left running.
  const marker = `--marker=${dir}`;
  const list = (items) => `[${items.map((item) => JSON.stringify(item)).join(', ')}]`;
  writeFileSync(
    config,
    [
      '[[mount]]',
      'name = "everything"',
      `command = ${list([process.execPath, everything, 'stdio', marker])}`,
      'namespace = "everything"',
      '',
      '[[mount]]',
      'name = "py"',
      `command = ${list([python, path.join(py1, 'server.py'), marker])}`,
      'namespace = "py"',
      '',
    ].join('\n'),
  );
});

after(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** The gateway over stdio, its stderr appended to the log (printed when a test fails). */
function gateway(Transport) {
  const fd = openSync(log, 'a');
  const transport = new Transport({ command: wharf, args: ['gateway', config], stderr: fd });
  return { transport, closeLog: () => closeSync(fd) };
}

/** The processes whose command line names the temporary directory (the gateway and its
 * upstreams), as `pgrep -a` lists them: one line each, the pid first. */
function leftRunning() {
  try {
    return execFileSync('pgrep', ['-a', '-f', dir], { encoding: 'utf8' }).trim();
  } catch (error) {
    if (error.status === 1) return '';
    throw error;
  }
}

/** Connects a client to a fresh gateway, runs `body`, and closes the client. Then the gateway
 * must have exited by itself once its stdin closed (both transports wait 2 s for that before
 * they send SIGTERM), and both upstreams with it (10 s at most). Whatever is left is killed by
 * pid; the gateway's stderr is shown if anything failed or was left. */
async function withGateway(client, Transport, body) {
  writeFileSync(log, '');
  const { transport, closeLog } = gateway(Transport);
  let failed = true;
  try {
    await client.connect(transport);
    await body();
    // What the check below looks for is there before the client closes: the gateway and both
    // upstreams, found by the temporary directory in their command lines.
    const running = leftRunning();
    for (const part of ['gateway', 'server-everything', 'server.py']) assert.ok(running.includes(part), running);
    failed = false;
  } finally {
    const closing = Date.now();
    await client.close();
    const closed = Date.now() - closing;
    closeLog();
    let left = leftRunning();
    for (let attempt = 0; attempt < 100 && left; attempt += 1) {
      await sleep(100);
      left = leftRunning();
    }
    for (const line of left ? left.split('\n') : []) {
      try {
        process.kill(Number(line.split(' ')[0]), 'SIGKILL');
      } catch {
        // gone meanwhile
      }
    }
    if (failed || left || closed >= 2000) process.stderr.write(`--- the gateway's stderr:\n${gatewayLog()}\n`);
    if (!failed) {
      assert.equal(left, '', 'processes left running 10 s after the client closed');
      assert.ok(closed < 2000, `the client took ${closed} ms to close: the gateway did not exit when its stdin closed`);
    }
  }
}

/** The gateway's stderr, less the Python SDK's account of why it refused `server/discover` (the
 * gateway's probe for the 2026-07-28 revision), 30 lines for each field of each request type. */
function gatewayLog() {
  const noise = /server_stderr: +(\S+(Request|Notification)\.|Input should|Field required|For further information)/;
  return readFileSync(log, 'utf8').split('\n').filter((line) => !noise.test(line)).slice(-300).join('\n');
}

function text(result) {
  return result.content.filter((block) => block.type === 'text').map((block) => block.text).join('\n');
}

/** tools/call with options (progress, signal); v1 takes a result schema before the options. */
function call(client, name, args, options = {}) {
  return client instanceof ClientV1
    ? client.callTool({ name, arguments: args }, undefined, options)
    : client.callTool({ name, arguments: args }, options);
}

/** Answers elicitation with the name Ada, sampling with "Short." and roots with ROOTS,
 * remembering each question. */
function answerQuestions(client, schemas) {
  const asked = { elicitation: [], sampling: [], roots: 0 };
  client.setRequestHandler(schemas.roots, async () => {
    asked.roots += 1;
    return { roots: ROOTS };
  });
  client.setRequestHandler(schemas.elicit, async (request) => {
    asked.elicitation.push(request.params);
    return { action: 'accept', content: { name: 'Ada' } };
  });
  client.setRequestHandler(schemas.sample, async (request) => {
    asked.sampling.push(request.params);
    return { role: 'assistant', content: { type: 'text', text: 'Short.' }, model: 'test-model', stopReason: 'endTurn' };
  });
  return asked;
}

/** What both clients must see through the gateway. */
async function exercise(client, asked) {
  const names = (await client.listTools()).tools.map((tool) => tool.name);
  for (const name of [
    'py_add',
    'py_ask_name',
    'py_slow',
    'py_cancellations',
    'everything_echo',
    'everything_get-sum',
    'everything_trigger-sampling-request',
    'everything_trigger-elicitation-request',
    'everything_trigger-long-running-operation',
  ]) {
    assert.ok(names.includes(name), `${name} is not among ${names}`);
  }
  assert.ok(!names.some((name) => !name.startsWith('py_') && !name.startsWith('everything_')), `${names}`);

  // Plain calls, to each upstream.
  const sum = await call(client, 'py_add', { a: 2, b: 40 });
  assert.equal(text(sum), '42');
  assert.equal(sum.structuredContent?.result, 42, JSON.stringify(sum));
  assert.equal(text(await call(client, 'everything_echo', { message: 'hello' })), 'Echo: hello');
  assert.match(text(await call(client, 'everything_get-sum', { a: 2, b: 3 })), /\b5\b/);

  // A prompt of each.
  const prompts = (await client.listPrompts()).prompts.map((prompt) => prompt.name);
  assert.ok(prompts.includes('py_greeting') && prompts.includes('everything_simple-prompt'), `${prompts}`);
  const greeting = await client.getPrompt({ name: 'py_greeting', arguments: { name: 'Grace' } });
  assert.match(greeting.messages[0].content.text, /greet Grace/);

  // Elicitation across the bridge: the Python server asks, the client's handler answers.
  assert.equal(text(await call(client, 'py_ask_name', {})), 'Hello, Ada');
  assert.equal(asked.elicitation.at(-1).message, 'What is your name?');
  assert.deepEqual(asked.elicitation.at(-1).requestedSchema.required, ['name']);
  // ... and server-everything's form, with many more fields.
  const form = text(await call(client, 'everything_trigger-elicitation-request', {}));
  assert.match(form, /User provided the requested information/);
  assert.match(form, /- Name: Ada/);

  // Sampling: server-everything asks the client's model.
  const sampled = text(await call(client, 'everything_trigger-sampling-request', { prompt: 'Say hi', maxTokens: 20 }));
  assert.match(sampled, /"text": "Short\."/);
  assert.match(sampled, /"model": "test-model"/);
  assert.equal(asked.sampling.at(-1).messages[0].content.text, 'Resource trigger-sampling-request context: Say hi');
  assert.equal(asked.sampling.at(-1).maxTokens, 20);

  // Roots: server-everything asks for the client's roots during the call.
  const roots = text(await call(client, 'everything_get-roots-list', {}));
  assert.match(roots, /Current MCP Roots \(1 total\)/);
  assert.match(roots, /URI: file:\/\/\/tmp\/ada/);
  assert.ok(asked.roots >= 1);

  // Progress from each upstream. SDK v2 hands a notification to its handler a tick after a
  // response that followed it on the wire, so the last one may be missed (clients.test.mjs).
  const slowProgress = [];
  const slow = await call(client, 'py_slow', { steps: 4 }, { onprogress: (update) => slowProgress.push(update) });
  assert.equal(text(slow), 'Done 4 steps');
  assert.deepEqual(slowProgress.slice(0, 3).map((update) => [update.progress, update.total]), [[1, 4], [2, 4], [3, 4]]);
  assert.ok(slowProgress.length <= 4, JSON.stringify(slowProgress));
  assert.equal(slowProgress[0].message, 'step 1');
  const longProgress = [];
  const long = await call(
    client,
    'everything_trigger-long-running-operation',
    { duration: 0.4, steps: 4 },
    { onprogress: (update) => longProgress.push(update.progress) },
  );
  assert.match(text(long), /Long running operation completed/);
  assert.deepEqual(longProgress.slice(0, 3), [1, 2, 3]);

  // Cancellation: a long call aborted once it has made progress; the next call works. The
  // Python server counts the calls of `slow` cancelled: the cancellation reached it.
  for (const [name, args] of [
    ['py_slow', { steps: 400 }],
    ['everything_trigger-long-running-operation', { duration: 40, steps: 400 }],
  ]) {
    const controller = new AbortController();
    const started = Date.now();
    const progressed = [];
    const pending = call(client, name, args, {
      signal: controller.signal,
      onprogress: (update) => {
        progressed.push(update.progress);
        if (progressed.length === 2) controller.abort(new Error('enough'));
      },
    });
    await assert.rejects(pending, /enough|abort/i);
    assert.ok(Date.now() - started < 10000, `${name} was aborted after ${Date.now() - started} ms`);
    assert.equal(text(await call(client, 'py_add', { a: 1, b: 1 })), '2');
    assert.equal(text(await call(client, 'everything_echo', { message: 'after' })), 'Echo: after');
  }
  let cancelled = '0';
  for (let attempt = 0; attempt < 50 && cancelled === '0'; attempt += 1) {
    cancelled = text(await call(client, 'py_cancellations', {}));
    if (cancelled === '0') await sleep(100);
  }
  assert.equal(cancelled, '1', 'the Python server saw its call of slow cancelled');
}

test('TypeScript SDK v1 (2025-11-25 session) through wharf gateway', async () => {
  const client = new ClientV1({ name: 'gateway-v1', version: '1.0.0' }, { capabilities });
  const asked = answerQuestions(client, {
    elicit: ElicitRequestSchema,
    sample: CreateMessageRequestSchema,
    roots: ListRootsRequestSchema,
  });
  const logs = [];
  client.setNotificationHandler(LoggingMessageNotificationSchema, (notification) => logs.push(notification.params));
  await withGateway(client, StdioV1, async () => {
    assert.equal(client.getServerVersion().name, 'wharf-gateway');
    await exercise(client, asked);
    // py_slow logs each step at info: the messages reach the session's client at the level
    // it set, and not above it (the Python server has no logging/setLevel of its own).
    const steps = () => logs.filter((entry) => String(entry.data).startsWith('step')).map((entry) => [entry.level, entry.data]);
    await client.setLoggingLevel('warning');
    logs.length = 0;
    await call(client, 'py_slow', { steps: 2 });
    await sleep(50);
    assert.deepEqual(steps(), []);
    await client.setLoggingLevel('info');
    await call(client, 'py_slow', { steps: 2 });
    await sleep(50);
    assert.deepEqual(steps(), [['info', 'step 1 of 2'], ['info', 'step 2 of 2']]);
  });
});

test('TypeScript SDK v2 pinned to 2026-07-28 through wharf gateway', async () => {
  const client = new ClientV2(
    { name: 'gateway-v2-modern', version: '2.0.0' },
    { capabilities, versionNegotiation: { mode: { pin: '2026-07-28' } } },
  );
  const asked = answerQuestions(client, { elicit: 'elicitation/create', sample: 'sampling/createMessage', roots: 'roots/list' });
  const logs = [];
  client.setNotificationHandler('notifications/message', (notification) => logs.push(notification.params));
  await withGateway(client, StdioV2, async () => {
    assert.equal(client.getNegotiatedProtocolVersion(), '2026-07-28');
    assert.equal(client.getServerVersion()?.name, 'wharf-gateway');
    await exercise(client, asked);

    // The rounds by hand: the question comes back as an input_required result, and the retry
    // with its answer and the request state echoed completes the call. (Through `request`:
    // `callTool` holds an input_required result of a tool with an output schema to that schema.)
    const manual = (params) => client.request({ method: 'tools/call', params }, { allowInputRequired: true });
    const first = await manual({ name: 'py_ask_name', arguments: {} });
    assert.equal(first.resultType, 'input_required', JSON.stringify(first));
    const [[key, question]] = Object.entries(first.inputRequests);
    assert.equal(question.method, 'elicitation/create');
    assert.equal(question.params.message, 'What is your name?');
    assert.equal(typeof first.requestState, 'string');
    const answered = await manual({
      name: 'py_ask_name',
      arguments: {},
      inputResponses: { [key]: { action: 'accept', content: { name: 'Grace' } } },
      requestState: first.requestState,
    });
    assert.equal(text(answered), 'Hello, Grace');

    // Log messages reach a 2026-07-28 client only for a request that asks for them, at the
    // level it names.
    const steps = () => logs.filter((entry) => String(entry.data).startsWith('step')).map((entry) => [entry.level, entry.data]);
    logs.length = 0;
    await call(client, 'py_slow', { steps: 2 });
    await client.callTool({ name: 'py_slow', arguments: { steps: 2 }, _meta: { 'io.modelcontextprotocol/logLevel': 'warning' } });
    await sleep(50);
    assert.deepEqual(steps(), []);
    await client.callTool({ name: 'py_slow', arguments: { steps: 2 }, _meta: { 'io.modelcontextprotocol/logLevel': 'info' } });
    await sleep(50);
    assert.deepEqual(steps(), [['info', 'step 1 of 2'], ['info', 'step 2 of 2']]);

    // A question never answered: the call stays parked in the gateway, and the client may
    // walk away from it (closing must still stop everything, checked after the body).
    const abandoned = await manual({ name: 'everything_trigger-sampling-request', arguments: { prompt: 'never answered' } });
    assert.equal(abandoned.resultType, 'input_required', JSON.stringify(abandoned));
    assert.equal(text(await call(client, 'everything_echo', { message: 'still here' })), 'Echo: still here');
  });
});
