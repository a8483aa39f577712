//! `wharf serve --http … --metrics`: a real Prometheus server (the Debian package, which
//! `scripts/test` installs) scrapes `/metrics` while the test calls tools, and its query API
//! returns the tool-call histogram.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// Kills the process when the test ends, passed or failed.
struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// One HTTP/1.1 exchange on a fresh connection: the status and the body.
fn exchange(port: u16, method: &str, path: &str, headers: &[(&str, &str)], body: &str) -> (u16, String) {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let mut request = format!(
        "{method} {path} HTTP/1.1\r\nhost: 127.0.0.1:{port}\r\nconnection: close\r\ncontent-length: {}\r\n",
        body.len()
    );
    for (name, value) in headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    request.push_str("\r\n");
    request.push_str(body);
    stream.write_all(request.as_bytes()).unwrap();
    let mut raw = String::new();
    let _ = stream.read_to_string(&mut raw);
    let (head, body) = raw.split_once("\r\n\r\n").unwrap_or((&raw, ""));
    let status = head.split(' ').nth(1).and_then(|code| code.parse().ok()).unwrap_or(0);
    let body =
        if head.to_ascii_lowercase().contains("transfer-encoding: chunked") { dechunk(body) } else { body.to_owned() };
    (status, body)
}

fn dechunk(mut rest: &str) -> String {
    let mut body = String::new();
    while let Some((size, after)) = rest.split_once("\r\n") {
        let size = usize::from_str_radix(size.trim(), 16).unwrap_or(0);
        if size == 0 || after.len() < size {
            break;
        }
        body.push_str(&after[..size]);
        rest = after[size..].trim_start_matches("\r\n");
    }
    body
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// Polls `check` every 100 ms for up to `seconds`; what it returned last.
fn wait_for<T>(seconds: u64, mut check: impl FnMut() -> Option<T>) -> Option<T> {
    let deadline = Instant::now() + Duration::from_secs(seconds);
    while Instant::now() < deadline {
        if let Some(value) = check() {
            return Some(value);
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    None
}

#[test]
#[ignore = "needs the prometheus binary (scripts/test installs the Debian package)"]
fn prometheus_scrapes_the_tool_call_histogram() {
    let mut wharf = Command::new(env!("CARGO_BIN_EXE_wharf"))
        .args(["serve", "--http", "127.0.0.1:0", "--metrics"])
        .env_remove("OTEL_EXPORTER_OTLP_ENDPOINT")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut banner = String::new();
    BufReader::new(wharf.stderr.take().unwrap()).read_line(&mut banner).unwrap();
    let wharf = Running(wharf);
    let address = banner.split("http://").nth(1).and_then(|rest| rest.split('/').next()).expect(&banner).to_owned();
    let port: u16 = address.rsplit(':').next().unwrap().parse().unwrap();

    let headers = [
        ("content-type", "application/json"),
        ("accept", "application/json, text/event-stream"),
        ("mcp-protocol-version", "2026-07-28"),
        ("mcp-method", "tools/call"),
        ("mcp-name", "echo"),
    ];
    for id in 0..3 {
        let call = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": "echo",
            "arguments": {"message": "scraped"}, "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {}}}});
        assert_eq!(exchange(port, "POST", "/mcp", &headers, &call.to_string()).0, 200);
    }
    let (status, text) = exchange(port, "GET", "/metrics", &[], "");
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
    let (status, _) = exchange(port, "GET", "/metrics", &[("origin", "http://evil.example")], "");
    assert_eq!(status, 403);

    let dir = std::env::temp_dir().join(format!("wharf-prometheus-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let config = dir.join("prometheus.yml");
    std::fs::write(
        &config,
        format!(
            "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\nscrape_configs:\n  - job_name: wharf\n    static_configs:\n      - targets: ['127.0.0.1:{port}']\n"
        ),
    )
    .unwrap();
    let prometheus_port = free_port();
    let prometheus = Command::new(std::env::var("WHARF_TEST_PROMETHEUS").unwrap_or_else(|_| "prometheus".to_owned()))
        .arg(format!("--config.file={}", config.display()))
        .arg(format!("--storage.tsdb.path={}", dir.join("data").display()))
        .arg(format!("--web.listen-address=127.0.0.1:{prometheus_port}"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("the prometheus binary");
    let prometheus = Running(prometheus);
    let ready = wait_for(60, || (exchange_ok(prometheus_port, "/-/ready") == Some(200)).then_some(()));
    assert!(ready.is_some(), "Prometheus did not get ready");

    let query =
        "/api/v1/query?query=sum(mcp_server_operation_duration_seconds_count%7Bgen_ai_tool_name%3D%22echo%22%7D)";
    let value = wait_for(60, || {
        let (status, body) = exchange(prometheus_port, "GET", query, &[], "");
        let answer: Value = serde_json::from_str(&body).ok()?;
        (status == 200).then_some(())?;
        answer["data"]["result"][0]["value"][1].as_str().map(str::to_owned)
    });
    assert_eq!(value.as_deref(), Some("3"), "Prometheus's query API has the tool-call count");
    let target = exchange(prometheus_port, "GET", "/api/v1/targets", &[], "").1;
    assert!(target.contains("\"health\":\"up\""), "{target}");
    drop(prometheus);
    drop(wharf);
    let _ = std::fs::remove_dir_all(&dir);
}

/// The status of a GET, or `None` when nothing answers yet.
fn exchange_ok(port: u16, path: &str) -> Option<u16> {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).ok()?;
    stream.set_read_timeout(Some(Duration::from_secs(2))).ok()?;
    write!(stream, "GET {path} HTTP/1.1\r\nhost: 127.0.0.1:{port}\r\nconnection: close\r\n\r\n").ok()?;
    let mut raw = String::new();
    stream.read_to_string(&mut raw).ok()?;
    raw.split(' ').nth(1)?.parse().ok()
}
