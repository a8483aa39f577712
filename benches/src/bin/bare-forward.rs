//! The bare forwarding baseline, the floor a gateway is measured against: a hyper HTTP/1.1
//! server that passes each request on, knowing nothing of MCP but what forwarding needs.
//!
//! - `bare-forward ADDRESS:PORT url http://HOST:PORT/PATH`: every connection it accepts gets
//!   a connection of its own to the upstream, and each request and response goes through
//!   unread (headers and body streamed as they came, `Host` rewritten).
//! - `bare-forward ADDRESS:PORT command [--initialize] PROGRAM ARGS...`: one child speaking
//!   JSON lines on stdio, shared by every connection. Each request's `id` is swapped for a
//!   number of its own on the way in and put back on the way out (the only parsing it does);
//!   notifications are accepted unsent, and `initialize` is answered here, with a session id,
//!   since the child is one session: with `--initialize` the forwarder opens it as a 2025-11-25
//!   one at start, without it the requests are 2026-07-28 ones that need none.

use std::collections::HashMap;
use std::convert::Infallible;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use hyper::body::Incoming;
use hyper::{Request, Response};
use serde_json::value::RawValue;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::sync::{mpsc, oneshot};
use wharf_bench::whole_body::{Whole, read_whole};

fn respond(status: u16, session: bool, body: Vec<u8>) -> Response<Whole> {
    let mut response = Response::builder().status(status);
    if !body.is_empty() {
        response = response.header("content-type", "application/json");
    }
    if session {
        response = response.header("mcp-session-id", "bare-forward");
    }
    response.body(Whole(Some(Bytes::from(body)))).unwrap_or_else(|_| Response::new(Whole(None)))
}

/// The one child on stdio, with the requests sent to it that wait for their answer.
struct Child {
    lines: mpsc::UnboundedSender<Vec<u8>>,
    waiting: Mutex<HashMap<u64, oneshot::Sender<Vec<u8>>>>,
    next_id: AtomicU64,
}

#[derive(serde::Deserialize)]
struct Head<'a> {
    #[serde(borrow, default)]
    id: Option<&'a RawValue>,
    #[serde(borrow, default)]
    method: Option<&'a RawValue>,
}

/// Where `raw`, a slice of `text`, starts and ends in it.
fn span(text: &[u8], raw: &RawValue) -> (usize, usize) {
    let start = raw.get().as_ptr() as usize - text.as_ptr() as usize;
    (start, start + raw.get().len())
}

/// `text` with the bytes from `start` to `end` replaced by `with`, and `tail` after it.
fn spliced(text: &[u8], (start, end): (usize, usize), with: &[u8], tail: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(text.len() + with.len() + tail.len());
    out.extend_from_slice(&text[..start]);
    out.extend_from_slice(with);
    out.extend_from_slice(&text[end..]);
    out.extend_from_slice(tail);
    out
}

async fn forward_to_child(request: Request<Incoming>, child: Arc<Child>) -> Result<Response<Whole>, Infallible> {
    let body = read_whole(request.into_body()).await;
    let Ok(head) = serde_json::from_slice::<Head<'_>>(&body) else { return Ok(respond(400, false, Vec::new())) };
    let Some(id) = head.id else { return Ok(respond(202, false, Vec::new())) };
    let original = span(&body, id);
    if head.method.is_some_and(|method| method.get() == "\"initialize\"") {
        let answer = format!(
            r#"{{"jsonrpc":"2.0","id":{},"result":{{"protocolVersion":"2025-11-25","capabilities":{{"tools":{{}}}},"serverInfo":{{"name":"bare-forward","version":"1"}}}}}}"#,
            id.get()
        );
        return Ok(respond(200, true, answer.into_bytes()));
    }
    let number = child.next_id.fetch_add(1, Ordering::Relaxed);
    let (answered, answer) = oneshot::channel();
    child.waiting.lock().unwrap().insert(number, answered);
    let line = spliced(&body, original, number.to_string().as_bytes(), b"\n");
    if child.lines.send(line).is_err() {
        return Ok(respond(502, false, Vec::new()));
    }
    let Ok(answer) = answer.await else { return Ok(respond(502, false, Vec::new())) };
    let Ok(Head { id: Some(theirs), .. }) = serde_json::from_slice::<Head<'_>>(&answer) else {
        return Ok(respond(502, false, Vec::new()));
    };
    let ours = &body[original.0..original.1];
    Ok(respond(200, false, spliced(&answer, span(&answer, theirs), ours, b"")))
}

