//! Running a request into its HTTP answer: `application/json` when the handler sends nothing
//! before its result, an SSE stream when it sends notifications or requests first (or closes the
//! stream, to be resumed later); and the status codes 2026-07-28 gives errors.

use std::any::Any;
use std::future::poll_fn;
use std::net::IpAddr;
use std::sync::Arc;
use std::task::Poll;

use http::header::{HeaderName, HeaderValue, RETRY_AFTER, WWW_AUTHENTICATE};
use http::{Response, StatusCode};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use wharf_protocol::{ClientRequest, Era, ErrorCode, ErrorObject, RequestId};

use super::auth::{Authenticator, challenge};
use super::body::McpBody;
use super::reply;
use super::response_stream::ResponseStream;
use super::sessions::{ActiveGuard, HttpSession};
use super::shared::Shared;
use super::sse;
use wharf_server::contract::Cancellation;
use wharf_server::contract::LazyQueue;
use wharf_server::contract::{Delivery, StreamControl, max_in_flight};

use crate::request_parts::HttpParts;
use wharf_server::contract::Principal;
use wharf_server::contract::encode_error;
use wharf_server::contract::request_work;
use wharf_server::contract::{Admission, Session};
use wharf_server::contract::{Outcome, panic_error};
use wharf_server::contract::{RpcError, retry_after_seconds};

/// A request to run, and where it came from.
pub(super) struct Job {
    pub(super) session: Arc<Session>,
    pub(super) http_session: Option<Arc<HttpSession>>,
    pub(super) id: RequestId,
    pub(super) request: ClientRequest,
    /// The request's era: closing the stream of a stateless request cancels it.
    pub(super) era: Era,
    /// True when the client accepts an SSE answer.
    pub(super) sse: bool,
    pub(super) caller: Caller,
}

/// Who sent a request, and what middleware may read of the HTTP request that carried it.
pub(super) struct Caller {
    pub(super) principal: Option<Principal>,
    /// The client's address, when the server knows it: quotas count anonymous callers by it.
    pub(super) address: Option<IpAddr>,
    pub(super) http: Option<Arc<HttpParts>>,
}

/// The handler's task; dropping the guard stops it when the request's era says a vanished
/// client cancels the request.
struct Running {
    handle: JoinHandle<Outcome>,
    abort_on_drop: bool,
    done: bool,
}

impl Drop for Running {
    fn drop(&mut self) {
        if self.abort_on_drop && !self.done {
            self.handle.abort();
        }
    }
}

impl Running {
    /// How the handler's work ended; `None` when it was cancelled (its task aborted), which
    /// gets no answer: the revision says a cancelled request is not answered.
    async fn outcome(&mut self) -> Option<Outcome> {
        let joined = (&mut self.handle).await;
        self.done = true;
        match joined {
            Ok(outcome) => Some(outcome),
            Err(err) if err.is_cancelled() => None,
            // The work runs inside `CatchUnwind`, so its task cannot panic; should it all the
            // same, it is answered as the panic it is.
            Err(err) => Some(Err(format!("the handler's task ended: {err}"))),
        }
    }
}

/// The answer to a request cancelled before it had one: its stream ends without an answer, or,
/// for a client that takes JSON only, 202 with no body.
fn cancelled(id: &RequestId, sse: bool) -> Response<McpBody> {
    tracing::debug!(%id, "the request was cancelled; it gets no answer");
    if !sse {
        return reply::accepted();
    }
    let (_, body) = mpsc::channel(1);
    reply::event_stream(body)
}

/// The HTTP status of an error answer: 2026-07-28 gives some errors a status of their own.
fn status_for(code: i64, era: Era) -> StatusCode {
    if era == Era::Session {
        return StatusCode::OK;
    }
    match ErrorCode(code) {
        ErrorCode::METHOD_NOT_FOUND => StatusCode::NOT_FOUND,
        ErrorCode::HEADER_MISMATCH
        | ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY
        | ErrorCode::UNSUPPORTED_PROTOCOL_VERSION
        | ErrorCode::INVALID_REQUEST
        | ErrorCode::PARSE_ERROR => StatusCode::BAD_REQUEST,
        _ => StatusCode::OK,
    }
}

/// The status line of an answer sent as JSON, with the header a refusal adds: `Retry-After`
/// for a refusal for now, `WWW-Authenticate` for a principal that lacks scopes.
pub(super) struct Status {
    code: StatusCode,
    header: Option<(HeaderName, HeaderValue)>,
}

