//! Building responses: JSON-RPC messages, SSE streams, errors with their status codes, CORS.

use bytes::Bytes;
use http::header::{
    ACCESS_CONTROL_ALLOW_HEADERS, ACCESS_CONTROL_ALLOW_METHODS, ACCESS_CONTROL_ALLOW_ORIGIN,
    ACCESS_CONTROL_EXPOSE_HEADERS, ALLOW, CACHE_CONTROL, CONNECTION, CONTENT_TYPE, HeaderValue, RETRY_AFTER, VARY,
};
use http::{Response, StatusCode};
use tokio::sync::mpsc;
use wharf_protocol::{ErrorCode, ErrorObject, RequestId};

use super::auth::{AuthRefusal, Authenticator};
use super::body::McpBody;
use super::guard::Refusal;
use super::options::HttpOptions;
use wharf_server::contract::RpcError;
use wharf_server::contract::encode_error;

pub(crate) fn with_body(status: StatusCode, content_type: Option<&'static str>, body: McpBody) -> Response<McpBody> {
    let mut response = Response::new(body);
    *response.status_mut() = status;
    if let Some(content_type) = content_type {
        response.headers_mut().insert(CONTENT_TYPE, HeaderValue::from_static(content_type));
    }
    response
}

/// A JSON-RPC message as an `application/json` response.
pub(crate) fn json(status: StatusCode, message: Vec<u8>) -> Response<McpBody> {
    with_body(status, Some("application/json"), McpBody::full(message))
}

/// A JSON-RPC error with `status`.
pub(crate) fn error(status: StatusCode, id: Option<&RequestId>, error: ErrorObject) -> Response<McpBody> {
    json(status, encode_error(id, RpcError::from(error)))
}

/// An HTTP-level refusal, with a JSON-RPC error (without id) saying why.
pub(crate) fn refuse(status: StatusCode, code: ErrorCode, message: impl Into<String>) -> Response<McpBody> {
    error(status, None, ErrorObject::new(code, message))
}

/// 408 for a body that did not arrive in time, and the connection closed: what is left of the
/// body would otherwise be read as the next request.
pub(crate) fn too_slow() -> Response<McpBody> {
    let mut response = refuse(
        StatusCode::REQUEST_TIMEOUT,
        ErrorCode::INVALID_REQUEST,
        "Request timeout: the request body did not arrive in time",
    );
    response.headers_mut().insert(CONNECTION, HeaderValue::from_static("close"));
    response
}

/// 503 with `Retry-After` while a shared store does not answer: the request may be sent again.
pub(crate) fn store_unavailable() -> Response<McpBody> {
    let mut response = refuse(
        StatusCode::SERVICE_UNAVAILABLE,
        ErrorCode::INTERNAL_ERROR,
        "Service unavailable: the session store does not answer; try again shortly",
    );
    response.headers_mut().insert(RETRY_AFTER, HeaderValue::from_static("1"));
    response
}

/// An SSE response fed by `frames`.
pub(crate) fn event_stream(frames: mpsc::Receiver<Bytes>) -> Response<McpBody> {
    let mut response = with_body(StatusCode::OK, Some("text/event-stream"), McpBody::stream(frames));
    let headers = response.headers_mut();
    headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    // Proxies such as nginx would otherwise hold events back in their buffers.
    headers.insert("x-accel-buffering", HeaderValue::from_static("no"));
    response
}

pub(crate) fn accepted() -> Response<McpBody> {
    with_body(StatusCode::ACCEPTED, None, McpBody::empty())
}

pub(crate) fn no_content() -> Response<McpBody> {
    with_body(StatusCode::NO_CONTENT, None, McpBody::empty())
}

pub(crate) fn forbidden(refusal: Refusal) -> Response<McpBody> {
    let message = match refusal {
        Refusal::Host => "Forbidden: this server does not answer to that Host",
        Refusal::Origin => "Forbidden: requests from that Origin are not allowed",
    };
    refuse(StatusCode::FORBIDDEN, ErrorCode::INVALID_REQUEST, message)
}

/// 403 for a Unix socket peer whose user the options do not let in.
pub(crate) fn peer_not_allowed(uid: u32) -> Response<McpBody> {
    refuse(
        StatusCode::FORBIDDEN,
        ErrorCode::INVALID_REQUEST,
        format!("Forbidden: the user {uid} is not allowed on this socket"),
    )
}

