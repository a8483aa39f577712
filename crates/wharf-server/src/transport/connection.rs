//! One connection over a byte stream: the read loop that decodes lines and starts request
//! tasks, the writer that batches outgoing messages, and the forwarding of server events.
//!
//! The read loop runs as a task reading a non-blocking stream, or on a thread of its own that
//! reads with blocking calls and writes the answers it makes itself (the stdio transport).

use std::pin::Pin;
use std::sync::Arc;
use std::task::Poll;

use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::{OwnedSemaphorePermit, Semaphore, broadcast, mpsc};
use wharf_protocol::{
    ClientNotification, ClientRequest, DecodeError, Envelope, ErrorCode, ErrorObject, Incoming, NotificationMeta,
    ProtocolVersion, RequestId, ResourceUriParams, ServerCapabilities, ServerNotification, parse_batch,
};

use crate::cancel::Cancellation;
use crate::context::encode_notification;
use crate::dispatch::{Delivery, answer_value, encode_error, handle_notification, request_outcome};
use crate::error::{Error, RpcError};
use crate::message_buffer;
use crate::panic::{CatchUnwind, poll_catching};
use crate::registry::ListKind;
use crate::server::{Server, ServerEvent};
use crate::session::{Outbound, Session};
use crate::transport::line_reader::{Line, read_line};
use crate::transport::shared_writer::SharedWriter;

/// The most bytes the writer gathers before it writes and flushes.
const WRITE_BATCH_BYTES: usize = 64 * 1024;
/// The most answers the read loop gathers before it lets the writer send them, even while more
/// whole lines wait in the input. Sending a pipeline's answers in parts lets the client read
/// the first ones while the server works on the rest; on the 2-core benchmark machine, 8 beat
/// 4, 16 and 64 (one write per batch of input, as the bare loop does) at 32 in flight.
const MAX_GATHERED_ANSWERS: usize = 8;

/// Serves one client over a pair of byte streams with newline-delimited JSON-RPC, until the
/// reader ends and every request in flight has been answered.
///
/// This is the stdio transport's engine; it also serves pipes, sockets, and in-memory streams.
pub async fn serve_connection<R, W>(server: Server, reader: R, writer: W) -> Result<(), Error>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let (sender, receiver) = mpsc::channel::<Vec<u8>>(server.options().outbound_queue);
    let writer_task = tokio::spawn(write_loop(writer, receiver));
    let writer_done = async move {
        writer_task.await.unwrap_or_else(|err| Err(Error::protocol(format!("the writer failed: {err}"))))
    };
    run(server, Reading::Task(reader), sender.into(), writer_done).await
}

/// Where a connection's read loop runs.
pub(crate) enum Reading<R> {
    /// In a task of the runtime, reading a non-blocking stream; every message goes through
    /// the outgoing queue.
    Task(R),
    /// On a thread of its own, reading with blocking calls (the reader may block the thread
    /// in `poll_read`) and writing the answers it makes itself to `output`, which the queue's
    /// writer (counting into `output.unwritten()`) shares.
    Thread { reader: R, output: Arc<SharedWriter> },
}

