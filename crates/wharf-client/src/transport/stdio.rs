//! stdio: the client starts the server process and exchanges newline-delimited JSON-RPC on its
//! stdin and stdout; the server's stderr is passed through, captured or discarded. The same
//! link speaks over any byte stream the caller opened.

use std::collections::VecDeque;
use std::process::Stdio;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use bytes::Bytes;
use serde_json::value::RawValue;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader, BufWriter};
use tokio::process::{Child, Command};
use tokio::sync::mpsc;
use wharf_protocol::{CancelledParams, JsonRpc2, NotificationMessage, RequestId};

use crate::error::ClientError;
use crate::router::{Router, excerpt};
use crate::transport::{BoxFuture, Deadline, Link, Outgoing};

/// What becomes of the server process's stderr.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum StderrMode {
    /// Written to this process's stderr, as the server wrote it.
    #[default]
    Inherit,
    /// Kept (its last 64 KiB) for [`Client::server_stderr`](crate::Client::server_stderr).
    Capture,
    /// Thrown away.
    Discard,
    /// Each line logged with `tracing` (target `wharf_client::server_stderr`, level info), in
    /// the span that was current when the client connected: a gateway logs each upstream's
    /// lines under its mount's name.
    Log,
}

/// How much of a captured stderr is kept.
const STDERR_KEPT: usize = 64 * 1024;

/// The longest line read from the server; a longer one is reported and skipped.
const MAX_LINE: usize = 64 * 1024 * 1024;

/// How long a server may take to exit once its stdin is closed, before it is killed.
const EXIT_GRACE: Duration = Duration::from_secs(2);

/// How a server program is started: its environment, directory, and what becomes of its
/// stderr.
pub(crate) struct Process<'a> {
    pub(crate) env: &'a [(String, String)],
    pub(crate) current_dir: Option<&'a std::path::Path>,
    pub(crate) stderr: StderrMode,
}

pub(crate) struct StdioLink {
    lines: mpsc::Sender<Bytes>,
    router: Arc<Router>,
    child: tokio::sync::Mutex<Option<Child>>,
    pid: Option<u32>,
    stderr: Option<Arc<Mutex<VecDeque<u8>>>>,
}

impl StdioLink {
    /// Starts `program` with `args`. `lines` is the bounded channel the router also sends its
    /// answers to; its receiver is `outgoing`.
    pub(crate) fn spawn(
        program: &str,
        args: &[String],
        process: &Process<'_>,
        router: Arc<Router>,
        lines: mpsc::Sender<Bytes>,
        outgoing: mpsc::Receiver<Bytes>,
    ) -> Result<StdioLink, ClientError> {
        let mut command = Command::new(program);
        command.args(args).stdin(Stdio::piped()).stdout(Stdio::piped()).kill_on_drop(true);
        command.envs(process.env.iter().map(|(name, value)| (name, value)));
        if let Some(directory) = process.current_dir {
            command.current_dir(directory);
        }
        command.stderr(match process.stderr {
            StderrMode::Inherit => Stdio::inherit(),
            StderrMode::Capture | StderrMode::Log => Stdio::piped(),
            StderrMode::Discard => Stdio::null(),
        });
        let mut child =
            command.spawn().map_err(|err| ClientError::connect(format!("could not start `{program}`: {err}")))?;
        let pid = child.id();
        let stdin = child.stdin.take().ok_or_else(|| ClientError::connect("the server's stdin is not a pipe"))?;
        let stdout = child.stdout.take().ok_or_else(|| ClientError::connect("the server's stdout is not a pipe"))?;
        let pipe = child.stderr.take();
        let kept = match (pipe, process.stderr) {
            (Some(pipe), StderrMode::Log) => {
                tokio::spawn(tracing::Instrument::instrument(log_stderr(pipe), tracing::Span::current()));
                None
            }
            (Some(pipe), _) => {
                let kept = Arc::new(Mutex::new(VecDeque::new()));
                tokio::spawn(keep_stderr(pipe, kept.clone()));
                Some(kept)
            }
            (None, _) => None,
        };
        tokio::spawn(write_lines(BufWriter::new(stdin), outgoing));
        tokio::spawn(read_lines(BufReader::new(stdout), router.clone()));
        Ok(StdioLink { lines, router, child: tokio::sync::Mutex::new(Some(child)), pid, stderr: kept })
    }

    /// Speaks newline-delimited JSON-RPC over `reader` and `writer`, a byte stream the caller
    /// opened (a socket, a pipe, an in-memory duplex): no process to start or stop.
    pub(crate) fn over_stream<R, W>(
        reader: R,
        writer: W,
        router: Arc<Router>,
        lines: mpsc::Sender<Bytes>,
        outgoing: mpsc::Receiver<Bytes>,
    ) -> StdioLink
    where
        R: AsyncRead + Unpin + Send + 'static,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        tokio::spawn(write_lines(BufWriter::new(writer), outgoing));
        tokio::spawn(read_lines(BufReader::new(reader), router.clone()));
        StdioLink { lines, router, child: tokio::sync::Mutex::new(None), pid: None, stderr: None }
    }

    /// Queues a line for the server, waiting while the queue is full.
    async fn send(&self, body: Bytes) -> Result<(), ClientError> {
        self.lines.send(body).await.map_err(|_| ClientError::closed("the server's stdin is closed"))
    }
}

