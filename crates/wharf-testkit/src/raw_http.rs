//! HTTP/1.1 written and read as bytes: what an MCP endpoint sees from any client, whatever its
//! library would have sent. Async (tokio) and blocking forms; every read has a deadline.

use std::io::{Read, Write};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// How long a whole response may take to arrive.
const READ_LIMIT: Duration = Duration::from_secs(10);

/// `Content-Type` and `Accept` as an MCP client sends them with a POST.
pub const JSON: [(&str, &str); 2] =
    [("content-type", "application/json"), ("accept", "application/json, text/event-stream")];

/// What came back for one request.
#[derive(Debug, Clone)]
pub struct Reply {
    /// The status code.
    pub status: u16,
    /// The headers, in order, names as sent.
    pub headers: Vec<(String, String)>,
    /// The body, de-chunked.
    pub body: String,
}

impl Reply {
    /// The first header named `name` (any case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(key, _)| key.eq_ignore_ascii_case(name)).map(|(_, value)| value.as_str())
    }

    /// The body as JSON; panics with the body when it is not.
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or_else(|err| panic!("not JSON ({err}): {}", self.body))
    }

    /// The `data` of every SSE event, parsed; a priming event (empty data) is skipped.
    pub fn events(&self) -> Vec<Value> {
        self.body
            .split("\n\n")
            .filter_map(|event| event.lines().find_map(|line| line.strip_prefix("data: ")))
            .filter(|data| !data.is_empty())
            .map(|data| serde_json::from_str(data).unwrap_or_else(|err| panic!("not JSON ({err}): {data}")))
            .collect()
    }
}

/// One request as raw bytes: `Connection: close`, `Content-Length`, and `Host: localhost:PORT`
/// unless `headers` name one.
pub fn request_bytes(port: u16, method: &str, path: &str, headers: &[(&str, &str)], body: &str) -> String {
    let mut request = format!("{method} {path} HTTP/1.1\r\nconnection: close\r\ncontent-length: {}\r\n", body.len());
    if !headers.iter().any(|(name, _)| name.eq_ignore_ascii_case("host")) {
        request.push_str(&format!("host: localhost:{port}\r\n"));
    }
    for (name, value) in headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    request.push_str("\r\n");
    request.push_str(body);
    request
}

/// Sends one request to `/mcp` on a loopback port and reads the whole response.
pub async fn send(port: u16, method: &str, headers: &[(&str, &str)], body: &str) -> Reply {
    exchange(port, &request_bytes(port, method, "/mcp", headers, body)).await
}

/// Sends one request to `path` on a loopback port and reads the whole response.
pub async fn send_to(port: u16, method: &str, path: &str, headers: &[(&str, &str)], body: &str) -> Reply {
    exchange(port, &request_bytes(port, method, path, headers, body)).await
}

/// Writes `request` (whole bytes, closing the connection after) and reads the response to the
/// end, at most ten seconds.
pub async fn exchange(port: u16, request: &str) -> Reply {
    let mut stream = open(port, request).await;
    let mut raw = Vec::new();
    tokio::time::timeout(READ_LIMIT, stream.read_to_end(&mut raw))
        .await
        .unwrap_or_else(|_| panic!("no whole response in {READ_LIMIT:?} to {request}"))
        .unwrap();
    parse(&raw)
}

/// [`send_to`] on a thread that may block: a test without a runtime.
pub fn send_blocking(port: u16, method: &str, path: &str, headers: &[(&str, &str)], body: &str) -> Reply {
    exchange_blocking(port, &request_bytes(port, method, path, headers, body))
}

/// [`exchange`] on a thread that may block.
pub fn exchange_blocking(port: u16, request: &str) -> Reply {
    let mut stream = open_blocking(port, request);
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).unwrap_or_else(|err| panic!("no whole response ({err}) to {request}"));
    parse(&raw)
}

/// Reads a response's bytes: status, headers and a body de-chunked when it was chunked.
pub fn parse(raw: &[u8]) -> Reply {
    let text = String::from_utf8_lossy(raw);
    let (head, rest) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let mut lines = head.lines();
    let status_line = lines.next().unwrap_or_default();
    let status = status_line
        .split(' ')
        .nth(1)
        .and_then(|code| code.parse().ok())
        .unwrap_or_else(|| panic!("not an HTTP response: {text}"));
    let headers: Vec<(String, String)> = lines
        .filter_map(|line| line.split_once(':'))
        .map(|(name, value)| (name.trim().to_owned(), value.trim().to_owned()))
        .collect();
    let chunked =
        headers.iter().any(|(name, value)| name.eq_ignore_ascii_case("transfer-encoding") && value == "chunked");
    let body = if chunked { dechunk(rest) } else { rest.to_owned() };
    Reply { status, headers, body }
}

fn dechunk(mut rest: &str) -> String {
    let mut body = String::new();
    while let Some((size, after)) = rest.split_once("\r\n") {
        let size = usize::from_str_radix(size.trim(), 16).unwrap_or(0);
        if size == 0 || after.len() < size {
            break;
        }
        body.push_str(&after[..size]);
        rest = after.get(size + 2..).unwrap_or_default();
    }
    body
}

