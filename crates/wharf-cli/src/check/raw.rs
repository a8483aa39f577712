//! Probes below the client: raw lines on a server's stdin (malformed JSON, a message that is
//! not an object, an unknown method with a string id, an unknown notification) and raw HTTP
//! requests (a malformed body, a wrong content type, a foreign Origin), each followed by a
//! request that must still be answered. The server is never waited on longer than the timeout.

use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

use crate::check::report::{Outcome, Report};

const STDIO: &str = "wire (stdio)";
const HTTP: &str = "wire (http)";

/// The `_meta` a 2026-07-28 request carries.
fn stateless_meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "wharf-check", "version": env!("CARGO_PKG_VERSION")}
    })
}

/// A server process spoken to line by line.
struct Lines {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    timeout: Duration,
}

impl Lines {
    fn start(program: &str, args: &[String], timeout: Duration, quiet: bool) -> Result<Lines, String> {
        let mut child = Command::new(program)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(if quiet { Stdio::null() } else { Stdio::inherit() })
            .kill_on_drop(true)
            .spawn()
            .map_err(|err| format!("could not start `{program}`: {err}"))?;
        let stdin = child.stdin.take().ok_or("no stdin")?;
        let stdout = BufReader::new(child.stdout.take().ok_or("no stdout")?);
        Ok(Lines { child, stdin, stdout, timeout })
    }

    async fn send(&mut self, line: &str) -> Result<(), String> {
        let written = async {
            self.stdin.write_all(line.as_bytes()).await?;
            self.stdin.write_all(b"\n").await?;
            self.stdin.flush().await
        };
        written.await.map_err(|err| format!("the server's stdin is closed ({err})"))
    }

    /// The next line the server writes: `Ok(None)` when none comes in time, an error when
    /// stdout ends (the server exited) or the line is not JSON.
    async fn next(&mut self) -> Result<Option<Value>, String> {
        let deadline = Instant::now() + self.timeout;
        loop {
            let mut line = String::new();
            let left = deadline.saturating_duration_since(Instant::now());
            match tokio::time::timeout(left, self.stdout.read_line(&mut line)).await {
                Err(_) => return Ok(None),
                Ok(Err(err)) => return Err(format!("reading stdout failed: {err}")),
                Ok(Ok(0)) => return Err("the server exited (stdout closed)".to_owned()),
                Ok(Ok(_)) if line.trim().is_empty() => continue,
                Ok(Ok(_)) => match serde_json::from_str(line.trim()) {
                    Ok(message) => return Ok(Some(message)),
                    // Reported by the client's checks already; the probe reads on.
                    Err(_) => continue,
                },
            }
        }
    }

    /// The answer to request `id`, skipping notifications and the server's own requests.
    async fn answer_to(&mut self, id: &Value) -> Result<Option<Value>, String> {
        loop {
            match self.next().await? {
                None => return Ok(None),
                Some(message) if message.get("id") == Some(id) && message.get("method").is_none() => {
                    return Ok(Some(message));
                }
                Some(_) => continue,
            }
        }
    }

    /// The next answer of any id (an error to a message whose id could not be read has none).
    async fn any_answer(&mut self) -> Result<Option<Value>, String> {
        loop {
            match self.next().await? {
                None => return Ok(None),
                Some(message) if message.get("method").is_none() => return Ok(Some(message)),
                Some(_) => continue,
            }
        }
    }
}

/// How long a probe waits where no answer is allowed.
const SILENCE_WAIT: Duration = Duration::from_secs(2);

/// A revision no server speaks.
const UNKNOWN_VERSION: &str = "1999-01-01";

/// The answer to `initialize` with an unknown revision: the server must offer one it speaks.
fn negotiated_outcome(answer: &Value) -> (Outcome, String) {
    match answer.pointer("/result/protocolVersion").and_then(Value::as_str) {
        Some(version) if wharf::protocol::ProtocolVersion::parse(version).is_some() => {
            (Outcome::Pass, format!("offered {version} for {UNKNOWN_VERSION}"))
        }
        Some(version) => (Outcome::Fail, format!("offered `{version}`, which is no MCP revision")),
        None if code(answer).is_some() => (
            Outcome::Warn,
            format!("refused {UNKNOWN_VERSION} with an error; the spec wants the server to offer a revision it speaks"),
        ),
        None => (Outcome::Fail, format!("answered {answer}")),
    }
}

