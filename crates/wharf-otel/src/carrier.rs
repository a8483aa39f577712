//! Where a request's trace context comes from: the `traceparent`, `tracestate` and `baggage`
//! members of its `params._meta` (SEP-414), and the HTTP request's own `traceparent` header.

use opentelemetry::Context;
use opentelemetry::propagation::{Extractor, TextMapPropagator};
use opentelemetry::trace::{SpanContext, TraceContextExt};
use serde_json::Value;
use wharf_protocol::JsonObject;

/// The keys SEP-414 lets a client put in `_meta` for trace context, unprefixed.
const KEYS: [&str; 3] = ["traceparent", "tracestate", "baggage"];

/// A request's `_meta`, read as a text map: only the trace context keys, only string values.
struct MetaCarrier<'a>(&'a JsonObject);

impl Extractor for MetaCarrier<'_> {
    fn get(&self, key: &str) -> Option<&str> {
        self.0.get(key).and_then(Value::as_str)
    }

    fn keys(&self) -> Vec<&str> {
        KEYS.into_iter().filter(|key| self.0.contains_key(*key)).collect()
    }
}

/// One header's value, as a text map with that header alone.
struct HeaderCarrier<'a>(&'a str);

impl Extractor for HeaderCarrier<'_> {
    fn get(&self, key: &str) -> Option<&str> {
        (key == "traceparent").then_some(self.0)
    }

    fn keys(&self) -> Vec<&str> {
        vec!["traceparent"]
    }
}

/// The remote parent a request's `_meta` names, if it names a valid one.
pub(crate) fn from_meta(propagator: &dyn TextMapPropagator, meta: &JsonObject) -> Option<Context> {
    if !meta.contains_key("traceparent") {
        return None;
    }
    let context = propagator.extract_with_context(&Context::new(), &MetaCarrier(meta));
    context.span().span_context().is_valid().then_some(context)
}

/// The span an HTTP `traceparent` header names, if it is valid.
pub(crate) fn from_header(propagator: &dyn TextMapPropagator, traceparent: &str) -> Option<SpanContext> {
    let context = propagator.extract_with_context(&Context::new(), &HeaderCarrier(traceparent));
    let span = context.span().span_context().clone();
    span.is_valid().then_some(span)
}
