//! The operators' endpoints (`HttpOptions::metrics_endpoint`, `HttpOptions::health_endpoint`): a
//! GET answered with what a renderer of the application's gives (the Prometheus text, the
//! health as JSON, 503 when unwell), behind the same `Host` and `Origin` checks as the MCP
//! endpoint, and its authentication: the scrapers' own token (`HttpOptions::metrics_token`)
//! when there is one, else the endpoint's authenticator.

use http::header::{AUTHORIZATION, CONTENT_TYPE, HeaderValue, WWW_AUTHENTICATE};
use http::{Method, Request, Response, StatusCode};
use wharf_protocol::ErrorCode;

use super::body::McpBody;
use super::guard;
use super::options::{HttpOptions, MetricsToken, OperatorEndpoint};
use super::reply;

/// Answers a request for the metrics path.
pub(crate) async fn answer<B>(
    options: &HttpOptions,
    endpoint: &OperatorEndpoint,
    request: &Request<B>,
) -> Response<McpBody> {
    if let Err(refusal) = guard::check(options, request.headers()) {
        tracing::warn!(?refusal, "refusing a metrics request from an unexpected host or origin");
        return reply::forbidden(refusal);
    }
    if let Some(refused) = authenticate(options, request).await {
        return refused;
    }
    if request.method() != Method::GET && request.method() != Method::HEAD {
        return reply::method_not_allowed();
    }
    let (well, text) = (endpoint.render)();
    let mut response = Response::new(if request.method() == Method::HEAD {
        McpBody::full(Vec::new())
    } else {
        McpBody::full(text.into_bytes())
    });
    *response.status_mut() = if well { StatusCode::OK } else { StatusCode::SERVICE_UNAVAILABLE };
    response.headers_mut().insert(CONTENT_TYPE, HeaderValue::from_static(endpoint.content_type));
    response
}

/// The refusal of a scrape without the credentials the metrics need: the metrics token when
/// one is set, else a token the endpoint's authenticator accepts; `None` when it may go on.
async fn authenticate<B>(options: &HttpOptions, request: &Request<B>) -> Option<Response<McpBody>> {
    if let Some(token) = &options.metrics_token {
        if bears(request, token) {
            return None;
        }
        let mut refused = reply::refuse(
            StatusCode::UNAUTHORIZED,
            ErrorCode::INVALID_REQUEST,
            "Unauthorized: the metrics need their bearer token (HttpOptions::metrics_token)",
        );
        refused.headers_mut().insert(WWW_AUTHENTICATE, HeaderValue::from_static("Bearer realm=\"metrics\""));
        return Some(refused);
    }
    let auth = options.auth.as_ref()?;
    let (mut head, ()) = Request::new(()).into_parts();
    head.method = request.method().clone();
    head.uri = request.uri().clone();
    head.version = request.version();
    head.headers = request.headers().clone();
    head.extensions = request.extensions().clone();
    match auth.0.authenticate(&head).await {
        Ok(_) => None,
        Err(refusal) => Some(reply::unauthenticated(&refusal, &*auth.0)),
    }
}

/// True when the request's `Authorization` is `Bearer TOKEN` with the metrics token, compared
/// in a time that does not depend on where they differ.
fn bears<B>(request: &Request<B>, token: &MetricsToken) -> bool {
    let Some(sent) = request.headers().get(AUTHORIZATION).and_then(|value| value.as_bytes().strip_prefix(b"Bearer "))
    else {
        return false;
    };
    let expected = token.0.as_bytes();
    sent.len() == expected.len()
        && std::hint::black_box(sent.iter().zip(expected).fold(0u8, |differs, (a, b)| differs | (a ^ b))) == 0
}
