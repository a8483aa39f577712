//! POSTed messages of both eras. A request runs as a task; its answer is `application/json`
//! when the handler sends nothing else, and an SSE stream when it sends notifications or
//! requests first (or closes the stream to be resumed later).

use std::future::{Future, poll_fn};
use std::pin::Pin;
use std::sync::Arc;
use std::task::Poll;

use bytes::Bytes;
use http::header::{CONTENT_LENGTH, CONTENT_TYPE, HeaderValue, RETRY_AFTER};
use http::{HeaderMap, Request, Response, StatusCode};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use wharf_protocol::{
    ClientRequest, DecodeError, ErrorCode, ErrorObject, Incoming, ProtocolVersion, RequestId, RequestMeta, parse_batch,
};

use super::body::{BodyError, McpBody, read_body};
use super::headers::{self, SESSION_ID};
use super::reply;
use super::sessions::{ActiveGuard, CreateError, HttpSession};
use super::shared::{SessionRefusal, Shared, legacy_session};
use super::sse;
use crate::cancel::Cancellation;
use crate::delivery::{Delivery, StreamControl};
use crate::dispatch::answer::{Outcome, panic_error};
use crate::dispatch::batch::{allows_batches, answer_batch, batches_refused};
use crate::dispatch::client_messages;
use crate::dispatch::mirrored::check_mirrored_headers;
use crate::dispatch::{check_stateless_meta, is_stateless, removed_in_stateless, removed_method, request_outcome};
use crate::error::RpcError;
use crate::panic::CatchUnwind;
use crate::principal::Principal;
use crate::session::{Admission, Session};
use crate::wire::encode_error;

pub(crate) async fn handle<B>(shared: &Arc<Shared>, request: Request<B>) -> Response<McpBody>
where
    B: http_body::Body + Send + 'static,
    B::Data: Send,
    B::Error: std::fmt::Display,
{
    let (parts, body) = request.into_parts();
    let headers = &parts.headers;
    let principal = parts.extensions.get::<Principal>().cloned();
    if !is_json(headers) {
        return reply::refuse(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            ErrorCode::INVALID_REQUEST,
            "Unsupported media type: POST a JSON-RPC message with `Content-Type: application/json`",
        );
    }
    if !headers::accepts(headers, &["application/json", "text/event-stream"], true) {
        return reply::refuse(
            StatusCode::NOT_ACCEPTABLE,
            ErrorCode::INVALID_REQUEST,
            "Not acceptable: the client must accept `application/json` and `text/event-stream`",
        );
    }
    let limit = shared.options.max_body_bytes;
    let declared = headers.get(CONTENT_LENGTH).and_then(|value| value.to_str().ok()?.parse::<u64>().ok());
    if declared.is_some_and(|length| length > limit as u64) {
        return too_large(limit);
    }
    let bytes = match read_body(body, limit).await {
        Ok(bytes) => bytes,
        Err(BodyError::TooLarge) => return too_large(limit),
        Err(BodyError::Broken(err)) => {
            return reply::refuse(StatusCode::BAD_REQUEST, ErrorCode::INVALID_REQUEST, format!("Bad request: {err}"));
        }
    };
    let message = bytes.trim_ascii();
    if let Some(batch) = parse_batch(message) {
        return post_batch(shared, headers, batch).await;
    }
    let incoming = match Incoming::parse(message) {
        Ok(incoming) => incoming,
        Err(error) => return reply::error(StatusCode::BAD_REQUEST, error.id.as_ref(), error.error),
    };
    let modern_header = headers::names_stateless_revision(headers);
    match incoming {
        Incoming::Request { id, request } => post_request(shared, headers, id, request, principal).await,
        Incoming::Refused { id, method, .. } if modern_header && removed_in_stateless(&method) => {
            removed_method_reply(&id, &method)
        }
        Incoming::Refused { id, error, .. } => {
            if modern_header {
                let status = if error.code == ErrorCode::METHOD_NOT_FOUND {
                    StatusCode::NOT_FOUND
                } else {
                    StatusCode::BAD_REQUEST
                };
                return reply::error(status, Some(&id), error);
            }
            match legacy_session(shared, headers) {
                Ok(_) => reply::error(StatusCode::OK, Some(&id), error),
                Err(refusal) => refusal.response(),
            }
        }
        Incoming::Notification { method, params } => {
            if modern_header && headers.get(SESSION_ID).is_none() {
                // 2026-07-28 defines no notifications from client to server over HTTP.
                return reply::accepted();
            }
            match legacy_session(shared, headers) {
                Ok(http_session) => {
                    client_messages::notification(&http_session.session, &method, params);
                    reply::accepted()
                }
                Err(refusal) => refusal.response(),
            }
        }
        Incoming::Response { id, result } => answer(shared, headers, &id, Ok(result)),
        Incoming::Error { id: Some(id), error } => answer(shared, headers, &id, Err(error)),
        Incoming::Error { id: None, error } => {
            client_messages::unaddressed_error(&error);
            reply::accepted()
        }
    }
}

