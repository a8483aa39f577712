//! A minimal HTTP/1.1 client for the benchmark: one keep-alive connection, one request at a
//! time, `Content-Length` bodies only. It does far less work than a general client, so the
//! load generator, which shares the machine with the server, takes as little CPU as it can.

use std::io;
use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// One keep-alive connection to a server.
#[derive(Debug)]
pub struct Connection {
    stream: TcpStream,
    host: String,
    request: Vec<u8>,
    received: Vec<u8>,
}

/// A response, with the only header the benchmark needs.
#[derive(Debug)]
pub struct Response {
    /// The status code.
    pub status: u16,
    /// The `Mcp-Session-Id` header, when there was one.
    pub session_id: Option<String>,
    /// The whole body.
    pub body: Vec<u8>,
}

impl Connection {
    /// Connects to `address`, with `TCP_NODELAY` as every latency-minded client sets it.
    pub async fn open(address: SocketAddr) -> io::Result<Connection> {
        let stream = TcpStream::connect(address).await?;
        stream.set_nodelay(true)?;
        Ok(Connection {
            stream,
            host: address.to_string(),
            request: Vec::with_capacity(1024),
            received: Vec::with_capacity(8192),
        })
    }

    /// POSTs `body` to `path` with `headers` (besides Host and Content-Length) and reads the
    /// whole response.
    pub async fn post(&mut self, path: &str, headers: &[(&str, &str)], body: &[u8]) -> io::Result<Response> {
        use std::io::Write as _;
        self.request.clear();
        write!(self.request, "POST {path} HTTP/1.1\r\nHost: {}\r\nContent-Length: {}\r\n", self.host, body.len())?;
        for (name, value) in headers {
            write!(self.request, "{name}: {value}\r\n")?;
        }
        self.request.extend_from_slice(b"\r\n");
        self.request.extend_from_slice(body);
        self.stream.write_all(&self.request).await?;
        self.read_response().await
    }

    async fn read_response(&mut self) -> io::Result<Response> {
        let head_length = loop {
            if let Some(end) = self.received.windows(4).position(|window| window == b"\r\n\r\n") {
                break end + 4;
            }
            self.fill().await?;
        };
        let head = std::str::from_utf8(&self.received[..head_length]).map_err(invalid)?;
        let mut lines = head.split("\r\n");
        let status = lines
            .next()
            .and_then(|line| line.split(' ').nth(1))
            .and_then(|code| code.parse().ok())
            .ok_or_else(|| invalid("no status line"))?;
        let mut content_length = None;
        let mut session_id = None;
        let mut chunked = false;
        for line in lines {
            let Some((name, value)) = line.split_once(':') else { continue };
            let value = value.trim();
            if name.eq_ignore_ascii_case("content-length") {
                content_length = value.parse::<usize>().ok();
            } else if name.eq_ignore_ascii_case("mcp-session-id") {
                session_id = Some(value.to_owned());
            } else if name.eq_ignore_ascii_case("transfer-encoding") {
                chunked = value.eq_ignore_ascii_case("chunked");
            }
        }
        if chunked {
            self.received.drain(..head_length);
            let body = self.read_chunks().await?;
            return Ok(Response { status, session_id, body });
        }
        let content_length = content_length.ok_or_else(|| invalid("no Content-Length"))?;
        while self.received.len() < head_length + content_length {
            self.fill().await?;
        }
        let body = self.received[head_length..head_length + content_length].to_vec();
        self.received.drain(..head_length + content_length);
        Ok(Response { status, session_id, body })
    }

    /// A chunked body (an SSE response), read to its last chunk.
    async fn read_chunks(&mut self) -> io::Result<Vec<u8>> {
        let mut body = Vec::new();
        loop {
            let line_end = loop {
                if let Some(end) = self.received.windows(2).position(|window| window == b"\r\n") {
                    break end;
                }
                self.fill().await?;
            };
            let size = std::str::from_utf8(&self.received[..line_end]).map_err(invalid)?;
            let size = usize::from_str_radix(size.split(';').next().unwrap_or_default().trim(), 16).map_err(invalid)?;
            let needed = line_end + 2 + size + 2;
            while self.received.len() < needed {
                self.fill().await?;
            }
            body.extend_from_slice(&self.received[line_end + 2..line_end + 2 + size]);
            self.received.drain(..needed);
            if size == 0 {
                return Ok(body);
            }
        }
    }

    async fn fill(&mut self) -> io::Result<()> {
        let mut chunk = [0u8; 8192];
        let read = self.stream.read(&mut chunk).await?;
        if read == 0 {
            return Err(io::Error::new(io::ErrorKind::UnexpectedEof, "the server closed the connection"));
        }
        self.received.extend_from_slice(&chunk[..read]);
        Ok(())
    }
}

fn invalid(error: impl Into<Box<dyn std::error::Error + Send + Sync>>) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, error)
}

/// A server process listening on a loopback port, killed when dropped.
#[derive(Debug)]
pub struct ServerProcess {
    child: Child,
    /// Where it listens.
    pub address: SocketAddr,
}

impl ServerProcess {
    /// Starts `program` with `args`, where `{addr}` in an argument becomes a free loopback
    /// address, and waits until it accepts connections.
    pub fn start(program: &str, args: &[&str]) -> ServerProcess {
        let address = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|listener| listener.local_addr())
            .expect("a free loopback port");
        let args: Vec<String> = args.iter().map(|arg| arg.replace("{addr}", &address.to_string())).collect();
        let child = Command::new(program)
            .args(&args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|err| panic!("cannot start {program}: {err}"));
        let server = ServerProcess { child, address };
        let deadline = Instant::now() + Duration::from_secs(10);
        while std::net::TcpStream::connect(address).is_err() {
            assert!(Instant::now() < deadline, "{program} did not listen on {address} within 10 s");
            std::thread::sleep(Duration::from_millis(10));
        }
        server
    }

    /// The process id, for reading its memory.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