/// The answer to a 2026-07-28 request naming an unknown revision: `-32022`, naming the
/// supported ones.
fn unsupported_version_outcome(answer: Option<&Value>) -> (Outcome, String) {
    let Some(answer) = answer else { return (Outcome::Fail, "no answer within the timeout".to_owned()) };
    match code(answer) {
        Some(-32022) if answer.pointer("/error/data/supported").is_some_and(Value::is_array) => {
            (Outcome::Pass, "-32022, naming the supported revisions".to_owned())
        }
        Some(-32022) => (Outcome::Warn, "-32022 without data.supported".to_owned()),
        Some(other) => (Outcome::Fail, format!("{other}; the spec wants -32022")),
        None => (Outcome::Fail, format!("answered {UNKNOWN_VERSION} with a result: {answer}")),
    }
}

fn code(message: &Value) -> Option<i64> {
    message.get("error").and_then(|error| error.get("code")).and_then(Value::as_i64)
}

/// The stdio probes, on a process of their own.
pub(crate) async fn stdio(
    report: &mut Report,
    program: &str,
    args: &[String],
    stateless: bool,
    timeout: Duration,
    quiet: bool,
) {
    let mut lines = match Lines::start(program, args, timeout, quiet) {
        Ok(lines) => lines,
        Err(err) => return report.add(STDIO, "start", Outcome::Fail, err),
    };
    let outcome = probe_stdio(report, &mut lines, stateless).await;
    if let Err(err) = outcome {
        report.add(STDIO, "server alive", Outcome::Fail, err);
    }
    drop(lines.stdin);
    if tokio::time::timeout(Duration::from_secs(2), lines.child.wait()).await.is_err() {
        let _ = lines.child.kill().await;
        report.add(STDIO, "exits when stdin closes", Outcome::Warn, "still running 2 s after stdin closed; killed");
    } else {
        report.add(STDIO, "exits when stdin closes", Outcome::Pass, "");
    }
}