/// Serves a decoded request: in the stateless era when the header or the request's `_meta`
/// names 2026-07-28, else in the session the headers name.
async fn post_request(
    shared: &Arc<Shared>,
    headers: &HeaderMap,
    id: RequestId,
    request: ClientRequest,
    principal: Option<Principal>,
) -> Response<McpBody> {
    let modern_header = headers::names_stateless_revision(headers);
    if modern_header && removed_in_stateless(request.method()) {
        return removed_method_reply(&id, request.method());
    }
    if modern_header || is_stateless(&request) {
        modern(shared, headers, id, request, principal).await
    } else {
        legacy(shared, headers, id, request, principal).await
    }
}

/// 404 with -32601 for a session method 2026-07-28 removed, asked for under its header.
fn removed_method_reply(id: &RequestId, method: &str) -> Response<McpBody> {
    reply::error(StatusCode::NOT_FOUND, Some(id), removed_method(method, ProtocolVersion::LATEST).into_object())
}

/// A JSON-RPC batch, which only a 2025-03-26 session may send: its requests are answered in
/// one JSON array, and a batch of notifications and responses only gets 202.
async fn post_batch(
    shared: &Arc<Shared>,
    headers: &HeaderMap,
    batch: Result<Vec<&serde_json::value::RawValue>, DecodeError>,
) -> Response<McpBody> {
    let items: Vec<Vec<u8>> = match batch {
        Ok(items) => items.into_iter().map(|raw| raw.get().as_bytes().to_vec()).collect(),
        Err(error) => return reply::error(StatusCode::BAD_REQUEST, error.id.as_ref(), error.error),
    };
    let http_session = match legacy_session(shared, headers) {
        Ok(http_session) => http_session,
        Err(SessionRefusal::Missing) => {
            return reply::json(StatusCode::BAD_REQUEST, encode_error(None, batches_refused()));
        }
        Err(refusal) => return refusal.response(),
    };
    let session = &http_session.session;
    if !allows_batches(session) {
        return reply::json(StatusCode::BAD_REQUEST, encode_error(None, batches_refused()));
    }
    let _active = ActiveGuard::new(http_session.clone());
    match answer_batch(&shared.server, session, &items).await {
        Some(array) => reply::json(StatusCode::OK, array),
        None => reply::accepted(),
    }
}

fn too_large(limit: usize) -> Response<McpBody> {
    reply::refuse(
        StatusCode::PAYLOAD_TOO_LARGE,
        ErrorCode::INVALID_REQUEST,
        format!("Payload too large: request bodies are limited to {limit} bytes"),
    )
}

fn is_json(headers: &HeaderMap) -> bool {
    headers.get(CONTENT_TYPE).and_then(|value| value.to_str().ok()).is_some_and(|value| {
        value.split(';').next().is_some_and(|media| media.trim().eq_ignore_ascii_case("application/json"))
    })
}

/// The client's answer to a request the server sent in the session the headers name.
fn answer(
    shared: &Shared,
    headers: &HeaderMap,
    id: &RequestId,
    answer: Result<&serde_json::value::RawValue, ErrorObject>,
) -> Response<McpBody> {
    match legacy_session(shared, headers) {
        Ok(http_session) => {
            client_messages::answer(&http_session.session, id, answer);
            reply::accepted()
        }
        Err(refusal) => refusal.response(),
    }
}

