//! Run with: `cargo run -p example-production` (the server is in `src/lib.rs`). Audit records
//! go to stderr with the other logs; with `OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:4318`
//! (a collector), spans and metrics go there over OTLP/HTTP.

use wharf::otel::Telemetry;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    // Exports only when an OTLP endpoint is configured (the OTEL_* variables).
    let telemetry = Telemetry::builder("production").build()?;
    wharf::logging::init_with_telemetry("info", &telemetry);
    let server = example_production::server(Some(&telemetry))?;
    // LISTEN moves it, to run beside another server (scripts/check-servers does); the URL it
    // bound is logged.
    let address = std::env::var("LISTEN").unwrap_or_else(|_| "127.0.0.1:8080".to_owned());
    let listener = tokio::net::TcpListener::bind(address).await?;
    let served = wharf::serve_http(listener, server).await;
    tokio::task::spawn_blocking(move || telemetry.shutdown()).await??;
    Ok(served?)
}
