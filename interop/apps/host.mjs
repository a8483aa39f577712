// The test host's page: the official MCP Apps host bridge (`AppBridge` from
// @modelcontextprotocol/ext-apps, bundled into bridge.js by the test) between a tool's view in
// a sandboxed iframe and the server, which the page reaches through the official TypeScript SDK
// client in the test (the functions `mcpListTools`, `mcpReadResource` and `mcpCallTool` that
// puppeteer exposes). The view's content security policy is built from its `_meta.ui.csp`, as
// the extension asks of hosts: nothing undeclared is reachable.
import { AppBridge, PostMessageTransport, getToolUiResourceUri, isToolVisibilityAppOnly } from "./bridge.js";

const status = (text) => { document.getElementById("host-status").textContent = text; };

/** The CSP of a view: the extension's restrictive default, opened only to what `csp` declares. */
function contentSecurityPolicy(csp = {}) {
  const list = (origins) => (origins && origins.length ? origins.join(" ") : "");
  const resources = list(csp.resourceDomains);
  return [
    "default-src 'none'",
    `script-src 'self' 'unsafe-inline' ${resources}`.trim(),
    `style-src 'self' 'unsafe-inline' ${resources}`.trim(),
    `img-src 'self' data: ${resources}`.trim(),
    `font-src 'self' ${resources}`.trim(),
    `media-src 'self' data: ${resources}`.trim(),
    `connect-src ${list(csp.connectDomains) || "'none'"}`,
    `frame-src ${list(csp.frameDomains) || "'none'"}`,
    `base-uri ${list(csp.baseUriDomains) || "'self'"}`,
    "object-src 'none'",
  ].join("; ");
}

/** `html` with the CSP as the first element of its head. */
function withPolicy(html, policy) {
  const meta = `<meta http-equiv="Content-Security-Policy" content="${policy.replaceAll('"', "&quot;")}">`;
  return /<head[^>]*>/i.test(html) ? html.replace(/<head[^>]*>/i, (head) => head + meta) : meta + html;
}

/** Lists the tools, calls `name` with `args`, and renders the view its result names. */
window.showTool = async (name, args) => {
  const tools = await window.mcpListTools();
  const list = document.getElementById("tools");
  list.replaceChildren(...tools.map((tool) => {
    const item = document.createElement("li");
    item.textContent = tool.name + (isToolVisibilityAppOnly(tool) ? " (app only: hidden from the model)" : "");
    item.dataset.tool = tool.name;
    return item;
  }));
  const tool = tools.find((candidate) => candidate.name === name);
  const uri = tool && getToolUiResourceUri(tool);
  if (!uri) throw new Error(`${name} names no view`);
  const read = await window.mcpReadResource(uri);
  const contents = read.contents[0];
  const ui = (contents._meta && contents._meta.ui) || {};
  const policy = contentSecurityPolicy(ui.csp);
  document.body.dataset.csp = policy;

  const iframe = document.getElementById("view");
  const bridge = new AppBridge(null, { name: "wharf-test-host", version: "1" }, { serverTools: {}, logging: {} });
  bridge.oncalltool = async (params) => {
    // The host, not the server, keeps views to the tools they may call (SEP-1865, Visibility).
    const called = tools.find((candidate) => candidate.name === params.name);
    const visibility = called && called._meta && called._meta.ui && called._meta.ui.visibility;
    if (!called || (visibility && !visibility.includes("app"))) {
      throw new Error(`the view may not call ${params.name}`);
    }
    document.body.dataset.viewCalled = params.name;
    return window.mcpCallTool(params.name, params.arguments || {});
  };
  const result = await window.mcpCallTool(name, args);
  const initialized = new Promise((resolve) => { bridge.oninitialized = resolve; });
  await bridge.connect(new PostMessageTransport(iframe.contentWindow, iframe.contentWindow));
  iframe.srcdoc = withPolicy(contents.text, policy);
  await initialized;
  await bridge.sendToolInput({ arguments: args });
  await bridge.sendToolResult(result);
  status(`Showing ${uri}`);
};