/// A 2026-07-28 request: its headers checked against the body, then served on its own.
async fn modern(
    shared: &Arc<Shared>,
    headers: &HeaderMap,
    id: RequestId,
    request: ClientRequest,
    principal: Option<Principal>,
) -> Response<McpBody> {
    let default_meta = RequestMeta::default();
    let meta = request.meta().unwrap_or(&default_meta);
    // The headers are compared with the revision the body names; without one, the body's own
    // error (-32602) comes first.
    if let Some(version) = meta.protocol_version.as_deref()
        && let Err(error) = headers::check_modern(headers, &request, version)
    {
        return reply::error(StatusCode::BAD_REQUEST, Some(&id), error);
    }
    if let Err(error) = check_stateless_meta(meta) {
        return reply::json(StatusCode::BAD_REQUEST, encode_error(Some(&id), error));
    }
    if let Err(error) = check_mirrored_headers(&shared.server, &request, |name| headers::mirrored_param(headers, name))
    {
        return reply::error(StatusCode::BAD_REQUEST, Some(&id), error);
    }
    // Every stateless request is a session of its own: nothing it does is seen by another
    // client, and no id it uses can collide with another client's.
    let (outbound, _) = mpsc::channel(1);
    let session = Session::new(String::new(), outbound);
    let sse = headers::accepts(headers, &["text/event-stream"], true);
    run(shared, Job { session, http_session: None, id, request, modern: true, sse, principal }).await
}

/// A request of a 2025 session; `initialize` makes the session.
async fn legacy(
    shared: &Arc<Shared>,
    headers: &HeaderMap,
    id: RequestId,
    request: ClientRequest,
    principal: Option<Principal>,
) -> Response<McpBody> {
    let sse = headers::accepts(headers, &["text/event-stream"], true);
    if !matches!(request, ClientRequest::Initialize(_)) {
        let http_session = match legacy_session(shared, headers) {
            Ok(http_session) => http_session,
            Err(refusal) => return refusal.response(),
        };
        let session = http_session.session.clone();
        let job = Job { session, http_session: Some(http_session), id, request, modern: false, sse, principal };
        return run(shared, job).await;
    }
    shared.ensure_event_task();
    let http_session = match shared.sessions.create(Session::new) {
        Ok(created) => created,
        Err(CreateError::Full) => {
            let mut response = reply::refuse(
                StatusCode::SERVICE_UNAVAILABLE,
                ErrorCode::INTERNAL_ERROR,
                "Service unavailable: every session slot is in use; try again later",
            );
            response.headers_mut().insert(RETRY_AFTER, HeaderValue::from_static("5"));
            return response;
        }
        Err(CreateError::Random(err)) => {
            tracing::error!(%err, "the random source failed");
            return reply::refuse(StatusCode::INTERNAL_SERVER_ERROR, ErrorCode::INTERNAL_ERROR, "Internal error");
        }
    };
    let session = http_session.session.clone();
    let delivery = Delivery::to_session(Cancellation::new());
    let outcome = request_outcome(shared.server.clone(), session.clone(), id.clone(), request, delivery).await;
    match outcome {
        Ok(response) => {
            let mut response = reply::json(StatusCode::OK, response);
            if let Ok(value) = HeaderValue::from_str(session.id()) {
                response.headers_mut().insert(SESSION_ID, value);
            }
            response
        }
        Err(error) => {
            shared.sessions.remove(session.id());
            reply::json(StatusCode::OK, encode_error(Some(&id), error))
        }
    }
}

/// A request to run, and where it came from.
struct Job {
    session: Arc<Session>,
    http_session: Option<Arc<HttpSession>>,
    id: RequestId,
    request: ClientRequest,
    /// True for 2026-07-28 requests, whose stream closing cancels them.
    modern: bool,
    /// True when the client accepts an SSE answer.
    sse: bool,
    principal: Option<Principal>,
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
    async fn outcome(&mut self) -> Outcome {
        let joined = (&mut self.handle).await;
        self.done = true;
        joined.unwrap_or_else(|err| Err(format!("the handler's task ended: {err}")))
    }
}