/// Starts `program` with `args`, opens its session first when `initialize`, and returns the
/// shared handle the connections send through.
async fn start_child(program: &str, args: &[String], initialize: bool) -> Arc<Child> {
    let mut process = tokio::process::Command::new(program)
        .args(args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap_or_else(|err| panic!("cannot start {program}: {err}"));
    let mut stdin = process.stdin.take().expect("the child's stdin");
    let mut stdout = BufReader::with_capacity(1 << 16, process.stdout.take().expect("the child's stdout"));
    if initialize {
        stdin.write_all(concat!(r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bare-forward","version":"1"}}}"#, "\n").as_bytes()).await.expect("initialize the child");
        let mut answer = Vec::new();
        stdout.read_until(b'\n', &mut answer).await.expect("the child answers initialize");
        stdin
            .write_all(b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n")
            .await
            .expect("initialized");
    }
    let (lines, mut to_write) = mpsc::unbounded_channel::<Vec<u8>>();
    let child = Arc::new(Child { lines, waiting: Mutex::default(), next_id: AtomicU64::new(1) });
    tokio::spawn(async move {
        let _process = process;
        let mut batch = Vec::new();
        while let Some(line) = to_write.recv().await {
            batch.clear();
            batch.extend_from_slice(&line);
            while let Ok(line) = to_write.try_recv() {
                batch.extend_from_slice(&line);
            }
            if stdin.write_all(&batch).await.is_err() {
                return;
            }
        }
    });
    let reading = child.clone();
    tokio::spawn(async move {
        let mut line = Vec::new();
        loop {
            line.clear();
            match stdout.read_until(b'\n', &mut line).await {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
            let Ok(Head { id: Some(id), .. }) = serde_json::from_slice::<Head<'_>>(&line) else { continue };
            let Ok(number) = id.get().parse::<u64>() else { continue };
            if let Some(waiter) = reading.waiting.lock().unwrap().remove(&number) {
                let _ = waiter.send(std::mem::take(&mut line));
            }
        }
    });
    child
}

/// Passes `request` to the upstream behind `upstream`, its `Host` now the upstream's.
async fn forward_to_url(
    mut request: Request<Incoming>,
    upstream: &tokio::sync::Mutex<hyper::client::conn::http1::SendRequest<Incoming>>,
    authority: &http::HeaderValue,
) -> Result<Response<Incoming>, hyper::Error> {
    request.headers_mut().insert(http::header::HOST, authority.clone());
    let mut sender = upstream.lock().await;
    sender.send_request(request).await
}

fn main() {
    let mut args = std::env::args().skip(1);
    let usage = "usage: bare-forward ADDRESS:PORT (url URL | command [--initialize] PROGRAM ARGS...)";
    let address: std::net::SocketAddr = args.next().and_then(|address| address.parse().ok()).expect(usage);
    let kind = args.next().expect(usage);
    let rest: Vec<String> = args.collect();
    let runtime = tokio::runtime::Runtime::new().expect("a tokio runtime");
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::bind(address).await.expect("a listening socket");
        match kind.as_str() {
            "url" => {
                let url: http::Uri = rest.first().expect(usage).parse().expect("a URL");
                let authority = url.authority().expect("a URL with a host").to_string();
                let host: &'static http::HeaderValue =
                    Box::leak(Box::new(http::HeaderValue::from_str(&authority).expect("a Host value")));
                let authority: &'static str = Box::leak(authority.into_boxed_str());
                loop {
                    let Ok((stream, _)) = listener.accept().await else { continue };
                    let _ = stream.set_nodelay(true);
                    tokio::spawn(async move {
                        let Ok(upstream) = tokio::net::TcpStream::connect(authority).await else { return };
                        let _ = upstream.set_nodelay(true);
                        let Ok((sender, connection)) =
                            hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(upstream)).await
                        else {
                            return;
                        };
                        tokio::spawn(connection);
                        let sender = Arc::new(tokio::sync::Mutex::new(sender));
                        let service = hyper::service::service_fn(move |request| {
                            let sender = sender.clone();
                            async move { forward_to_url(request, &sender, host).await }
                        });
                        let connection = hyper::server::conn::http1::Builder::new()
                            .serve_connection(hyper_util::rt::TokioIo::new(stream), service);
                        let _ = connection.await;
                    });
                }
            }
            "command" => {
                let initialize = rest.first().is_some_and(|arg| arg == "--initialize");
                let command = &rest[usize::from(initialize)..];
                let (program, args) = command.split_first().expect(usage);
                let child = start_child(program, args, initialize).await;
                loop {
                    let Ok((stream, _)) = listener.accept().await else { continue };
                    let _ = stream.set_nodelay(true);
                    let child = child.clone();
                    tokio::spawn(async move {
                        let service =
                            hyper::service::service_fn(move |request| forward_to_child(request, child.clone()));
                        let connection = hyper::server::conn::http1::Builder::new()
                            .serve_connection(hyper_util::rt::TokioIo::new(stream), service);
                        let _ = connection.await;
                    });
                }
            }
            _ => panic!("{usage}"),
        }
    });
}
