//! The request headers of protocol revision 2026-07-28 (`MCP-Protocol-Version`, `Mcp-Method`,
//! `Mcp-Name`), checked against the body they describe.

use base64::Engine;
use http::header::{ACCEPT, CONTENT_LENGTH, CONTENT_TYPE, HeaderName};
use http::{HeaderMap, HeaderValue};
use wharf_protocol::{ClientRequest, Era, ErrorCode, ErrorObject, ProtocolVersion};

// Names made once: a lookup by a name given as text parses it first.
pub(crate) const PROTOCOL_VERSION: HeaderName = HeaderName::from_static("mcp-protocol-version");
pub(crate) const SESSION_ID: HeaderName = HeaderName::from_static("mcp-session-id");
pub(crate) const METHOD: HeaderName = HeaderName::from_static("mcp-method");
pub(crate) const NAME: HeaderName = HeaderName::from_static("mcp-name");
pub(crate) const LAST_EVENT_ID: HeaderName = HeaderName::from_static("last-event-id");

/// A header's value as text, if present and visible ASCII.
pub(crate) fn text<'a>(headers: &'a HeaderMap, name: &HeaderName) -> Option<&'a str> {
    headers.get(name).and_then(|value| value.to_str().ok())
}

/// What names a 2025 session in a request: `MCP-Protocol-Version` and `Mcp-Session-Id`, as the
/// bytes they came in. They are compared with revisions and ids this server knows, which are
/// text: bytes equal to them are that text, so no value is read as text on the way.
#[derive(Debug, Clone, Copy)]
pub(crate) struct SessionNaming<'a> {
    pub(crate) protocol_version: Option<&'a [u8]>,
    pub(crate) session_id: Option<&'a [u8]>,
}

impl<'a> SessionNaming<'a> {
    pub(crate) fn of(headers: &'a HeaderMap) -> SessionNaming<'a> {
        let bytes = |name| headers.get(name).map(HeaderValue::as_bytes);
        SessionNaming { protocol_version: bytes(&PROTOCOL_VERSION), session_id: bytes(&SESSION_ID) }
    }

    /// True when `MCP-Protocol-Version` names a stateless revision (2026-07-28): the message is
    /// stateless (2026-07-28) traffic, whatever its body says.
    pub(crate) fn names_stateless_revision(&self) -> bool {
        self.protocol_version
            .and_then(ProtocolVersion::parse_bytes)
            .is_some_and(|version| version.era() == Era::Stateless)
    }
}

/// The headers a POST reads, found in one pass over them: a lookup by name hashes the name, and
/// a POST reads most of these. Each is its first value, as [`HeaderMap::get`] gives it.
#[derive(Debug)]
pub(crate) struct PostHeaders<'a> {
    pub(crate) all: &'a HeaderMap,
    pub(crate) content_type: Option<&'a HeaderValue>,
    pub(crate) content_length: Option<&'a HeaderValue>,
    accept: Option<&'a HeaderValue>,
    accept_values: usize,
    protocol_version: Option<&'a HeaderValue>,
    session_id: Option<&'a HeaderValue>,
    method: Option<&'a HeaderValue>,
    name: Option<&'a HeaderValue>,
}

impl<'a> PostHeaders<'a> {
    pub(crate) fn of(all: &'a HeaderMap) -> PostHeaders<'a> {
        let mut found = PostHeaders {
            all,
            content_type: None,
            content_length: None,
            accept: None,
            accept_values: 0,
            protocol_version: None,
            session_id: None,
            method: None,
            name: None,
        };
        for (name, value) in all {
            let slot = if *name == ACCEPT {
                found.accept_values += 1;
                &mut found.accept
            } else if *name == CONTENT_TYPE {
                &mut found.content_type
            } else if *name == CONTENT_LENGTH {
                &mut found.content_length
            } else if *name == PROTOCOL_VERSION {
                &mut found.protocol_version
            } else if *name == SESSION_ID {
                &mut found.session_id
            } else if *name == METHOD {
                &mut found.method
            } else if *name == NAME {
                &mut found.name
            } else {
                continue;
            };
            slot.get_or_insert(value);
        }
        found
    }

    /// What `Accept` allows of JSON and SSE: both without the header.
    pub(crate) fn accepted(&self) -> Accepted {
        match self.accept {
            None => Accepted { json: true, event_stream: true },
            Some(value) if self.accept_values == 1 && value.as_bytes() == ACCEPT_BOTH => {
                Accepted { json: true, event_stream: true }
            }
            Some(_) => accepted(self.all),
        }
    }

    pub(crate) fn session_naming(&self) -> SessionNaming<'a> {
        SessionNaming {
            protocol_version: self.protocol_version.map(HeaderValue::as_bytes),
            session_id: self.session_id.map(HeaderValue::as_bytes),
        }
    }