/// The HTTP status of an error answer: 2026-07-28 gives some errors a status of their own.
fn status_for(code: i64, modern: bool) -> StatusCode {
    if !modern {
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

fn encode_outcome(outcome: Outcome, id: &RequestId, modern: bool) -> (StatusCode, Vec<u8>) {
    match outcome {
        Ok(Ok(response)) => (StatusCode::OK, response),
        Ok(Err(error)) => (status_for(error.code(), modern), encode_error(Some(id), error)),
        Err(panic) => (StatusCode::OK, encode_error(Some(id), panic_error(id, &panic))),
    }
}

/// What decides the form of the answer: the outcome, a message before it, or a request to
/// close the stream; or nothing, when every answer streams.
enum First {
    Done(Outcome),
    Message(Vec<u8>),
    Close,
    Stream,
}

async fn run(shared: &Arc<Shared>, job: Job) -> Response<McpBody> {
    let Job { session, http_session, id, request, modern, sse, principal } = job;
    // A 2026-07-28 request has a session of its own, so only 2025 ids can collide. The bound
    // on a session's requests in flight is the HTTP form of stdio's backpressure: a client
    // cannot be made to wait for its own reads here, so the request over the bound is refused.
    if !modern {
        match session.admits(&id, shared.server.options().max_in_flight) {
            Admission::Admitted => {}
            Admission::DuplicateId => return duplicate_id(&id),
            Admission::TooMany => return too_many_in_flight(&id, shared.server.options().max_in_flight),
        }
    }
    let cancel = Cancellation::new();
    // Resumable streams (2025-11-25 sessions) number their events and keep them.
    let resumable = http_session.clone().filter(|http_session| http_session.is_resumable());
    let (sink, mut messages) = mpsc::channel(shared.options.stream_buffer);
    let control = Arc::new(StreamControl::default());
    let delivery = Delivery {
        sink: Some(sink.into()),
        cancel: cancel.clone(),
        stream: resumable.as_ref().filter(|_| sse).map(|_| control.clone()),
        principal,
    };
    let mut work =
        CatchUnwind::new(request_outcome(shared.server.clone(), session.clone(), id.clone(), request, delivery));
    // Modern answers keep their JSON form until a handler streams, so that their errors can
    // carry the status codes 2026-07-28 gives them.
    let always_stream = sse && !modern && shared.options.always_stream;

    // The request is first polled right here, in the connection's task: most handlers finish
    // without waiting for anything, and those cost no task and no in-flight entry.
    let mut queued = Vec::new();
    if !always_stream && let Poll::Ready(outcome) = poll_fn(|cx| Poll::Ready(Pin::new(&mut work).poll(cx))).await {
        while let Ok(message) = messages.try_recv() {
            queued.push(message);
        }
        let (status, response) = encode_outcome(outcome, &id, modern);
        if queued.is_empty() || !sse {
            return reply::json(status, response);
        }
        let active = http_session.map(ActiveGuard::new);
        let answer = Answer::Ready(response);
        return stream_response(
            shared,
            resumable,
            Pump { answer, messages, control, queued, id, modern, _active: active },
        );
    }

    // The handler waits for something: it goes on as a task of its own, which a 2025 client
    // can cancel by id and which outlives a 2025 client's closed connection.
    if !modern && !session.begin(&id, cancel) {
        return duplicate_id(&id);
    }
    let active = http_session.clone().map(ActiveGuard::new);
    let task_session = session.clone();
    let task_id = id.clone();
    let handle = tokio::spawn(async move {
        let outcome = work.await;
        if !modern {
            task_session.finish(&task_id);
        }
        outcome
    });
    if !modern {
        session.attach(&id, handle.abort_handle());
    }
    let mut running = Running { handle, abort_on_drop: modern, done: false };

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
            let (status, response) = encode_outcome(outcome, &id, modern);
            if queued.is_empty() || !sse {
                return reply::json(status, response);
            }
            Answer::Ready(response)
        }
        First::Message(message) if sse => {
            queued.push(message);
            Answer::Running(running)
        }
        First::Message(_) => {
            // The client takes JSON only: what the handler sends besides the answer is lost.
            tracing::debug!(%id, "dropping a message the client cannot receive without SSE");
            let drained = drain_until_done(&mut running, &mut messages).await;
            let (status, response) = encode_outcome(drained, &id, modern);
            return reply::json(status, response);
        }
        First::Close | First::Stream => Answer::Running(running),
    };
    stream_response(shared, resumable, Pump { answer, messages, control, queued, id, modern, _active: active })
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
    let mut response = reply::json(StatusCode::TOO_MANY_REQUESTS, encode_error(Some(id), error));
    response.headers_mut().insert(RETRY_AFTER, HeaderValue::from_static("1"));
    response
}

