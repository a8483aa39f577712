//! [`Telemetry`]: the tracer and meter providers, exporting over OTLP/HTTP, and what a server
//! and its `tracing` subscriber take from them.

use std::fmt;
use std::time::Duration;

use opentelemetry::metrics::MeterProvider as _;
use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::{MetricExporter, SpanExporter, WithExportConfig, WithHttpConfig};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::metrics::{PeriodicReader, SdkMeterProvider};
use opentelemetry_sdk::trace::{SdkTracer, SdkTracerProvider};
use tracing_subscriber::registry::LookupSpan;

use crate::http_client::BlockingClient;
use crate::layer::{Instruments, OtelLayer};
use crate::names;
use crate::prometheus::ScrapeReader;

/// What kind of thing went wrong with telemetry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum TelemetryErrorKind {
    /// An OTLP exporter could not be built (a bad endpoint, say).
    Exporter,
    /// Shutting down did not flush everything.
    Shutdown,
}

/// Why telemetry could not be set up or shut down: its kind, and what failed.
#[derive(Debug)]
pub struct TelemetryError {
    kind: TelemetryErrorKind,
    reason: String,
}

impl TelemetryError {
    fn new(kind: TelemetryErrorKind, reason: String) -> TelemetryError {
        TelemetryError { kind, reason }
    }

    /// What kind of thing went wrong.
    pub fn kind(&self) -> TelemetryErrorKind {
        self.kind
    }
}

impl fmt::Display for TelemetryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.reason)
    }
}

impl std::error::Error for TelemetryError {}

/// How telemetry is exported; see [`Telemetry::builder`].
#[derive(Debug, Clone)]
pub struct TelemetryBuilder {
    service_name: String,
    otlp_endpoint: Option<String>,
    export_interval: Option<Duration>,
    export_timeout: Duration,
    prometheus: bool,
    max_attribute_length: usize,
}

impl TelemetryBuilder {
    /// The longest value, in bytes, an attribute takes from what a client chose: a tool or
    /// prompt name (of one the server has: others are `_OTHER`), a resource URI, a request id,
    /// an error message. Longer ones are cut, at a character boundary, and end with `…`. 256 by
    /// default.
    pub fn max_attribute_length(mut self, bytes: usize) -> TelemetryBuilder {
        self.max_attribute_length = bytes;
        self
    }

    /// Also keeps the metrics for scrapes: [`Telemetry::prometheus_text`], which
    /// `HttpOptions::metrics_endpoint` serves at `/metrics`.
    pub fn prometheus(mut self) -> TelemetryBuilder {
        self.prometheus = true;
        self
    }

    /// The OTLP/HTTP base URL (`http://127.0.0.1:4318`): spans go to `/v1/traces` under it and
    /// metrics to `/v1/metrics`. Without it, the standard `OTEL_EXPORTER_OTLP_ENDPOINT` (and
    /// the per-signal variables) are read; with neither, nothing is exported.
    pub fn otlp_endpoint(mut self, base: impl Into<String>) -> TelemetryBuilder {
        self.otlp_endpoint = Some(base.into());
        self
    }

    /// How often metrics are exported (`OTEL_METRIC_EXPORT_INTERVAL` otherwise; 60 s by default).
    pub fn export_interval(mut self, interval: Duration) -> TelemetryBuilder {
        self.export_interval = Some(interval);
        self
    }

    /// How long one export may take before it is given up (10 s by default).
    pub fn export_timeout(mut self, timeout: Duration) -> TelemetryBuilder {
        self.export_timeout = timeout;
        self
    }

    /// Sets up the providers and their exporters.
    pub fn build(self) -> Result<Telemetry, TelemetryError> {
        let resource = resource(&self.service_name);
        let export = exports(self.otlp_endpoint.as_deref());
        let client = BlockingClient::new(self.export_timeout);
        let signal_url =
            |path: &str| self.otlp_endpoint.as_deref().map(|base| format!("{}{path}", base.trim_end_matches('/')));

        let mut traces = SdkTracerProvider::builder().with_resource(resource.clone());
        if export.traces {
            let mut exporter = SpanExporter::builder().with_http().with_http_client(client.clone());
            if let Some(url) = signal_url("/v1/traces") {
                exporter = exporter.with_endpoint(url);
            }
            let exporter = exporter.build().map_err(|err| {
                TelemetryError::new(TelemetryErrorKind::Exporter, format!("the OTLP span exporter: {err}"))
            })?;
            traces = traces.with_batch_exporter(exporter);
        }
        let tracer_provider = traces.build();

        let mut metrics = SdkMeterProvider::builder().with_resource(resource);
        if export.metrics {
            let mut exporter = MetricExporter::builder().with_http().with_http_client(client);
            if let Some(url) = signal_url("/v1/metrics") {
                exporter = exporter.with_endpoint(url);
            }
            let exporter = exporter.build().map_err(|err| {
                TelemetryError::new(TelemetryErrorKind::Exporter, format!("the OTLP metric exporter: {err}"))
            })?;
            let mut reader = PeriodicReader::builder(exporter);
            if let Some(interval) = self.export_interval {
                reader = reader.with_interval(interval);
            }
            metrics = metrics.with_reader(reader.build());
        }
        let scrape = self.prometheus.then(ScrapeReader::new);
        if let Some(scrape) = &scrape {
            metrics = metrics.with_reader(scrape.clone());
        }
        let meter_provider = metrics.build();

        let tracer = tracer_provider.tracer("wharf");
        let meter = meter_provider.meter("wharf");
        let histogram = |name: &'static str, description: &'static str| {
            meter
                .f64_histogram(name)
                .with_unit("s")
                .with_description(description)
                .with_boundaries(names::DURATION_BUCKETS.to_vec())
                .build()
        };
        let instruments = Instruments {
            operation: histogram(names::OPERATION_DURATION, "The time the server took to answer an MCP request"),
            session: histogram(names::SESSION_DURATION, "How long an MCP session lasted"),
        };
        Ok(Telemetry {
            tracer_provider,
            meter_provider,
            tracer,
            instruments,
            scrape,
            max_attribute_length: self.max_attribute_length,
        })
    }
}

