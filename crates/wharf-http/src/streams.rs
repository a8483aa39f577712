//! GET (a 2025 session's standalone stream, or resuming a stream with `Last-Event-ID`) and
//! DELETE (ending a 2025 session). Neither exists in protocol revision 2026-07-28.

use std::sync::Arc;

use bytes::Bytes;
use http::{Request, Response, StatusCode};
use tokio::sync::{mpsc, watch};
use wharf_protocol::ErrorCode;

use super::body::McpBody;
use super::headers::{self, LAST_EVENT_ID, SessionNaming};
use super::reply;
use super::sessions::{ActiveGuard, HttpSession};
use super::shared::{Shared, named_session};
use super::sse;
use super::standalone::Hold;
use wharf_server::contract::Cancellation;
use wharf_server::contract::Principal;
use wharf_server::contract::SessionEndReason;

pub(crate) async fn get<B>(shared: &Arc<Shared>, request: Request<B>) -> Response<McpBody> {
    let headers = request.headers();
    if SessionNaming::of(headers).names_stateless_revision() {
        return reply::post_only();
    }
    // Unlike a POST's, a GET's `Accept` must be there: the stream is all it can be answered with.
    if !headers.contains_key(http::header::ACCEPT) || !headers::accepted(headers).event_stream {
        return reply::refuse(
            StatusCode::NOT_ACCEPTABLE,
            ErrorCode::INVALID_REQUEST,
            "Not acceptable: a GET stream needs `Accept: text/event-stream`",
        );
    }
    let http_session =
        match named_session(shared, SessionNaming::of(headers), request.extensions().get::<Principal>()).await {
            Ok(http_session) => http_session,
            Err(refusal) => return refusal.response(),
        };
    let last_event = headers::text(headers, &LAST_EVENT_ID).map(str::to_owned);
    if let Some(last_event) = last_event {
        let Some((stream, after)) = sse::parse_event_id(&last_event) else {
            return reply::refuse(
                StatusCode::BAD_REQUEST,
                ErrorCode::INVALID_REQUEST,
                "Bad request: unknown Last-Event-ID",
            );
        };
        if let Some(response) = resume(shared, &http_session, stream, after) {
            return response;
        }
        if http_session.standalone().stream() == Some(stream) {
            return standalone(shared, http_session, Some(after)).await;
        }
        if let Some(store) = &shared.options.session_store {
            // Another instance sends (or sent) the stream: what it kept is replayed, and what
            // it goes on sending follows.
            match store.0.resume_events(http_session.session.id(), stream, after).await {
                Ok(Some(frames)) => return reply::event_stream(frames),
                Ok(None) => {}
                Err(err) if err.is_stream_gone() => {
                    return reply::refuse(
                        StatusCode::GONE,
                        ErrorCode::INVALID_REQUEST,
                        format!("Gone: {}", err.reason()),
                    );
                }
                Err(err) => {
                    tracing::warn!(%err, "a stream's events could not be read");
                    return reply::store_unavailable();
                }
            }
        }
    }
    standalone(shared, http_session, None).await
}

/// Replays a stream's events after `after` and, while the stream goes on, hands this GET the
/// events that follow. None when the session has no such stream (the standalone stream is
/// resumed by taking it over).
fn resume(shared: &Shared, http_session: &HttpSession, stream: u64, after: u64) -> Option<Response<McpBody>> {
    let mut streams = http_session.streams();
    let live = streams.get_mut(&stream)?;
    let replay = shared.sessions.events().replay(http_session.session.id(), stream, after);
    let (frames, body) = mpsc::channel(replay.len() + shared.options.stream_buffer);
    for (_, frame) in replay {
        let _ = frames.try_send(frame);
    }
    if !live.finished {
        live.listener = Some(frames);
    }
    Some(reply::event_stream(body))
}

