//! The stdio transport: the server reads messages from stdin and writes them to stdout.
//! Nothing else may reach stdout; logs go to stderr through `tracing`.
//!
//! When both are pipes (how MCP clients start servers), they are switched to non-blocking mode
//! and driven by the runtime's reactor, so reading, dispatch and writing share one thread and
//! no message crosses a thread. Otherwise (a terminal, a file) two dedicated threads read and
//! write with plain blocking calls: the async runtime's own stdin and stdout hand every call to
//! its blocking pool and back, which costs a thread switch per call instead of per batch.

use std::io::Read;
use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, ReadBuf};
use tokio::sync::{mpsc, oneshot};

use crate::error::Error;
use crate::server::Server;
use crate::transport::connection::{run, write_blocking};

/// How much one read from stdin asks for.
const READ_CHUNK: usize = 64 * 1024;

/// Serves `server` on stdin and stdout until stdin closes and in-flight requests finish.
///
/// It must run inside a Tokio runtime with the I/O driver enabled (`#[tokio::main]` and
/// `Builder::enable_all` do that), which drives stdin and stdout when they are pipes.
pub async fn serve_stdio(server: Server) -> Result<(), Error> {
    #[cfg(unix)]
    if let Some(pipes) = unix_pipes::StdioPipes::open() {
        return pipes.serve(server).await;
    }
    serve_with_threads(server).await
}

/// Serves with a thread for stdin and one for stdout.
async fn serve_with_threads(server: Server) -> Result<(), Error> {
    let (sender, receiver) = mpsc::channel::<Vec<u8>>(server.options().outbound_queue);
    let (written, writer_done) = oneshot::channel();
    std::thread::Builder::new()
        .name("wharf-stdout".to_owned())
        .spawn(move || {
            let result = write_blocking(std::io::stdout().lock(), receiver);
            let _ = written.send(result);
        })
        .map_err(Error::io)?;
    let reader = ThreadReader::spawn(std::io::stdin()).map_err(Error::io)?;
    let writer_done = async move { writer_done.await.unwrap_or_else(|_| Err(Error::closed())) };
    run(server, reader, sender, writer_done).await
}

/// An `AsyncRead` fed by a thread that does blocking reads.
struct ThreadReader {
    chunks: mpsc::Receiver<std::io::Result<Vec<u8>>>,
    chunk: Vec<u8>,
    position: usize,
}

impl ThreadReader {
    fn spawn<R: Read + Send + 'static>(mut source: R) -> std::io::Result<ThreadReader> {
        // A few chunks in flight let the thread read ahead while lines are being decoded.
        let (sender, chunks) = mpsc::channel(4);
        std::thread::Builder::new().name("wharf-stdin".to_owned()).spawn(move || {
            loop {
                let mut chunk = vec![0; READ_CHUNK];
                let outcome = match source.read(&mut chunk) {
                    Ok(0) => break,
                    Ok(read) => {
                        chunk.truncate(read);
                        Ok(chunk)
                    }
                    Err(err) if err.kind() == std::io::ErrorKind::Interrupted => continue,
                    Err(err) => Err(err),
                };
                let failed = outcome.is_err();
                if sender.blocking_send(outcome).is_err() || failed {
                    break;
                }
            }
        })?;
        Ok(ThreadReader { chunks, chunk: Vec::new(), position: 0 })
    }
}

impl AsyncRead for ThreadReader {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<std::io::Result<()>> {
        loop {
            if self.position < self.chunk.len() {
                let available = &self.chunk[self.position..];
                let taken = available.len().min(buf.remaining());
                buf.put_slice(&available[..taken]);
                self.position += taken;
                return Poll::Ready(Ok(()));
            }
            match self.chunks.poll_recv(cx) {
                Poll::Ready(Some(Ok(chunk))) => {
                    self.chunk = chunk;
                    self.position = 0;
                }
                Poll::Ready(Some(Err(err))) => return Poll::Ready(Err(err)),
                // The thread ended: end of input.
                Poll::Ready(None) => return Poll::Ready(Ok(())),
                Poll::Pending => return Poll::Pending,
            }
        }
    }
}

#[cfg(unix)]
mod unix_pipes {
    //! Stdin and stdout as non-blocking pipes on the runtime's reactor.

    use std::fs::File;
    use std::os::fd::{AsFd, OwnedFd};
    use std::os::unix::fs::FileTypeExt;

    use tokio::net::unix::pipe;

    use crate::error::Error;
    use crate::server::Server;
    use crate::transport::connection::serve_connection;

    /// Duplicates of the stdin and stdout descriptors, both known to be pipes.
    pub(super) struct StdioPipes {
        input: OwnedFd,
        output: OwnedFd,
    }

    impl StdioPipes {
        /// Both descriptors, when both are pipes; nothing is changed otherwise.
        pub(super) fn open() -> Option<StdioPipes> {
            let input = std::io::stdin().as_fd().try_clone_to_owned().ok()?;
            let output = std::io::stdout().as_fd().try_clone_to_owned().ok()?;
            (is_pipe(&input) && is_pipe(&output)).then_some(StdioPipes { input, output })
        }

        pub(super) async fn serve(self, server: Server) -> Result<(), Error> {
            // The non-blocking flag belongs to the open pipe, which fds 0 and 1 share with
            // these duplicates; copies are kept to clear it again at the end, so that
            // whatever uses the pipes after the server sees them as it left them.
            let restore = (self.input.try_clone().map_err(Error::io)?, self.output.try_clone().map_err(Error::io)?);
            let reader = pipe::Receiver::from_owned_fd(self.input).map_err(Error::io)?;
            let writer = pipe::Sender::from_owned_fd(self.output).map_err(Error::io)?;
            let result = serve_connection(server, reader, writer).await;
            let _ = pipe::Receiver::from_owned_fd_unchecked(restore.0).and_then(pipe::Receiver::into_blocking_fd);
            let _ = pipe::Sender::from_owned_fd_unchecked(restore.1).and_then(pipe::Sender::into_blocking_fd);
            result
        }
    }

    fn is_pipe(fd: &OwnedFd) -> bool {
        let Ok(fd) = fd.try_clone() else { return false };
        File::from(fd).metadata().is_ok_and(|metadata| metadata.file_type().is_fifo())
    }
}