impl Link for StdioLink {
    fn request(&self, message: Outgoing, deadline: Deadline) -> BoxFuture<'_, Result<Box<RawValue>, ClientError>> {
        Box::pin(async move {
            let id = message.id.clone().ok_or_else(|| ClientError::invalid("a request needs an id"))?;
            let answer = self.router.expect(id.clone());
            let exchanged = deadline.run(async {
                if let Err(err) = self.send(message.body.clone()).await {
                    self.router.forget(&id);
                    return Err(err);
                }
                match answer.await {
                    Ok(Ok(result)) => Ok(result),
                    Ok(Err(error)) => Err(ClientError::rpc_error(error)),
                    Err(_) => Err(ClientError::closed("the server exited before it answered")),
                }
            });
            exchanged.await.unwrap_or_else(|| Err(deadline.missed(&message)))
        })
    }

    fn notify(&self, message: Outgoing) -> BoxFuture<'_, Result<(), ClientError>> {
        Box::pin(async move { self.send(message.body).await })
    }

    fn cancel(&self, id: &RequestId) {
        self.router.forget(id);
        let params = CancelledParams { request_id: Some(id.clone()), reason: None, meta: None };
        let message =
            NotificationMessage { jsonrpc: JsonRpc2, method: "notifications/cancelled", params: Some(params) };
        let Ok(bytes) = serde_json::to_vec(&message) else { return };
        // Sent in order when there is room; otherwise it waits on a task of its own, one per
        // request the client gave up on.
        if let Err(mpsc::error::TrySendError::Full(bytes)) = self.lines.try_send(Bytes::from(bytes))
            && let Ok(runtime) = tokio::runtime::Handle::try_current()
        {
            let lines = self.lines.clone();
            runtime.spawn(async move { lines.send(bytes).await });
        }
    }

    fn set_protocol_version(&self, _version: Option<&'static str>) {}

    fn close(&self) -> BoxFuture<'_, ()> {
        Box::pin(async move {
            let Some(mut child) = self.child.lock().await.take() else {
                // A stream the caller opened: the empty line ends the writer, which closes the
                // write half, as the server's end of input.
                let _ = self.lines.send(Bytes::new()).await;
                self.router.close_all();
                return;
            };
            // The writer task ends, and closes stdin, once every sender is gone; the router
            // keeps one for answers, so stdin is closed here by an empty line. A server that
            // reads nothing more has the grace to take it, then is killed.
            let exited = async {
                let _ = self.lines.send(Bytes::new()).await;
                child.wait().await
            };
            if tokio::time::timeout(EXIT_GRACE, exited).await.is_err() {
                let _ = child.kill().await;
            }
            self.router.close_all();
        })
    }

    fn server_pid(&self) -> Option<u32> {
        self.pid
    }

    fn server_stderr(&self) -> Option<String> {
        let kept = self.stderr.as_ref()?.lock().unwrap_or_else(PoisonError::into_inner);
        let (front, back) = kept.as_slices();
        Some(String::from_utf8_lossy(&[front, back].concat()).into_owned())
    }
}

/// Writes each message as one line, flushing when no more are waiting. An empty message asks
/// for stdin to be closed.
async fn write_lines<W: AsyncWrite + Unpin>(mut stdin: BufWriter<W>, mut outgoing: mpsc::Receiver<Bytes>) {
    while let Some(first) = outgoing.recv().await {
        let mut next = Some(first);
        while let Some(line) = next.take() {
            if line.is_empty() {
                let _ = stdin.flush().await;
                let _ = stdin.shutdown().await;
                return;
            }
            if stdin.write_all(&line).await.is_err() || stdin.write_all(b"\n").await.is_err() {
                return;
            }
            next = outgoing.try_recv().ok();
        }
        if stdin.flush().await.is_err() {
            return;
        }
    }
}

async fn read_lines(mut stdout: impl AsyncBufReadExt + Unpin, router: Arc<Router>) {
    let mut line = Vec::new();
    loop {
        line.clear();
        match (&mut stdout).take(MAX_LINE as u64 + 1).read_until(b'\n', &mut line).await {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        if line.len() > MAX_LINE {
            router.anomaly(format!("the server wrote a line longer than {MAX_LINE} bytes; the connection ends"));
            break;
        }
        let text = line.strip_suffix(b"\n").unwrap_or(&line);
        let text = text.strip_suffix(b"\r").unwrap_or(text);
        if text.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        if text.first() != Some(&b'{') {
            router.anomaly(format!("the server wrote a line to stdout that is not a JSON object: {}", excerpt(text)));
            continue;
        }
        router.route_bytes(text).await;
    }
    router.close_all();
}

/// Logs each line of a server's stderr, cut at a bounded length.
async fn log_stderr(pipe: impl AsyncRead + Unpin) {
    let mut lines = BufReader::new(pipe);
    let mut line = Vec::new();
    loop {
        line.clear();
        match (&mut lines).take(STDERR_KEPT as u64).read_until(b'\n', &mut line).await {
            Ok(0) | Err(_) => return,
            Ok(_) => {
                let text = String::from_utf8_lossy(&line);
                tracing::info!(target: "wharf_client::server_stderr", "{}", text.trim_end());
            }
        }
    }
}

async fn keep_stderr(mut pipe: impl AsyncRead + Unpin, kept: Arc<Mutex<VecDeque<u8>>>) {
    let mut buffer = [0u8; 8192];
    while let Ok(read) = pipe.read(&mut buffer).await {
        if read == 0 {
            break;
        }
        let mut kept = kept.lock().unwrap_or_else(PoisonError::into_inner);
        kept.extend(&buffer[..read]);
        let excess = kept.len().saturating_sub(STDERR_KEPT);
        kept.drain(..excess);
    }
}
