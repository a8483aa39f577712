// A `wharf` process for the length of a test step, at the URL its banner names: what the
// interop scripts that start `wharf serve --http`, `wharf record --url` or `wharf replay --http`
// share. Uses Node's built-ins only, so scripts in other folders import it by path.
import { spawn } from 'node:child_process';

/** Runs `WHARF ARGS` for the length of `body(url)`: the URL is the one its stderr names before
 * "(Streamable HTTP)" (read within 10 s), and the process is killed at the end whatever
 * happened (its exit awaited, 10 s at most). */
export async function withWharf(wharf, args, body) {
  const child = spawn(wharf, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  let stderr = '';
  try {
    const url = await new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no URL from wharf ${args[0]} in 10 s: ${stderr}`)), 10000);
      child.once('error', reject);
      exited.then((code) => reject(new Error(`wharf ${args[0]} exited (${code}): ${stderr}`)));
      child.stderr.on('data', (chunk) => {
        stderr += chunk;
        const found = stderr.match(/(http:\/\/127\.0\.0\.1:\d+\/mcp) \(Streamable HTTP\)/);
        if (found) {
          clearTimeout(timer);
          resolve(found[1]);
        }
      });
    });
    return await body(url);
  } finally {
    child.kill('SIGKILL');
    let timer;
    await Promise.race([exited, new Promise((resolve) => (timer = setTimeout(resolve, 10000)))]);
    clearTimeout(timer);
  }
}
