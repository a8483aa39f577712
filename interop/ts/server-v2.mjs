// ts-reference-v2: a reference server for wharf's client tests, written with the official TypeScript
// SDK v2 (`@modelcontextprotocol/server` McpServer, zod 4 schemas), so that wharf's client and
// `wharf check` are tried against a server that is not wharf's own. Same surface as server.mjs.
//
//   node server-v2.mjs              stdio (serveStdio)
//   node server-v2.mjs --http PORT  Streamable HTTP on http://127.0.0.1:PORT/mcp (createMcpHandler)
//
// Both eras, from one factory: the stateless 2026-07-28 revision (server/discover, per-request
// `_meta` envelope, elicitation as an `input_required` result) and the initialize handshake at
// 2024-11-05 ... 2025-11-25. Over HTTP the 2025 era is served statelessly (no Mcp-Session-Id; GET
// and DELETE answer 405), the SDK's default `legacy: 'stateless'`; over stdio a 2025 connection is
// pinned to one instance, as usual.
import { createServer } from 'node:http';
import { McpServer, ResourceTemplate, acceptedContent, createMcpHandler, inputRequired } from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import { localhostHostValidation, localhostOriginValidation, toNodeHandler } from '@modelcontextprotocol/node';
import { z } from 'zod';

const text = (value) => ({ content: [{ type: 'text', text: String(value) }] });
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const Name = z.object({ name: z.string() });

function makeServer() {
  const server = new McpServer({ name: 'ts-reference-v2', version: '1.0.0' }, { capabilities: { logging: {} } });
  server.registerTool('add', { description: 'Add two integers.', inputSchema: z.object({ a: z.int(), b: z.int() }) },
    async ({ a, b }) => text(a + b));
  server.registerTool('echo', { description: 'Echo the message back.', inputSchema: z.object({ message: z.string() }) },
    async ({ message }) => text(message));
  server.registerTool('slow_count', {
    description: 'Count to `steps`, 50 ms a step, reporting progress and logging each step.',
    inputSchema: z.object({ steps: z.int().default(3) }),
  }, async ({ steps }, ctx) => {
    const progressToken = ctx.mcpReq._meta?.progressToken;
    for (let step = 1; step <= steps; step++) {
      await sleep(50);
      if (progressToken !== undefined) {
        await ctx.mcpReq.notify({ method: 'notifications/progress',
          params: { progressToken, progress: step, total: steps, message: `step ${step} of ${steps}` } });
      }
      await ctx.mcpReq.log('info', `slow_count: step ${step} of ${steps}`); // deprecated at 2026-07-28, still served
    }
    return text(`counted to ${steps}`);
  });
  // Multi-round-trip: the first round returns input_required; the retry carries the answer. On a
  // 2025 connection the SDK's legacy shim turns that into a mid-call elicitation/create request.
  server.registerTool('ask_name', { description: "Ask the user's name by elicitation." }, async (ctx) => {
    if (ctx.mcpReq.inputResponses?.name === undefined) {
      return inputRequired({ inputRequests: { name: inputRequired.elicit({ message: 'What is your name?', requestedSchema: Name }) } });
    }
    const answer = acceptedContent(ctx.mcpReq.inputResponses, 'name', Name);
    return text(answer ? `Hello, ${answer.name}` : 'declined');
  });
  server.registerTool('fail', { description: 'Always fails: the result is a tool error (isError: true).' }, async () => {
    throw new Error('fail always fails');
  });
  server.registerPrompt('greet', { description: 'Greet someone by name.', argsSchema: z.object({ name: z.string() }) },
    ({ name }) => ({ messages: [{ role: 'user', content: { type: 'text', text: `Please greet ${name} warmly.` } }] }));
  server.registerResource('readme', 'ref://readme', { description: 'What this server is.', mimeType: 'text/plain' },
    async (uri) => ({ contents: [{ uri: uri.href, mimeType: 'text/plain',
      text: "ts-reference-v2: a reference MCP server for wharf's client tests." }] }));
  server.registerResource('item', new ResourceTemplate('ref://items/{id}', { list: undefined }),
    { description: 'One item, by id.', mimeType: 'text/plain' },
    async (uri, { id }) => ({ contents: [{ uri: uri.href, mimeType: 'text/plain', text: `item ${id}` }] }));
  return server;
}

let serving; // what to close on shutdown: the stdio handle, or the HTTP handler
let httpServer;
async function shutdown() {
  httpServer?.close();
  await serving?.close().catch(() => {});
  process.exit(0);
}
process.on('SIGINT', shutdown);
process.on('SIGTERM', shutdown);

const httpAt = process.argv.indexOf('--http');
if (httpAt === -1) {
  serving = serveStdio(makeServer); // the transport closes itself when stdin ends
  process.stdin.on('end', shutdown);
} else {
  const port = Number(process.argv[httpAt + 1]);
  serving = createMcpHandler(makeServer); // a fresh instance per request, both eras
  const handle = toNodeHandler(serving);
  const validHost = localhostHostValidation(); // DNS-rebinding protection, as createMcpExpressApp does
  const validOrigin = localhostOriginValidation();
  httpServer = createServer((req, res) => {
    if (new URL(req.url, 'http://localhost').pathname !== '/mcp') return void res.writeHead(404).end();
    if (validHost(req, res) && validOrigin(req, res)) void handle(req, res);
  });
  httpServer.listen(port, '127.0.0.1', () => console.error(`ts-reference-v2: Streamable HTTP on http://127.0.0.1:${port}/mcp`));
}
