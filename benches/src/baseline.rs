//! The work of the bare baselines: parse a `tools/call` echo request with serde_json into
//! the few fields it needs, and write a hand-built result. No validation, dispatch or
//! concurrency: the floor Wharf's overhead is measured against.

use std::io::Write;

#[derive(serde::Deserialize)]
struct EchoRequest {
    id: Option<serde_json::Value>,
    #[serde(default)]
    params: Option<Params>,
}

#[derive(serde::Deserialize)]
struct Params {
    #[serde(default)]
    arguments: Option<Arguments>,
}

#[derive(serde::Deserialize)]
struct Arguments {
    #[serde(default)]
    message: String,
}

/// Writes the answer to `request` into `out`; false (nothing written) for messages that are
/// not requests or not JSON.
pub fn write_echo_answer(request: &[u8], out: &mut impl Write) -> std::io::Result<bool> {
    let Ok(EchoRequest { id: Some(id), params }) = serde_json::from_slice::<EchoRequest>(request) else {
        return Ok(false);
    };
    let message = params.and_then(|params| params.arguments).map(|arguments| arguments.message).unwrap_or_default();
    let text = serde_json::to_string(&message).unwrap_or_default();
    write!(out, r#"{{"jsonrpc":"2.0","id":{id},"result":{{"content":[{{"type":"text","text":{text}}}]}}}}"#)?;
    Ok(true)
}
