//! [`OtelLayer`]: the MCP layer that makes a SERVER span of every request and records its
//! duration, with the attributes the OpenTelemetry semantic conventions for MCP name. What a
//! client chose (a tool or prompt name, a URI, an id) is bounded in length, and a tool or prompt
//! the server does not have is `_OTHER`, so that no client grows the metrics.

use std::borrow::Cow;
use std::time::Instant;

use opentelemetry::KeyValue;
use opentelemetry::metrics::Histogram;
use opentelemetry::propagation::TextMapCompositePropagator;
use opentelemetry_sdk::propagation::{BaggagePropagator, TraceContextPropagator};
use tracing::Instrument;
use tracing::field::Empty;
use tracing_opentelemetry::OpenTelemetrySpanExt;
use wharf_protocol::{ProtocolVersion, RequestId};
use wharf_server::{
    Layer, LayerFuture, McpRequest, McpResponse, Next, SessionEnd, SessionEndReason, Subject, Transport,
};

use crate::carrier;
use crate::names;

/// Traces and measures every request, and measures every session (a [`Layer`]); made by
/// [`Telemetry::layer`](crate::Telemetry::layer).
///
/// Each request gets a `tracing` span that the OpenTelemetry layer of the subscriber turns into
/// a SERVER span named `{mcp.method.name} {target}` (`tools/call echo`), whose parent is the
/// trace context in the request's `params._meta` (or, without one, the HTTP request's
/// `traceparent`, which is otherwise linked). The handler's own spans nest inside it. Its
/// duration goes to the `mcp.server.operation.duration` histogram, and the duration of each
/// 2025 session that ends to `mcp.server.session.duration`.
///
/// A tool or prompt name is an attribute (and the metric label `gen_ai_tool_name` or
/// `gen_ai_prompt_name`) only when the server has that tool or prompt; a name it does not have
/// is `_OTHER`. Values a client chose are cut to
/// [`TelemetryBuilder::max_attribute_length`](crate::TelemetryBuilder::max_attribute_length).
pub struct OtelLayer {
    propagator: TextMapCompositePropagator,
    instruments: Instruments,
    max_attribute_length: usize,
}

/// The two histograms the conventions define for servers.
#[derive(Clone)]
pub(crate) struct Instruments {
    /// `mcp.server.operation.duration`.
    pub(crate) operation: Histogram<f64>,
    /// `mcp.server.session.duration`.
    pub(crate) session: Histogram<f64>,
}

impl std::fmt::Debug for OtelLayer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OtelLayer").finish_non_exhaustive()
    }
}

impl OtelLayer {
    pub(crate) fn new(instruments: Instruments, max_attribute_length: usize) -> OtelLayer {
        let propagator = TextMapCompositePropagator::new(vec![
            Box::new(TraceContextPropagator::new()),
            Box::new(BaggagePropagator::new()),
        ]);
        OtelLayer { propagator, instruments, max_attribute_length }
    }

    /// `text` cut to the longest attribute value, at a character boundary, marked with `…`.
    fn bounded<'t>(&self, text: &'t str) -> Cow<'t, str> {
        bounded(text, self.max_attribute_length)
    }

    /// The tool or prompt `request` names, as attributes carry it: its name when the server
    /// has it, `_OTHER` when not.
    fn tool_and_prompt<'r>(
        &self,
        request: &McpRequest<'_>,
        target: Option<Subject<'r>>,
    ) -> (Option<Cow<'r, str>>, Option<Cow<'r, str>>) {
        let label = |name: &'r str, known: bool| if known { self.bounded(name) } else { Cow::Borrowed(names::OTHER) };
        match target {
            Some(Subject::Tool(name)) => (Some(label(name, request.is_known_tool())), None),
            Some(Subject::Prompt(name)) => (None, Some(label(name, request.is_known_prompt()))),
            _ => (None, None),
        }
    }

    /// The span of `request`, with its parent and link set.
    fn span(
        &self,
        request: &McpRequest<'_>,
        target: Option<Subject<'_>>,
        version: Option<ProtocolVersion>,
    ) -> tracing::Span {
        let method = request.method();
        let (tool, prompt) = self.tool_and_prompt(request, target);
        let name = match tool.as_deref().or(prompt.as_deref()) {
            Some(name) if name != names::OTHER => format!("{method} {name}"),
            _ => method.to_owned(),
        };
        let resource = match target {
            Some(Subject::Resource(uri)) if method != "completion/complete" => Some(self.bounded(uri)),
            _ => None,
        };
        let id = request_id_text(request.id());
        let id = self.bounded(&id);
        let http = request.transport() == Transport::Http;
        // Every attribute known now is given at creation (an `Option` that is `None` records
        // nothing): each later `record` is a look-up in the subscriber's registry.
        let span = tracing::info_span!(
            target: "wharf::otel",
            "mcp.server",
            otel.name = name.as_str(),
            otel.kind = "server",
            mcp.method.name = method,
            gen_ai.tool.name = tool.as_deref(),
            gen_ai.prompt.name = prompt.as_deref(),
            gen_ai.operation.name = tool.as_ref().map(|_| names::EXECUTE_TOOL),
            mcp.resource.uri = resource.as_deref(),
            jsonrpc.request.id = &*id,
            mcp.protocol.version = version.map(ProtocolVersion::as_str),
            mcp.session.id = request.session_id(),
            network.transport = transport_name(request.transport()),
            network.protocol.name = http.then_some("http"),
            network.protocol.version = http.then_some("1.1"),
            error.type = Empty,
            rpc.response.status_code = Empty,
            otel.status_code = Empty,
            otel.status_description = Empty,
        );
        let parent = request.params().meta().and_then(|meta| carrier::from_meta(&self.propagator, &meta.other));
        let header = http_traceparent(request).and_then(|value| carrier::from_header(&self.propagator, value));
        match (parent, header) {
            (Some(parent), header) => {
                let _ = span.set_parent(parent);
                if let Some(header) = header {
                    span.add_link(header);
                }
            }
            (None, Some(header)) => {
                use opentelemetry::trace::TraceContextExt;
                let _ = span.set_parent(opentelemetry::Context::new().with_remote_span_context(header));
            }
            (None, None) => {}
        }
        span
    }
}