    /// [`SessionNaming::names_stateless_revision`].
    pub(crate) fn names_stateless_revision(&self) -> bool {
        self.session_naming().names_stateless_revision()
    }
}

fn as_text(value: Option<&HeaderValue>) -> Option<&str> {
    value.and_then(|value| value.to_str().ok())
}

/// True when the header is there and its value is `expected`.
fn is(value: Option<&HeaderValue>, expected: &str) -> bool {
    value.is_some_and(|value| value.as_bytes() == expected.as_bytes())
}

/// What the `Accept` header allows of the two types a POST may be answered with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Accepted {
    pub(crate) json: bool,
    pub(crate) event_stream: bool,
}

/// The value nearly every client sends, as the specification writes it.
const ACCEPT_BOTH: &[u8] = b"application/json, text/event-stream";

/// What `Accept` allows of JSON and SSE: both without the header.
pub(crate) fn accepted(headers: &HeaderMap) -> Accepted {
    let mut values = headers.get_all(ACCEPT).iter();
    let Some(first) = values.next() else { return Accepted { json: true, event_stream: true } };
    if first.as_bytes() == ACCEPT_BOTH && values.next().is_none() {
        return Accepted { json: true, event_stream: true };
    }
    let mut accepted = Accepted { json: false, event_stream: false };
    for item in
        headers.get_all(ACCEPT).iter().filter_map(|value| value.to_str().ok()).flat_map(|value| value.split(','))
    {
        let media = item.split(';').next().unwrap_or("").trim();
        let any = media == "*/*";
        accepted.json |= any || media.eq_ignore_ascii_case("application/json");
        accepted.event_stream |= any || media.eq_ignore_ascii_case("text/event-stream");
    }
    accepted
}

/// True when `Content-Type` is JSON (`application/json`, parameters allowed).
pub(crate) fn is_json(value: Option<&HeaderValue>) -> bool {
    let Some(value) = value else { return false };
    value.as_bytes() == b"application/json"
        || value.to_str().is_ok_and(|value| {
            value.split(';').next().is_some_and(|media| media.trim().eq_ignore_ascii_case("application/json"))
        })
}

/// The `Mcp-Param-{name}` header of a request: `None` when absent, `Some(None)` when it is not
/// visible ASCII or not valid `=?base64?…?=`, else its text.
pub(crate) fn mirrored_param(headers: &HeaderMap, name: &str) -> Option<Option<String>> {
    let value = headers.get(format!("mcp-param-{}", name.to_ascii_lowercase()).as_str())?;
    Some(value.to_str().ok().and_then(decode_value))
}

/// Decodes a header value that may use the `=?base64?…?=` form for text that is not safe ASCII.
pub(crate) fn decode_value(value: &str) -> Option<String> {
    match value.strip_prefix("=?base64?").and_then(|rest| rest.strip_suffix("?=")) {
        Some(encoded) => {
            let bytes = base64::engine::general_purpose::STANDARD.decode(encoded).ok()?;
            String::from_utf8(bytes).ok()
        }
        None => Some(value.to_owned()),
    }
}