impl Status {
    const OK: Status = Status { code: StatusCode::OK, header: None };

    /// The JSON response carrying `message` with this status.
    pub(super) fn json(self, message: Vec<u8>) -> Response<McpBody> {
        let mut response = reply::json(self.code, message);
        if let Some((name, value)) = self.header {
            response.headers_mut().insert(name, value);
        }
        response
    }
}

/// The status and the JSON-RPC message of a request's outcome, a panic's included.
pub(super) fn encode_outcome(
    outcome: Outcome,
    id: &RequestId,
    era: Era,
    authenticator: Option<&dyn Authenticator>,
) -> (Status, Vec<u8>) {
    match outcome {
        Ok(Ok(response)) => (Status::OK, response),
        Ok(Err(error)) => {
            // A refusal for now (a rate limit) is 429, and a lack of scopes 403 with the
            // challenge of RFC 6750 §3.1, in both eras: a 2025 client's HTTP stack understands
            // them as well as a 2026 one's. The challenge names every scope the operation
            // needs, those every request needs included: a 2025-11-25 client asks for what it
            // names and nothing more, and would otherwise lose them.
            let mut scopes: Vec<&str> = Vec::new();
            if error.required_scopes().next().is_some() {
                let everywhere = authenticator.map(|auth| auth.challenge_scopes()).unwrap_or_default();
                for scope in everywhere.iter().map(String::as_str).chain(error.required_scopes()) {
                    if !scopes.contains(&scope) {
                        scopes.push(scope);
                    }
                }
            }
            let status = if let Some(after) = error.retry_after() {
                let header = (RETRY_AFTER, HeaderValue::from(retry_after_seconds(after)));
                Status { code: StatusCode::TOO_MANY_REQUESTS, header: Some(header) }
            } else if !scopes.is_empty() {
                let resource_metadata = authenticator.and_then(|auth| auth.resource_metadata_url());
                let challenge = challenge("Bearer", Some("insufficient_scope"), "", &scopes, resource_metadata, None);
                Status { code: StatusCode::FORBIDDEN, header: Some((WWW_AUTHENTICATE, challenge)) }
            } else {
                Status { code: status_for(error.code(), era), header: None }
            };
            (status, encode_error(Some(id), error))
        }
        Err(panic) => (Status::OK, encode_error(Some(id), panic_error(id, &panic))),
    }
}

/// What decides the form of the answer: the outcome, a message before it, or a request to
/// close the stream; or nothing, when every answer streams.
enum First {
    Done(Option<Outcome>),
    Message(Vec<u8>),
    Close,
    Stream,
}

