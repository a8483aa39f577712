//! The stdio transport: the server reads messages from stdin and writes them to stdout.
//! Nothing else may reach stdout; logs go to stderr through `tracing`.
//!
//! A thread of its own reads stdin with plain blocking calls, decodes each line, and writes
//! the answers it makes at once (most of them) to stdout itself: a pipelined request costs the
//! one read and the one write per batch a bare loop would make, with no event-loop round trip
//! and no hand-over between threads. Whatever else goes out (answers of requests that waited,
//! notifications, requests to the client) goes through the connection's queue to a writer
//! thread. Blocking calls work the same on pipes, files and terminals, on every platform.

use std::io::Read;
use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, ReadBuf};
use tokio::sync::{mpsc, oneshot};

use crate::contract::Error;
use crate::contract::Outbound;
use crate::contract::Server;
use crate::transport::connection::{Reading, run};
use crate::transport::serving::Serving;
use crate::transport::shared_writer::SharedWriter;
use crate::transport::stdio_options::StdioOptions;

/// Serves `server` on stdin and stdout until stdin closes and in-flight requests finish: await
/// the [`Serving`] it gives.
///
/// It must run inside a Tokio runtime with the time driver enabled (`#[tokio::main]` and
/// `Builder::enable_all` do that). Requests whose handlers wait become tasks of that runtime.
pub fn serve_stdio(server: Server) -> Serving {
    serve_stdio_with(server, StdioOptions::default())
}

/// [`serve_stdio`] with options.
pub fn serve_stdio_with(server: Server, options: StdioOptions) -> Serving {
    Serving::new(async move {
        let output = SharedWriter::new(std::io::stdout());
        let (sender, receiver) = mpsc::channel::<Vec<u8>>(server.options().outbound_queue);
        let outbound = Outbound::counted(sender, output.unwritten());
        let (written, writer_done) = oneshot::channel();
        // The writer's thread starts with the first queued message: while the read thread answers
        // every request itself, as it does a client's first, none is needed.
        tokio::spawn({
            let output = output.clone();
            async move {
                let mut receiver = receiver;
                let Some(first) = receiver.recv().await else {
                    let _ = written.send(Ok(()));
                    return;
                };
                let started = std::thread::Builder::new().name("wharf-stdout".to_owned()).spawn(move || {
                    let _ = written.send(output.write_queue(Some(first), receiver));
                });
                // The sender went with the closure; dropping it says the writer failed.
                if let Err(err) = started {
                    tracing::error!("wharf-stdout: the writer thread could not start: {err}");
                }
            }
        });
        let writer_done = async move { writer_done.await.unwrap_or_else(|_| Err(Error::closed())) };
        let reading =
            Reading::Thread { reader: BlockingReader(std::io::stdin()), output, setup: options.read_thread_setup };
        run(server, reading, outbound, writer_done, options.max_line_bytes).await
    })
}

/// A blocking reader seen as an `AsyncRead` that is always ready. A poll may block its thread,
/// so only the read loop's own thread polls it.
struct BlockingReader<R>(R);

impl<R: Read + Unpin> AsyncRead for BlockingReader<R> {
    fn poll_read(mut self: Pin<&mut Self>, _: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<std::io::Result<()>> {
        loop {
            match self.0.read(buf.initialize_unfilled()) {
                Ok(read) => {
                    buf.advance(read);
                    return Poll::Ready(Ok(()));
                }
                Err(err) if err.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(err) => return Poll::Ready(Err(err)),
            }
        }
    }
}
