//! The metrics endpoint (`HttpOptions::metrics_endpoint`): a GET answered with the Prometheus
//! text a renderer of the application's gives, behind the same `Host` and `Origin` checks as
//! the MCP endpoint.

use http::header::{CONTENT_TYPE, HeaderValue};
use http::{Method, Request, Response, StatusCode};

use super::body::McpBody;
use super::guard;
use super::options::{HttpOptions, MetricsEndpoint};
use super::reply;

/// The content type of the Prometheus text exposition format.
const PROMETHEUS_TEXT: &str = "text/plain; version=0.0.4; charset=utf-8";

/// Answers a request for the metrics path.
pub(crate) fn answer<B>(options: &HttpOptions, metrics: &MetricsEndpoint, request: &Request<B>) -> Response<McpBody> {
    if let Err(refusal) = guard::check(options, request.headers()) {
        tracing::warn!(?refusal, "refusing a metrics request from an unexpected host or origin");
        return reply::forbidden(refusal);
    }
    if request.method() != Method::GET && request.method() != Method::HEAD {
        return reply::method_not_allowed();
    }
    let text = (metrics.render)();
    let mut response = Response::new(if request.method() == Method::HEAD {
        McpBody::full(Vec::new())
    } else {
        McpBody::full(text.into_bytes())
    });
    *response.status_mut() = StatusCode::OK;
    response.headers_mut().insert(CONTENT_TYPE, HeaderValue::from_static(PROMETHEUS_TEXT));
    response
}
