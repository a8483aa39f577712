//! POSTed messages of both eras: checked (media types, size, the 2026-07-28 headers), decoded,
//! and routed to a 2025 session or served statelessly; `respond.rs` runs a request into its
//! JSON or SSE response.

use std::any::Any;
use std::net::IpAddr;
use std::sync::Arc;
use std::time::Duration;

use http::header::{HeaderValue, RETRY_AFTER};
use http::{Request, Response, StatusCode};
use wharf_protocol::{
    ClientRequest, DecodeError, Era, ErrorCode, ErrorObject, Incoming, ProtocolVersion, RequestId, RequestMeta,
    parse_batch,
};

use super::body::{BodyError, BodyLimits, McpBody, read_body};
use super::headers::{self, PostHeaders, SESSION_ID};
use super::reply;
use super::respond::{Caller, Job, encode_outcome, run};
use super::session_record;
use super::session_store::{Relayed, SessionChange, SessionLimits, SessionStoreError};
use super::sessions::{ActiveGuard, CreateError, HttpSession};
use super::shared::{SessionRefusal, Shared, named_session};
use wharf_server::contract::Cancellation;
use wharf_server::contract::Delivery;

use crate::request_parts::HttpParts;
use wharf_server::contract::Principal;
use wharf_server::contract::RpcError;
use wharf_server::contract::check_mirrored_headers;
use wharf_server::contract::client_messages;
use wharf_server::contract::encode_error;
use wharf_server::contract::{Session, Transport};
use wharf_server::contract::{allows_batches, answer_batch, batches_refused, check_batch_len};
use wharf_server::contract::{check_stateless_meta, error_object, removed_in_stateless, removed_method, request_work};

