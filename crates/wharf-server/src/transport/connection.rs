//! One connection over a byte stream: where its read loop runs, the writer that batches
//! outgoing messages, and the forwarding of server events to its session.
//!
//! The read loop runs as a task reading a non-blocking stream, or on a thread of its own that
//! reads with blocking calls and writes the answers it makes itself (the stdio transport).

use std::any::Any;
use std::sync::Arc;
use std::time::Instant;

use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};
use tokio::sync::{broadcast, mpsc};

use crate::contract::Error;
use crate::contract::Server;
use crate::contract::ServerEvent;
use crate::contract::SessionEndReason;
use crate::contract::event_notification;
use crate::contract::{Outbound, Session, Transport};
use crate::transport::read_loop::read_loop;
use crate::transport::serving::Serving;
use crate::transport::shared_writer::SharedWriter;
use crate::transport::stdio_options::DEFAULT_MAX_LINE_BYTES;
use crate::transport::write_batch::{WRITE_BATCH_BYTES, gather};

/// Serves one client over a pair of byte streams with newline-delimited JSON-RPC, until the
/// reader ends and every request in flight has been answered: await the [`Serving`] it gives
/// (or spawn it).
///
/// This is the stdio transport's engine; it also serves pipes, sockets, and in-memory streams.
pub fn serve_connection<R, W>(server: Server, reader: R, writer: W) -> Serving
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    // Seen through trait objects from here on, so that what follows is compiled once, here,
    // not for every pair of stream types nor in every crate that serves one (`serving.rs`).
    serve_streams(server, Box::new(reader), Box::new(writer))
}

type StreamReader = Box<dyn AsyncRead + Unpin + Send>;
type StreamWriter = Box<dyn AsyncWrite + Unpin + Send>;

fn serve_streams(server: Server, reader: StreamReader, writer: StreamWriter) -> Serving {
    Serving::new(async move {
        let (sender, receiver) = mpsc::channel::<Vec<u8>>(server.options().outbound_queue);
        let writer_task = tokio::spawn(write_loop(writer, receiver));
        let writer_done = async move {
            writer_task.await.unwrap_or_else(|err| Err(Error::protocol(format!("the writer failed: {err}"))))
        };
        run(server, Reading::Task(reader), sender.into(), writer_done, DEFAULT_MAX_LINE_BYTES).await
    })
}

/// Where a connection's read loop runs.
pub(crate) enum Reading<R> {
    /// In a task of the runtime, reading a non-blocking stream; every message goes through
    /// the outgoing queue.
    Task(R),
    /// On a thread of its own, reading with blocking calls (the reader may block the thread
    /// in `poll_read`) and writing the answers it makes itself to `output`, which the queue's
    /// writer (counting into `output.unwritten()`) shares.
    Thread {
        reader: R,
        output: Arc<SharedWriter>,
        /// Run on the thread once its first answers are written; what it returns is held until
        /// the thread ends.
        setup: Option<fn() -> Box<dyn Any + Send>>,
    },
}

/// Runs a connection whose outgoing messages go into `outbound`, reading lines up to
/// `max_line_bytes`; `writer_done` completes when everything sent has been written.
pub(crate) async fn run<R>(
    server: Server,
    reading: Reading<R>,
    outbound: Outbound,
    writer_done: impl Future<Output = Result<(), Error>>,
    max_line_bytes: usize,
) -> Result<(), Error>
where
    R: AsyncRead + Unpin + Send + 'static,
{
    let transport = match &reading {
        Reading::Task(_) => Transport::Stream,
        Reading::Thread { .. } => Transport::Stdio,
    };
    let session = Session::new(server.next_connection_id(), transport, outbound);
    let events_task = tokio::spawn(forward_events(server.clone(), server.subscribe_events(), session.clone()));

    let read_result = match reading {
        // A task of its own, so that on a multi-threaded runtime the read loop lives on a
        // worker thread beside the request tasks it spawns instead of on the caller's thread.
        Reading::Task(reader) => {
            let (server, session) = (server.clone(), session.clone());
            let read_task =
                tokio::spawn(async move { read_loop(&server, &session, reader, None, max_line_bytes, None).await });
            read_task.await.unwrap_or_else(|err| Err(Error::protocol(format!("the reader failed: {err}"))))
        }
        Reading::Thread { reader, output, setup } => {
            let (server, session) = (server.clone(), session.clone());
            // The thread enters the runtime, so that handlers polled on it find its timers
            // and can spawn tasks, and waits on the runtime's primitives by parking.
            let runtime = tokio::runtime::Handle::current();
            let (done, finished) = tokio::sync::oneshot::channel();
            let spawned = std::thread::Builder::new().name("wharf-read".to_owned()).spawn(move || {
                let result =
                    runtime.block_on(read_loop(&server, &session, reader, Some(output), max_line_bytes, setup));
                // The writer ends once every sender is gone; this thread's go first.
                drop(session);
                let _ = done.send(result);
            });
            match spawned {
                Ok(_) => finished.await.unwrap_or_else(|_| Err(Error::protocol("the read thread panicked"))),
                Err(err) => Err(Error::io(err)),
            }
        }
    };

    events_task.abort();
    let _ = events_task.await;
    let reason = if read_result.is_ok() { SessionEndReason::Closed } else { SessionEndReason::Failed };
    server.end_session(&session, reason, Instant::now());
    drop(session);
    read_result.and(writer_done.await)
}

/// Writes outgoing messages, gathering whatever is queued into one write and one flush.
async fn write_loop<W: AsyncWrite + Unpin>(mut writer: W, mut receiver: mpsc::Receiver<Vec<u8>>) -> Result<(), Error> {
    let mut buffer = Vec::with_capacity(WRITE_BATCH_BYTES);
    while let Some(message) = receiver.recv().await {
        gather(&mut buffer, &message, &mut receiver);
        writer.write_all(&buffer).await.map_err(Error::io)?;
        writer.flush().await.map_err(Error::io)?;
        buffer.clear();
    }
    writer.shutdown().await.map_err(Error::io)
}

/// Sends list changes and resource updates to the client of a 2025 session.
async fn forward_events(server: Server, mut events: broadcast::Receiver<ServerEvent>, session: Arc<Session>) {
    loop {
        let event = match events.recv().await {
            Ok(event) => event,
            // Missed events are list changes or updates; the next one says the same again.
            Err(broadcast::error::RecvError::Lagged(_)) => continue,
            Err(broadcast::error::RecvError::Closed) => return,
        };
        if let Some(notification) = event_notification(&server.capabilities(), &session, &event) {
            // A closed channel means the writer stopped because the client went away.
            let _ = session.outbound().send(notification).await;
        }
    }
}
