// A 2 MiB tool result over a 25,000-token budget, read by the official TypeScript SDK clients:
// the answer is a preview and a `resource_link`; the client reads every page (each within the
// budget) and the pages put together are the original bytes. Over stdio the server is
// `wharf serve --max-result-tokens 25000`; with WHARF_MCP_URL set, the fleet behind nginx (whose
// instances have the same budget), where round robin reads each page through another instance;
// with WHARF_MCP_UNIX, `wharf serve --unix` on that socket with the same budget.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport as StdioV1 } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport as HttpV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Client as ClientV2, StreamableHTTPClientTransport as HttpV2 } from '@modelcontextprotocol/client';

import { unixTarget } from './unix-fetch.mjs';
import { StdioClientTransport as StdioV2 } from '@modelcontextprotocol/client/stdio';

const here = path.dirname(fileURLToPath(import.meta.url));
const wharf = process.env.WHARF_BIN ?? path.join(here, '../../target/debug/wharf');
const server = { command: wharf, args: ['serve', '--max-result-tokens', '25000'], stderr: 'inherit' };
const url = unixTarget?.url ?? process.env.WHARF_MCP_URL;
const LINES = 32768;

/** What the demo's `long_report` writes: line i is its number, a space and a sentence. */
function report(lines) {
  const parts = [];
  for (let line = 1; line <= lines; line += 1) {
    parts.push(`${String(line).padStart(7, '0')} the quick brown fox jumps over the lazy dog, once more.\n`);
  }
  return parts.join('');
}

async function readWhole(client) {
  const expected = report(LINES);
  const result = await client.callTool({ name: 'long_report', arguments: { lines: LINES } });
  const links = result.content.filter((block) => block.type === 'resource_link');
  assert.equal(links.length, 1, JSON.stringify(result).slice(0, 2000));
  assert.equal(links[0].size, Buffer.byteLength(expected));
  const preview = result.content[0].text;
  assert.ok(expected.startsWith(preview.split('\n\n[')[0]), 'the preview is the first part');
  const uri = links[0].uri;
  let pages;
  const whole = [];
  for (let page = 1; pages === undefined || page <= pages; page += 1) {
    const read = await client.readResource({ uri: `${uri}?page=${page}` });
    const contents = read.contents[0];
    assert.ok(Buffer.byteLength(contents.text) <= 25000, 'a page holds at most 25,000 tokens');
    whole.push(contents.text);
    pages = contents._meta['wharf/pages'];
  }
  assert.ok(pages > 80, `${pages} pages`);
  assert.equal(whole.join(''), expected, 'the pages put together are the original bytes');
}

test('TypeScript SDK v1 reads a large result in pages (2025 session)', async () => {
  const client = new ClientV1({ name: 'large-v1', version: '1.0.0' }, { capabilities: {} });
  await client.connect(url ? new HttpV1(new URL(url), unixTarget?.options) : new StdioV1(server));
  try {
    await readWhole(client);
  } finally {
    await client.close();
  }
});

test('TypeScript SDK v2 reads a large result in pages (2026-07-28)', async () => {
  const client = new ClientV2(
    { name: 'large-v2', version: '2.0.0' },
    { capabilities: {}, versionNegotiation: { mode: { pin: '2026-07-28' } } },
  );
  await client.connect(url ? new HttpV2(new URL(url), unixTarget?.options) : new StdioV2(server));
  try {
    assert.equal(client.getNegotiatedProtocolVersion(), '2026-07-28');
    await readWhole(client);
  } finally {
    await client.close();
  }
});
