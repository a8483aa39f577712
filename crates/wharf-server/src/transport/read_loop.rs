//! A connection's read loop: it reads lines, decodes each, answers at once what needs no
//! waiting (gathering those answers into one write), and starts a task for the rest, bounded by
//! the requests allowed in flight.

use std::pin::Pin;
use std::sync::Arc;
use std::task::Poll;

use tokio::io::{AsyncRead, BufReader};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use wharf_protocol::{ClientRequest, Incoming, RequestId, parse_batch};

use crate::contract::Cancellation;
use crate::contract::Delivery;
use crate::contract::Server;
use crate::contract::Session;
use crate::contract::client_messages;
use crate::contract::encode_error;
use crate::contract::message_buffer;
use crate::contract::request_outcome;
use crate::contract::{CatchUnwind, poll_catching};
use crate::contract::{Error, RpcError};
use crate::contract::{allows_batches, answer_batch, batches_refused, check_batch_len};
use crate::contract::{answer_now, decode_error_response, response_or_panic};
use crate::transport::line_reader::{Line, read_line};
use crate::transport::shared_writer::SharedWriter;
use crate::transport::write_batch::WRITE_BATCH_BYTES;

/// The most answers the read loop gathers before it lets the writer send them, even while more
/// whole lines wait in the input: sending a pipeline's answers in parts lets the client read
/// the first ones while the server works on the rest (the benchmark notes say why 8).
const MAX_GATHERED_ANSWERS: usize = 8;

/// Reads `reader` to its end (lines up to `max_line_bytes`), serving every message on `session`,
/// then waits for the requests still in flight. `direct` is the output a read thread writes its
/// own answers to; without it they go through the session's queue. `setup` runs once the first
/// answers are written, and what it returns is held until the loop ends.
pub(crate) async fn read_loop<R: AsyncRead + Unpin + Send>(
    server: &Server,
    session: &Arc<Session>,
    reader: R,
    direct: Option<Arc<SharedWriter>>,
    max_line_bytes: usize,
    mut setup: Option<fn() -> Box<dyn std::any::Any + Send>>,
) -> Result<(), Error> {
    let mut _held = None;
    let mut reader = BufReader::with_capacity(64 * 1024, reader);
    let mut line = Vec::with_capacity(4096);
    let max = max_line_bytes;
    // Every request task holds a permit while it runs, so the semaphore both bounds the work in
    // flight and tells when all of it has finished.
    let in_flight = server.options().max_in_flight;
    let mut state = ReadLoop {
        server,
        session,
        permits: Arc::new(Semaphore::new(in_flight)),
        inline: tokio::runtime::Handle::current().runtime_flavor() == tokio::runtime::RuntimeFlavor::CurrentThread,
        gathered: Gathered::new(direct),
        works: WorkBox::new(request_outcome),
    };
    let result = loop {
        match read_line(&mut reader, &mut line, max).await {
            Ok(Line::Eof) => break Ok(()),
            Ok(Line::TooLong) => {
                let error = RpcError::invalid_request(format!(
                    "Invalid request: the message is longer than the limit of {max} bytes and was skipped"
                ));
                state.gathered.push(encode_error(None, error));
            }
            Ok(Line::Complete) => state.handle_line(&line).await,
            Err(err) => break Err(Error::io(err)),
        }
        // The answers go out before reading could wait: once no whole line is left in what
        // was read (a client may hold back the rest of a line until it hears back), or sooner
        // when many gather, so that the client hears back early.
        let gathered = &mut state.gathered;
        if gathered.count >= MAX_GATHERED_ANSWERS
            || gathered.bytes.len() >= WRITE_BATCH_BYTES
            || (gathered.count > 0 && memchr::memchr(b'\n', reader.buffer()).is_none())
        {
            gathered.flush(session).await;
            // The client's first messages are answered before anything that can wait.
            if let Some(setup) = setup.take() {
                _held = Some(setup());
            }
        }
        if let Some(err) = state.gathered.failed.take() {
            // The output is gone, and with it the client.
            break Err(Error::io(err));
        }
    };
    state.gathered.flush(session).await;
    // Listen streams end with the client's input; the rest of the work in flight finishes.
    session.end_input();
    let result = match state.gathered.failed.take() {
        Some(err) => result.and(Err(Error::io(err))),
        None => result,
    };
    // Finish the work in flight before the writer closes.
    let _all_finished = state.permits.acquire_many(u32::try_from(in_flight).unwrap_or(u32::MAX)).await;
    result
}

/// What the read loop keeps from one line to the next.
struct ReadLoop<'a, M, F> {
    server: &'a Server,
    session: &'a Arc<Session>,
    permits: Arc<Semaphore>,
    /// True on a current-thread runtime, where requests are first polled in the loop itself.
    inline: bool,
    gathered: Gathered,
    works: WorkBox<M, F>,
}

