//! The work of the bare baselines: parse a `tools/call` echo request with serde_json into
//! the few fields it needs, and write a hand-built result. No validation, dispatch or
//! concurrency: the floor Wharf's overhead is measured against.

use std::io::Write;

/// The `serverInfo` a bare baseline names in 2026-07-28 results unless it is given the one of
/// the server it stands beside.
pub const DEFAULT_SERVER_INFO: &str = r#"{"name":"bare-echo","version":"1"}"#;

#[derive(serde::Deserialize)]
struct EchoRequest {
    id: Option<serde_json::Value>,
    #[serde(default)]
    params: Option<Params>,
}

#[derive(serde::Deserialize)]
struct Params {
    #[serde(default, rename = "_meta")]
    meta: Option<Meta>,
    #[serde(default)]
    arguments: Option<Arguments>,
}

#[derive(serde::Deserialize)]
struct Meta {
    #[serde(default, rename = "io.modelcontextprotocol/protocolVersion")]
    protocol_version: Option<String>,
}

#[derive(serde::Deserialize)]
struct Arguments {
    #[serde(default)]
    message: String,
}

/// Writes the answer to `request` into `out`; false (nothing written) for messages that are
/// not requests or not JSON.
///
/// A 2026-07-28 request (one whose `_meta` names a protocol version) gets the result that
/// revision asks for: `resultType`, and `server_info` (a JSON object) in the result's `_meta`,
/// the same bytes a real server writes, so that a client reading the answers does the same
/// work for the baseline as for the server it is compared with.
pub fn write_echo_answer(request: &[u8], server_info: &str, out: &mut impl Write) -> std::io::Result<bool> {
    let Ok(EchoRequest { id: Some(id), params }) = serde_json::from_slice::<EchoRequest>(request) else {
        return Ok(false);
    };
    let (meta, arguments) = params.map(|params| (params.meta, params.arguments)).unwrap_or_default();
    let message = arguments.map(|arguments| arguments.message).unwrap_or_default();
    let text = serde_json::to_string(&message).unwrap_or_default();
    write!(out, r#"{{"jsonrpc":"2.0","id":{id},"result":{{"content":[{{"type":"text","text":{text}}}]"#)?;
    if meta.and_then(|meta| meta.protocol_version).is_some() {
        write!(out, r#","resultType":"complete","_meta":{{"io.modelcontextprotocol/serverInfo":{server_info}}}"#)?;
    }
    out.write_all(b"}}")?;
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(request: &str) -> serde_json::Value {
        let mut out = Vec::new();
        assert!(write_echo_answer(request.as_bytes(), DEFAULT_SERVER_INFO, &mut out).unwrap());
        serde_json::from_slice(&out).expect("the answer is JSON")
    }

    #[test]
    fn a_session_request_gets_the_2025_result() {
        let answer = answer(
            r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hi"}}}"#,
        );
        assert_eq!(
            answer,
            serde_json::json!({"jsonrpc": "2.0", "id": 7, "result": {"content": [{"type": "text", "text": "hi"}]}})
        );
    }

    #[test]
    fn a_stateless_request_gets_the_2026_result_with_server_info() {
        let answer = answer(
            r#"{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"},"name":"echo","arguments":{"message":"hi"}}}"#,
        );
        assert_eq!(
            answer,
            serde_json::json!({"jsonrpc": "2.0", "id": "a", "result": {
                "content": [{"type": "text", "text": "hi"}],
                "resultType": "complete",
                "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "bare-echo", "version": "1"}},
            }})
        );
    }

    #[test]
    fn a_notification_gets_no_answer() {
        let mut out = Vec::new();
        assert!(
            !write_echo_answer(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#, "{}", &mut out).unwrap()
        );
        assert!(out.is_empty());
    }
}
