//! Spans and metrics as a real OTLP receiver gets them: `interop/otlp/receiver.py`, on the
//! official opentelemetry-proto definitions, which `scripts/test` starts and names in
//! `WHARF_TEST_OTLP_DIR` (where it writes what it receives, and its port).

use std::sync::Arc;

use serde_json::{Value, json};
use tracing_subscriber::layer::SubscriberExt;
use wharf_otel::Telemetry;
use wharf_protocol::ClientCapabilities;
use wharf_server::testing::InMemoryClient;
use wharf_server::{Args, Server, ToolDef};
use wharf_testkit::raw_http::{self, JSON, Reply};

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Message {
    message: String,
}

const CLIENT_TRACE: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
const CLIENT_SPAN: &str = "00f067aa0ba902b7";
const HTTP_TRACE: &str = "11112222333344445555666677778888";
const HTTP_SPAN: &str = "aaaabbbbccccdddd";

fn server(telemetry: &Telemetry) -> Server {
    Server::builder("otel-test", "1.0.0")
        .tool(ToolDef::new("echo", |Args(args): Args<Message>| async move {
            // The handler's own span nests inside the request's.
            tracing::info_span!("handler work").in_scope(|| args.message)
        }))
        .tool(ToolDef::new("fails", || async { Err::<String, _>("the disk is full") }))
        .layer(telemetry.layer())
        .build()
        .unwrap()
}

/// Every span the receiver got, flattened, with its attributes as a map of strings.
fn spans(dir: &str) -> Vec<Value> {
    let text = std::fs::read_to_string(format!("{dir}/traces.jsonl")).unwrap_or_default();
    let mut spans = Vec::new();
    for line in text.lines() {
        let export: Value = serde_json::from_str(line).unwrap();
        // Other tests' services may share the receiver.
        for resource in export["resourceSpans"].as_array().into_iter().flatten() {
            if attribute(&resource["resource"], "service.name").as_deref() != Some("otel-test") {
                continue;
            }
            for scope in resource["scopeSpans"].as_array().into_iter().flatten() {
                spans.extend(scope["spans"].as_array().into_iter().flatten().cloned());
            }
        }
    }
    spans
}

fn attribute(item: &Value, key: &str) -> Option<String> {
    let attributes = item["attributes"].as_array()?;
    let value = &attributes.iter().find(|attribute| attribute["key"] == key)?["value"];
    Some(match value.get("stringValue") {
        Some(text) => text.as_str().unwrap().to_owned(),
        None => value.to_string(),
    })
}

/// The metric `name` of an export.
fn metric_named(export: &Value, name: &str) -> Value {
    let metrics = export["resourceMetrics"][0]["scopeMetrics"][0]["metrics"].as_array().unwrap();
    metrics.iter().find(|metric| metric["name"] == name).unwrap_or_else(|| panic!("no {name}: {export}")).clone()
}

fn named<'a>(spans: &'a [Value], name: &str) -> Vec<&'a Value> {
    spans.iter().filter(|span| span["name"] == name).collect()
}

/// Sends one JSON request to `/mcp`, with `headers` besides `Content-Type` and `Accept`.
async fn send(port: u16, method: &str, headers: &[(&str, &str)], body: &str) -> Reply {
    raw_http::send(port, method, &[&JSON[..], headers].concat(), body).await
}

/// POSTs one request and returns the status.
async fn post(port: u16, headers: &[(&str, &str)], body: &str) -> u16 {
    send(port, "POST", headers, body).await.status
}

/// Opens a 2025-11-25 session over HTTP and returns its id.
async fn open_session(port: u16) -> String {
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}});
    let reply = send(port, "POST", &[], &init.to_string()).await;
    reply.header("mcp-session-id").expect("a session id").to_owned()
}

fn modern_call(id: u64, meta: Value) -> String {
    let mut meta = meta;
    meta["io.modelcontextprotocol/protocolVersion"] = json!("2026-07-28");
    meta["io.modelcontextprotocol/clientCapabilities"] = json!({});
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
           "params": {"name": "echo", "arguments": {"message": "over http"}, "_meta": meta}})
    .to_string()
}

