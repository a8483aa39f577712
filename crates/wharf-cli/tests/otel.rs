//! `wharf serve --otlp-endpoint`: the real binary over stdio sends its spans and metrics to the
//! OTLP receiver `scripts/test` starts (`interop/otlp/receiver.py`, named in
//! `WHARF_TEST_OTLP_DIR`), and flushes them as it exits.

use std::io::{Read, Write};
use std::process::{Command, Stdio};

use serde_json::{Value, json};

fn attribute(item: &Value, key: &str) -> Option<String> {
    let value = &item["attributes"].as_array()?.iter().find(|attribute| attribute["key"] == key)?["value"];
    Some(value.get("stringValue").and_then(Value::as_str).map_or_else(|| value.to_string(), str::to_owned))
}

#[test]
#[ignore = "needs the OTLP receiver scripts/test starts (WHARF_TEST_OTLP_DIR)"]
fn a_served_call_reaches_the_receiver_as_a_span_in_the_callers_trace() {
    let dir = std::env::var("WHARF_TEST_OTLP_DIR").expect("WHARF_TEST_OTLP_DIR names the receiver's directory");
    let port = std::fs::read_to_string(format!("{dir}/port")).unwrap();
    let endpoint = format!("http://127.0.0.1:{}", port.trim());
    let trace = "0af7651916cd43dd8448eb211c80319c";
    let lines = [
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "echo", "arguments": {"message": "traced"},
            "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {},
                      "traceparent": format!("00-{trace}-b7ad6b7169203331-01")}}}),
    ];
    let mut input = String::new();
    for line in &lines {
        input.push_str(&line.to_string());
        input.push('\n');
    }
    let mut child = Command::new(env!("CARGO_BIN_EXE_wharf"))
        .args(["serve", "--otlp-endpoint", &endpoint])
        .env_remove("OTEL_EXPORTER_OTLP_ENDPOINT")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(input.as_bytes()).unwrap();
    let mut stdout = String::new();
    child.stdout.take().unwrap().read_to_string(&mut stdout).unwrap();
    let mut stderr = String::new();
    child.stderr.take().unwrap().read_to_string(&mut stderr).unwrap();
    assert!(child.wait().unwrap().success(), "{stderr}");
    let answer: Value = serde_json::from_str(stdout.lines().next().unwrap()).unwrap();
    assert_eq!(answer["result"]["content"][0]["text"], "traced", "stdout carries only the protocol");

    // Exported before the process ended: nothing to wait for.
    let text = std::fs::read_to_string(format!("{dir}/traces.jsonl")).unwrap();
    let spans: Vec<Value> = text
        .lines()
        .map(|line| serde_json::from_str::<Value>(line).unwrap())
        .flat_map(|export| export["resourceSpans"].as_array().cloned().unwrap_or_default())
        .filter(|resource| attribute(&resource["resource"], "service.name").as_deref() == Some("wharf-demo"))
        .flat_map(|resource| resource["scopeSpans"].as_array().cloned().unwrap_or_default())
        .flat_map(|scope| scope["spans"].as_array().cloned().unwrap_or_default())
        .collect();
    let span = spans.iter().find(|span| span["traceId"] == trace).unwrap_or_else(|| panic!("{spans:#?}"));
    assert_eq!(span["name"], "tools/call echo");
    assert_eq!(span["parentSpanId"], "b7ad6b7169203331");
    assert_eq!(attribute(span, "network.transport").as_deref(), Some("pipe"));
    assert_eq!(attribute(span, "mcp.protocol.version").as_deref(), Some("2026-07-28"));
    let metrics = std::fs::read_to_string(format!("{dir}/metrics.jsonl")).unwrap();
    assert!(metrics.contains("mcp.server.operation.duration") && metrics.contains("wharf-demo"));
}