/// The session's stream for messages that belong to no request: list changes, resource
/// updates. One at a time: a new GET takes it over from the one open, which ends (its client
/// may have gone away without a word). In a session with resumption its events are numbered
/// and kept, and a GET that resumes it from an event (`after`) is first replayed the events
/// kept since.
async fn standalone(shared: &Arc<Shared>, http_session: Arc<HttpSession>, after: Option<u64>) -> Response<McpBody> {
    let Some(hold) = http_session.standalone().take_over(|| http_session.next_stream()).await else {
        return reply::refuse(
            StatusCode::CONFLICT,
            ErrorCode::INVALID_REQUEST,
            "Conflict: this session's GET stream did not give way to a new one; try again",
        );
    };
    let resumable = http_session.is_resumable();
    let replay = match after {
        Some(after) if resumable => shared.sessions.events().replay(http_session.session.id(), hold.stream, after),
        _ => Vec::new(),
    };
    let (frames, body) = mpsc::channel(replay.len() + 1 + shared.options.stream_buffer);
    if resumable {
        // The point the client resumes from: the replay follows, then what is new.
        let from = after.map_or(hold.queue.sequence, |after| after.min(hold.queue.sequence));
        let id = sse::event_id(hold.stream, from);
        let _ = frames.try_send(sse::priming(&id, shared.options.sse_retry.as_millis()));
    }
    for (_, frame) in replay {
        let _ = frames.try_send(frame);
    }
    let pump = StandalonePump { shared: shared.clone(), http_session, frames, resumable };
    tokio::spawn(pump.run(hold));
    reply::event_stream(body)
}

/// Feeds a standalone stream from the session's queue until its client goes, a newer GET
/// takes over, or the endpoint shuts down.
struct StandalonePump {
    shared: Arc<Shared>,
    http_session: Arc<HttpSession>,
    frames: mpsc::Sender<Bytes>,
    resumable: bool,
}

impl StandalonePump {
    async fn run(self, mut hold: Hold) {
        let _active = ActiveGuard::new(self.http_session.clone());
        let keep_alive = self.shared.options.keep_alive;
        let mut closing = self.shared.closing();
        let queue = &mut *hold.queue;
        loop {
            let message = match queue.unsent.take() {
                Some(message) => Some(message),
                None => tokio::select! {
                    message = queue.next_message() => match message {
                        Some(message) => Some(message),
                        None => break,
                    },
                    () = self.frames.closed() => break,
                    () = hold.taken_over.cancelled() => break,
                    _ = closing.wait_for(|closing| *closing) => break,
                    () = tokio::time::sleep(keep_alive) => None,
                },
            };
            let frame = match &message {
                None => sse::keep_alive(),
                Some(message) if self.resumable => {
                    queue.sequence += 1;
                    let frame = sse::message(Some(&sse::event_id(hold.stream, queue.sequence)), message);
                    // Kept before it is sent: a GET that takes over replays what this one lost.
                    let session = self.http_session.session.id();
                    self.shared.sessions.events().store(session, hold.stream, queue.sequence, frame.clone());
                    frame
                }
                Some(message) => sse::message(None, message),
            };
            if !self.deliver(frame, &hold.taken_over, &mut closing).await {
                if !self.resumable {
                    queue.unsent = message;
                }
                break;
            }
        }
    }

    /// Hands `frame` to the client's connection; false when the stream is to end instead.
    async fn deliver(&self, frame: Bytes, taken_over: &Cancellation, closing: &mut watch::Receiver<bool>) -> bool {
        tokio::select! {
            sent = self.frames.send(frame) => sent.is_ok(),
            () = taken_over.cancelled() => false,
            _ = closing.wait_for(|closing| *closing) => false,
        }
    }
}

pub(crate) async fn delete<B>(shared: &Arc<Shared>, request: Request<B>) -> Response<McpBody> {
    let headers = request.headers();
    if SessionNaming::of(headers).names_stateless_revision() {
        return reply::post_only();
    }
    let http_session =
        match named_session(shared, SessionNaming::of(headers), request.extensions().get::<Principal>()).await {
            Ok(http_session) => http_session,
            Err(refusal) => return refusal.response(),
        };
    let id = http_session.session.id();
    if let Some(store) = &shared.options.session_store
        && let Err(err) = store.0.close(id).await
    {
        tracing::warn!(%err, "a session could not be deleted from the store");
        return reply::store_unavailable();
    }
    shared.sessions.remove(id, SessionEndReason::Closed);
    tracing::debug!(session = %id, "the client ended its session");
    reply::no_content()
}
