// A real browser host for MCP Apps: headless Chromium (Debian's, driven by puppeteer-core) opens
// host.html, which holds the official host bridge (`AppBridge` of @modelcontextprotocol/ext-apps)
// and reaches `wharf serve --http` through the official TypeScript SDK client here. The host
// lists the tools, calls the tool with a view, renders its `ui://` view in a sandboxed iframe
// with the CSP it builds from `_meta.ui`, and the view draws the result and calls its app-only
// tool through the bridge. The same view renders through `wharf gateway`, behind a namespace. A
// second server (a folder) has a view whose script reaches an origin it did not declare, and
// the host's CSP blocks it. Screenshots go to WHARF_SCREENSHOTS (or
// target/).
//   WHARF_BIN=... CHROMIUM=/usr/bin/chromium node --test browser.test.mjs
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { mkdtemp, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { build } from 'esbuild';
import puppeteer from 'puppeteer-core';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';

import { withWharf } from '../ts/with-wharf.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '../..');
const wharf = process.env.WHARF_BIN ?? path.join(root, 'target/debug/wharf');
const chromium = process.env.CHROMIUM ?? '/usr/bin/chromium';
const screenshots = process.env.WHARF_SCREENSHOTS ?? path.join(root, 'target');

/** `wharf ARGS --http 127.0.0.1:0` for the length of `body(url)`, killed at the end. */
const withServer = (args, body) => withWharf(wharf, [...args, '--http', '127.0.0.1:0'], body);

/** The host's files over HTTP on a loopback port: host.html, host.mjs and the bridge bundle. */
async function withHostPage(body) {
  const bundle = await build({
    stdin: {
      contents: 'export { AppBridge, PostMessageTransport, getToolUiResourceUri, isToolVisibilityAppOnly } from "@modelcontextprotocol/ext-apps/app-bridge";',
      resolveDir: here,
    },
    bundle: true,
    format: 'esm',
    platform: 'browser',
    write: false,
    logLevel: 'error',
  });
  const files = {
    '/host.html': ['text/html', await readFile(path.join(here, 'host.html'))],
    '/host.mjs': ['text/javascript', await readFile(path.join(here, 'host.mjs'))],
    '/bridge.js': ['text/javascript', bundle.outputFiles[0].contents],
  };
  const server = createServer((request, response) => {
    const file = files[new URL(request.url, 'http://host').pathname];
    if (!file) return void response.writeHead(404).end();
    response.writeHead(200, { 'content-type': file[0] }).end(file[1]);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    return await body(`http://127.0.0.1:${server.address().port}/host.html`);
  } finally {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
}

/** A page of the host connected to the server at `url` through the SDK client, for `body(page)`. */
async function withHost(url, body) {
  const client = new Client(
    { name: 'wharf-apps-host', version: '1' },
    { capabilities: { extensions: { 'io.modelcontextprotocol/ui': { mimeTypes: ['text/html;profile=mcp-app'] } } } },
  );
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  const profile = await mkdtemp(path.join(os.tmpdir(), 'wharf-chromium-'));
  const browser = await puppeteer.launch({
    executablePath: chromium,
    headless: true,
    userDataDir: profile,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync'],
  });
  try {
    return await withHostPage(async (hostUrl) => {
      const page = await browser.newPage();
      const errors = [];
      page.on('pageerror', (error) => errors.push(String(error)));
      await page.exposeFunction('mcpListTools', async () => (await client.listTools()).tools);
      await page.exposeFunction('mcpReadResource', (uri) => client.readResource({ uri }));
      await page.exposeFunction('mcpCallTool', (name, args) => client.callTool({ name, arguments: args }));
      await page.goto(hostUrl);
      return await body(page, errors);
    });
  } finally {
    await browser.close();
    await client.close();
    await rm(profile, { recursive: true, force: true });
  }
}

/** The view's frame, once the host put it in the page. */
async function viewFrame(page) {
  const handle = await page.waitForSelector('#view');
  return await handle.contentFrame();
}

test('the demo\'s dice view renders in a real browser and rolls again through its app-only tool', async () => {
  await withServer(['serve'], (url) => withHost(url, async (page, errors) => {
    await page.evaluate(() => window.showTool('roll_dice', { count: 3, sides: 6 }));
    assert.match(await page.$eval('[data-tool="roll_again"]', (item) => item.textContent), /app only/);
    const policy = await page.$eval('body', (body) => body.dataset.csp);
    assert.match(policy, /connect-src 'none'/, 'nothing declared, nothing reachable');
    const view = await viewFrame(page);
    await view.waitForFunction(() => document.querySelectorAll('#dice .die').length === 3, { timeout: 10000 });
    const faces = await view.$$eval('#dice .die', (dice) => dice.map((die) => Number(die.textContent)));
    assert.ok(faces.every((face) => face >= 1 && face <= 6), `faces ${faces}`);
    assert.match(await view.$eval('#total', (total) => total.textContent), /^Total: \d+ \(3d6\)$/);
    assert.equal(await view.$eval('#status', (status) => status.textContent), 'Connected.');

    await view.click('#again');
    await view.waitForFunction(() => document.getElementById('status').textContent.startsWith('Rolled again'), { timeout: 10000 });
    assert.equal(await page.$eval('body', (body) => body.dataset.viewCalled), 'roll_again', 'the view called its app-only tool');
    assert.equal(await view.$$eval('#dice .die', (dice) => dice.length), 3);
    await mkdir(screenshots, { recursive: true });
    await page.screenshot({ path: path.join(screenshots, 'apps-dice-view.png') });
    assert.deepEqual(errors, []);
  }));
});

test('through wharf gateway, a namespaced mount\'s view renders under the gateway\'s ui:// URI', async () => {
  const folder = await mkdtemp(path.join(os.tmpdir(), 'wharf-apps-gateway-'));
  try {
    const config = path.join(folder, 'gateway.toml');
    await writeFile(config, `[[mount]]\nname = "dice"\ncommand = [${JSON.stringify(wharf)}, "serve"]\n`);
    await withServer(['gateway', config], (url) => withHost(url, async (page, errors) => {
      await page.evaluate(() => window.showTool('dice_roll_dice', { count: 2, sides: 20 }));
      assert.match(await page.$eval('[data-tool="dice_roll_again"]', (item) => item.textContent), /app only/);
      assert.equal(await page.$eval('#host-status', (status) => status.textContent), 'Showing ui://dice/wharf-demo/dice');
      const view = await viewFrame(page);
      await view.waitForFunction(() => document.querySelectorAll('#dice .die').length === 2, { timeout: 10000 });
      assert.match(await view.$eval('#total', (total) => total.textContent), /^Total: \d+ \(2d20\)$/);
      assert.equal(await view.$eval('#status', (status) => status.textContent), 'Connected.');
      await page.screenshot({ path: path.join(screenshots, 'apps-gateway-view.png') });
      assert.deepEqual(errors, []);
    }));
  } finally {
    await rm(folder, { recursive: true, force: true });
  }
});

test('a view that reaches an origin it did not declare is blocked by the host\'s CSP', async () => {
  const folder = await mkdtemp(path.join(os.tmpdir(), 'wharf-apps-folder-'));
  try {
    await writeFile(path.join(folder, 'wharf.toml'),
      '[[tools]]\nname = "probe"\ndescription = "Shows the probe view"\ncommand = ["echo", "probing"]\n');
    await mkdir(path.join(folder, 'apps'));
    // The view tries an origin it did not declare, and one it did (its own host's, refused
    // at the network since nothing listens, but allowed by the policy).
    await writeFile(path.join(folder, 'apps', 'probe.html'), `---
tools: [probe]
csp:
  connectDomains: ["http://127.0.0.1:9"]
---
<!DOCTYPE html>
<html><head><title>probe</title></head><body>
<p id="undeclared">trying</p><p id="declared">trying</p>
<script>
const blocked = [];
document.addEventListener('securitypolicyviolation', (event) => blocked.push(event.blockedURI));
const report = (id, text) => { document.getElementById(id).textContent = text; };
fetch('http://127.0.0.1:7/undeclared').then(() => report('undeclared', 'reached'), () =>
  setTimeout(() => report('undeclared', blocked.some((uri) => uri.includes(':7')) ? 'blocked by CSP' : 'failed'), 200));
fetch('http://127.0.0.1:9/declared').then(() => report('declared', 'reached'), () =>
  setTimeout(() => report('declared', blocked.some((uri) => uri.includes(':9')) ? 'blocked by CSP' : 'allowed, unreachable'), 200));
window.parent.postMessage({ jsonrpc: '2.0', id: 1, method: 'ui/initialize', params: { appCapabilities: {}, appInfo: { name: 'probe', version: '1' }, protocolVersion: '2026-01-26' } }, '*');
window.addEventListener('message', (event) => {
  if (event.data && event.data.id === 1) window.parent.postMessage({ jsonrpc: '2.0', method: 'ui/notifications/initialized', params: {} }, '*');
});
</script></body></html>
`);
    await withServer(['serve', folder, '--no-watch'], (url) => withHost(url, async (page) => {
      await page.evaluate(() => window.showTool('probe', {}));
      assert.match(await page.$eval('body', (body) => body.dataset.csp), /connect-src http:\/\/127\.0\.0\.1:9;/);
      const view = await viewFrame(page);
      await view.waitForFunction(() => document.getElementById('undeclared').textContent !== 'trying', { timeout: 10000 });
      await view.waitForFunction(() => document.getElementById('declared').textContent !== 'trying', { timeout: 10000 });
      assert.equal(await view.$eval('#undeclared', (p) => p.textContent), 'blocked by CSP');
      assert.equal(await view.$eval('#declared', (p) => p.textContent), 'allowed, unreachable');
      await page.screenshot({ path: path.join(screenshots, 'apps-csp-probe.png') });
    }));
  } finally {
    await rm(folder, { recursive: true, force: true });
  }
});
