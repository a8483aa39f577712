// Records a session of the official TypeScript SDK clients with `wharf serve` through
// `wharf record`: in a 2025-11-25 session (SDK v1) and in 2026-07-28 (SDK v2, auto mode), each
// lists the tools, calls `echo`, `countdown` (with progress) and `greet_interactively` (an
// elicitation: a question in the session, an input round in 2026-07-28), and reads
// `config://app`; over stdio (`wharf record -- wharf serve`), then over Streamable HTTP
// (`wharf record --url` in front of `wharf serve --http`). Writes DIR/session-ERA.cassette and
// DIR/session-http-ERA.cassette, and what the client got in DIR/session-*.results.json, for
// interop/py/replay_cassettes.py to compare.
//
//   node record-session.mjs DIR
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport as StdioV1 } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport as HttpV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { Client as ClientV2, StreamableHTTPClientTransport as HttpV2 } from '@modelcontextprotocol/client';

import { withWharf } from './with-wharf.mjs';
import { StdioClientTransport as StdioV2 } from '@modelcontextprotocol/client/stdio';

const here = path.dirname(fileURLToPath(import.meta.url));
const wharf = process.env.WHARF_BIN ?? path.join(here, '../../target/debug/wharf');
const dir = process.argv[2];
if (!dir) throw new Error('usage: node record-session.mjs DIR');

const text = (result) => result.content.filter((block) => block.type === 'text').map((block) => block.text).join('\n');
const server = (era) => ({
  command: wharf,
  args: ['record', '-o', path.join(dir, `session-${era}.cassette`), '--', wharf, 'serve'],
  stderr: 'inherit',
});

async function session(client) {
  const tools = (await client.listTools()).tools.map((tool) => tool.name);
  const echo = text(await client.callTool({ name: 'echo', arguments: { message: 'recorded' } }));
  const progress = [];
  const onprogress = (update) => progress.push(update.progress);
  const countdown =
    client instanceof ClientV1
      ? await client.callTool({ name: 'countdown', arguments: { steps: 3 } }, undefined, { onprogress })
      : await client.callTool({ name: 'countdown', arguments: { steps: 3 } }, { onprogress });
  const greeting = text(await client.callTool({ name: 'greet_interactively', arguments: {} }));
  const config = (await client.readResource({ uri: 'config://app' })).contents[0].text;
  return { tools, echo, countdown: text(countdown), progress, greeting, config };
}

async function record(era, client, transport) {
  await client.connect(transport);
  try {
    const results = await session(client);
    if (results.greeting !== 'Hello, Ada!') throw new Error(`${era}: ${JSON.stringify(results)}`);
    fs.writeFileSync(path.join(dir, `session-${era}.results.json`), JSON.stringify(results, null, 2));
    console.log(`recorded ${era}: ${results.tools.length} tools, ${results.progress.length} progress notifications`);
  } finally {
    await client.close();
  }
}

const answer = async () => ({ action: 'accept', content: { name: 'Ada' } });
const clientV1 = () => {
  const client = new ClientV1({ name: 'record-v1', version: '1.0.0' }, { capabilities: { elicitation: {} } });
  client.setRequestHandler(ElicitRequestSchema, answer);
  return client;
};
const clientV2 = () => {
  const client = new ClientV2(
    { name: 'record-v2', version: '2.0.0' },
    { capabilities: { elicitation: { form: {} } }, versionNegotiation: { mode: 'auto' } },
  );
  client.setRequestHandler('elicitation/create', answer);
  return client;
};
await record('2025', clientV1(), new StdioV1(server('2025')));
await record('2026', clientV2(), new StdioV2(server('2026')));

// Over Streamable HTTP: the proxy in front of `wharf serve --http`, an Authorization header
// sent that the cassette must not keep.
const headers = { Authorization: 'Bearer not-for-the-cassette' };
await withWharf(wharf, ['serve', '--http', '127.0.0.1:0'], async (upstream) => {
  for (const [era, client, Transport] of [['2025', clientV1(), HttpV1], ['2026', clientV2(), HttpV2]]) {
    const cassette = path.join(dir, `session-http-${era}.cassette`);
    await withWharf(wharf, ['record', '-o', cassette, '--url', upstream], (proxy) =>
      record(`http-${era}`, client, new Transport(new URL(proxy), { requestInit: { headers } })),
    );
    if (fs.readFileSync(cassette, 'utf8').includes('not-for-the-cassette')) {
      throw new Error(`${cassette} keeps the Authorization header`);
    }
  }
});
