//! The HTTP client the OTLP exporters post with: HTTP/1.1 over a plain TCP connection, one
//! request per connection, with a deadline.
//!
//! The exporters run on threads of their own, outside any async runtime, so the client does
//! blocking I/O; and nothing cancels an export that hangs, so every step has a timeout.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::time::{Duration, Instant};

use bytes::Bytes;
use opentelemetry_http::{HttpClient, HttpError, Request, Response};

/// Posts OTLP messages to `http://` endpoints (a collector beside the server, typically).
#[derive(Debug, Clone)]
pub(crate) struct BlockingClient {
    timeout: Duration,
}

/// The largest answer read; an OTLP answer is a few bytes.
const MAX_ANSWER: usize = 64 * 1024;

impl BlockingClient {
    pub(crate) fn new(timeout: Duration) -> BlockingClient {
        BlockingClient { timeout }
    }

    fn post(&self, request: &Request<Bytes>) -> Result<Response<Bytes>, HttpError> {
        let uri = request.uri();
        if uri.scheme_str() != Some("http") {
            return Err(format!(
                "OTLP endpoint `{uri}`: only http:// endpoints are supported (a collector beside the server)"
            )
            .into());
        }
        let host = uri.host().ok_or_else(|| format!("OTLP endpoint `{uri}` names no host"))?;
        let port = uri.port_u16().unwrap_or(80);
        let deadline = Instant::now() + self.timeout;
        let address = (host.trim_start_matches('[').trim_end_matches(']'), port)
            .to_socket_addrs()?
            .next()
            .ok_or_else(|| format!("OTLP endpoint `{uri}`: the host resolves to no address"))?;
        let stream = TcpStream::connect_timeout(&address, self.timeout)?;
        stream.set_write_timeout(Some(remaining(deadline)?))?;
        stream.set_read_timeout(Some(remaining(deadline)?))?;
        let path = uri.path_and_query().map_or("/", |path| path.as_str());
        let mut head = format!("{} {path} HTTP/1.1\r\nhost: {host}:{port}\r\nconnection: close\r\n", request.method());
        for (name, value) in request.headers() {
            if let Ok(value) = value.to_str() {
                head.push_str(&format!("{name}: {value}\r\n"));
            }
        }
        head.push_str(&format!("content-length: {}\r\n\r\n", request.body().len()));
        let mut writer = &stream;
        writer.write_all(head.as_bytes())?;
        writer.write_all(request.body())?;
        writer.flush()?;
        read_response(BufReader::new(&stream), deadline)
    }
}

/// The time left before `deadline`, or a timeout error.
fn remaining(deadline: Instant) -> Result<Duration, HttpError> {
    let left = deadline.saturating_duration_since(Instant::now());
    if left.is_zero() {
        return Err("OTLP export timed out".into());
    }
    Ok(left)
}

/// Reads a status line, headers and a body (by `content-length`, chunks, or to the end).
fn read_response(mut reader: impl BufRead, deadline: Instant) -> Result<Response<Bytes>, HttpError> {
    let mut line = String::new();
    reader.read_line(&mut line)?;
    let status: u16 = line
        .split_whitespace()
        .nth(1)
        .and_then(|code| code.parse().ok())
        .ok_or_else(|| format!("not an HTTP status line: {line:?}"))?;
    let mut response = Response::builder().status(status);
    let mut length = None;
    let mut chunked = false;
    loop {
        remaining(deadline)?;
        line.clear();
        if reader.read_line(&mut line)? == 0 || line.trim().is_empty() {
            break;
        }
        if let Some((name, value)) = line.split_once(':') {
            let (name, value) = (name.trim(), value.trim());
            if name.eq_ignore_ascii_case("content-length") {
                length = value.parse::<usize>().ok();
            }
            if name.eq_ignore_ascii_case("transfer-encoding") && value.eq_ignore_ascii_case("chunked") {
                chunked = true;
            }
            response = response.header(name, value);
        }
    }
    let mut body = Vec::new();
    if chunked {
        loop {
            line.clear();
            reader.read_line(&mut line)?;
            let size = usize::from_str_radix(line.trim(), 16).map_err(|_| "a bad chunk size")?;
            if size == 0 || body.len() + size > MAX_ANSWER {
                break;
            }
            let start = body.len();
            body.resize(start + size, 0);
            reader.read_exact(&mut body[start..])?;
            reader.read_line(&mut line)?;
        }
    } else if let Some(length) = length {
        body.resize(length.min(MAX_ANSWER), 0);
        reader.read_exact(&mut body)?;
    } else {
        reader.take(MAX_ANSWER as u64).read_to_end(&mut body)?;
    }
    Ok(response.body(Bytes::from(body))?)
}

#[async_trait::async_trait]
impl HttpClient for BlockingClient {
    async fn send_bytes(&self, request: Request<Bytes>) -> Result<Response<Bytes>, HttpError> {
        self.post(&request)
    }
}
