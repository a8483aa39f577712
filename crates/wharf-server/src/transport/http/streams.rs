//! GET (a 2025 session's standalone stream, or resuming a stream with `Last-Event-ID`) and
//! DELETE (ending a 2025 session). Neither exists in protocol revision 2026-07-28.

use std::sync::Arc;

use http::{Request, Response, StatusCode};
use tokio::sync::mpsc;
use wharf_protocol::ErrorCode;

use super::body::McpBody;
use super::headers::{self, LAST_EVENT_ID};
use super::reply;
use super::sessions::{ActiveGuard, HttpSession};
use super::shared::{Shared, legacy_session};
use super::sse;
use crate::principal::Principal;
use crate::session_end::SessionEndReason;

pub(crate) async fn get<B>(shared: &Arc<Shared>, request: Request<B>) -> Response<McpBody> {
    let headers = request.headers();
    if headers::names_stateless_revision(headers) {
        return reply::post_only();
    }
    if !headers::accepts(headers, &["text/event-stream"], false) {
        return reply::refuse(
            StatusCode::NOT_ACCEPTABLE,
            ErrorCode::INVALID_REQUEST,
            "Not acceptable: a GET stream needs `Accept: text/event-stream`",
        );
    }
    let http_session = match legacy_session(shared, headers, request.extensions().get::<Principal>()).await {
        Ok(http_session) => http_session,
        Err(refusal) => return refusal.response(),
    };
    let last_event = headers::text(headers, LAST_EVENT_ID).map(str::to_owned);
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
        if let Some(store) = &shared.options.session_store {
            // Another instance sends (or sent) the stream: what it kept is replayed, and what
            // it goes on sending follows.
            match store.0.resume_events(http_session.session.id(), stream, after).await {
                Ok(Some(frames)) => return reply::event_stream(frames),
                Ok(None) => {}
                Err(err) => {
                    tracing::warn!(%err, "a stream's events could not be read");
                    return reply::store_unavailable();
                }
            }
        }
    }
    standalone(shared, http_session)
}

/// Replays a stream's events after `after` and, while the stream goes on, hands this GET the
/// events that follow. None when the session has no such stream (a standalone stream, whose
/// events are not kept), which the caller answers with a fresh standalone stream.
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
/// updates. One at a time (409 for a second).
fn standalone(shared: &Arc<Shared>, http_session: Arc<HttpSession>) -> Response<McpBody> {
    let Some(mut messages) = http_session.take_standalone() else {
        return reply::refuse(
            StatusCode::CONFLICT,
            ErrorCode::INVALID_REQUEST,
            "Conflict: this session already has a GET stream open",
        );
    };
    let (frames, body) = mpsc::channel(shared.options.stream_buffer);
    let resumable = http_session.is_resumable();
    let stream = http_session.next_stream();
    let keep_alive = shared.options.keep_alive;
    let retry = shared.options.sse_retry.as_millis();
    let mut closing = shared.closing();
    tokio::spawn(async move {
        let _active = ActiveGuard::new(http_session.clone());
        let mut sequence = 0;
        if resumable && frames.send(sse::priming(&sse::event_id(stream, 0), retry)).await.is_err() {
            http_session.return_standalone(messages);
            return;
        }
        loop {
            let frame = tokio::select! {
                message = messages.recv() => match message {
                    Some(message) => {
                        sequence += 1;
                        let id = resumable.then(|| sse::event_id(stream, sequence));
                        sse::message(id.as_deref(), &message)
                    }
                    None => break,
                },
                () = frames.closed() => break,
                _ = closing.wait_for(|closing| *closing) => break,
                () = tokio::time::sleep(keep_alive) => sse::keep_alive(),
            };
            if frames.send(frame).await.is_err() {
                break;
            }
        }
        // The next GET of this session takes over the queue.
        http_session.return_standalone(messages);
    });
    reply::event_stream(body)
}

pub(crate) async fn delete<B>(shared: &Arc<Shared>, request: Request<B>) -> Response<McpBody> {
    let headers = request.headers();
    if headers::names_stateless_revision(headers) {
        return reply::post_only();
    }
    let http_session = match legacy_session(shared, headers, request.extensions().get::<Principal>()).await {
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