/// Runs a connection whose outgoing messages go into `outbound`; `writer_done` completes
/// when everything sent has been written.
pub(crate) async fn run<R>(
    server: Server,
    reading: Reading<R>,
    outbound: Outbound,
    writer_done: impl Future<Output = Result<(), Error>>,
) -> Result<(), Error>
where
    R: AsyncRead + Unpin + Send + 'static,
{
    let session = Session::new(server.next_connection_id(), outbound);
    let events_task = tokio::spawn(forward_events(server.clone(), server.subscribe_events(), session.clone()));

    let read_result = match reading {
        // A task of its own, so that on a multi-threaded runtime the read loop lives on a
        // worker thread beside the request tasks it spawns instead of on the caller's thread.
        Reading::Task(reader) => {
            let (server, session) = (server.clone(), session.clone());
            let read_task = tokio::spawn(async move {
                let gathered = Gathered::new(None);
                read_loop(&server, &session, reader, gathered).await
            });
            read_task.await.unwrap_or_else(|err| Err(Error::protocol(format!("the reader failed: {err}"))))
        }
        Reading::Thread { reader, output } => {
            let (server, session) = (server.clone(), session.clone());
            // The thread enters the runtime, so that handlers polled on it find its timers
            // and can spawn tasks, and waits on the runtime's primitives by parking.
            let runtime = tokio::runtime::Handle::current();
            let (done, finished) = tokio::sync::oneshot::channel();
            let spawned = std::thread::Builder::new().name("wharf-read".to_owned()).spawn(move || {
                let gathered = Gathered::new(Some(output));
                let _ballast = allocator_ballast();
                let result = runtime.block_on(read_loop(&server, &session, reader, gathered));
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
    drop(session);
    read_result.and(writer_done.await)
}

async fn read_loop<R: AsyncRead + Unpin + Send>(
    server: &Server,
    session: &Arc<Session>,
    reader: R,
    mut gathered: Gathered,
) -> Result<(), Error> {
    let mut reader = BufReader::with_capacity(64 * 1024, reader);
    let mut line = Vec::with_capacity(4096);
    let max = server.options().max_line_bytes;
    // Every request task holds a permit while it runs, so the semaphore both bounds the work in
    // flight and tells when all of it has finished.
    let in_flight = server.options().max_in_flight;
    let permits = Arc::new(Semaphore::new(in_flight));
    let inline = tokio::runtime::Handle::current().runtime_flavor() == tokio::runtime::RuntimeFlavor::CurrentThread;
    let mut works = WorkBox::new(request_outcome);
    let result = loop {
        match read_line(&mut reader, &mut line, max).await {
            Ok(Line::Eof) => break Ok(()),
            Ok(Line::TooLong) => {
                let error = RpcError::invalid_request(format!(
                    "Invalid request: the message is longer than the limit of {max} bytes and was skipped"
                ));
                gathered.push(encode_error(None, error));
            }
            Ok(Line::Complete) => {
                handle_line(server, session, &permits, inline, &line, &mut gathered, &mut works).await
            }
            Err(err) => break Err(Error::io(err)),
        }
        // The answers go out before reading could wait: once no whole line is left in what
        // was read (a client may hold back the rest of a line until it hears back), or sooner
        // when many gather, so that the client hears back early.
        if gathered.count >= MAX_GATHERED_ANSWERS
            || gathered.bytes.len() >= WRITE_BATCH_BYTES
            || (gathered.count > 0 && memchr::memchr(b'\n', reader.buffer()).is_none())
        {
            gathered.flush(session).await;
        }
        if let Some(err) = gathered.failed.take() {
            // The output is gone, and with it the client.
            break Err(Error::io(err));
        }
    };
    gathered.flush(session).await;
    let result = match gathered.failed.take() {
        Some(err) => result.and(Err(Error::io(err))),
        None => result,
    };
    // Finish the work in flight before the writer closes.
    let _all_finished = permits.acquire_many(u32::try_from(in_flight).unwrap_or(u32::MAX)).await;
    result
}

/// One small block of every size up to 1 KiB, in 8-byte steps, to be held by the read thread
/// while it serves.
///
/// A request's allocations are mostly freed before the next request makes its own, so the one
/// block of its size class that a request allocates is often the only one alive there. mimalloc
/// retires a page that a free leaves empty, at about 60 instructions each: a pipelined
/// stateless `tools/call` freed into nine such pages (550 of its 6,900 instructions). With a
/// block held in each class, no page the read thread allocates from ever empties. The blocks
/// are 66 KiB in all; other allocators merely hold them.
fn allocator_ballast() -> Vec<Box<[u8]>> {
    // Opaque to the optimizer, which may otherwise drop allocations that are never read.
    std::hint::black_box((1..=128).map(|step| vec![0u8; step * 8].into_boxed_slice()).collect())
}

/// Gives way to the other tasks once. On a current-thread runtime the read loop answers
/// requests itself and would otherwise keep every answer queued until the input runs dry; a
/// client that pipelines gets its first answers sooner when the writer runs in between. Unlike
/// `tokio::task::yield_now`, waking itself does not make the runtime poll the OS for events,
/// which would cost a system call each time.
async fn let_the_writer_run() {
    let mut yielded = false;
    std::future::poll_fn(|cx| {
        if yielded {
            Poll::Ready(())
        } else {
            yielded = true;
            cx.waker().wake_by_ref();
            Poll::Pending
        }
    })
    .await;
}

/// The messages the read loop made itself (answers to the requests it finished, errors), in
/// order and each ending in a newline, to go out together instead of one each.
struct Gathered {
    bytes: Vec<u8>,
    count: usize,
    /// The output a read thread writes them to itself; without it they go through the queue.
    direct: Option<Arc<SharedWriter>>,
    /// Why writing to `direct` failed; the read loop ends on it.
    failed: Option<std::io::Error>,
}

impl Gathered {
    fn new(direct: Option<Arc<SharedWriter>>) -> Gathered {
        Gathered { bytes: Vec::with_capacity(4096), count: 0, direct, failed: None }
    }

    fn push(&mut self, message: Vec<u8>) {
        self.bytes.extend_from_slice(&message);
        self.bytes.push(b'\n');
        self.count += 1;
        message_buffer::give_back(message);
    }

    /// Sends what was gathered: written directly when the read loop has an output of its own
    /// and nothing queued waits to be written before it, else through the queue.
    async fn flush(&mut self, session: &Session) {
        if self.count == 0 {
            return;
        }
        self.count = 0;
        if let Some(direct) = &self.direct {
            match direct.write_unless_queued(&self.bytes) {
                Ok(true) => {
                    self.bytes.clear();
                    return;
                }
                Ok(false) => {}
                Err(err) => {
                    self.failed = Some(err);
                    self.bytes.clear();
                    return;
                }
            }
        }
        let mut message = std::mem::replace(&mut self.bytes, Vec::with_capacity(4096));
        // The queue's writer ends every message with a newline itself.
        message.pop();
        send(session, message).await;
        if self.direct.is_none() {
            let_the_writer_run().await;
        }
    }
}

async fn send(session: &Session, bytes: Vec<u8>) {
    // A closed channel means the writer stopped because the client went away.
    let _ = session.outbound().send(bytes).await;
}

fn decode_error_response(error: DecodeError) -> Vec<u8> {
    encode_error(error.id.as_ref(), RpcError::from(error.error))
}

async fn handle_line<M, F>(
    server: &Server,
    session: &Arc<Session>,
    permits: &Arc<Semaphore>,
    inline: bool,
    line: &[u8],
    gathered: &mut Gathered,
    works: &mut WorkBox<M, F>,
) where
    M: Fn(Server, Arc<Session>, RequestId, ClientRequest, Delivery) -> F,
    F: Future<Output = Result<Vec<u8>, RpcError>> + Send + 'static,
{
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    if line.iter().all(u8::is_ascii_whitespace) {
        return;
    }
    if let Some(batch) = parse_batch(line) {
        let allowed = session.negotiated().is_some_and(|negotiated| negotiated.version.allows_batches());
        match batch {
            Err(error) => gathered.push(decode_error_response(error)),
            Ok(_) if !allowed => gathered.push(encode_error(None, batches_refused())),
            Ok(items) => {
                let items: Vec<Vec<u8>> = items.into_iter().map(|raw| raw.get().as_bytes().to_vec()).collect();
                // A batch counts as one request in flight.
                let Some(permit) = permit(session, permits, gathered).await else { return };
                let (server, session) = (server.clone(), session.clone());
                tokio::spawn(async move {
                    handle_batch(server, session, items).await;
                    drop(permit);
                });
            }
        }
        return;
    }
    match Incoming::parse(line) {
        Err(error) => gathered.push(decode_error_response(error)),
        Ok(Incoming::Request { id, request }) => {
            start_request(server, session, permits, inline, id, request, gathered, works).await
        }
        Ok(Incoming::Envelope(Envelope::Request { id, method, params })) => {
            match ClientRequest::decode(&method, params) {
                Err(error) => gathered.push(encode_error(Some(&id), RpcError::from(error.to_error_object()))),
                Ok(request) => start_request(server, session, permits, inline, id, request, gathered, works).await,
            }
        }
        Ok(Incoming::Envelope(other)) => handle_incoming(session, other),
    }
}

/// Answers a decoded request, or starts the task that will.
#[allow(clippy::too_many_arguments, reason = "the read loop's state, passed down from it")]
async fn start_request<M, F>(
    server: &Server,
    session: &Arc<Session>,
    permits: &Arc<Semaphore>,
    inline: bool,
    id: RequestId,
    request: ClientRequest,
    gathered: &mut Gathered,
    works: &mut WorkBox<M, F>,
) where
    M: Fn(Server, Arc<Session>, RequestId, ClientRequest, Delivery) -> F,
    F: Future<Output = Result<Vec<u8>, RpcError>> + Send + 'static,
{
    match request {
        request @ ClientRequest::Initialize(_) => {
            // `initialize` is answered before the next line is read, so that requests a
            // client pipelines behind it already see the negotiated session. It cannot be
            // cancelled, so it is not registered as in flight.
            gathered.push(answer_now(server, session, &id, request).await);
        }
        request => {
            if session.is_in_flight(&id) {
                let error = RpcError::invalid_request(format!(
                    "Invalid request: a request with id {id} is still in flight; ids must be unique"
                ));
                gathered.push(encode_error(Some(&id), error));
                return;
            }
            let cancel = works.cancellation();
            let delivery = Delivery::to_session(cancel.clone());
            let mut work = works.boxed(server.clone(), session.clone(), id.clone(), request, delivery);
            // On a current-thread runtime a spawned task would run on this thread anyway,
            // so the request is first polled right here: most handlers finish without
            // waiting for anything, and those cost no task, permit or in-flight entry.
            // On a multi-threaded runtime the request goes straight to a task, so that a
            // handler busy computing never holds up reading the next message.
            if inline {
                let polled = std::future::poll_fn(|cx| Poll::Ready(poll_catching(work.as_mut(), cx))).await;
                if let Poll::Ready(outcome) = polled {
                    // A future that panicked is dropped, not kept: it must never run again.
                    if outcome.is_ok() {
                        works.keep(work, cancel);
                    }
                    gathered.push(response_or_panic(outcome, &id));
                    return;
                }
            }
            // Nothing else registers ids of this connection, so the check above still holds.
            session.begin(&id, cancel);
            // Waiting for a permit stops the read loop, which is the backpressure.
            let Some(permit) = permit(session, permits, gathered).await else { return };
            let task_session = session.clone();
            let task_id = id.clone();
            let task = tokio::spawn(async move {
                let response = response_or_panic(CatchUnwind::from_box(work).await, &task_id);
                task_session.finish(&task_id);
                send(&task_session, response).await;
                drop(permit);
            });
            session.attach(&id, task.abort_handle());
        }
    }
}

/// The allocations a request's work is polled in, kept for the next request when the work
/// finished at once, as most does on the read thread: the future's box and the cancellation
/// signal. A request's future is about 1.5 KiB, and allocating and freeing each of the two per
/// request cost about 100 instructions of a pipelined `tools/call` (the allocator retires the
/// page a lone block leaves empty each time). Every request's work is the same type, made by
/// `make` (`request_outcome`), so one box fits all.
struct WorkBox<M, F> {
    make: M,
    spare: Option<Pin<Box<F>>>,
    spare_cancel: Option<Cancellation>,
}

impl<M, F> WorkBox<M, F>
where
    M: Fn(Server, Arc<Session>, RequestId, ClientRequest, Delivery) -> F,
    F: Future,
{
    fn new(make: M) -> WorkBox<M, F> {
        WorkBox { make, spare: None, spare_cancel: None }
    }

    /// The request's work, in the spare box when there is one.
    fn boxed(
        &mut self,
        server: Server,
        session: Arc<Session>,
        id: RequestId,
        request: ClientRequest,
        delivery: Delivery,
    ) -> Pin<Box<F>> {
        let work = (self.make)(server, session, id, request, delivery);
        match self.spare.take() {
            Some(mut spare) => {
                // Drops the finished work in place; its box is not freed.
                spare.set(work);
                spare
            }
            None => Box::pin(work),
        }
    }

    /// A cancellation signal not yet cancelled: the spare one, or a new one.
    fn cancellation(&mut self) -> Cancellation {
        self.spare_cancel.take().unwrap_or_default()
    }

    /// Keeps the box and the signal of work that finished, for the next request. The signal
    /// is kept only if nothing holds it any more (a handler may have handed its context to a
    /// task that outlives the request).
    fn keep(&mut self, finished: Pin<Box<F>>, mut cancel: Cancellation) {
        self.spare = Some(finished);
        if cancel.renew() {
            self.spare_cancel = Some(cancel);
        }
    }
}

/// A permit for one more request in flight (the semaphore is never closed, so this is always
/// `Some`). When none is free, the answers gathered so far go out before waiting: the requests
/// holding the permits may wait on a client that waits for those answers first.
async fn permit(session: &Session, permits: &Arc<Semaphore>, gathered: &mut Gathered) -> Option<OwnedSemaphorePermit> {
    if let Ok(permit) = permits.clone().try_acquire_owned() {
        return Some(permit);
    }
    gathered.flush(session).await;
    permits.clone().acquire_owned().await.ok()
}

/// Handles what a client sends besides requests: notifications, and answers to requests the
/// server sent.
fn handle_incoming(session: &Session, envelope: Envelope<'_>) {
    match envelope {
        Envelope::Request { .. } => unreachable!("requests are dispatched by the caller"),
        Envelope::Notification { method, params } => match ClientNotification::decode(&method, params) {
            Ok(notification) => handle_notification(session, notification),
            Err(error) => tracing::debug!(%method, %error, "ignoring a notification"),
        },
        Envelope::Response { id, result } => {
            if !session.answer(&id, Ok(answer_value(result))) {
                tracing::debug!(%id, "ignoring a response to no pending request");
            }
        }
        Envelope::Error { id: Some(id), error } => {
            session.answer(&id, Err(error));
        }
        Envelope::Error { id: None, error } => {
            tracing::warn!(code = error.code.0, message = %error.message, "the client reported an error");
        }
    }
}

/// Handles a request to completion in the caller's task, for requests that are neither
/// registered as in flight nor cancellable (`initialize`, and requests inside a batch).
async fn answer_now(server: &Server, session: &Arc<Session>, id: &RequestId, request: ClientRequest) -> Vec<u8> {
    let delivery = Delivery::to_session(Cancellation::new());
    let work = request_outcome(server.clone(), session.clone(), id.clone(), request, delivery);
    guarded(work, id).await
}

/// Runs a request's work and turns a panic into an internal-error response.
async fn guarded(work: impl Future<Output = Result<Vec<u8>, RpcError>>, id: &RequestId) -> Vec<u8> {
    response_or_panic(CatchUnwind::new(work).await, id)
}

/// The error a batch outside a 2025-03-26 session is refused with.
pub(crate) fn batches_refused() -> RpcError {
    RpcError::invalid_request(
        "Invalid request: JSON-RPC batches are accepted only in sessions of protocol revision 2025-03-26",
    )
}

/// The response a request's work produced: its answer, its error, or an internal error if it
/// panicked.
fn response_or_panic(outcome: Result<Result<Vec<u8>, RpcError>, String>, id: &RequestId) -> Vec<u8> {
    match outcome {
        Ok(Ok(response)) => response,
        Ok(Err(error)) => encode_error(Some(id), error),
        Err(panic) => encode_error(Some(id), panic_error(id, &panic)),
    }
}

/// The internal error a request whose handler panicked is answered with.
pub(crate) fn panic_error(id: &RequestId, panic: &str) -> RpcError {
    tracing::error!(%id, panic = %panic, "a handler panicked");
    RpcError::from(ErrorObject::new(
        ErrorCode::INTERNAL_ERROR,
        format!("Internal error: the handler panicked: {panic}"),
    ))
}

/// Handles a JSON-RPC batch (2025-03-26 only): every request in it is answered in one array.
async fn handle_batch(server: Server, session: Arc<Session>, items: Vec<Vec<u8>>) {
    if let Some(array) = answer_batch(&server, &session, &items).await {
        send(&session, array).await;
    }
}

/// Handles the messages of a JSON-RPC batch in order and returns the array of the responses to
/// its requests, or `None` when it held only notifications and responses (which get no answer).
/// Both transports use it.
pub(crate) async fn answer_batch(server: &Server, session: &Arc<Session>, items: &[Vec<u8>]) -> Option<Vec<u8>> {
    let mut responses: Vec<Vec<u8>> = Vec::new();
    for item in items {
        match Incoming::parse(item) {
            Err(error) => responses.push(decode_error_response(error)),
            Ok(Incoming::Request { id, request }) => responses.push(answer_now(server, session, &id, request).await),
            Ok(Incoming::Envelope(Envelope::Request { id, method, params })) => {
                match ClientRequest::decode(&method, params) {
                    Err(error) => responses.push(encode_error(Some(&id), RpcError::from(error.to_error_object()))),
                    Ok(request) => responses.push(answer_now(server, session, &id, request).await),
                }
            }
            Ok(Incoming::Envelope(other)) => handle_incoming(session, other),
        }
    }
    if responses.is_empty() {
        return None;
    }
    let mut array = Vec::with_capacity(responses.iter().map(Vec::len).sum::<usize>() + responses.len() + 2);
    array.push(b'[');
    for (index, response) in responses.iter().enumerate() {
        if index > 0 {
            array.push(b',');
        }
        array.extend_from_slice(response);
    }
    array.push(b']');
    Some(array)
}

/// Appends `first` and whatever else is already queued, one line each, up to the batch size;
/// returns how many messages it took.
pub(crate) fn gather(buffer: &mut Vec<u8>, first: &[u8], receiver: &mut mpsc::Receiver<Vec<u8>>) -> usize {
    buffer.extend_from_slice(first);
    buffer.push(b'\n');
    let mut taken = 1;
    while buffer.len() < WRITE_BATCH_BYTES {
        let Ok(message) = receiver.try_recv() else { break };
        buffer.extend_from_slice(&message);
        buffer.push(b'\n');
        taken += 1;
    }
    taken
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
            send(&session, notification).await;
        }
    }
}

/// The notification a server event becomes for one 2025 session, if the session is to hear of
/// it: list changes for the capabilities offered, and updates of resources it subscribed to.
pub(crate) fn event_notification(
    capabilities: &ServerCapabilities,
    session: &Session,
    event: &ServerEvent,
) -> Option<Vec<u8>> {
    if !session.is_initialized() {
        return None;
    }
    let notification = match event {
        ServerEvent::ListChanged(ListKind::Tools) if capabilities.tools.is_some() => {
            ServerNotification::ToolListChanged(NotificationMeta::default())
        }
        ServerEvent::ListChanged(ListKind::Prompts) if capabilities.prompts.is_some() => {
            ServerNotification::PromptListChanged(NotificationMeta::default())
        }
        ServerEvent::ListChanged(ListKind::Resources) if capabilities.resources.is_some() => {
            ServerNotification::ResourceListChanged(NotificationMeta::default())
        }
        ServerEvent::ResourceUpdated(uri) if session.is_subscribed(uri) => {
            ServerNotification::ResourceUpdated(ResourceUriParams { uri: uri.to_string(), meta: None })
        }
        // 2025-11-25 task status, to the session that made the task.
        ServerEvent::Task(task)
            if task.principal.as_deref().and_then(|owner| owner.strip_prefix("session:")) == Some(session.id())
                && session
                    .negotiated()
                    .is_some_and(|negotiated| negotiated.version == ProtocolVersion::V2025_11_25) =>
        {
            ServerNotification::TaskStatus(task.legacy_task())
        }
        _ => return None,
    };
    Some(encode_notification(&notification))
}