/// The id's own text, as the conventions want it: a string id without JSON's quotes.
fn request_id_text(id: &RequestId) -> Cow<'_, str> {
    match id.as_string() {
        Some(text) => Cow::Borrowed(text),
        None => Cow::Owned(id.to_string()),
    }
}

/// `text` cut to at most `max` bytes and a `…`, at a character boundary.
fn bounded(text: &str, max: usize) -> Cow<'_, str> {
    if text.len() <= max {
        return Cow::Borrowed(text);
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    Cow::Owned(format!("{}…", &text[..end]))
}

/// The network attributes both metrics carry: the transport, and `http` over HTTP.
fn network_attributes(transport: Transport) -> Vec<KeyValue> {
    let mut attributes = vec![KeyValue::new(names::NETWORK_TRANSPORT, transport_name(transport))];
    if transport == Transport::Http {
        attributes.push(KeyValue::new(names::NETWORK_PROTOCOL, "http"));
    }
    attributes
}

/// What `network.transport` calls a transport: `pipe` for stdio, `tcp` for HTTP.
fn transport_name(transport: Transport) -> &'static str {
    match transport {
        Transport::Http => "tcp",
        _ => "pipe",
    }
}

#[cfg(feature = "http")]
fn http_traceparent<'r>(request: &'r McpRequest<'_>) -> Option<&'r str> {
    use wharf_http::HttpRequest;
    request.http_headers()?.get("traceparent")?.to_str().ok()
}

#[cfg(not(feature = "http"))]
fn http_traceparent(_: &McpRequest<'_>) -> Option<&str> {
    None
}

/// The `error.type` of a session that ended: set for the ends that are failures from the
/// client's side (it expired, was evicted, or its connection failed).
fn session_error_type(reason: SessionEndReason) -> Option<&'static str> {
    match reason {
        SessionEndReason::Expired => Some("timeout"),
        SessionEndReason::Evicted => Some("evicted"),
        SessionEndReason::Failed => Some("transport_error"),
        _ => None,
    }
}

/// The `error.type` of an answer, if it failed: its JSON-RPC code, or `tool_error`.
fn error_type(answer: &McpResponse) -> Option<String> {
    match answer.error_object() {
        Some(error) => Some(error.code().to_string()),
        None if answer.is_tool_error() => Some(names::TOOL_ERROR.to_owned()),
        None => None,
    }
}

impl Layer for OtelLayer {
    fn handle<'a>(&'a self, request: McpRequest<'a>, next: Next<'a>) -> LayerFuture<'a> {
        let target = request.subject();
        let version = request.protocol_version();
        let span = self.span(&request, target, version);
        let mut attributes = network_attributes(request.transport());
        attributes.push(KeyValue::new(names::METHOD, request.method()));
        match self.tool_and_prompt(&request, target) {
            (Some(tool), _) => {
                attributes.push(KeyValue::new(names::TOOL, tool.into_owned()));
                attributes.push(KeyValue::new(names::OPERATION, names::EXECUTE_TOOL));
            }
            (_, Some(prompt)) => attributes.push(KeyValue::new(names::PROMPT, prompt.into_owned())),
            _ => {}
        }
        if let Some(version) = version {
            attributes.push(KeyValue::new(names::PROTOCOL_VERSION, version.as_str()));
        }
        let started = Instant::now();
        let inner_span = span.clone();
        LayerFuture::new(
            async move {
                let answer = next.run(request).await;
                if let Some(error_type) = error_type(&answer) {
                    inner_span.record(names::ERROR_TYPE, error_type.as_str());
                    match answer.error_object() {
                        Some(error) => {
                            inner_span.record(names::STATUS_CODE, error_type.as_str());
                            inner_span.record("otel.status_description", &*self.bounded(error.message()));
                            attributes.push(KeyValue::new(names::STATUS_CODE, error_type.clone()));
                        }
                        None => {
                            inner_span.record("otel.status_code", "error");
                        }
                    }
                    attributes.push(KeyValue::new(names::ERROR_TYPE, error_type));
                }
                self.instruments.operation.record(started.elapsed().as_secs_f64(), &attributes);
                answer
            }
            .instrument(span),
        )
    }

    fn session_ended(&self, end: &SessionEnd<'_>) {
        let mut attributes = network_attributes(end.transport());
        attributes.push(KeyValue::new(names::PROTOCOL_VERSION, end.protocol_version().as_str()));
        if let Some(error_type) = session_error_type(end.reason()) {
            attributes.push(KeyValue::new(names::ERROR_TYPE, error_type));
        }
        self.instruments.session.record(end.duration().as_secs_f64(), &attributes);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_values_are_cut_at_a_character_boundary() {
        assert_eq!(bounded("short", 8), "short");
        assert_eq!(bounded("abcdefghij", 4), "abcd…");
        assert_eq!(bounded("ééé", 3), "é…", "never inside a character");
        assert_eq!(request_id_text(&RequestId::string("abc")), "abc");
        assert_eq!(request_id_text(&RequestId::number(7)), "7");
    }
}