#[tokio::test(flavor = "current_thread")]
#[ignore = "needs the OTLP receiver scripts/test starts (WHARF_TEST_OTLP_DIR)"]
async fn spans_and_metrics_reach_an_otlp_receiver_with_the_conventions_names() {
    let dir = std::env::var("WHARF_TEST_OTLP_DIR").expect("WHARF_TEST_OTLP_DIR names the receiver's directory");
    let port = std::fs::read_to_string(format!("{dir}/port")).unwrap();
    let telemetry = Arc::new(
        Telemetry::builder("otel-test").otlp_endpoint(format!("http://127.0.0.1:{}", port.trim())).build().unwrap(),
    );
    let subscriber = tracing_subscriber::registry().with(telemetry.tracing_layer());
    let _default = tracing::subscriber::set_default(subscriber);
    let server = server(&telemetry);

    // In memory (the line transport, as stdio): a 2025 session whose call carries trace context.
    let client = InMemoryClient::latest_session(server.clone()).await;
    let traceparent = format!("00-{CLIENT_TRACE}-{CLIENT_SPAN}-01");
    let meta = json!({"traceparent": traceparent, "tracestate": "rojo=00f067aa0ba902b7"});
    client.request("tools/call", json!({"name": "echo", "arguments": {"message": "hi"}, "_meta": meta})).await.unwrap();
    client.call_tool("fails", json!({})).await.unwrap();
    client.request("tools/call", json!({"name": "missing"})).await.unwrap_err();
    let stateless = InMemoryClient::stateless(server.clone(), ClientCapabilities::default());
    stateless.request("tools/list", json!({})).await.unwrap();

    // Over HTTP: the header's context is the parent when `_meta` has none, and a link when it has.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let http_port = listener.local_addr().unwrap().port();
    tokio::spawn(wharf_http::serve(listener, server).into_future());
    let modern = [("mcp-protocol-version", "2026-07-28"), ("mcp-method", "tools/call"), ("mcp-name", "echo")];
    let header = format!("00-{HTTP_TRACE}-{HTTP_SPAN}-01");
    let mut with_header = modern.to_vec();
    with_header.push(("traceparent", &header));
    assert_eq!(post(http_port, &with_header, &modern_call(1, json!({}))).await, 200);
    let other_trace = "99998888777766665555444433332222";
    let meta = json!({"traceparent": format!("00-{other_trace}-0123456789abcdef-01")});
    assert_eq!(post(http_port, &with_header, &modern_call(2, meta)).await, 200);

    // Two sessions end: the stream's when its client closes, the HTTP one when deleted.
    client.close().await.unwrap();
    let id = open_session(http_port).await;
    let deleted =
        send(http_port, "DELETE", &[("mcp-session-id", &id), ("mcp-protocol-version", "2025-11-25")], "").await;
    assert_eq!(deleted.status, 204, "{deleted:?}");

    let shutting = telemetry.clone();
    tokio::task::spawn_blocking(move || shutting.shutdown()).await.unwrap().unwrap();
    let spans = spans(&dir);

    let echoes = named(&spans, "tools/call echo");
    assert_eq!(echoes.len(), 3, "{spans:#?}");
    let first = echoes.iter().find(|span| span["traceId"] == CLIENT_TRACE).expect("the client's trace id kept");
    assert_eq!(first["parentSpanId"], CLIENT_SPAN, "the _meta context is the parent");
    assert_eq!(first["kind"], "SPAN_KIND_SERVER");
    assert_eq!(attribute(first, "mcp.method.name").as_deref(), Some("tools/call"));
    assert_eq!(attribute(first, "gen_ai.tool.name").as_deref(), Some("echo"));
    assert_eq!(attribute(first, "gen_ai.operation.name").as_deref(), Some("execute_tool"));
    assert_eq!(attribute(first, "jsonrpc.request.id").as_deref(), Some("2"), "initialize was 1");
    assert_eq!(attribute(first, "mcp.protocol.version").as_deref(), Some("2025-11-25"));
    assert_eq!(attribute(first, "network.transport").as_deref(), Some("pipe"));
    assert!(attribute(first, "mcp.session.id").is_some());
    assert_eq!(attribute(first, "error.type"), None, "a success has no error.type");
    assert!(first.get("status").and_then(|status| status.get("code")).is_none(), "{first}");
    let work = named(&spans, "handler work");
    let child = work.iter().find(|span| span["traceId"] == CLIENT_TRACE).expect("the handler's span");
    assert_eq!(child["parentSpanId"], first["spanId"], "the handler's span nests inside the request's");

    let failed = named(&spans, "tools/call fails")[0];
    assert_eq!(attribute(failed, "error.type").as_deref(), Some("tool_error"));
    assert_eq!(failed["status"]["code"], "STATUS_CODE_ERROR");
    // A tool the server does not have is named by no attribute, and not in the span's name.
    let missing = named(&spans, "tools/call")[0];
    assert_eq!(attribute(missing, "gen_ai.tool.name").as_deref(), Some("_OTHER"));
    assert_eq!(attribute(missing, "error.type").as_deref(), Some("-32602"));
    assert_eq!(attribute(missing, "rpc.response.status_code").as_deref(), Some("-32602"));
    assert_eq!(missing["status"]["code"], "STATUS_CODE_ERROR");
    assert_eq!(missing["status"]["message"], "Unknown tool: missing");
    let list = named(&spans, "tools/list")[0];
    assert_eq!(attribute(list, "mcp.protocol.version").as_deref(), Some("2026-07-28"));
    assert_eq!(attribute(list, "mcp.session.id"), None, "a stateless request has no session");

    let by_header = echoes.iter().find(|span| span["traceId"] == HTTP_TRACE).expect("the header's trace");
    assert_eq!(by_header["parentSpanId"], HTTP_SPAN);
    assert_eq!(attribute(by_header, "network.transport").as_deref(), Some("tcp"));
    assert_eq!(attribute(by_header, "network.protocol.name").as_deref(), Some("http"));
    let linked = echoes.iter().find(|span| span["traceId"] == other_trace).expect("the _meta trace wins");
    assert_eq!(linked["parentSpanId"], "0123456789abcdef");
    assert_eq!(linked["links"][0]["traceId"], HTTP_TRACE, "{linked}");
    assert_eq!(linked["links"][0]["spanId"], HTTP_SPAN);

    // The duration histogram, with the conventions' buckets and no per-request attributes.
    let text = std::fs::read_to_string(format!("{dir}/metrics.jsonl")).unwrap();
    let export: Value = text
        .lines()
        .rev()
        .map(|line| serde_json::from_str::<Value>(line).unwrap())
        .find(|export| {
            attribute(&export["resourceMetrics"][0]["resource"], "service.name").as_deref() == Some("otel-test")
        })
        .expect("metrics of this service");
    let operations = metric_named(&export, "mcp.server.operation.duration");
    assert_eq!(operations["unit"], "s");
    let points = operations["histogram"]["dataPoints"].as_array().unwrap();
    let echo_points: Vec<&Value> =
        points.iter().filter(|point| attribute(point, "gen_ai.tool.name").as_deref() == Some("echo")).collect();
    let count: u64 = echo_points.iter().map(|point| point["count"].as_str().unwrap().parse::<u64>().unwrap()).sum();
    assert_eq!(count, 3);
    assert_eq!(
        echo_points[0]["explicitBounds"],
        json!([0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0])
    );
    assert!(points.iter().all(|point| attribute(point, "mcp.session.id").is_none()));
    assert!(points.iter().all(|point| attribute(point, "jsonrpc.request.id").is_none()));
    let failed = points.iter().find(|point| attribute(point, "gen_ai.tool.name").as_deref() == Some("fails")).unwrap();
    assert_eq!(attribute(failed, "error.type").as_deref(), Some("tool_error"));

    // The session duration: one per session that ended, by transport and revision, no method.
    let sessions = metric_named(&export, "mcp.server.session.duration");
    assert_eq!(sessions["unit"], "s");
    let points = sessions["histogram"]["dataPoints"].as_array().unwrap();
    assert_eq!(points.len(), 2, "{points:#?}");
    for (transport, protocol) in [("pipe", None), ("tcp", Some("http"))] {
        let point = points
            .iter()
            .find(|point| attribute(point, "network.transport").as_deref() == Some(transport))
            .unwrap_or_else(|| panic!("a {transport} session: {points:#?}"));
        assert_eq!(point["count"], "1");
        assert_eq!(attribute(point, "mcp.protocol.version").as_deref(), Some("2025-11-25"));
        assert_eq!(attribute(point, "network.protocol.name").as_deref(), protocol);
        assert_eq!(attribute(point, "error.type"), None, "closed by the client");
        assert_eq!(attribute(point, "mcp.method.name"), None);
        assert_eq!(attribute(point, "mcp.session.id"), None);
    }
}