async fn probe_stdio(report: &mut Report, lines: &mut Lines, stateless: bool) -> Result<(), String> {
    let meta = if stateless { Some(stateless_meta()) } else { None };
    if stateless {
        let mut unknown = stateless_meta();
        unknown["io.modelcontextprotocol/protocolVersion"] = json!(UNKNOWN_VERSION);
        let discover = json!({"jsonrpc": "2.0", "id": 0, "method": "server/discover", "params": {"_meta": unknown}});
        lines.send(&discover.to_string()).await?;
        let answer = lines.answer_to(&json!(0)).await?;
        report.add(
            STDIO,
            "unknown revision",
            unsupported_version_outcome(answer.as_ref()).0,
            unsupported_version_outcome(answer.as_ref()).1,
        );
    } else {
        let initialize = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": UNKNOWN_VERSION, "capabilities": {}, "clientInfo": {"name": "wharf-check", "version": "1"}}});
        lines.send(&initialize.to_string()).await?;
        let Some(answer) = lines.answer_to(&json!(0)).await? else {
            return Err("no answer to `initialize`".to_owned());
        };
        let (outcome, detail) = negotiated_outcome(&answer);
        report.add(STDIO, "version negotiation", outcome, detail);
        lines.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#).await?;
    }
    let params = |extra: Value| -> Value {
        let mut params = extra;
        if let Some(meta) = &meta {
            params["_meta"] = meta.clone();
        }
        params
    };

    // Silence is allowed here (a warning), so it is not waited on for the whole timeout.
    let patience = lines.timeout;
    lines.timeout = patience.min(SILENCE_WAIT);
    lines.send(r#"{"jsonrpc":"2.0","id":1,"method":"tools/list""#).await?;
    match lines.any_answer().await? {
        Some(answer) if code(&answer) == Some(-32700) => report.add(STDIO, "malformed JSON", Outcome::Pass, "-32700"),
        Some(answer) => {
            report.add(STDIO, "malformed JSON", Outcome::Fail, format!("answered {answer} instead of -32700"))
        }
        None => report.add(STDIO, "malformed JSON", Outcome::Warn, "no answer (JSON-RPC wants -32700 with a null id)"),
    }
    lines.send("42").await?;
    match lines.any_answer().await? {
        Some(answer) if code(&answer) == Some(-32600) => report.add(STDIO, "not an object", Outcome::Pass, "-32600"),
        Some(answer) if code(&answer).is_some() => {
            report.add(STDIO, "not an object", Outcome::Warn, format!("answered {answer}; JSON-RPC wants -32600"))
        }
        Some(answer) => report.add(STDIO, "not an object", Outcome::Fail, format!("answered {answer}")),
        None => report.add(STDIO, "not an object", Outcome::Warn, "no answer (JSON-RPC wants -32600)"),
    }
    lines.timeout = patience;
    let unknown = json!({"jsonrpc": "2.0", "id": "1", "method": "wharf/no-such-method", "params": params(json!({}))});
    lines.send(&unknown.to_string()).await?;
    match lines.any_answer().await? {
        Some(answer) if answer.get("id") != Some(&json!("1")) => report.add(
            STDIO,
            "string id kept",
            Outcome::Fail,
            format!(
                "the request's id was the string \"1\"; the answer's is {}",
                answer.get("id").unwrap_or(&Value::Null)
            ),
        ),
        Some(answer) => {
            report.add(STDIO, "string id kept", Outcome::Pass, "");
            match code(&answer) {
                Some(-32601) => report.add(STDIO, "unknown method", Outcome::Pass, "-32601"),
                Some(other) => {
                    report.add(STDIO, "unknown method", Outcome::Warn, format!("{other}; the spec wants -32601"))
                }
                None => report.add(STDIO, "unknown method", Outcome::Fail, "answered with a result"),
            }
        }
        None => report.add(STDIO, "unknown method", Outcome::Fail, "no answer within the timeout"),
    }
    lines.send(r#"{"jsonrpc":"2.0","method":"notifications/wharf-check-unknown"}"#).await?;
    let listing = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": params(json!({}))});
    lines.send(&listing.to_string()).await?;
    match lines.any_answer().await? {
        Some(answer) if answer.get("id") == Some(&json!(2)) => {
            report.add(STDIO, "unknown notification ignored", Outcome::Pass, "");
            report.add(STDIO, "server alive", Outcome::Pass, "it answers after the bad input");
        }
        Some(answer) => {
            report.add(STDIO, "unknown notification ignored", Outcome::Fail, format!("answered it: {answer}"))
        }
        None => report.add(STDIO, "server alive", Outcome::Fail, "no answer to `tools/list` after the bad input"),
    }
    Ok(())
}

/// An HTTP/1.1 exchange over a fresh connection (`http://` only).
async fn exchange(
    url: &str,
    headers: &[(&str, &str)],
    body: &str,
    timeout: Duration,
) -> Result<(u16, String, String), String> {
    let rest = url.strip_prefix("http://").ok_or("raw probes need an http:// URL")?;
    let (authority, path) = match rest.find('/') {
        Some(slash) => (&rest[..slash], &rest[slash..]),
        None => (rest, "/"),
    };
    let mut request =
        format!("POST {path} HTTP/1.1\r\nHost: {authority}\r\nConnection: close\r\nContent-Length: {}\r\n", body.len());
    for (name, value) in headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    request.push_str("\r\n");
    request.push_str(body);
    let talk = async {
        let mut stream =
            tokio::net::TcpStream::connect(authority).await.map_err(|err| format!("{authority}: {err}"))?;
        stream.write_all(request.as_bytes()).await.map_err(|err| err.to_string())?;
        let mut answer = Vec::new();
        let mut chunk = [0u8; 8192];
        loop {
            let read = stream.read(&mut chunk).await.map_err(|err| err.to_string())?;
            if read == 0 || answer.len() > 1 << 20 {
                break;
            }
            answer.extend_from_slice(&chunk[..read]);
            // An event stream may stay open after its answer: stop once the answer is in.
            if streamed_answer(&answer) {
                break;
            }
        }
        Ok::<_, String>(String::from_utf8_lossy(&answer).into_owned())
    };
    let text = tokio::time::timeout(timeout, talk).await.map_err(|_| "no answer within the timeout".to_owned())??;
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let status = head.split_whitespace().nth(1).and_then(|code| code.parse().ok()).unwrap_or(0);
    let chunked = header(head, "transfer-encoding").is_some_and(|value| value.eq_ignore_ascii_case("chunked"));
    let body = if chunked { dechunk(body) } else { body.to_owned() };
    Ok((status, head.to_owned(), body))
}

/// The data of a chunked body (RFC 9112 §7.1), as far as it arrived.
fn dechunk(mut rest: &str) -> String {
    let mut body = String::new();
    while let Some((size, after)) = rest.split_once("\r\n") {
        let Ok(size) = usize::from_str_radix(size.split(';').next().unwrap_or("").trim(), 16) else { break };
        if size == 0 || after.len() < size {
            body.push_str(&after[..after.len().min(size)]);
            break;
        }
        body.push_str(&after[..size]);
        rest = after[size..].strip_prefix("\r\n").unwrap_or(&after[size..]);
    }
    body
}

/// True when `answer` is an event stream that carries an answer already (events before it,
/// such as a priming one with empty data, do not count).
fn streamed_answer(answer: &[u8]) -> bool {
    let text = String::from_utf8_lossy(answer);
    let Some((head, body)) = text.split_once("\r\n\r\n") else { return false };
    head.to_ascii_lowercase().contains("text/event-stream")
        && body
            .lines()
            .filter_map(|line| line.strip_prefix("data:"))
            .filter_map(|data| serde_json::from_str::<Value>(data.trim()).ok())
            .any(|message| message.get("result").is_some() || message.get("error").is_some())
}

/// The JSON-RPC message in a body: JSON, or the first `data:` of an event stream.
fn message_in(body: &str) -> Option<Value> {
    if let Ok(value) = serde_json::from_str::<Value>(body.trim()) {
        return Some(value);
    }
    body.lines().filter_map(|line| line.strip_prefix("data:")).find_map(|data| serde_json::from_str(data.trim()).ok())
}

fn header<'a>(head: &'a str, name: &str) -> Option<&'a str> {
    head.lines()
        .filter_map(|line| line.split_once(':'))
        .find(|(key, _)| key.trim().eq_ignore_ascii_case(name))
        .map(|(_, value)| value.trim())
}