pub(super) async fn run(shared: &Arc<Shared>, job: Job) -> Response<McpBody> {
    let Job { session, http_session, id, request, era, sse, caller } = job;
    // A 2026-07-28 request has a session of its own, so only 2025 ids can collide. The bound
    // on a session's requests in flight is the HTTP form of stdio's backpressure: a client
    // cannot be made to wait for its own reads here, so the request over the bound is refused.
    if era == Era::Session {
        match session.admits(&id, max_in_flight(&shared.server)) {
            Admission::Admitted => {}
            Admission::DuplicateId => return duplicate_id(&id),
            Admission::TooMany => return too_many_in_flight(&id, max_in_flight(&shared.server)),
        }
    }
    let cancel = Cancellation::new();
    // Resumable streams (2025-11-25 sessions) number their events and keep them.
    let resumable = http_session.clone().filter(|http_session| http_session.is_resumable());
    // The handler's messages besides its answer; the queue is made only if it sends any.
    let sink = Arc::new(LazyQueue::new(shared.options.stream_buffer));
    // Only a resumable stream's handler can ask to close it; others get a control of their own
    // once their answer streams.
    let control = resumable.as_ref().filter(|_| sse).map(|_| Arc::new(StreamControl::default()));
    let delivery = Delivery {
        sink: Some(sink.clone().into()),
        cancel: cancel.clone(),
        stream: control.clone(),
        principal: caller.principal,
        client_address: caller.address,
        transport_data: caller.http.map(|parts| parts as Arc<dyn Any + Send + Sync>),
    };
    // Boxed once (by `request_work`): the request's future is most of the size of every future
    // around it, each of which would otherwise move it again.
    let mut work = request_work(shared.server.clone(), session.clone(), id.clone(), request, delivery);
    // Modern answers keep their JSON form until a handler streams, so that their errors can
    // carry the status codes 2026-07-28 gives them.
    let always_stream = sse && era == Era::Session && shared.options.always_stream;

    // The request is first polled right here, in the connection's task: most handlers finish
    // without waiting for anything, and those cost no task and no in-flight entry.
    let mut queued = Vec::new();
    if !always_stream && let Poll::Ready(outcome) = poll_fn(|cx| Poll::Ready(work.as_mut().poll(cx))).await {
        let mut messages = if sink.is_made() { sink.take_receiver() } else { None };
        if let Some(messages) = &mut messages {
            while let Ok(message) = messages.try_recv() {
                queued.push(message);
            }
        }
        let (status, response) = encode_outcome(outcome, &id, era, shared.authenticator());
        let Some(messages) = messages.filter(|_| !queued.is_empty() && sse) else {
            return status.json(response);
        };
        let active = http_session.map(ActiveGuard::new);
        let answer = Answer::Ready(response);
        return stream_response(
            shared,
            resumable,
            Pump { answer, messages, control: control.unwrap_or_default(), queued, id, era, _active: active },
        );
    }
    // Taken once: above, the path returned. The queue ends once the handler's work, the last
    // to hold it from here, is done.
    let mut messages = sink.take_receiver().unwrap_or_else(|| mpsc::channel(1).1);
    drop(sink);
    let control = control.unwrap_or_default();

    // The handler waits for something: it goes on as a task of its own, which a 2025 client
    // can cancel by id and which outlives a 2025 client's closed connection.
    if era == Era::Session && !session.begin(&id, cancel) {
        return duplicate_id(&id);
    }
    let active = http_session.clone().map(ActiveGuard::new);
    let task_session = session.clone();
    let task_id = id.clone();
    let handle = tokio::spawn(async move {
        let outcome = work.await;
        if era == Era::Session {
            task_session.finish(&task_id);
        }
        outcome
    });
    if era == Era::Session {
        session.attach(&id, handle.abort_handle());
    }
    let mut running = Running { handle, abort_on_drop: era == Era::Stateless, done: false };

    let first = if always_stream {
        First::Stream
    } else {
        tokio::select! {
            biased;
            outcome = running.outcome() => First::Done(outcome),
            Some(message) = messages.recv() => First::Message(message),
            () = control.close_requested() => First::Close,
        }
    };
    let answer = match first {
        First::Done(outcome) => {
            while let Ok(message) = messages.try_recv() {
                queued.push(message);
            }
            match outcome {
                // Cancelled: what the handler sent before still goes out on its stream.
                None if queued.is_empty() || !sse => return cancelled(&id, sse),
                None => Answer::Cancelled,
                Some(outcome) => {
                    let (status, response) = encode_outcome(outcome, &id, era, shared.authenticator());
                    if queued.is_empty() || !sse {
                        return status.json(response);
                    }
                    Answer::Ready(response)
                }
            }
        }
        First::Message(message) if sse => {
            queued.push(message);
            Answer::Running(running)
        }
        First::Message(_) => {
            // The client takes JSON only: what the handler sends besides the answer is lost.
            tracing::debug!(%id, "dropping a message the client cannot receive without SSE");
            let Some(drained) = drain_until_done(&mut running, &mut messages).await else {
                return cancelled(&id, sse);
            };
            let (status, response) = encode_outcome(drained, &id, era, shared.authenticator());
            return status.json(response);
        }
        First::Close | First::Stream => Answer::Running(running),
    };
    stream_response(shared, resumable, Pump { answer, messages, control, queued, id, era, _active: active })
}

fn duplicate_id(id: &RequestId) -> Response<McpBody> {
    let error = RpcError::invalid_request(format!(
        "Invalid request: a request with id {id} is still in flight in this session; ids must be unique"
    ));
    reply::json(StatusCode::OK, encode_error(Some(id), error))
}

fn too_many_in_flight(id: &RequestId, limit: usize) -> Response<McpBody> {
    let error = RpcError::from(ErrorObject::new(
        ErrorCode::INTERNAL_ERROR,
        format!("Too many requests: this session already has {limit} requests in flight; retry when one finishes"),
    ));
    Status { code: StatusCode::TOO_MANY_REQUESTS, header: Some((RETRY_AFTER, HeaderValue::from_static("1"))) }
        .json(encode_error(Some(id), error))
}

