//! The `Mcp-Param-*` check of a 2026-07-28 `tools/call`, for transports that carry headers:
//! the arguments a tool marks must agree with the headers the client mirrored them into.

use serde_json::Value;
use wharf_protocol::{ClientRequest, ErrorCode, ErrorObject, ToolArguments};

use crate::server::Server;
use wharf_protocol::HeaderParam;

/// Checks a request's mirrored headers against its arguments; `header(name)` reads
/// `Mcp-Param-{name}` (`None` when absent, `Some(None)` when it cannot be decoded). Requests
/// other than `tools/call` of a tool that marks arguments pass.
pub fn check_mirrored_headers(
    server: &Server,
    request: &ClientRequest,
    header: impl Fn(&str) -> Option<Option<String>>,
) -> Result<(), ErrorObject> {
    let ClientRequest::CallTool(call) = request else { return Ok(()) };
    let registry = server.registry();
    let Some(tool) = registry.tool(&call.name) else { return Ok(()) };
    check_mirrored(&tool.header_params, call.arguments.as_ref(), header)
}

/// Checks the `Mcp-Param-*` headers of a 2026-07-28 `tools/call` against its arguments: each
/// marked argument present in the body needs its header with the same value, and a header
/// needs its argument. `header(name)` is the transport's reading of `Mcp-Param-{name}`:
/// `None` when absent, `Some(None)` when it cannot be decoded. The arguments are read only for
/// a tool that marks some.
fn check_mirrored(
    params: &[HeaderParam],
    arguments: Option<&ToolArguments>,
    header: impl Fn(&str) -> Option<Option<String>>,
) -> Result<(), ErrorObject> {
    if params.is_empty() {
        return Ok(());
    }
    let arguments = arguments.map(ToolArguments::to_object).transpose().map_err(|err| {
        ErrorObject::new(ErrorCode::INVALID_PARAMS, format!("Invalid params: the arguments cannot be read: {err}"))
    })?;
    let arguments = arguments.as_ref();
    let mismatch = |message: String| ErrorObject::new(ErrorCode::HEADER_MISMATCH, message);
    for param in params {
        let body = arguments.and_then(|arguments| arguments.get(&param.property)).filter(|value| !value.is_null());
        let display = format!("Mcp-Param-{}", param.header);
        match (header(&param.header), body) {
            (None, None) => {}
            (None, Some(_)) => {
                return Err(mismatch(format!(
                    "Header mismatch: argument `{}` is in the body, so the `{display}` header is required",
                    param.property
                )));
            }
            (Some(_), None) => {
                return Err(mismatch(format!(
                    "Header mismatch: `{display}` is set but the body has no argument `{}`",
                    param.property
                )));
            }
            (Some(decoded), Some(body)) => {
                let decoded = decoded.ok_or_else(|| {
                    mismatch(format!("Header mismatch: `{display}` is not valid base64-encoded UTF-8"))
                })?;
                if header_text(body).as_deref() != Some(decoded.as_str()) {
                    return Err(mismatch(format!(
                        "Header mismatch: `{display}` is {decoded:?} but argument `{}` is {body}",
                        param.property
                    )));
                }
            }
        }
    }
    Ok(())
}

/// The text a header carries for an argument's JSON value: strings as they are, integers in
/// decimal, booleans as `true`/`false`; `None` for values no header can carry.
fn header_text(value: &Value) -> Option<String> {
    match value {
        Value::String(text) => Some(text.clone()),
        Value::Number(number) if number.is_i64() || number.is_u64() => Some(number.to_string()),
        Value::Bool(flag) => Some(flag.to_string()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn values_become_header_text() {
        assert_eq!(header_text(&json!("eu")).as_deref(), Some("eu"));
        assert_eq!(header_text(&json!(42)).as_deref(), Some("42"));
        assert_eq!(header_text(&json!(false)).as_deref(), Some("false"));
        assert_eq!(header_text(&json!(1.5)), None);
    }
}