/// Which signals are exported.
struct Exports {
    traces: bool,
    metrics: bool,
}

/// True when a variable is set to something other than blanks.
fn set(name: &str) -> bool {
    std::env::var(name).is_ok_and(|value| !value.trim().is_empty())
}

/// The variables that name an OTLP endpoint: for every signal, for spans, for metrics.
const ENDPOINT_VARIABLES: [&str; 3] =
    ["OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT"];

/// True when the standard variables name an OTLP endpoint for some signal: telemetry built
/// without [`TelemetryBuilder::otlp_endpoint`] then exports there.
pub fn endpoint_in_environment() -> bool {
    ENDPOINT_VARIABLES.iter().any(|name| set(name))
}

/// Which signals go out: those with an endpoint (given, or in the environment), unless
/// `OTEL_SDK_DISABLED` or `OTEL_{TRACES,METRICS}_EXPORTER=none` say otherwise.
fn exports(endpoint: Option<&str>) -> Exports {
    let [all, traces, metrics] = ENDPOINT_VARIABLES.map(set);
    let is =
        |name: &str, expected: &str| std::env::var(name).is_ok_and(|value| value.trim().eq_ignore_ascii_case(expected));
    if is("OTEL_SDK_DISABLED", "true") {
        return Exports { traces: false, metrics: false };
    }
    let anywhere = endpoint.is_some() || all;
    Exports {
        traces: (anywhere || traces) && !is("OTEL_TRACES_EXPORTER", "none"),
        metrics: (anywhere || metrics) && !is("OTEL_METRICS_EXPORTER", "none"),
    }
}

/// The resource: `service.name` from `OTEL_SERVICE_NAME` or `OTEL_RESOURCE_ATTRIBUTES` when
/// they name one, else `service_name`; the rest of `OTEL_RESOURCE_ATTRIBUTES` too.
fn resource(service_name: &str) -> Resource {
    let named_by_environment = std::env::var("OTEL_SERVICE_NAME").is_ok_and(|name| !name.is_empty())
        || std::env::var("OTEL_RESOURCE_ATTRIBUTES").is_ok_and(|attributes| attributes.contains("service.name="));
    let builder = Resource::builder();
    if named_by_environment { builder.build() } else { builder.with_service_name(service_name.to_owned()).build() }
}

/// OpenTelemetry for a Wharf server: spans and metrics per the semantic conventions for MCP,
/// exported over OTLP/HTTP.
///
/// Add [`Telemetry::layer`] to the server and [`Telemetry::tracing_layer`] to the `tracing`
/// subscriber; call [`Telemetry::shutdown`] before the process ends, so that what is buffered
/// is sent.
pub struct Telemetry {
    tracer_provider: SdkTracerProvider,
    meter_provider: SdkMeterProvider,
    tracer: SdkTracer,
    instruments: Instruments,
    scrape: Option<ScrapeReader>,
    max_attribute_length: usize,
}

impl Telemetry {
    /// Telemetry for the service `service_name` (`OTEL_SERVICE_NAME` wins when set).
    pub fn builder(service_name: impl Into<String>) -> TelemetryBuilder {
        TelemetryBuilder {
            service_name: service_name.into(),
            otlp_endpoint: None,
            export_interval: None,
            export_timeout: Duration::from_secs(10),
            prometheus: false,
            max_attribute_length: 256,
        }
    }

    /// The MCP layer: a span and a duration per request, and a duration per session.
    pub fn layer(&self) -> OtelLayer {
        OtelLayer::new(self.instruments.clone(), self.max_attribute_length)
    }

    /// The `tracing` layer that turns spans (the MCP layer's, and the handlers' own) into
    /// OpenTelemetry spans. Spans carry their own fields only: no source location, thread, or
    /// busy and idle times, which cost on every request and say nothing about MCP.
    pub fn tracing_layer<S>(&self) -> tracing_opentelemetry::OpenTelemetryLayer<S, SdkTracer>
    where
        S: tracing::Subscriber + for<'span> LookupSpan<'span>,
    {
        tracing_opentelemetry::layer()
            .with_tracer(self.tracer.clone())
            .with_location(false)
            .with_threads(false)
            .with_tracked_inactivity(false)
    }

    /// The metrics now, in the Prometheus text format (`text/plain; version=0.0.4`); empty
    /// unless the builder asked for [`TelemetryBuilder::prometheus`].
    pub fn prometheus_text(&self) -> String {
        self.scrape.as_ref().map(ScrapeReader::render).unwrap_or_default()
    }

    /// Sends what is buffered and stops the exporters. It blocks: on an async runtime, call it
    /// from `spawn_blocking` or after the runtime's work is done.
    pub fn shutdown(&self) -> Result<(), TelemetryError> {
        let traces = self.tracer_provider.shutdown();
        let metrics = self.meter_provider.shutdown();
        traces.map_err(|err| {
            TelemetryError::new(TelemetryErrorKind::Shutdown, format!("shutting the tracer provider down: {err}"))
        })?;
        metrics.map_err(|err| {
            TelemetryError::new(TelemetryErrorKind::Shutdown, format!("shutting the meter provider down: {err}"))
        })
    }
}

impl fmt::Debug for Telemetry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Telemetry").finish_non_exhaustive()
    }
}