/// Checks the headers a 2026-07-28 request must carry against its body: the revision, the
/// method and, for `tools/call`, `prompts/get`, `resources/read` and the task methods, the name,
/// URI or task id. Every problem is named in one error, with the value expected, so that a
/// client (or a person with curl) fixes them in one go.
pub(crate) fn check_stateless_headers(
    headers: &PostHeaders<'_>,
    request: &ClientRequest,
    version: &str,
) -> Result<(), ErrorObject> {
    let mut problems = Vec::new();
    // Each value is compared as bytes first: bytes equal to the expected text are that text,
    // and the usual request needs no other reading of its headers.
    if !is(headers.protocol_version, version) {
        match as_text(headers.protocol_version) {
            None => problems.push(format!("the `MCP-Protocol-Version` header is required (here: {version})")),
            Some(header_version) => {
                problems.push(format!("`MCP-Protocol-Version` is {header_version} but `_meta` names {version}"));
            }
        }
    }
    let method = request.method();
    if !is(headers.method, method) {
        match as_text(headers.method) {
            None => problems.push(format!("the `Mcp-Method` header is required (here: {method})")),
            Some(header_method) => {
                problems.push(format!("`Mcp-Method` is {header_method} but the body calls {method}"));
            }
        }
    }
    let name = match request {
        ClientRequest::CallTool(params) => Some(params.name.as_str()),
        ClientRequest::GetPrompt(params) => Some(params.name.as_str()),
        ClientRequest::ReadResource(params) => Some(params.uri.as_str()),
        ClientRequest::GetTask(params) | ClientRequest::CancelTask(params) => Some(params.task_id.as_str()),
        ClientRequest::UpdateTask(params) => Some(params.task_id.as_str()),
        _ => None,
    };
    // The usual case, told without decoding (which copies).
    if let Some(name) = name.filter(|name| !is(headers.name, name) || name.starts_with("=?base64?")) {
        match as_text(headers.name) {
            None => problems.push(format!("`{method}` requires the `Mcp-Name` header (here: {name})")),
            Some(raw) => match decode_value(raw) {
                None => problems.push("`Mcp-Name` is not valid base64-encoded UTF-8".to_owned()),
                Some(decoded) if decoded != name => {
                    problems.push(format!("`Mcp-Name` is {decoded} but the body names {name}"));
                }
                Some(_) => {}
            },
        }
    }
    if problems.is_empty() {
        return Ok(());
    }
    Err(ErrorObject::new(ErrorCode::HEADER_MISMATCH, format!("Header mismatch: {}", problems.join("; "))))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_values_are_decoded() {
        assert_eq!(decode_value("plain").as_deref(), Some("plain"));
        assert_eq!(decode_value("=?base64?w6lsYW4=?=").as_deref(), Some("élan"));
        assert_eq!(decode_value("=?base64?!!?="), None);
        // Padding is required, and only the standard alphabet is.
        assert_eq!(decode_value("=?base64?SGVsbG8?="), None);
        assert_eq!(decode_value("=?base64?SGVs!!!bG8=?="), None);
        // Without both ends of the wrapper the value is literal.
        assert_eq!(decode_value("=?base64?SGVsbG8=").as_deref(), Some("=?base64?SGVsbG8="));
    }

    #[test]
    fn every_missing_or_different_header_is_named_in_one_error_with_the_value_expected() {
        let call: ClientRequest = ClientRequest::decode(
            "tools/call",
            Some(&serde_json::value::RawValue::from_string(r#"{"name":"echo"}"#.to_owned()).unwrap()),
        )
        .unwrap();
        let none = HeaderMap::new();
        let error = check_stateless_headers(&PostHeaders::of(&none), &call, "2026-07-28").unwrap_err();
        assert_eq!(error.code, ErrorCode::HEADER_MISMATCH);
        assert_eq!(
            error.message,
            "Header mismatch: the `MCP-Protocol-Version` header is required (here: 2026-07-28); the `Mcp-Method` \
             header is required (here: tools/call); `tools/call` requires the `Mcp-Name` header (here: echo)"
        );
        let mut headers = HeaderMap::new();
        headers.insert(PROTOCOL_VERSION, "2026-07-28".parse().unwrap());
        headers.insert(METHOD, "tools/list".parse().unwrap());
        headers.insert(NAME, "echo".parse().unwrap());
        let error = check_stateless_headers(&PostHeaders::of(&headers), &call, "2026-07-28").unwrap_err();
        assert_eq!(error.message, "Header mismatch: `Mcp-Method` is tools/list but the body calls tools/call");
        headers.insert(METHOD, "tools/call".parse().unwrap());
        assert!(check_stateless_headers(&PostHeaders::of(&headers), &call, "2026-07-28").is_ok());
    }
}