/// The HTTP probes.
pub(crate) async fn http(
    report: &mut Report,
    url: &str,
    stateless: bool,
    extra: &[(String, String)],
    timeout: Duration,
) {
    if !url.starts_with("http://") {
        return report.add(HTTP, "raw probes", Outcome::Skip, "they need an http:// URL");
    }
    let mut base: Vec<(&str, &str)> =
        vec![("Content-Type", "application/json"), ("Accept", "application/json, text/event-stream")];
    base.extend(extra.iter().map(|(name, value)| (name.as_str(), value.as_str())));
    let version = if stateless { "2026-07-28" } else { "2025-11-25" };

    match exchange(url, &with(&base, &[("MCP-Protocol-Version", version)]), "{\"jsonrpc\":", timeout).await {
        Ok((status, _, _)) if (400..500).contains(&status) => {
            report.add(HTTP, "malformed body", Outcome::Pass, format!("{status}"))
        }
        Ok((status, _, body)) => {
            report.add(HTTP, "malformed body", Outcome::Fail, format!("answered {status}: {}", body.trim()))
        }
        Err(err) => report.add(HTTP, "malformed body", Outcome::Fail, err),
    }
    let plain: Vec<(&str, &str)> = base
        .iter()
        .map(
            |(name, value)| {
                if name.eq_ignore_ascii_case("content-type") { (*name, "text/plain") } else { (*name, *value) }
            },
        )
        .collect();
    let params = if stateless { json!({"_meta": stateless_meta()}) } else { json!({}) };
    let listing = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": params});
    match exchange(
        url,
        &with(&plain, &[("MCP-Protocol-Version", version), ("Mcp-Method", "tools/list")]),
        &listing.to_string(),
        timeout,
    )
    .await
    {
        Ok((status, _, _)) if (400..500).contains(&status) => {
            report.add(HTTP, "wrong content type", Outcome::Pass, format!("{status}"))
        }
        Ok((status, _, _)) => {
            report.add(HTTP, "wrong content type", Outcome::Warn, format!("accepted text/plain ({status})"))
        }
        Err(err) => report.add(HTTP, "wrong content type", Outcome::Fail, err),
    }

    // A session (2025) or the stateless headers (2026) for what follows.
    let mut session: Vec<(&str, String)> = vec![("MCP-Protocol-Version", version.to_owned())];
    if stateless {
        let mut unknown = stateless_meta();
        unknown["io.modelcontextprotocol/protocolVersion"] = json!(UNKNOWN_VERSION);
        let discover = json!({"jsonrpc": "2.0", "id": 0, "method": "server/discover", "params": {"_meta": unknown}});
        let headers = with(&base, &[("MCP-Protocol-Version", UNKNOWN_VERSION), ("Mcp-Method", "server/discover")]);
        match exchange(url, &headers, &discover.to_string(), timeout).await {
            Ok((status, _, body)) => match message_in(&body) {
                Some(answer) => {
                    let (outcome, detail) = unsupported_version_outcome(Some(&answer));
                    report.add(HTTP, "unknown revision", outcome, format!("{detail} ({status})"));
                }
                None => report.add(
                    HTTP,
                    "unknown revision",
                    Outcome::Fail,
                    format!("{status}, not JSON-RPC: {}", body.trim()),
                ),
            },
            Err(err) => report.add(HTTP, "unknown revision", Outcome::Fail, err),
        }
    } else {
        let initialize = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": UNKNOWN_VERSION, "capabilities": {}, "clientInfo": {"name": "wharf-check", "version": "1"}}});
        match exchange(url, &base, &initialize.to_string(), timeout).await {
            Ok((_, head, body)) => {
                if let Some(id) = header(&head, "mcp-session-id") {
                    session.push(("Mcp-Session-Id", id.to_owned()));
                }
                match message_in(&body) {
                    Some(answer) => {
                        let (outcome, detail) = negotiated_outcome(&answer);
                        report.add(HTTP, "version negotiation", outcome, detail);
                        if let Some(version) = answer.pointer("/result/protocolVersion").and_then(Value::as_str) {
                            session[0].1 = version.to_owned();
                        }
                    }
                    None => report.add(HTTP, "version negotiation", Outcome::Fail, format!("answered {}", body.trim())),
                }
            }
            Err(err) => return report.add(HTTP, "initialize", Outcome::Fail, err),
        }
        let session_headers: Vec<(&str, &str)> = session.iter().map(|(name, value)| (*name, value.as_str())).collect();
        let _ = exchange(
            url,
            &with(&base, &session_headers),
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            timeout,
        )
        .await;
    }
    let session_headers: Vec<(&str, &str)> = session.iter().map(|(name, value)| (*name, value.as_str())).collect();
    let unknown = json!({"jsonrpc": "2.0", "id": "7", "method": "wharf/no-such-method", "params": params.clone()});
    let headers = with(&with(&base, &session_headers), &[("Mcp-Method", "wharf/no-such-method")]);
    match exchange(url, &headers, &unknown.to_string(), timeout).await {
        Ok((status, _, body)) => match message_in(&body) {
            Some(message) if message.get("id") == Some(&json!("7")) && code(&message) == Some(-32601) => {
                report.add(HTTP, "unknown method", Outcome::Pass, format!("-32601 ({status})"))
            }
            Some(message) if code(&message).is_some() => report.add(
                HTTP,
                "unknown method",
                Outcome::Warn,
                format!("{status}: {message}; the spec wants -32601 with id \"7\""),
            ),
            _ => report.add(HTTP, "unknown method", Outcome::Fail, format!("{status}: {}", body.trim())),
        },
        Err(err) => report.add(HTTP, "unknown method", Outcome::Fail, err),
    }
    let headers =
        with(&with(&base, &session_headers), &[("Origin", "http://evil.example"), ("Mcp-Method", "tools/list")]);
    let listing = json!({"jsonrpc": "2.0", "id": 8, "method": "tools/list", "params": params});
    match exchange(url, &headers, &listing.to_string(), timeout).await {
        Ok((403, _, _)) => report.add(HTTP, "foreign Origin refused", Outcome::Pass, "403"),
        Ok((status, _, _)) => report.add(
            HTTP,
            "foreign Origin refused",
            Outcome::Warn,
            format!(
                "a page from http://evil.example was answered {status}; servers must validate Origin (DNS rebinding)"
            ),
        ),
        Err(err) => report.add(HTTP, "foreign Origin refused", Outcome::Fail, err),
    }
    let headers = with(&with(&base, &session_headers), &[("Mcp-Method", "tools/list")]);
    match exchange(url, &headers, &listing.to_string(), timeout).await {
        Ok((status, _, body)) if message_in(&body).is_some_and(|message| message.get("result").is_some()) => {
            report.add(HTTP, "server alive", Outcome::Pass, format!("{status}"))
        }
        Ok((status, _, body)) => report.add(HTTP, "server alive", Outcome::Fail, format!("{status}: {}", body.trim())),
        Err(err) => report.add(HTTP, "server alive", Outcome::Fail, err),
    }
}

fn with<'a>(base: &[(&'a str, &'a str)], more: &[(&'a str, &'a str)]) -> Vec<(&'a str, &'a str)> {
    base.iter().chain(more).copied().collect()
}
