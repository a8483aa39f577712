//! `wharf serve --http … --metrics`: a real Prometheus server (the Debian package, which
//! `scripts/test` installs) scrapes `/metrics` while the test calls tools, and its query API
//! returns the tool-call histogram.

use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::{Value, json};
use wharf_testkit::eventually::{eventually_blocking, until_blocking};
use wharf_testkit::ports::{accepts, free_port};
use wharf_testkit::process::Process;
use wharf_testkit::raw_http::{JSON, Reply, send_blocking};
use wharf_testkit::temp_dir::TempDir;

#[test]
#[ignore = "needs the prometheus binary (scripts/test installs the Debian package)"]
fn prometheus_scrapes_the_tool_call_histogram() {
    let mut wharf = Process::spawn(
        Command::new(env!("CARGO_BIN_EXE_wharf"))
            .args(["serve", "--http", "127.0.0.1:0", "--metrics"])
            .env_remove("OTEL_EXPORTER_OTLP_ENDPOINT")
            .stdin(Stdio::null())
            .stdout(Stdio::null()),
    );
    let banner = wharf.wait_for("http://");
    let address = banner.split("http://").nth(1).and_then(|rest| rest.split('/').next()).expect(&banner).to_owned();
    let port: u16 = address.rsplit(':').next().unwrap().parse().unwrap();

    let headers =
        [JSON[0], JSON[1], ("mcp-protocol-version", "2026-07-28"), ("mcp-method", "tools/call"), ("mcp-name", "echo")];
    for id in 0..3 {
        let call = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": "echo",
            "arguments": {"message": "scraped"}, "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {}}}});
        assert_eq!(send_blocking(port, "POST", "/mcp", &headers, &call.to_string()).status, 200);
    }
    let Reply { status, body: text, .. } = send_blocking(port, "GET", "/metrics", &[], "");
    assert_eq!(status, 200, "{text}");
    assert!(text.contains("# TYPE mcp_server_operation_duration_seconds histogram"), "{text}");
    let count = text
        .lines()
        .find(|line| {
            line.starts_with("mcp_server_operation_duration_seconds_count{")
                && line.contains("gen_ai_tool_name=\"echo\"")
        })
        .unwrap_or_else(|| panic!("{text}"));
    assert!(count.ends_with(" 3"), "{count}");
    assert!(text.contains("le=\"0.01\"") && text.contains("le=\"300\"") && text.contains("le=\"+Inf\""), "{text}");
    // The metrics path keeps the MCP endpoint's guards.
    let refused = send_blocking(port, "GET", "/metrics", &[("origin", "http://evil.example")], "");
    assert_eq!(refused.status, 403);

    let dir = TempDir::new("prometheus");
    dir.write(
        "prometheus.yml",
        format!(
            "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\nscrape_configs:\n  - job_name: wharf\n    static_configs:\n      - targets: ['127.0.0.1:{port}']\n"
        ),
    );
    let prometheus_port = free_port();
    let program = std::env::var("WHARF_TEST_PROMETHEUS").unwrap_or_else(|_| "prometheus".to_owned());
    let prometheus = Process::try_spawn(
        Command::new(&program)
            .arg(format!("--config.file={}", dir.join("prometheus.yml").display()))
            .arg(format!("--storage.tsdb.path={}", dir.join("data").display()))
            .arg(format!("--web.listen-address=127.0.0.1:{prometheus_port}"))
            .stdout(Stdio::null()),
    )
    .unwrap_or_else(|err| panic!("the prometheus binary ({program}): {err}"));
    until_blocking("Prometheus to get ready", Duration::from_secs(60), || {
        accepts(prometheus_port) && send_blocking(prometheus_port, "GET", "/-/ready", &[], "").status == 200
    });

    let query =
        "/api/v1/query?query=sum(mcp_server_operation_duration_seconds_count%7Bgen_ai_tool_name%3D%22echo%22%7D)";
    let value =
        eventually_blocking("Prometheus's query API to have the tool-call count", Duration::from_secs(60), || {
            let reply = send_blocking(prometheus_port, "GET", query, &[], "");
            let answer: Value = serde_json::from_str(&reply.body).ok()?;
            (reply.status == 200).then_some(())?;
            answer["data"]["result"][0]["value"][1].as_str().map(str::to_owned)
        });
    assert_eq!(value, "3", "Prometheus's query API has the tool-call count");
    let target = send_blocking(prometheus_port, "GET", "/api/v1/targets", &[], "").body;
    assert!(target.contains("\"health\":\"up\""), "{target}");
    // Prometheus is stopped before its directory is removed.
    drop(prometheus);
    drop(wharf);
    drop(dir);
}