/// Writes `request` (whole bytes) on a new connection to a loopback port and gives the
/// connection, to read its response as it comes ([`read_until`], [`read_within`],
/// [`read_rest`]): a stream of events, or an answer that must not be waited for whole.
pub async fn open(port: u16, request: &str) -> TcpStream {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).await.unwrap_or_else(|err| panic!("port {port}: {err}"));
    stream.write_all(request.as_bytes()).await.unwrap();
    stream
}

/// Reads `stream` into `seen` until it holds `wanted`, at most five seconds.
pub async fn read_until(stream: &mut TcpStream, seen: &mut String, wanted: &str) {
    if !read_within(stream, seen, wanted, Duration::from_secs(5)).await {
        panic!("no {wanted:?} in time; saw {seen}");
    }
}

/// Reads `stream` into `seen` until it holds `wanted`, for at most `limit`: false when it did
/// not come in time (what a test that waits for something that may not come asks). The
/// stream ending first fails the test.
pub async fn read_within(stream: &mut TcpStream, seen: &mut String, wanted: &str, limit: Duration) -> bool {
    let mut buffer = [0u8; 4096];
    let deadline = tokio::time::Instant::now() + limit;
    while !seen.contains(wanted) {
        let Ok(read) = tokio::time::timeout_at(deadline, stream.read(&mut buffer)).await else { return false };
        let read = read.unwrap();
        assert!(read > 0, "the stream ended before {wanted:?}: {seen}");
        seen.push_str(&String::from_utf8_lossy(&buffer[..read]));
    }
    true
}

/// Reads `stream` to its end into `seen`, at most ten seconds.
pub async fn read_rest(stream: &mut TcpStream, seen: &mut String) {
    let mut rest = Vec::new();
    tokio::time::timeout(READ_LIMIT, stream.read_to_end(&mut rest))
        .await
        .unwrap_or_else(|_| panic!("the response did not end in {READ_LIMIT:?}; saw {seen}"))
        .unwrap();
    seen.push_str(&String::from_utf8_lossy(&rest));
}

/// [`open`] on a thread that may block; reads on the connection give up after ten seconds.
pub fn open_blocking(port: u16, request: &str) -> std::net::TcpStream {
    let mut stream =
        std::net::TcpStream::connect(("127.0.0.1", port)).unwrap_or_else(|err| panic!("port {port}: {err}"));
    stream.set_read_timeout(Some(READ_LIMIT)).unwrap();
    stream.write_all(request.as_bytes()).unwrap();
    stream
}

/// [`read_until`] on a thread that may block, with the connection's read timeout
/// ([`open_blocking`] sets ten seconds).
pub fn read_until_blocking(stream: &mut std::net::TcpStream, seen: &mut String, wanted: &str) {
    let mut buffer = [0u8; 4096];
    while !seen.contains(wanted) {
        let read = stream.read(&mut buffer).unwrap_or_else(|err| panic!("no {wanted:?} ({err}); saw {seen}"));
        assert!(read > 0, "the stream ended before {wanted:?}: {seen}");
        seen.push_str(&String::from_utf8_lossy(&buffer[..read]));
    }
}

/// A `tools/call` request's body.
pub fn call(id: u64, tool: &str, arguments: Value) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": tool, "arguments": arguments}})
        .to_string()
}

/// A 2026-07-28 request's body: `params` with the `_meta` that revision requires.
pub fn stateless_body(id: u64, method: &str, params: Value) -> String {
    let mut params = params;
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}
    });
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string()
}

/// A 2026-07-28 `tools/call` of `tool` to `port`, from a client that takes form elicitation,
/// blocking, with `extra` params beside the name (`arguments`, `requestState`,
/// `inputResponses`) and the headers that revision requires.
pub fn stateless_call_blocking(port: u16, tool: &str, extra: Value) -> Reply {
    let mut params = json!({"name": tool, "arguments": {},
        "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                  "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}}}});
    for (key, value) in extra.as_object().into_iter().flatten() {
        params[key] = value.clone();
    }
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}).to_string();
    let headers =
        [JSON[0], JSON[1], ("mcp-protocol-version", "2026-07-28"), ("mcp-method", "tools/call"), ("mcp-name", tool)];
    send_blocking(port, "POST", "/mcp", &headers, &body)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_chunked_response_is_read_whole() {
        let reply =
            parse(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nX-A: b\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n");
        assert_eq!((reply.status, reply.body.as_str(), reply.header("x-a")), (200, "abcde", Some("b")));
    }

    #[test]
    fn a_request_names_its_host_unless_given_one() {
        assert!(request_bytes(8, "GET", "/mcp", &[], "").contains("host: localhost:8\r\n"));
        let given = request_bytes(8, "GET", "/mcp", &[("Host", "evil.example")], "");
        assert!(!given.contains("localhost") && given.contains("Host: evil.example"));
    }
}
