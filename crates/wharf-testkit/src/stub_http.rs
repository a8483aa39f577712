//! A stub HTTP/1.1 server on a loopback port, for what Wharf calls out to (an authorization
//! server's metadata and keys, an OTLP receiver): each request is handed, read whole, to a
//! function that answers it. Served from threads, so tests with or without a runtime use it.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};

/// A request the stub received.
#[derive(Debug, Clone)]
pub struct Request {
    /// `GET`, `POST`, ...
    pub method: String,
    /// The request target, query included.
    pub path: String,
    /// The headers, in order, names as sent.
    pub headers: Vec<(String, String)>,
    /// The body, as many bytes as `Content-Length` said.
    pub body: Vec<u8>,
}

/// What the stub answers to one request.
#[derive(Debug, Clone)]
pub struct Answer {
    /// The status code.
    pub status: u16,
    /// The `Content-Type`.
    pub content_type: &'static str,
    /// The body.
    pub body: Vec<u8>,
}

impl Answer {
    /// A JSON body with `status`.
    pub fn json(status: u16, body: impl Into<String>) -> Answer {
        Answer { status, content_type: "application/json", body: body.into().into_bytes() }
    }
}

/// A stub bound to a free loopback port, not answering yet: its URL can go into what it
/// serves (an issuer names itself in its metadata).
#[derive(Debug)]
pub struct Stub(TcpListener);

impl Stub {
    /// Binds a free loopback port.
    pub fn bind() -> Stub {
        Stub(TcpListener::bind(("127.0.0.1", 0)).expect("bind a loopback port"))
    }

    /// Its port.
    pub fn port(&self) -> u16 {
        self.0.local_addr().expect("the bound address").port()
    }

    /// `http://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port())
    }

    /// Serves until the test process ends: every request is answered with what `answer`
    /// makes of it, and its connection closed. The port.
    pub fn serve(self, answer: impl Fn(&Request) -> Answer + Send + Sync + 'static) -> u16 {
        let port = self.port();
        let answer = std::sync::Arc::new(answer);
        std::thread::spawn(move || {
            for stream in self.0.incoming() {
                let Ok(stream) = stream else { return };
                let answer = answer.clone();
                // A thread for each connection: one that sends nothing never holds up the others.
                std::thread::spawn(move || answer_one(stream, &*answer));
            }
        });
        port
    }
}

/// Reads one request from `stream` and writes what `answer` makes of it.
fn answer_one(stream: TcpStream, answer: &dyn Fn(&Request) -> Answer) {
    let mut reader = BufReader::new(stream);
    let mut line = String::new();
    if reader.read_line(&mut line).unwrap_or(0) == 0 {
        return;
    }
    let mut words = line.split_whitespace();
    let (method, path) = (words.next().unwrap_or_default().to_owned(), words.next().unwrap_or_default().to_owned());
    let mut headers = Vec::new();
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
            break;
        }
        if let Some((name, value)) = line.split_once(':') {
            headers.push((name.trim().to_owned(), value.trim().to_owned()));
        }
    }
    let length = headers
        .iter()
        .find(|(name, _)| name.eq_ignore_ascii_case("content-length"))
        .and_then(|(_, value)| value.parse().ok())
        .unwrap_or(0);
    let mut body = vec![0; length];
    if reader.read_exact(&mut body).is_err() {
        return;
    }
    let Answer { status, content_type, body } = answer(&Request { method, path, headers, body });
    let reason = match status {
        200 => "OK",
        404 => "Not Found",
        _ => "Stubbed",
    };
    let head = format!(
        "HTTP/1.1 {status} {reason}\r\ncontent-type: {content_type}\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
        body.len()
    );
    let stream = reader.get_mut();
    let _ = stream.write_all(head.as_bytes()).and_then(|()| stream.write_all(&body));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_request_is_answered_by_the_function() {
        let port = Stub::bind().serve(|request| {
            Answer::json(if request.path == "/here" { 200 } else { 404 }, String::from_utf8_lossy(&request.body))
        });
        let found = crate::raw_http::send_blocking(port, "POST", "/here", &[], "{\"a\":1}");
        assert_eq!((found.status, found.body.as_str()), (200, "{\"a\":1}"));
        assert_eq!(crate::raw_http::send_blocking(port, "GET", "/elsewhere", &[], "").status, 404);
    }
}
