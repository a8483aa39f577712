//! What these tests share beyond the test kit: a served endpoint on a free port, an initialized
//! 2025-11-25 session, and the body of a response the service made in process.

use serde_json::{Value, json};
use tokio::net::TcpListener;
use wharf_http::{HttpOptions, McpBody, serve};
use wharf_protocol::ProtocolVersion;
use wharf_server::Server;
use wharf_testkit::schemas::assert_message_valid;

pub(crate) use wharf_testkit::raw_http::{
    JSON, Reply, call, open, parse, read_until, request_bytes, send, send_to, stateless_body,
};

/// `server` served on a free loopback port, which it returns.
pub(crate) async fn start(server: Server, options: HttpOptions) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(serve(listener, server).options(options).into_future());
    port
}

/// A 2025-11-25 session: initialized, with its id.
pub(crate) async fn session(port: u16) -> String {
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {"elicitation": {}}, "clientInfo": {"name": "raw", "version": "1"}}});
    let reply = send(port, "POST", &JSON, &init.to_string()).await;
    assert_eq!(reply.status, 200, "{reply:?}");
    assert_message_valid(ProtocolVersion::V2025_11_25, &reply.json(), "initialize");
    let id = reply.header("mcp-session-id").expect("a session id").to_owned();
    let headers = [JSON[0], JSON[1], ("mcp-session-id", &id), ("mcp-protocol-version", "2025-11-25")];
    let reply = send(port, "POST", &headers, r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#).await;
    assert_eq!(reply.status, 202);
    assert!(reply.body.is_empty());
    id
}

/// The whole body of a response the service made.
pub(crate) async fn body_of(response: http::Response<McpBody>) -> Value {
    use http_body::Body as _;
    let mut body = std::pin::pin!(response.into_body());
    let mut bytes = Vec::new();
    while let Some(Ok(frame)) = std::future::poll_fn(|cx| body.as_mut().poll_frame(cx)).await {
        if let Ok(data) = frame.into_data() {
            bytes.extend_from_slice(&data);
        }
    }
    if bytes.is_empty() { Value::Null } else { serde_json::from_slice(&bytes).unwrap() }
}