impl<M, F> ReadLoop<'_, M, F>
where
    M: Fn(Server, Arc<Session>, RequestId, ClientRequest, Delivery) -> F,
    F: Future<Output = Result<Vec<u8>, RpcError>> + Send + 'static,
{
    async fn handle_line(&mut self, line: &[u8]) {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if line.iter().all(u8::is_ascii_whitespace) {
            return;
        }
        if let Some(batch) = parse_batch(line) {
            match batch {
                Err(error) => self.gathered.push(decode_error_response(error)),
                Ok(_) if !allows_batches(self.session) => self.gathered.push(encode_error(None, batches_refused())),
                Ok(items) => {
                    if let Err(error) = check_batch_len(self.server, items.len()) {
                        self.gathered.push(encode_error(None, error));
                        return;
                    }
                    let items: Vec<Vec<u8>> = items.into_iter().map(|raw| raw.get().as_bytes().to_vec()).collect();
                    // A batch counts as one request in flight.
                    let Some(permit) = self.permit().await else { return };
                    let (server, session) = (self.server.clone(), self.session.clone());
                    tokio::spawn(async move {
                        let delivery = || Delivery::to_session(Cancellation::new());
                        if let Some(array) = answer_batch(&server, &session, &items, &delivery).await {
                            send(&session, array).await;
                        }
                        drop(permit);
                    });
                }
            }
            return;
        }
        match Incoming::parse(line) {
            Err(error) => self.gathered.push(decode_error_response(error)),
            Ok(Incoming::Request { id, request }) => self.start_request(id, request).await,
            Ok(Incoming::Refused { id, error, .. }) => {
                self.gathered.push(encode_error(Some(&id), RpcError::from(error)));
            }
            Ok(Incoming::Notification { method, params }) => {
                client_messages::notification(self.session, &method, params);
            }
            Ok(Incoming::Response { id, result }) => {
                client_messages::answer(self.session, &id, Ok(result));
            }
            Ok(Incoming::Error { id: Some(id), error }) => {
                client_messages::answer(self.session, &id, Err(error));
            }
            Ok(Incoming::Error { id: None, error }) => client_messages::unaddressed_error(&error),
        }
    }

    /// Answers a decoded request, or starts the task that will.
    async fn start_request(&mut self, id: RequestId, request: ClientRequest) {
        match request {
            request @ ClientRequest::Initialize(_) => {
                // `initialize` is answered before the next line is read, so that requests a
                // client pipelines behind it already see the negotiated session. It cannot be
                // cancelled, so it is not registered as in flight. Its answer goes out at once:
                // a request pipelined behind it may ask the client something (elicitation)
                // before the gathered answers would have been written.
                let delivery = Delivery::to_session(Cancellation::new());
                self.gathered.push(answer_now(self.server, self.session, &id, request, delivery).await);
                self.gathered.flush(self.session).await;
            }
            request => {
                if self.session.is_in_flight(&id) {
                    let error = RpcError::invalid_request(format!(
                        "Invalid request: a request with id {id} is still in flight; ids must be unique"
                    ));
                    self.gathered.push(encode_error(Some(&id), error));
                    return;
                }
                let cancel = self.works.cancellation();
                let delivery = Delivery::to_session(cancel.clone());
                let mut work =
                    self.works.boxed(self.server.clone(), self.session.clone(), id.clone(), request, delivery);
                // On a current-thread runtime a spawned task would run on this thread anyway,
                // so the request is first polled right here: most handlers finish without
                // waiting for anything, and those cost no task, permit or in-flight entry.
                // On a multi-threaded runtime the request goes straight to a task, so that a
                // handler busy computing never holds up reading the next message.
                if self.inline {
                    let polled = std::future::poll_fn(|cx| Poll::Ready(poll_catching(work.as_mut(), cx))).await;
                    if let Poll::Ready(outcome) = polled {
                        // A future that panicked is dropped, not kept: it must never run again.
                        if outcome.is_ok() {
                            self.works.keep(work, cancel);
                        }
                        self.gathered.push(response_or_panic(outcome, &id));
                        return;
                    }
                }
                // Nothing else registers ids of this connection, so the check above still holds.
                self.session.begin(&id, cancel);
                // Waiting for a permit stops the read loop, which is the backpressure.
                let Some(permit) = self.permit().await else { return };
                let task_session = self.session.clone();
                let task_id = id.clone();
                let task = tokio::spawn(async move {
                    let response = response_or_panic(CatchUnwind::from_box(work).await, &task_id);
                    task_session.finish(&task_id);
                    send(&task_session, response).await;
                    drop(permit);
                });
                self.session.attach(&id, task.abort_handle());
            }
        }
    }

    /// A permit for one more request in flight (the semaphore is never closed, so this is
    /// always `Some`). When none is free, the answers gathered so far go out before waiting:
    /// the requests holding the permits may wait on a client that waits for those answers
    /// first.
    async fn permit(&mut self) -> Option<OwnedSemaphorePermit> {
        if let Ok(permit) = self.permits.clone().try_acquire_owned() {
            return Some(permit);
        }
        self.gathered.flush(self.session).await;
        self.permits.clone().acquire_owned().await.ok()
    }
}

/// The allocations a request's work is polled in, kept for the next request when the work
/// finished at once, as most does on the read thread: the future's box and the cancellation
/// signal, which would otherwise be allocated and freed for every request. Every request's
/// work is the same type, made by `make` (`request_outcome`), so one box fits all.
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