/// Answers with an SSE stream that `pump` feeds from a task of its own.
fn stream_response(shared: &Arc<Shared>, resumable: Option<Arc<HttpSession>>, pump: Pump) -> Response<McpBody> {
    let (frames, body) = mpsc::channel(shared.options.stream_buffer);
    let stream_id = resumable.as_ref().map(|http_session| http_session.next_stream());
    let stream =
        Stream { shared: shared.clone(), body: Some(frames), resumable: resumable.zip(stream_id), sequence: 0 };
    tokio::spawn(pump.run(stream));
    reply::event_stream(body)
}

/// Waits for the handler, discarding what it sends meanwhile.
async fn drain_until_done(running: &mut Running, messages: &mut mpsc::Receiver<Vec<u8>>) -> Outcome {
    loop {
        tokio::select! {
            outcome = running.outcome() => return outcome,
            message = messages.recv() => if message.is_none() {
                return running.outcome().await;
            },
        }
    }
}

/// An SSE response stream, and for resumable sessions the record that lets a client resume it.
struct Stream {
    shared: Arc<Shared>,
    /// The client's open response; None once it went away or the handler closed it.
    body: Option<mpsc::Sender<Bytes>>,
    resumable: Option<(Arc<HttpSession>, u64)>,
    sequence: u64,
}

impl Stream {
    async fn prime(&mut self) {
        let Some((http_session, stream)) = &self.resumable else { return };
        http_session.streams().entry(*stream).or_default();
        let frame = sse::priming(&sse::event_id(*stream, 0), self.shared.options.sse_retry.as_millis());
        self.write_frame(frame).await;
    }

    async fn send(&mut self, message: &[u8]) {
        let frame = match &self.resumable {
            None => sse::message(None, message),
            Some((http_session, stream)) => {
                self.sequence += 1;
                let frame = sse::message(Some(&sse::event_id(*stream, self.sequence)), message);
                // Storing and handing to a resumed listener happen under one lock, which a
                // resuming client also takes, so it sees each event exactly once.
                let mut streams = http_session.streams();
                let live = streams.entry(*stream).or_default();
                self.shared.sessions.events().store(http_session.session.id(), *stream, self.sequence, frame.clone());
                live.sequence = self.sequence;
                if let Some(listener) = &live.listener
                    && listener.try_send(frame.clone()).is_err()
                {
                    // A listener that cannot keep up resumes again from its last event.
                    live.listener = None;
                }
                frame
            }
        };
        self.write_frame(frame).await;
    }

    async fn write_frame(&mut self, frame: Bytes) {
        if let Some(body) = &self.body
            && body.send(frame).await.is_err()
        {
            self.body = None;
        }
    }

    fn finish(&mut self) {
        if let Some((http_session, stream)) = &self.resumable {
            http_session.finish_stream(*stream);
        }
        self.body = None;
    }
}

/// The answer to a streamed request: already encoded, or still being worked out.
enum Answer {
    Ready(Vec<u8>),
    Running(Running),
}

/// Feeds one SSE response: the handler's messages, keep-alive comments, then the response.
struct Pump {
    answer: Answer,
    messages: mpsc::Receiver<Vec<u8>>,
    control: Arc<StreamControl>,
    queued: Vec<Vec<u8>>,
    id: RequestId,
    modern: bool,
    _active: Option<ActiveGuard>,
}

impl Pump {
    async fn run(self, mut stream: Stream) {
        let Pump { answer, mut messages, control, queued, id, modern, _active } = self;
        stream.prime().await;
        for message in queued {
            stream.send(&message).await;
        }
        let mut running = match answer {
            Answer::Ready(response) => {
                stream.send(&response).await;
                stream.finish();
                return;
            }
            Answer::Running(running) => running,
        };
        let keep_alive = stream.shared.options.keep_alive;
        let mut messages_open = true;
        let mut close_requested = false;
        loop {
            if modern && stream.body.is_none() {
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
                    while let Ok(message) = messages.try_recv() {
                        stream.send(&message).await;
                    }
                    let (_, response) = encode_outcome(outcome, &id, modern);
                    stream.send(&response).await;
                    stream.finish();
                    return;
                }
                message = messages.recv(), if messages_open => match message {
                    Some(message) => stream.send(&message).await,
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
