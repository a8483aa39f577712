// Drives `wharf serve DIR` (a server made from a folder: examples/folder) with the official
// TypeScript SDK clients, v1 (2025 sessions) and v2 (2025 sessions, and 2026-07-28 stateless
// requests), over stdio and over Streamable HTTP: the command tools of wharf.toml, the prompts of
// prompts/*.md, the files of resources/ and skills/, the Skills extension's methods (sent with
// the SDKs' generic `request`), and a reload of the folder while the client is connected. Each
// test serves a fresh copy of the folder, which it edits and deletes. Run with
// `node --test folder-clients.mjs`; WHARF_BIN names the wharf binary.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { cp, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as z from 'zod';

import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport as StdioV1 } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport as HttpV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { PromptListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { Client as ClientV2, StreamableHTTPClientTransport as HttpV2 } from '@modelcontextprotocol/client';
import { StdioClientTransport as StdioV2 } from '@modelcontextprotocol/client/stdio';

import { withWharf } from './with-wharf.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const wharf = process.env.WHARF_BIN ?? path.join(here, '../../target/debug/wharf');
const example = path.join(here, '../../examples/folder');
const SKILL = 'skill://release-notes/SKILL.md';
const NEW_PROMPT = '---\ndescription: Added while serving\n---\nHello.\n';
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
// Results of the extension's methods, which neither SDK knows: loose objects, checked below.
const SkillsList = z.looseObject({ skills: z.array(z.looseObject({ uri: z.string() })) });
const SkillsGet = z.looseObject({ skill: z.looseObject({ uri: z.string() }) });
const DirectoryRead = z.looseObject({ resources: z.array(z.looseObject({ uri: z.string() })) });

/** Runs `body` on a fresh copy of examples/folder, deleted afterwards. */
async function withFolderCopy(body) {
  const parent = await mkdtemp(path.join(os.tmpdir(), 'wharf-folder-'));
  try {
    const folder = path.join(parent, 'folder');
    await cp(example, folder, { recursive: true });
    return await body(folder);
  } finally {
    await rm(parent, { recursive: true, force: true });
  }
}

/** `wharf serve FOLDER --http 127.0.0.1:0` for the length of `body(url)`. */
const withHttpServer = (folder, body) => withWharf(wharf, ['serve', folder, '--http', '127.0.0.1:0'], body);

const text = (result) => result.content.filter((block) => block.type === 'text').map((block) => block.text).join('\n');

async function checkTools(client) {
  const tools = Object.fromEntries((await client.listTools()).tools.map((tool) => [tool.name, tool]));
  assert.deepEqual(Object.keys(tools).sort(), ['count_words', 'text_stats']);
  assert.deepEqual(tools.text_stats.outputSchema.required, ['lines', 'words', 'characters']);
  const sentence = 'the quick brown fox jumps';
  const counted = await client.callTool({ name: 'count_words', arguments: { text: sentence } });
  assert.ok(!counted.isError, text(counted));
  assert.equal(text(counted).trim(), String(sentence.split(/\s+/).length));
  const sample = 'one two\nthree';
  const stats = await client.callTool({ name: 'text_stats', arguments: { text: sample } });
  assert.ok(!stats.isError, text(stats));
  const expected = { lines: sample.split('\n').length, words: sample.split(/\s+/).length, characters: sample.length };
  assert.deepEqual(stats.structuredContent, expected);
}

async function checkPrompts(client) {
  const names = (await client.listPrompts()).prompts.map((prompt) => prompt.name);
  assert.deepEqual([...names].sort(), ['code-review', 'summarize']);
  const code = 'fn main() { println!("hi"); }';
  const prompt = await client.getPrompt({ name: 'code-review', arguments: { language: 'rust', code } });
  assert.ok(prompt.messages[0].content.text.includes(code), prompt.messages[0].content.text);
  assert.match(prompt.messages[0].content.text, /rust/);
  const completion = await client.complete({
    ref: { type: 'ref/prompt', name: 'code-review' },
    argument: { name: 'language', value: 'r' },
  });
  assert.ok(completion.completion.values.includes('rust'), `${completion.completion.values}`);
  assert.ok(completion.completion.values.every((value) => value.startsWith('r')));
}

async function checkResources(client, folder) {
  const uris = (await client.listResources()).resources.map((resource) => resource.uri);
  for (const uri of ['docs://guide.md', 'docs://data/cities.json', 'docs://data/pixel.png', SKILL]) {
    assert.ok(uris.includes(uri), `missing ${uri}`);
  }
  const guide = await client.readResource({ uri: 'docs://guide.md' });
  assert.equal(guide.contents[0].text, await readFile(path.join(folder, 'resources/guide.md'), 'utf8'));
  const pixel = await client.readResource({ uri: 'docs://data/pixel.png' });
  assert.equal(pixel.contents[0].mimeType, 'image/png');
  assert.deepEqual(Buffer.from(pixel.contents[0].blob, 'base64'), await readFile(path.join(folder, 'resources/data/pixel.png')));
  const skill = (await client.readResource({ uri: SKILL })).contents[0];
  assert.equal(skill.mimeType, 'text/markdown');
  assert.ok(skill.text.startsWith('---'));
  assert.equal(skill.text, await readFile(path.join(folder, 'skills/release-notes/SKILL.md'), 'utf8'));
}

/** skills/list, skills/get and resources/directory/read through `client.request(request,
 * resultSchema)`, which both SDKs offer for methods they have no typed call for. */
async function checkSkills(client, folder) {
  const root = path.join(folder, 'skills/release-notes');
  const listed = await client.request({ method: 'skills/list', params: {} }, SkillsList);
  assert.deepEqual(listed.skills.map((skill) => skill.uri), [SKILL]);
  const entry = listed.skills[0];
  assert.equal(entry.frontmatter.name, 'release-notes');
  const expected = [];
  for (const name of await readdir(root, { recursive: true, withFileTypes: false })) {
    const data = await readFile(path.join(root, name)).catch(() => null); // null: a directory
    if (data) {
      const digest = `sha256:${createHash('sha256').update(data).digest('hex')}`;
      expected.push({ uri: `skill://release-notes/${name.split(path.sep).join('/')}`, digest, size: data.length });
    }
  }
  const byUri = (a, b) => a.uri.localeCompare(b.uri);
  assert.deepEqual([...entry.resources].sort(byUri), expected.sort(byUri));
  const got = await client.request({ method: 'skills/get', params: { uri: SKILL } }, SkillsGet);
  assert.deepEqual(got.skill, entry);
  const directory = await client.request(
    { method: 'resources/directory/read', params: { uri: 'skill://release-notes' } },
    DirectoryRead,
  );
  const children = Object.fromEntries(directory.resources.map((child) => [child.uri, child]));
  assert.equal(children['skill://release-notes/references']?.mimeType, 'inode/directory');
  assert.ok(children[SKILL], 'SKILL.md is a child of the skill directory');
  const style = await client.readResource({ uri: 'skill://release-notes/references/style.md' });
  assert.equal(style.contents[0].text, await readFile(path.join(root, 'references/style.md'), 'utf8'));
}

/** Edits the served folder; within 5 s the client reads the new guide and lists the new prompt,
 * and has heard that the prompts changed (`heard` counts notifications/prompts/list_changed). */
async function checkReload(client, folder, heard) {
  const newGuide = `# Folder guide\n\nRewritten while serving (${Date.now()}).\n`;
  await writeFile(path.join(folder, 'resources/guide.md'), newGuide);
  await writeFile(path.join(folder, 'prompts/new.md'), NEW_PROMPT);
  let guide;
  let prompts = [];
  for (let attempt = 0; attempt < 50; attempt += 1) {
    guide = (await client.readResource({ uri: 'docs://guide.md' })).contents[0].text;
    prompts = (await client.listPrompts()).prompts;
    if (guide === newGuide && prompts.some((prompt) => prompt.name === 'new') && heard.length > 0) break;
    await sleep(100);
  }
  assert.equal(guide, newGuide);
  const added = prompts.find((prompt) => prompt.name === 'new');
  assert.equal(added?.description, 'Added while serving', 'the prompt added to the folder is listed');
  const rendered = await client.getPrompt({ name: 'new', arguments: {} });
  assert.equal(rendered.messages.map((message) => message.content.text).join('\n').trim(), 'Hello.');
  assert.ok(heard.length > 0, 'notifications/prompts/list_changed arrived');
}

const clients = {
  'v1 (2025-11-25 session)': {
    make: () => new ClientV1({ name: 'folder-v1', version: '1.0.0' }, { capabilities: {} }),
    stdio: (folder) => new StdioV1({ command: wharf, args: ['serve', folder], stderr: 'inherit' }),
    http: (url) => new HttpV1(new URL(url)),
    listChanged: PromptListChangedNotificationSchema,
  },
  'v2 (legacy session)': {
    make: () => new ClientV2({ name: 'folder-v2', version: '2.0.0' }, { capabilities: {} }),
    stdio: (folder) => new StdioV2({ command: wharf, args: ['serve', folder], stderr: 'inherit' }),
    http: (url) => new HttpV2(new URL(url)),
    listChanged: 'notifications/prompts/list_changed',
  },
  'v2 pinned to 2026-07-28 (stateless)': {
    make: () =>
      new ClientV2(
        { name: 'folder-v2-modern', version: '2.0.0' },
        { capabilities: {}, versionNegotiation: { mode: { pin: '2026-07-28' } } },
      ),
    stdio: (folder) => new StdioV2({ command: wharf, args: ['serve', folder], stderr: 'inherit' }),
    http: (url) => new HttpV2(new URL(url)),
    listChanged: 'notifications/prompts/list_changed',
    modern: true,
  },
};

async function exercise(kind, transport, folder) {
  const client = kind.make();
  const heard = [];
  client.setNotificationHandler(kind.listChanged, (notification) => heard.push(notification));
  await client.connect(transport);
  try {
    assert.equal(client.getServerVersion()?.name, 'folder-example');
    const modern = client.getNegotiatedProtocolVersion?.() === '2026-07-28';
    assert.equal(modern, Boolean(kind.modern));
    // Declared in both eras: in server/discover, and in a session's initialize.
    const extensions = client.getServerCapabilities()?.extensions;
    assert.deepEqual(extensions?.['io.modelcontextprotocol/skills'], { directoryRead: true });
    await checkTools(client);
    await checkPrompts(client);
    await checkResources(client, folder);
    await checkSkills(client, folder);
    if (modern) {
      // Modern clients hear of changes on a `subscriptions/listen` stream, whose notifications
      // the SDK hands to the handlers set with setNotificationHandler.
      const subscription = await client.listen({ promptsListChanged: true });
      try {
        assert.equal(subscription.honoredFilter.promptsListChanged, true);
        await checkReload(client, folder, heard);
      } finally {
        await subscription.close();
      }
    } else {
      // Over stdio the notification comes on stdout; over HTTP on the GET stream, which both
      // SDKs open by themselves once the session is initialized.
      await checkReload(client, folder, heard);
    }
  } finally {
    await client.close();
  }
}

for (const [name, kind] of Object.entries(clients)) {
  test(`TypeScript SDK ${name} over stdio`, { timeout: 60000 }, () =>
    withFolderCopy((folder) => exercise(kind, kind.stdio(folder), folder)),
  );
  test(`TypeScript SDK ${name} over Streamable HTTP`, { timeout: 60000 }, () =>
    withFolderCopy((folder) => withHttpServer(folder, (url) => exercise(kind, kind.http(url), folder))),
  );
}