pub(crate) fn method_not_allowed() -> Response<McpBody> {
    let mut response = refuse(
        StatusCode::METHOD_NOT_ALLOWED,
        ErrorCode::INVALID_REQUEST,
        "Method not allowed: the MCP endpoint takes POST, GET and DELETE",
    );
    response.headers_mut().insert(ALLOW, HeaderValue::from_static("GET, POST, DELETE"));
    response
}

/// 405 for GET and DELETE of 2026-07-28 clients, which only POST.
pub(crate) fn post_only() -> Response<McpBody> {
    let mut response = refuse(
        StatusCode::METHOD_NOT_ALLOWED,
        ErrorCode::INVALID_REQUEST,
        "Method not allowed: protocol revision 2026-07-28 uses POST only",
    );
    response.headers_mut().insert(ALLOW, HeaderValue::from_static("POST"));
    response
}

pub(crate) fn not_found() -> Response<McpBody> {
    with_body(StatusCode::NOT_FOUND, Some("text/plain"), McpBody::full(Bytes::from_static(b"Not found\n")))
}

pub(crate) fn preflight() -> Response<McpBody> {
    let mut response = no_content();
    let headers = response.headers_mut();
    headers.insert(ACCESS_CONTROL_ALLOW_METHODS, HeaderValue::from_static("GET, POST, DELETE, OPTIONS"));
    headers.insert(
        ACCESS_CONTROL_ALLOW_HEADERS,
        HeaderValue::from_static(
            "content-type, accept, authorization, mcp-session-id, mcp-protocol-version, mcp-method, mcp-name, \
             last-event-id",
        ),
    );
    response
}

/// The answer to a request the authenticator refused: its status, its bearer challenge, and
/// a JSON-RPC error saying the same.
pub(crate) fn unauthenticated(refusal: &AuthRefusal, authenticator: &dyn Authenticator) -> Response<McpBody> {
    let mut response = refuse(refusal.status(), ErrorCode::INVALID_REQUEST, refusal.message());
    for challenge in refusal.challenges(authenticator) {
        response.headers_mut().append(http::header::WWW_AUTHENTICATE, challenge);
    }
    if let Some(nonce) = refusal.dpop_nonce().and_then(|nonce| HeaderValue::from_str(nonce).ok()) {
        response.headers_mut().insert("dpop-nonce", nonce);
    }
    response
}

/// A document anyone may read (the protected resource metadata): JSON to GET and HEAD, with
/// CORS open to every origin, since browser clients fetch it before they can authenticate.
/// `Host` is still checked; `Origin` is not, because the document is public.
pub(crate) fn public_document<B>(
    options: &HttpOptions,
    request: &http::Request<B>,
    document: Bytes,
) -> Response<McpBody> {
    if let Err(refusal) = super::guard::check_host(options, request.headers()) {
        return forbidden(refusal);
    }
    let mut response = match *request.method() {
        http::Method::GET | http::Method::HEAD => {
            with_body(StatusCode::OK, Some("application/json"), McpBody::full(document))
        }
        http::Method::OPTIONS => {
            let mut response = no_content();
            let headers = response.headers_mut();
            headers.insert(ACCESS_CONTROL_ALLOW_METHODS, HeaderValue::from_static("GET, HEAD, OPTIONS"));
            headers.insert(ACCESS_CONTROL_ALLOW_HEADERS, HeaderValue::from_static("mcp-protocol-version"));
            response
        }
        _ => {
            let mut response = with_body(StatusCode::METHOD_NOT_ALLOWED, None, McpBody::empty());
            response.headers_mut().insert(http::header::ALLOW, HeaderValue::from_static("GET, HEAD, OPTIONS"));
            return response;
        }
    };
    response.headers_mut().insert(ACCESS_CONTROL_ALLOW_ORIGIN, HeaderValue::from_static("*"));
    response
}

/// Lets an allowed browser origin read the response and its session id.
pub(crate) fn add_cors(options: &HttpOptions, origin: Option<&HeaderValue>, response: &mut Response<McpBody>) {
    let Some(origin) = origin else { return };
    if !origin.to_str().is_ok_and(|origin| super::guard::origin_allowed(options, origin)) {
        return;
    }
    let headers = response.headers_mut();
    headers.insert(ACCESS_CONTROL_ALLOW_ORIGIN, origin.clone());
    headers.insert(ACCESS_CONTROL_EXPOSE_HEADERS, HeaderValue::from_static("mcp-session-id, mcp-protocol-version"));
    headers.append(VARY, HeaderValue::from_static("origin"));
}