/// Answers a POST; `authenticated` is the principal the endpoint's authenticator gave it, else
/// the request's extensions may hold one (an app's own authentication, a Unix peer).
pub(crate) async fn handle<B>(
    shared: &Arc<Shared>,
    request: Request<B>,
    address: Option<IpAddr>,
    authenticated: Option<Principal>,
) -> Response<McpBody>
where
    B: http_body::Body + Send + 'static,
    B::Data: Send,
    B::Error: std::fmt::Display,
{
    let (mut parts, body) = request.into_parts();
    let principal = authenticated.or_else(|| parts.extensions.get::<Principal>().cloned());
    // Middleware may read the headers and extensions; when none does, they are not kept.
    let http = shared.keeps_http_parts.then(|| {
        Arc::new(HttpParts { headers: parts.headers.clone(), extensions: std::mem::take(&mut parts.extensions) })
    });
    let caller = Caller { principal, address, http };
    let headers = &PostHeaders::of(&parts.headers);
    if !headers::is_json(headers.content_type) {
        return reply::refuse(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            ErrorCode::INVALID_REQUEST,
            "Unsupported media type: POST a JSON-RPC message with `Content-Type: application/json`",
        );
    }
    let accepted = headers.accepted();
    if !(accepted.json || accepted.event_stream) {
        return reply::refuse(
            StatusCode::NOT_ACCEPTABLE,
            ErrorCode::INVALID_REQUEST,
            "Not acceptable: the client must accept `application/json` and `text/event-stream`",
        );
    }
    let limit = shared.options.max_body_bytes;
    let declared = headers.content_length.and_then(|value| value.to_str().ok()?.parse::<u64>().ok());
    if declared.is_some_and(|length| length > limit as u64) {
        return too_large(limit);
    }
    let limits = BodyLimits {
        max_bytes: limit,
        timeout: shared.options.body_read_timeout,
        min_rate: shared.options.min_body_rate,
    };
    let bytes = match read_body(body, limits).await {
        Ok(bytes) => bytes,
        Err(BodyError::TooLarge) => return too_large(limit),
        Err(BodyError::TooSlow) => return reply::too_slow(),
        Err(BodyError::Broken(err)) => {
            return reply::refuse(StatusCode::BAD_REQUEST, ErrorCode::INVALID_REQUEST, format!("Bad request: {err}"));
        }
    };
    let message = bytes.trim_ascii();
    if shared.options.session_store.is_some() {
        // Every instance of a fleet tells the others of its resource changes, and hears theirs.
        shared.ensure_event_task();
        shared.ensure_relay_task();
    }
    if let Some(batch) = parse_batch(message) {
        return post_batch(shared, headers, batch, &caller).await;
    }
    let incoming = match Incoming::parse(message) {
        Ok(incoming) => incoming,
        Err(error) => return reply::error(StatusCode::BAD_REQUEST, error.id.as_ref(), error.error),
    };
    let stateless_header = headers.names_stateless_revision();
    match incoming {
        Incoming::Request { id, request } => post_request(shared, headers, stateless_header, id, request, caller).await,
        Incoming::Refused { id, method, .. } if stateless_header && removed_in_stateless(&method) => {
            removed_method_reply(&id, &method)
        }
        Incoming::Refused { id, error, .. } => {
            if stateless_header {
                let status = if error.code == ErrorCode::METHOD_NOT_FOUND {
                    StatusCode::NOT_FOUND
                } else {
                    StatusCode::BAD_REQUEST
                };
                return reply::error(status, Some(&id), error);
            }
            match named_session(shared, headers.session_naming(), caller.principal.as_ref()).await {
                Ok(_) => reply::error(StatusCode::OK, Some(&id), error),
                Err(refusal) => refusal.response(),
            }
        }
        Incoming::Notification { method, params } => {
            if stateless_header && headers.session_naming().session_id.is_none() {
                // 2026-07-28 defines no notifications from client to server over HTTP.
                return reply::accepted();
            }
            match named_session(shared, headers.session_naming(), caller.principal.as_ref()).await {
                Ok(http_session) => {
                    let initialized = method == "notifications/initialized";
                    let placed = client_messages::notification(&http_session.session, &method, params);
                    if initialized {
                        return store_change(shared, &http_session.session, SessionChange::Initialized).await;
                    }
                    if !placed {
                        return relay(shared, &http_session.session, message).await;
                    }
                    reply::accepted()
                }
                Err(refusal) => refusal.response(),
            }
        }
        Incoming::Response { id, result } => answer(shared, headers, &caller, message, &id, Ok(result)).await,
        Incoming::Error { id: Some(id), error } => answer(shared, headers, &caller, message, &id, Err(error)).await,
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
    headers: &PostHeaders<'_>,
    stateless_header: bool,
    id: RequestId,
    request: ClientRequest,
    caller: Caller,
) -> Response<McpBody> {
    if stateless_header && removed_in_stateless(request.method()) {
        return removed_method_reply(&id, request.method());
    }
    if stateless_header || request.era() == Era::Stateless {
        stateless(shared, headers, id, request, caller).await
    } else {
        in_session(shared, headers, id, request, caller).await
    }
}

/// 404 with -32601 for a session method 2026-07-28 removed, asked for under its header.
fn removed_method_reply(id: &RequestId, method: &str) -> Response<McpBody> {
    reply::error(StatusCode::NOT_FOUND, Some(id), error_object(removed_method(method, ProtocolVersion::LATEST)))
}

/// A JSON-RPC batch, which only a 2025-03-26 session may send: its requests are answered in
/// one JSON array, and a batch of notifications and responses only gets 202.
async fn post_batch(
    shared: &Arc<Shared>,
    headers: &PostHeaders<'_>,
    batch: Result<Vec<&serde_json::value::RawValue>, DecodeError>,
    caller: &Caller,
) -> Response<McpBody> {
    let items = match batch {
        Ok(items) => items,
        Err(error) => return reply::error(StatusCode::BAD_REQUEST, error.id.as_ref(), error.error),
    };
    let http_session = match named_session(shared, headers.session_naming(), caller.principal.as_ref()).await {
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
    if let Err(error) = check_batch_len(&shared.server, items.len()) {
        return reply::json(StatusCode::BAD_REQUEST, encode_error(None, error));
    }
    let items: Vec<Vec<u8>> = items.into_iter().map(|raw| raw.get().as_bytes().to_vec()).collect();
    let _active = ActiveGuard::new(http_session.clone());
    // Every request of the batch acts for the caller, and its layers see the HTTP request.
    let delivery = || {
        let mut delivery = Delivery::to_session(Cancellation::new());
        delivery.principal = caller.principal.clone();
        delivery.client_address = caller.address;
        delivery.transport_data = caller.http.clone().map(|parts| parts as Arc<dyn Any + Send + Sync>);
        delivery
    };
    match answer_batch(&shared.server, session, &items, &delivery).await {
        Some(array) => reply::json(StatusCode::OK, array),
        None => reply::accepted(),
    }
}

/// 429 for an `initialize` from a client that holds its quota of sessions, all of them busy.
fn too_many_sessions(id: &RequestId, limit: usize) -> Response<McpBody> {
    let message = format!(
        "Too many sessions: this client already holds {limit} sessions, each with a request running or a \
         stream open, the most one client may hold (HttpOptions::max_sessions_per_client); close one or try \
         again later"
    );
    let mut response = reply::json(
        StatusCode::TOO_MANY_REQUESTS,
        encode_error(Some(id), RpcError::rate_limited(message, SESSION_RETRY)),
    );
    response.headers_mut().insert(RETRY_AFTER, HeaderValue::from(SESSION_RETRY.as_secs()));
    response
}

/// When a client refused a session may try again.
const SESSION_RETRY: Duration = Duration::from_secs(5);

fn too_large(limit: usize) -> Response<McpBody> {
    reply::refuse(
        StatusCode::PAYLOAD_TOO_LARGE,
        ErrorCode::INVALID_REQUEST,
        format!("Payload too large: request bodies are limited to {limit} bytes"),
    )
}

/// The client's answer to a request the server sent in the session the headers name.
async fn answer(
    shared: &Arc<Shared>,
    headers: &PostHeaders<'_>,
    caller: &Caller,
    message: &[u8],
    id: &RequestId,
    answer: Result<&serde_json::value::RawValue, ErrorObject>,
) -> Response<McpBody> {
    match named_session(shared, headers.session_naming(), caller.principal.as_ref()).await {
        Ok(http_session) => {
            if client_messages::answer(&http_session.session, id, answer) {
                reply::accepted()
            } else {
                relay(shared, &http_session.session, message).await
            }
        }
        Err(refusal) => refusal.response(),
    }
}

/// Hands a client's message that no request here awaits to the other instances sharing the
/// session's store: 202 once relayed (or at once without a store), 503 while the store does
/// not answer.
async fn relay(shared: &Shared, session: &Session, message: &[u8]) -> Response<McpBody> {
    let Some(store) = &shared.options.session_store else { return reply::accepted() };
    let relayed = Relayed::ClientMessage { session: session.id().to_owned(), message: message.to_vec() };
    match store.0.relay(&relayed).await {
        Ok(()) => reply::accepted(),
        Err(err) => {
            tracing::warn!(%err, "a client's message could not be relayed");
            reply::store_unavailable()
        }
    }
}

/// A 2026-07-28 request: its headers checked against the body, then served on its own.
async fn stateless(
    shared: &Arc<Shared>,
    headers: &PostHeaders<'_>,
    id: RequestId,
    request: ClientRequest,
    caller: Caller,
) -> Response<McpBody> {
    // Made only for a request without `_meta`: making and dropping one costs every request.
    let default_meta;
    let meta = match request.meta() {
        Some(meta) => meta,
        None => {
            default_meta = RequestMeta::default();
            &default_meta
        }
    };
    // The headers are compared with the revision the body names; without one, the body's own
    // error (-32602) comes first.
    if let Some(version) = meta.protocol_version.as_deref()
        && let Err(error) = headers::check_stateless_headers(headers, &request, version)
    {
        return reply::error(StatusCode::BAD_REQUEST, Some(&id), error);
    }
    if let Err(error) = check_stateless_meta(meta) {
        return reply::json(StatusCode::BAD_REQUEST, encode_error(Some(&id), error));
    }
    if let Err(error) =
        check_mirrored_headers(&shared.server, &request, |name| headers::mirrored_param(headers.all, name))
    {
        return reply::error(StatusCode::BAD_REQUEST, Some(&id), error);
    }
    // Every stateless request is a session of its own: nothing it does is seen by another
    // client, and no id it uses can collide with another client's.
    let session = Session::new(String::new(), Transport::Http, shared.no_outbound.clone());
    let sse = headers.accepted().event_stream;
    Box::pin(run(shared, Job { session, http_session: None, id, request, era: Era::Stateless, sse, caller })).await
}

/// A request of a 2025 session; `initialize` makes the session.
async fn in_session(
    shared: &Arc<Shared>,
    headers: &PostHeaders<'_>,
    id: RequestId,
    request: ClientRequest,
    caller: Caller,
) -> Response<McpBody> {
    let sse = headers.accepted().event_stream;
    if !matches!(request, ClientRequest::Initialize(_)) {
        let http_session = match named_session(shared, headers.session_naming(), caller.principal.as_ref()).await {
            Ok(http_session) => http_session,
            Err(refusal) => return refusal.response(),
        };
        let session = http_session.session.clone();
        if shared.options.session_store.is_some()
            && let Some(change) = session_change(&request)
        {
            return changing(shared, session, http_session, id, request, caller, change).await;
        }
        let job = Job { session, http_session: Some(http_session), id, request, era: Era::Session, sse, caller };
        return Box::pin(run(shared, job)).await;
    }
    shared.ensure_event_task();
    let http_session = match shared
        .sessions
        .create(caller.principal.clone(), caller.address, |id, outbound| Session::new(id, Transport::Http, outbound))
    {
        Ok(created) => created,
        Err(CreateError::ClientFull) => return too_many_sessions(&id, shared.options.max_sessions_per_client),
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
    let mut delivery = Delivery::to_session(Cancellation::new());
    delivery.principal = caller.principal;
    delivery.client_address = caller.address;
    delivery.transport_data = caller.http.map(|parts| parts as Arc<dyn Any + Send + Sync>);
    // Layers run here too, so a panic is caught as it is for every other request.
    let outcome = request_work(shared.server.clone(), session.clone(), id.clone(), request, delivery).await;
    let opened = matches!(outcome, Ok(Ok(_)));
    if opened && let Some(store) = &shared.options.session_store {
        let kept = match session_record::opened(&session) {
            Some(record) => {
                let options = &shared.options;
                let limits = SessionLimits {
                    max_sessions: options.max_sessions,
                    client: http_session.client(),
                    max_per_client: options.max_sessions_per_client,
                };
                store.0.open(session.id(), &record, options.session_idle_timeout, limits).await
            }
            None => Err(SessionStoreError::unavailable("initialize settled nothing to keep")),
        };
        if let Err(err) = kept {
            tracing::warn!(%err, "a new session could not be stored");
            shared.sessions.discard(session.id());
            return reply::store_unavailable();
        }
    }
    let (status, message) = encode_outcome(outcome, &id, Era::Session, shared.authenticator());
    let mut response = status.json(message);
    if !opened {
        // A session whose initialize failed is not one the client can use.
        shared.sessions.discard(session.id());
    } else if let Ok(value) = HeaderValue::from_str(session.id()) {
        response.headers_mut().insert(SESSION_ID, value);
    }
    response
}

/// The change a request of a 2025 session makes to what a shared store keeps of it, if any.
fn session_change(request: &ClientRequest) -> Option<SessionChange> {
    match request {
        ClientRequest::SetLevel(params) => Some(session_record::change_of_level(params.level)),
        ClientRequest::Subscribe(params) => Some(SessionChange::Subscribed(params.uri.clone())),
        ClientRequest::Unsubscribe(params) => Some(SessionChange::Unsubscribed(params.uri.clone())),
        _ => None,
    }
}

/// A request that changes a shared session: answered in JSON once the store holds the change,
/// so that the client's next request, wherever it lands, sees it.
async fn changing(
    shared: &Arc<Shared>,
    session: Arc<Session>,
    http_session: Arc<HttpSession>,
    id: RequestId,
    request: ClientRequest,
    caller: Caller,
    change: SessionChange,
) -> Response<McpBody> {
    let job = Job {
        session: session.clone(),
        http_session: Some(http_session),
        id,
        request,
        era: Era::Session,
        sse: false,
        caller,
    };
    let response = Box::pin(run(shared, job)).await;
    if !session_record::shows(&session, &change) {
        // The request failed (an unknown resource, say): there is no change to keep.
        return response;
    }
    match store_change(shared, &session, change).await.status() {
        StatusCode::ACCEPTED => response,
        _ => reply::store_unavailable(),
    }
}

/// Records a change to a shared session: 202, or 503 while the store does not answer.
async fn store_change(shared: &Shared, session: &Session, change: SessionChange) -> Response<McpBody> {
    let Some(store) = &shared.options.session_store else { return reply::accepted() };
    match store.0.change(session.id(), &change, shared.options.session_idle_timeout).await {
        Ok(()) => reply::accepted(),
        Err(err) => {
            tracing::warn!(%err, "a session change could not be stored");
            reply::store_unavailable()
        }
    }
}
