//! The metrics in the Prometheus text exposition format, for a scrape of `/metrics`: read on
//! demand from a reader of their own, apart from the OTLP export.

use std::fmt::Write as _;
use std::sync::{Arc, Weak};
use std::time::Duration;

use opentelemetry::KeyValue;
use opentelemetry_sdk::error::OTelSdkResult;
use opentelemetry_sdk::metrics::data::{AggregatedMetrics, Histogram, Metric, MetricData, ResourceMetrics};
use opentelemetry_sdk::metrics::reader::MetricReader;
use opentelemetry_sdk::metrics::{InstrumentKind, ManualReader, Pipeline, Temporality};

/// The reader a scrape collects from, shared between the meter provider (which owns its
/// readers) and [`Telemetry`](crate::Telemetry).
#[derive(Debug, Clone)]
pub(crate) struct ScrapeReader(Arc<ManualReader>);

impl ScrapeReader {
    pub(crate) fn new() -> ScrapeReader {
        ScrapeReader(Arc::new(ManualReader::builder().with_temporality(Temporality::Cumulative).build()))
    }

    /// Every metric now, as Prometheus text.
    pub(crate) fn render(&self) -> String {
        let mut metrics = ResourceMetrics::default();
        if let Err(err) = self.0.collect(&mut metrics) {
            tracing::warn!(%err, "the metrics could not be collected for a scrape");
            return String::new();
        }
        let mut text = String::new();
        for scope in metrics.scope_metrics() {
            for metric in scope.metrics() {
                write_metric(&mut text, metric);
            }
        }
        text
    }
}

impl MetricReader for ScrapeReader {
    fn register_pipeline(&self, pipeline: Weak<Pipeline>) {
        self.0.register_pipeline(pipeline);
    }

    fn collect(&self, metrics: &mut ResourceMetrics) -> OTelSdkResult {
        self.0.collect(metrics)
    }

    fn force_flush(&self) -> OTelSdkResult {
        self.0.force_flush()
    }

    fn shutdown_with_timeout(&self, timeout: Duration) -> OTelSdkResult {
        self.0.shutdown_with_timeout(timeout)
    }

    fn temporality(&self, kind: InstrumentKind) -> Temporality {
        self.0.temporality(kind)
    }
}

/// A Prometheus name for an OpenTelemetry one: characters outside `[a-zA-Z0-9_:]` become `_`,
/// and the unit a suffix (`mcp.server.operation.duration` in `s` is
/// `mcp_server_operation_duration_seconds`).
fn metric_name(metric: &Metric) -> String {
    let mut name = sanitized(metric.name());
    let suffix = match metric.unit() {
        "s" => "_seconds",
        "ms" => "_milliseconds",
        "By" => "_bytes",
        _ => "",
    };
    if !name.ends_with(suffix) {
        name.push_str(suffix);
    }
    name
}

fn sanitized(name: &str) -> String {
    let mut out: String =
        name.chars().map(|c| if c.is_ascii_alphanumeric() || c == '_' || c == ':' { c } else { '_' }).collect();
    if out.starts_with(|c: char| c.is_ascii_digit()) {
        out.insert(0, '_');
    }
    out
}

/// `{key="value",…}` with `extra` last (the `le` of a bucket); empty when there are no labels.
fn labels<'a>(attributes: impl Iterator<Item = &'a KeyValue>, extra: Option<(&str, &str)>) -> String {
    let mut pairs: Vec<(String, String)> =
        attributes.map(|pair| (sanitized(pair.key.as_str()), pair.value.as_str().into_owned())).collect();
    pairs.sort();
    if let Some((key, value)) = extra {
        pairs.push((key.to_owned(), value.to_owned()));
    }
    if pairs.is_empty() {
        return String::new();
    }
    let mut out = String::from("{");
    for (index, (key, value)) in pairs.iter().enumerate() {
        if index > 0 {
            out.push(',');
        }
        let value = value.replace('\\', "\\\\").replace('"', "\\\"").replace('\n', "\\n");
        let _ = write!(out, "{key}=\"{value}\"");
    }
    out.push('}');
    out
}

