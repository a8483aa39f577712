//! OpenTelemetry for Wharf MCP servers: a SERVER span and a duration per request, named and
//! attributed as the OpenTelemetry semantic conventions for MCP say, exported over OTLP/HTTP.
//!
//! - [`Telemetry`]: the providers and their OTLP exporters (`OTEL_*` variables respected);
//! - [`OtelLayer`]: the MCP layer (`Telemetry::layer`), parented by the trace context in
//!   `params._meta` and linked to the HTTP request's `traceparent`.
//!
//! The files, from the bottom: `names.rs` (the conventions' names), `carrier.rs` (trace
//! context from `_meta` and headers), `http_client.rs` (the blocking OTLP client), `layer.rs`,
//! `prometheus.rs` (the text exposition of a scrape), `telemetry.rs`.

mod carrier;
mod http_client;
mod layer;
mod names;
mod prometheus;
mod telemetry;

pub use layer::OtelLayer;
pub use telemetry::{Telemetry, TelemetryBuilder, TelemetryError, TelemetryErrorKind, endpoint_in_environment};
