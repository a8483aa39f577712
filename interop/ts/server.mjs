// ts-reference: a reference server for wharf's client tests, written with the official TypeScript
// SDK v1 (`@modelcontextprotocol/sdk` McpServer, zod schemas), so that wharf's client and
// `wharf check` are tried against a server that is not wharf's own.
//
//   node server.mjs              stdio
//   node server.mjs --http PORT  Streamable HTTP on http://127.0.0.1:PORT/mcp, one session (and
//                                one transport) per `initialize`, as the SDK's examples do
//
// It answers the initialize handshake at 2024-11-05, 2025-03-26, 2025-06-18 and 2025-11-25
// (newest); SDK v1 does not speak the stateless 2026-07-28 revision (see server-v2.mjs for that).
import { randomUUID } from 'node:crypto';
import { McpServer, ResourceTemplate } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { createMcpExpressApp } from '@modelcontextprotocol/sdk/server/express.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';

const text = (value) => ({ content: [{ type: 'text', text: String(value) }] });
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

function makeServer() {
  const server = new McpServer({ name: 'ts-reference', version: '1.0.0' }, { capabilities: { logging: {} } });
  server.registerTool('add', { description: 'Add two integers.', inputSchema: { a: z.number().int(), b: z.number().int() } },
    async ({ a, b }) => text(a + b));
  server.registerTool('echo', { description: 'Echo the message back.', inputSchema: { message: z.string() } },
    async ({ message }) => text(message));
  server.registerTool('slow_count', {
    description: 'Count to `steps`, 50 ms a step, reporting progress and logging each step.',
    inputSchema: { steps: z.number().int().default(3) },
  }, async ({ steps }, extra) => {
    const progressToken = extra._meta?.progressToken;
    for (let step = 1; step <= steps; step++) {
      await sleep(50);
      if (progressToken !== undefined) {
        await extra.sendNotification({ method: 'notifications/progress',
          params: { progressToken, progress: step, total: steps, message: `step ${step} of ${steps}` } });
      }
      await extra.sendNotification({ method: 'notifications/message',
        params: { level: 'info', data: `slow_count: step ${step} of ${steps}` } });
    }
    return text(`counted to ${steps}`);
  });
  server.registerTool('ask_name', { description: "Ask the user's name by elicitation (elicitation/create)." },
    async (extra) => {
      const answer = await server.server.elicitInput({ mode: 'form', message: 'What is your name?',
        requestedSchema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] } },
        { relatedRequestId: extra.requestId });
      return text(answer.action === 'accept' ? `Hello, ${answer.content?.name}` : 'declined');
    });
  server.registerTool('fail', { description: 'Always fails: the result is a tool error (isError: true).' }, async () => {
    throw new Error('fail always fails');
  });
  server.registerPrompt('greet', { description: 'Greet someone by name.', argsSchema: { name: z.string() } },
    ({ name }) => ({ messages: [{ role: 'user', content: { type: 'text', text: `Please greet ${name} warmly.` } }] }));
  server.registerResource('readme', 'ref://readme', { description: 'What this server is.', mimeType: 'text/plain' },
    async (uri) => ({ contents: [{ uri: uri.href, mimeType: 'text/plain',
      text: "ts-reference: a reference MCP server for wharf's client tests." }] }));
  server.registerResource('item', new ResourceTemplate('ref://items/{id}', { list: undefined }),
    { description: 'One item, by id.', mimeType: 'text/plain' },
    async (uri, { id }) => ({ contents: [{ uri: uri.href, mimeType: 'text/plain', text: `item ${id}` }] }));
  return server;
}

const open = new Set(); // what to close on shutdown: servers (stdio) and transports (HTTP sessions)
async function shutdown() {
  await Promise.allSettled([...open].map((it) => it.close()));
  process.exit(0);
}
process.on('SIGINT', shutdown);
process.on('SIGTERM', shutdown);

const httpAt = process.argv.indexOf('--http');
if (httpAt === -1) {
  const server = makeServer();
  open.add(server);
  process.stdin.on('end', shutdown); // the client closed stdin: the session is over
  await server.connect(new StdioServerTransport());
} else {
  const port = Number(process.argv[httpAt + 1]);
  const sessions = new Map(); // Mcp-Session-Id -> transport
  const app = createMcpExpressApp({ host: '127.0.0.1' }); // JSON body parsing, DNS-rebinding protection
  app.all('/mcp', async (req, res) => {
    const id = req.headers['mcp-session-id'];
    let transport = id && sessions.get(id);
    if (!transport) {
      if (id) return res.status(404).json({ jsonrpc: '2.0', error: { code: -32001, message: 'Session not found' }, id: null });
      if (req.method !== 'POST' || !isInitializeRequest(req.body)) {
        return res.status(400).json({ jsonrpc: '2.0', error: { code: -32000, message: 'Bad Request: No valid session ID provided' }, id: null });
      }
      transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (sid) => sessions.set(sid, transport),
      });
      transport.onclose = () => { sessions.delete(transport.sessionId); open.delete(transport); };
      open.add(transport);
      await makeServer().connect(transport);
    }
    await transport.handleRequest(req, res, req.body);
  });
  app.listen(port, '127.0.0.1', (error) => {
    if (error) { console.error(error); process.exit(1); }
    console.error(`ts-reference: Streamable HTTP on http://127.0.0.1:${port}/mcp`);
  });
}