fn write_metric(text: &mut String, metric: &Metric) {
    let name = metric_name(metric);
    let help = metric.description().replace('\\', "\\\\").replace('\n', "\\n");
    match metric.data() {
        AggregatedMetrics::F64(data) => write_data(text, &name, &help, data),
        AggregatedMetrics::U64(data) => write_data(text, &name, &help, data),
        AggregatedMetrics::I64(data) => write_data(text, &name, &help, data),
    }
}

fn write_data<T: Copy + std::fmt::Display>(text: &mut String, name: &str, help: &str, data: &MetricData<T>) {
    match data {
        MetricData::Histogram(histogram) => {
            let _ = writeln!(text, "# HELP {name} {help}\n# TYPE {name} histogram");
            write_histogram(text, name, histogram);
        }
        MetricData::Sum(sum) => {
            let (kind, name) =
                if sum.is_monotonic() { ("counter", format!("{name}_total")) } else { ("gauge", name.to_owned()) };
            let _ = writeln!(text, "# HELP {name} {help}\n# TYPE {name} {kind}");
            for point in sum.data_points() {
                let _ = writeln!(text, "{name}{} {}", labels(point.attributes(), None), point.value());
            }
        }
        MetricData::Gauge(gauge) => {
            let _ = writeln!(text, "# HELP {name} {help}\n# TYPE {name} gauge");
            for point in gauge.data_points() {
                let _ = writeln!(text, "{name}{} {}", labels(point.attributes(), None), point.value());
            }
        }
        // Wharf records no exponential histograms.
        MetricData::ExponentialHistogram(_) => {}
    }
}

/// Buckets counted cumulatively, as Prometheus's `le` buckets are, then `+Inf`, sum and count.
fn write_histogram<T: Copy + std::fmt::Display>(text: &mut String, name: &str, histogram: &Histogram<T>) {
    for point in histogram.data_points() {
        let mut cumulative = 0;
        for (bound, count) in point.bounds().zip(point.bucket_counts()) {
            cumulative += count;
            let le = bound.to_string();
            let _ = writeln!(text, "{name}_bucket{} {cumulative}", labels(point.attributes(), Some(("le", &le))));
        }
        let _ = writeln!(text, "{name}_bucket{} {}", labels(point.attributes(), Some(("le", "+Inf"))), point.count());
        let _ = writeln!(text, "{name}_sum{} {}", labels(point.attributes(), None), point.sum());
        let _ = writeln!(text, "{name}_count{} {}", labels(point.attributes(), None), point.count());
    }
}

#[cfg(test)]
mod tests {
    use opentelemetry::metrics::MeterProvider as _;
    use opentelemetry_sdk::metrics::SdkMeterProvider;

    use super::*;

    #[test]
    fn histograms_counters_and_label_values_are_written_as_prometheus_reads_them() {
        let scrape = ScrapeReader::new();
        let provider = SdkMeterProvider::builder().with_reader(scrape.clone()).build();
        let meter = provider.meter("test");
        let histogram = meter.f64_histogram("op.duration").with_unit("s").with_boundaries(vec![0.1, 1.0]).build();
        histogram.record(0.05, &[KeyValue::new("tool.name", "say \"hi\"\\now")]);
        histogram.record(0.5, &[KeyValue::new("tool.name", "say \"hi\"\\now")]);
        histogram.record(5.0, &[KeyValue::new("tool.name", "say \"hi\"\\now")]);
        meter.u64_counter("calls").build().add(2, &[]);
        let text = scrape.render();
        let label = r#"tool_name="say \"hi\"\\now""#;
        for line in [
            "# TYPE op_duration_seconds histogram".to_owned(),
            format!("op_duration_seconds_bucket{{{label},le=\"0.1\"}} 1"),
            format!("op_duration_seconds_bucket{{{label},le=\"1\"}} 2"),
            format!("op_duration_seconds_bucket{{{label},le=\"+Inf\"}} 3"),
            format!("op_duration_seconds_sum{{{label}}} 5.55"),
            format!("op_duration_seconds_count{{{label}}} 3"),
            "# TYPE calls_total counter".to_owned(),
            "calls_total 2".to_owned(),
        ] {
            assert!(text.lines().any(|written| written == line), "missing {line:?} in:\n{text}");
        }
    }
}
