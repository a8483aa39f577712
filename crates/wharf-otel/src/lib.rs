//! OpenTelemetry for Wharf MCP servers: a SERVER span and a duration per request, named and
//! attributed as the OpenTelemetry semantic conventions for MCP say, exported over OTLP/HTTP.
//!
//! - [`Telemetry`]: the providers and their OTLP exporters (`OTEL_*` variables respected);
//! - [`OtelLayer`]: the MCP layer (`Telemetry::layer`), parented by the trace context in
//!   `params._meta` and linked to the HTTP request's `traceparent`.
//!
//! Behind the facade's `otel` feature, so that a server without it builds none of the
//! OpenTelemetry crates.
//!
//! # Floors, from the bottom up
//! A file imports only from floors below its own.
//!
//! 1. `names.rs` (the conventions' attribute and metric names, the buckets), `carrier.rs`
//!    (trace context from `params._meta` and from the HTTP `traceparent`), `http_client.rs`
//!    (the OTLP exporters' client: blocking HTTP/1.1 with a deadline, because the SDK exports
//!    from threads of its own, outside any runtime), `prometheus.rs` (the metrics in the
//!    Prometheus text format, for a scrape).
//! 2. `layer.rs` ([`OtelLayer`], a `wharf_server::Layer`: a `tracing` span per request, made an
//!    OpenTelemetry span by the subscriber's layer, the operation duration histogram, and the
//!    session duration histogram from `Layer::session_ended`; what a client chose is bounded,
//!    so that no client grows the metrics).
//! 3. `telemetry.rs` ([`Telemetry`]: the providers and their exporters, from the builder and
//!    the `OTEL_*` variables).

mod carrier;
mod http_client;
mod layer;
mod names;
mod prometheus;
mod telemetry;

pub use layer::OtelLayer;
pub use telemetry::{Telemetry, TelemetryBuilder, TelemetryError, TelemetryErrorKind, endpoint_in_environment};
