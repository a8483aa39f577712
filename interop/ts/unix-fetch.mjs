// A `fetch` that sends every request over a Unix socket with Node's `http.request({ socketPath })`,
// for the official SDK transports' `fetch` option: Node's own fetch has no socket path. The
// URL's path and query are sent; its host does not matter (the request names `localhost`).
import http from 'node:http';
import { Readable } from 'node:stream';

export function unixFetch(socketPath) {
  return (input, init = {}) =>
    new Promise((resolve, reject) => {
      const url = new URL(input instanceof Request ? input.url : String(input));
      const method = init.method ?? (input instanceof Request ? input.method : 'GET');
      const headers = Object.fromEntries(new Headers(init.headers ?? (input instanceof Request ? input.headers : undefined)));
      const request = http.request({ socketPath, path: url.pathname + url.search, method, headers }, (response) => {
        const received = new Headers();
        for (const [name, value] of Object.entries(response.headers)) {
          for (const one of [value].flat()) if (one !== undefined) received.append(name, one);
        }
        const empty = [204, 304].includes(response.statusCode) || method === 'HEAD';
        resolve(
          new Response(empty ? null : Readable.toWeb(response), {
            status: response.statusCode,
            statusText: response.statusMessage,
            headers: received,
          }),
        );
      });
      request.on('error', reject);
      const signal = init.signal;
      if (signal) {
        const abort = () => {
          request.destroy(signal.reason);
          reject(signal.reason);
        };
        if (signal.aborted) return abort();
        signal.addEventListener('abort', abort, { once: true });
      }
      request.end(init.body ?? undefined);
    });
}

/** The options the SDK transports take to speak to `wharf serve --unix PATH`, when
 * WHARF_MCP_UNIX names PATH: the URL they name, and the fetch that reaches the socket. */
export const unixTarget = process.env.WHARF_MCP_UNIX
  ? { url: 'http://localhost/mcp', options: { fetch: unixFetch(process.env.WHARF_MCP_UNIX) } }
  : undefined;
