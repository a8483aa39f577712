//! The stdio transport: the server reads messages from stdin and writes them to stdout.
//! Nothing else may reach stdout; logs go to stderr through `tracing`.
//!
//! Standard input and output are read and written by two dedicated threads with plain blocking
//! calls. The async runtime's own stdin and stdout hand every read and write to its blocking
//! pool and back, which costs a thread switch per call; dedicated threads cost one per batch.

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
pub async fn serve_stdio(server: Server) -> Result<(), Error> {
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
