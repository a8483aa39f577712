//! Run with: `cargo run -p example-production` (Streamable HTTP on 127.0.0.1:8080). A server
//! with the middleware a public deployment wants: each caller's tool calls rate-limited, slow
//! tools timed out, an expensive tool run a few calls at a time, an audit record per call, and
//! OpenTelemetry spans and metrics for every request.

use std::time::Duration;

use wharf::middleware::{Audit, ConcurrencyLimit, Quota, RateLimit, Timeout};
use wharf::otel::Telemetry;
use wharf::{Server, tool};

/// Looks a word up (quick).
#[tool(read_only, idempotent)]
pub async fn define(#[arg(description = "The word to define")] word: String) -> String {
    format!("{word}: a word worth looking up")
}

/// Renders a report (slow: a second per page).
#[tool(read_only)]
pub async fn render_report(#[arg(description = "How many pages")] pages: u32) -> String {
    tokio::time::sleep(Duration::from_secs(u64::from(pages))).await;
    format!("rendered {pages} pages")
}

/// The server, with its middleware. The first layer is the outermost: telemetry (when given)
/// and the audit log see every request, the rate-limited ones included, and their times cover
/// the whole chain.
pub fn server(telemetry: Option<&Telemetry>) -> Result<Server, wharf::Error> {
    let mut builder = Server::builder("production", "1.0.0").tool(define_tool()).tool(render_report_tool());
    if let Some(telemetry) = telemetry {
        builder = builder.layer(telemetry.layer());
    }
    builder
        .layer(Audit::new())
        // Ten calls per second for each caller and tool, in bursts of up to twenty; reports
        // are dearer.
        .layer(RateLimit::new(Quota::per_second(10).burst(20)).tool("render_report", Quota::per_minute(6)))
        // Two reports at once; the others wait their turn.
        .layer(ConcurrencyLimit::only_named().tool("render_report", 2))
        // No call runs longer than 30 seconds, a definition no longer than one.
        .layer(Timeout::new(Duration::from_secs(30)).tool("define", Duration::from_secs(1)))
        .build()
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use wharf::testing::InMemoryClient;

    #[tokio::test]
    async fn reports_are_rate_limited_and_definitions_are_not_yet() {
        let client = InMemoryClient::latest_session(super::server(None).unwrap()).await;
        for _ in 0..6 {
            client.call_tool("render_report", json!({"pages": 0})).await.unwrap();
        }
        let refused = client.request("tools/call", json!({"name": "render_report", "arguments": {"pages": 0}})).await;
        let refused = refused.unwrap_err();
        assert_eq!(refused.code.0, -32000);
        assert!(refused.data.unwrap()["retryAfterSeconds"].as_u64().unwrap() >= 1);
        client.call_tool("define", json!({"word": "wharf"})).await.unwrap();
    }
}