/// Answers with an SSE stream that `pump` feeds from a task of its own.
fn stream_response(shared: &Arc<Shared>, resumable: Option<Arc<HttpSession>>, pump: Pump) -> Response<McpBody> {
    let (frames, body) = mpsc::channel(shared.options.stream_buffer);
    let stream_id = resumable.as_ref().map(|http_session| http_session.next_stream());
    let stream = ResponseStream::new(shared.clone(), frames, resumable.zip(stream_id));
    tokio::spawn(pump.run(stream));
    reply::event_stream(body)
}

/// Waits for the handler, discarding what it sends meanwhile.
async fn drain_until_done(running: &mut Running, messages: &mut mpsc::Receiver<Vec<u8>>) -> Option<Outcome> {
    loop {
        tokio::select! {
            outcome = running.outcome() => return outcome,
            message = messages.recv() => if message.is_none() {
                return running.outcome().await;
            },
        }
    }
}

/// The answer to a streamed request: already encoded, still being worked out, or none at all
/// (the request was cancelled).
enum Answer {
    Ready(Vec<u8>),
    Running(Running),
    Cancelled,
}

/// Feeds one SSE response: the handler's messages, keep-alive comments, then the response.
struct Pump {
    answer: Answer,
    messages: mpsc::Receiver<Vec<u8>>,
    control: Arc<StreamControl>,
    queued: Vec<Vec<u8>>,
    id: RequestId,
    era: Era,
    _active: Option<ActiveGuard>,
}

impl Pump {
    async fn run(self, mut stream: ResponseStream) {
        let Pump { answer, mut messages, control, queued, id, era, _active } = self;
        stream.prime().await;
        let mut running = match answer {
            Answer::Ready(response) => {
                let all: Vec<&[u8]> = queued.iter().chain([&response]).map(Vec::as_slice).collect();
                stream.send_all(&all).await;
                stream.finish();
                return;
            }
            Answer::Running(running) => running,
            Answer::Cancelled => {
                stream.send_all(&queued.iter().map(Vec::as_slice).collect::<Vec<_>>()).await;
                stream.finish();
                return;
            }
        };
        stream.send_all(&queued.iter().map(Vec::as_slice).collect::<Vec<_>>()).await;
        let keep_alive = stream.shared.options.keep_alive;
        let mut messages_open = true;
        let mut close_requested = false;
        loop {
            if era == Era::Stateless && stream.body.is_none() {
                // The client closed the stream of a 2026-07-28 request: that cancels it. The
                // task is stopped when `running` is dropped.
                tracing::debug!(%id, "the client closed the response stream; cancelling the request");
                return;
            }
            let body_closed = {
                let body = stream.body.clone();
                async move {
                    match body {
                        Some(body) => body.closed().await,
                        None => std::future::pending().await,
                    }
                }
            };
            tokio::select! {
                biased;
                outcome = running.outcome() => {
                    // What is left, and the answer, kept and sent together.
                    let mut last = Vec::new();
                    while let Ok(message) = messages.try_recv() {
                        last.push(message);
                    }
                    match outcome {
                        Some(outcome) => last.push(encode_outcome(outcome, &id, era, None).1),
                        None => tracing::debug!(%id, "the request was cancelled; its stream ends without an answer"),
                    }
                    stream.send_all(&last.iter().map(Vec::as_slice).collect::<Vec<_>>()).await;
                    stream.finish();
                    return;
                }
                message = messages.recv(), if messages_open => match message {
                    Some(message) => {
                        // The messages that came meanwhile go with it.
                        let mut together = vec![message];
                        while let Ok(message) = messages.try_recv() {
                            together.push(message);
                        }
                        stream.send_all(&together.iter().map(Vec::as_slice).collect::<Vec<_>>()).await;
                    }
                    None => messages_open = false,
                },
                () = control.close_requested(), if !close_requested => {
                    close_requested = true;
                    // The client reconnects with `Last-Event-ID` after the announced delay.
                    stream.body = None;
                }
                () = body_closed => stream.body = None,
                () = tokio::time::sleep(keep_alive) => stream.write_frame(sse::keep_alive()).await,
            }
        }
    }
}
