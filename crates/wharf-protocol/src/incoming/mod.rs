//! Decoding of what a client sends a server, down to the typed request: a plain request is read,
//! envelope and typed params together, in a single pass over its bytes.
//!
//! [`Envelope::parse`] followed by [`ClientRequest::decode`] reads a request's params twice:
//! once to find where they end, once to decode them. Here, when `method` comes before
//! `params` (as every client writes it), the params are decoded by the method's type as soon
//! as the parser reaches them. Anything this pass does not accept (a notification, a response,
//! params before the method, or any error at all) is decoded again by those two steps, which
//! therefore alone decide every error message: the fast pass never has to agree with them on
//! anything but the requests it accepts. Either way the caller gets the request decoded, or the
//! error to answer it with, and never decodes params itself.
//!
//! `tools/call` params, the bulk of a busy server's input, are read by hand too
//! ([`call_tool`]); other params go through serde.
//!
//! A proxy reads results as a client, and passes them on as a server: [`passed_on`] leaves out
//! what the answering server said of its own envelope without decoding it.

mod call_tool;
mod meta;
mod passed_on;
mod scanner;

use std::borrow::Cow;

use serde_json::value::RawValue;

use crate::error::ErrorObject;
use crate::jsonrpc::{DecodeError, Envelope, RequestId};
use crate::messages::ClientRequest;
pub use passed_on::without_protocol_members;
use scanner::Scanner;

/// One message from a client, decoded.
#[derive(Debug)]
pub enum Incoming<'a> {
    /// A request whose params decoded into their method's type.
    Request {
        /// The request id.
        id: RequestId,
        /// The request.
        request: ClientRequest,
    },
    /// A request that cannot be served: its method is unknown (`-32601`), or its params do not
    /// fit the method (`-32602`). It is answered with `error`.
    Refused {
        /// The request id, to answer.
        id: RequestId,
        /// The method name as the client wrote it.
        method: Cow<'a, str>,
        /// The error to answer with, as [`ParamsError::to_error_object`] words it.
        ///
        /// [`ParamsError::to_error_object`]: crate::ParamsError::to_error_object
        error: ErrorObject,
    },
    /// A notification: a method without an id, never answered. Its params are still raw, for
    /// [`ClientNotification::decode`](crate::ClientNotification::decode).
    Notification {
        /// The method name, such as `"notifications/cancelled"`.
        method: Cow<'a, str>,
        /// The raw params, if present.
        params: Option<&'a RawValue>,
    },
    /// A successful response to a request the server sent.
    Response {
        /// The id of the request being answered.
        id: RequestId,
        /// The raw result.
        result: &'a RawValue,
    },
    /// An error response to a request the server sent.
    Error {
        /// The id of the request being answered; absent when the client could not read it.
        id: Option<RequestId>,
        /// The error.
        error: ErrorObject,
    },
}

impl<'a> Incoming<'a> {
    /// Decodes one message. Errors are those of [`Envelope::parse`]; a request whose params do
    /// not decode is no error here but [`Incoming::Refused`].
    pub fn parse(bytes: &'a [u8]) -> Result<Incoming<'a>, DecodeError> {
        if let Some((id, request)) = one_pass(bytes) {
            return Ok(Incoming::Request { id, request });
        }
        Envelope::parse(bytes).map(Incoming::from_envelope)
    }

    /// The message the strict decoder read, with a request's params decoded by its method.
    fn from_envelope(envelope: Envelope<'a>) -> Incoming<'a> {
        match envelope {
            Envelope::Request { id, method, params } => match ClientRequest::decode(&method, params) {
                Ok(request) => Incoming::Request { id, request },
                Err(err) => Incoming::Refused { id, method, error: err.to_error_object() },
            },
            Envelope::Notification { method, params } => Incoming::Notification { method, params },
            Envelope::Response { id, result } => Incoming::Response { id, result },
            Envelope::Error { id, error } => Incoming::Error { id, error },
        }
    }
}

/// The request in `bytes`, when it is a plain request whose method comes before its params;
/// `None` for anything else.
///
/// The envelope is read by hand: its member names and the method are compared as bytes, and
/// only the params go through serde, by their method's type. Anything unusual (an escape in a
/// name or the method, a duplicate member, `result` or `error`, malformed JSON) gives `None`,
/// so everything accepted here is plain and everything else is judged by the strict decoder.
fn one_pass(bytes: &[u8]) -> Option<(RequestId, ClientRequest)> {
    // UTF-8 is checked once for the whole message, which is cheaper than string by string;
    // serde then reads the params as text it need not check again.
    let text = std::str::from_utf8(bytes).ok()?;
    let mut scan = Scanner::new(text);
    scan.skip_space();
    scan.expect(b'{')?;
    let (mut version, mut id, mut method, mut request) = (false, None, None, None);
    loop {
        match envelope_member(&mut scan)? {
            EnvelopeMember::Version if !version => {
                version = true;
                if !scan.value_is(b"\"2.0\"") {
                    return None;
                }
            }
            EnvelopeMember::Id if id.is_none() => id = Some(scan.id()?),
            EnvelopeMember::Method if method.is_none() => {
                method = Some(if scan.value_is(b"\"tools/call\"") { "tools/call" } else { scan.plain_string()? });
            }
            EnvelopeMember::Params if request.is_none() => {
                let method = method?;
                if !matches!(scan.peek()?, b'{' | b'[') {
                    return None;
                }
                request = Some(params(&mut scan, method)?);
            }
            EnvelopeMember::Other => scan.skip_value()?,
            // A member given twice, or `result` or `error`.
            _ => return None,
        }
        if !scan.more_members()? {
            break;
        }
    }
    scan.skip_space();
    if scan.at != text.len() || !version {
        return None;
    }
    let id = id?;
    let request = match request {
        Some(request) => request,
        None => ClientRequest::decode(method?, None).ok()?,
    };
    Some((id, request))
}

/// A member of a request's envelope, by its name.
enum EnvelopeMember {
    Version,
    Id,
    Method,
    Params,
    /// `result` or `error`: no request.
    Answer,
    /// Any other name, whose value is skipped.
    Other,
}

/// Reads the name of the member where `scan` stands, and its colon. The names clients write,
/// in the order they write them, are tried whole first.
fn envelope_member(scan: &mut Scanner<'_>) -> Option<EnvelopeMember> {
    if scan.member_named(b"\"jsonrpc\"")? {
        return Some(EnvelopeMember::Version);
    }
    if scan.member_named(b"\"id\"")? {
        return Some(EnvelopeMember::Id);
    }
    if scan.member_named(b"\"method\"")? {
        return Some(EnvelopeMember::Method);
    }
    if scan.member_named(b"\"params\"")? {
        return Some(EnvelopeMember::Params);
    }
    // `{}` ends here too: it has no name, and is no request. The four names were tried whole
    // above, so the name read here is none of them.
    Some(match scan.plain_member()? {
        b"result" | b"error" => EnvelopeMember::Answer,
        _ => EnvelopeMember::Other,
    })
}

/// Every variant of `sample` with one byte removed, replaced by one of `replacements`, or
/// one of them inserted: the inputs the hand-written readers' tests check against serde.
#[cfg(test)]
fn mangled(sample: &str, replacements: &[u8]) -> Vec<Vec<u8>> {
    let bytes = sample.as_bytes();
    let mut variants = Vec::new();
    for at in 0..bytes.len() {
        let mut removed = bytes.to_vec();
        removed.remove(at);
        variants.push(removed);
        for &byte in replacements {
            let mut replaced = bytes.to_vec();
            replaced[at] = byte;
            variants.push(replaced);
            let mut inserted = bytes.to_vec();
            inserted.insert(at, byte);
            variants.push(inserted);
        }
    }
    variants
}

/// The params of `method` where `scan` stands.
fn params(scan: &mut Scanner<'_>, method: &str) -> Option<ClientRequest> {
    if method == "tools/call" {
        let start = scan.at;
        if let Some(params) = call_tool::read(scan) {
            return Some(ClientRequest::CallTool(Box::new(params)));
        }
        // What the hand-written reader does not take, serde may: escapes in the tool's name,
        // say, or arguments nested very deep.
        scan.at = start;
    }
    let (decoded, used) = ClientRequest::decode_leading(method, scan.text.get(scan.at..)?)?;
    scan.at += used;
    Some(decoded)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorCode;

    fn two_step(bytes: &[u8]) -> Result<Option<(RequestId, ClientRequest)>, String> {
        match Envelope::parse(bytes) {
            Ok(Envelope::Request { id, method, params }) => {
                ClientRequest::decode(&method, params).map(|request| Some((id, request))).map_err(|err| err.to_string())
            }
            Ok(_) => Ok(None),
            Err(err) => Err(err.error.message),
        }
    }

    /// Checks that [`Incoming::parse`] gives what the strict decoder followed by
    /// [`ClientRequest::decode`] gives: the same error, the same request, the error object of the
    /// same params error, or the same notification or answer.
    fn incoming_agrees_with_two_steps(bytes: &[u8]) {
        let input = String::from_utf8_lossy(bytes);
        match (Incoming::parse(bytes), Envelope::parse(bytes)) {
            (Err(left), Err(right)) => assert_eq!(left, right, "{input}"),
            (Ok(Incoming::Request { id, request }), Ok(Envelope::Request { id: strict_id, method, params })) => {
                assert_eq!(id, strict_id, "{input}");
                assert_eq!(Ok(request), ClientRequest::decode(&method, params), "{input}");
            }
            (
                Ok(Incoming::Refused { id, method, error }),
                Ok(Envelope::Request { id: strict_id, method: strict_method, params }),
            ) => {
                assert_eq!((id, &method), (strict_id, &strict_method), "{input}");
                let refusal = ClientRequest::decode(&strict_method, params).map_err(|err| err.to_error_object());
                assert_eq!(Some(error), refusal.err(), "{input}");
            }
            (
                Ok(Incoming::Notification { method, params }),
                Ok(Envelope::Notification { method: strict_method, params: strict_params }),
            ) => {
                assert_eq!((method, params.map(RawValue::get)), (strict_method, strict_params.map(RawValue::get)));
            }
            (
                Ok(Incoming::Response { id, result }),
                Ok(Envelope::Response { id: strict_id, result: strict_result }),
            ) => {
                assert_eq!((id, result.get()), (strict_id, strict_result.get()), "{input}");
            }
            (Ok(Incoming::Error { id, error }), Ok(Envelope::Error { id: strict_id, error: strict_error })) => {
                assert_eq!((id, error), (strict_id, strict_error), "{input}");
            }
            (left, right) => panic!("{input}: {left:?} against {right:?}"),
        }
    }

    fn one_pass_agrees(input: &str) -> Option<(RequestId, ClientRequest)> {
        let fast = one_pass(input.as_bytes());
        let slow = two_step(input.as_bytes());
        match (&fast, &slow) {
            (Some(fast), Ok(Some(slow))) => assert_eq!(fast, slow, "{input}"),
            (None, _) => {}
            (Some(_), other) => {
                panic!("the one-pass decoder accepted what the two-step one did not: {input}: {other:?}")
            }
        }
        fast
    }

    #[test]
    fn requests_decode_in_one_pass_to_what_two_steps_give() {
        for input in [
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hi"}}}"#,
            r#"{"method":"tools/call","params":{"name":"echo","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}},"id":"a","jsonrpc":"2.0"}"#,
            r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#,
            r#"{"jsonrpc":"2.0","id":-4,"method":"ping","extra":[1,{"a":"\u0000"}],"more":1.5e3}"#,
            " {\"jsonrpc\" : \"2.0\" , \"id\" : 0 , \"method\" : \"ping\" } ",
        ] {
            assert!(one_pass_agrees(input).is_some(), "{input}");
            incoming_agrees_with_two_steps(input.as_bytes());
        }
    }

    #[test]
    fn everything_else_is_left_to_the_two_step_decoder() {
        for input in [
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            r#"{"jsonrpc":"2.0","id":3,"params":{"cursor":"x"},"method":"tools/list"}"#,
            r#"{"jsonrpc":"2.0","id":4,"meth\u006fd":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":"\u0041","method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":01,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":1e3,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":99999999999999999999,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"ping",}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"ping""#,
            r#"{"jsonrpc":"2.0","id":1,"Method":"ping"}"#,
            "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"pi\tng\"}",
            r#"{"jsonrpc":"2.0","id":1,"result":{}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/explode","params":{}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"arguments":{}}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":null}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":3}"#,
            r#"{"jsonrpc":"2.0","id":1,"params":3,"method":"tools/list"}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"ping","method":"tools/list"}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{},"params":{}}"#,
            r#"{"jsonrpc":"2.0","jsonrpc":"2.0","id":1,"method":"ping"}"#,
            r#"{"jsonrpc":"1.0","id":1,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"ping","result":{}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"ping"} trailing"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/logLevel":"loud"}}}"#,
        ] {
            assert!(one_pass_agrees(input).is_none(), "{input}");
            incoming_agrees_with_two_steps(input.as_bytes());
        }
    }

    #[test]
    fn mangled_requests_are_never_accepted_where_the_strict_decoder_refuses_them() {
        let samples = [
            r#"{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hi"}}}"#,
            r#"{"jsonrpc":"2.0","id":"x","method":"tools/list","params":{"cursor":"c"},"z":[null,true]}"#,
            r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}},"name":"e"}}"#,
            r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"n","arguments":{"a":[1,-2.5e3,true,null,{"b":"c\"\\\u0041"}],"d":{},"e":[0.5]},"x":{"y":[]}}}"#,
        ];
        let replacements = [b'"', b'\\', b',', b':', b'{', b'}', b'[', b']', b'0', b'-', b'.', b' ', 0x01, 0xff];
        for sample in samples {
            for variant in mangled(sample, &replacements) {
                check(&variant);
            }
        }

        fn check(bytes: &[u8]) {
            incoming_agrees_with_two_steps(bytes);
            if let Some(fast) = one_pass(bytes) {
                match two_step(bytes) {
                    Ok(Some(slow)) => assert_eq!(fast, slow, "{}", String::from_utf8_lossy(bytes)),
                    other => panic!("accepted {}: the strict decoder says {other:?}", String::from_utf8_lossy(bytes)),
                }
            }
        }
    }

    #[test]
    fn requests_that_cannot_be_served_are_refused_with_their_id_and_error() {
        let params_do_not_fit = ErrorCode::INVALID_PARAMS;
        let unknown_method = ErrorCode::METHOD_NOT_FOUND;
        for (input, expected_id, expected_method, code) in [
            (
                r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"arguments":{}}}"#,
                7.into(),
                "tools/call",
                params_do_not_fit,
            ),
            // The params come first, so the one-pass reader leaves this one to the strict decoder.
            (
                r#"{"jsonrpc":"2.0","params":{"cursor":5},"id":"p","method":"tools/list"}"#,
                "p".into(),
                "tools/list",
                params_do_not_fit,
            ),
            (
                r#"{"jsonrpc":"2.0","id":"q","method":"tools/explode","params":{}}"#,
                "q".into(),
                "tools/explode",
                unknown_method,
            ),
            (r#"{"jsonrpc":"2.0","id":9,"method":"nothing"}"#, 9.into(), "nothing", unknown_method),
        ] {
            match Incoming::parse(input.as_bytes()) {
                Ok(Incoming::Refused { id, method, error }) => {
                    assert_eq!(id, expected_id, "{input}");
                    assert_eq!(method, expected_method, "{input}");
                    assert_eq!(error.code, code, "{input}");
                }
                other => panic!("{input}: {other:?}"),
            }
            incoming_agrees_with_two_steps(input.as_bytes());
        }
        let Ok(Incoming::Refused { error, .. }) = Incoming::parse(br#"{"jsonrpc":"2.0","id":1,"method":"nope"}"#)
        else {
            panic!("an unknown method was not refused");
        };
        assert_eq!((error.code.0, error.message.as_str()), (-32601, "Method not found: nope"));
        let Ok(Incoming::Refused { error, .. }) = Incoming::parse(br#"{"jsonrpc":"2.0","id":1,"method":"tools/call"}"#)
        else {
            panic!("a request without its params was not refused");
        };
        assert_eq!((error.code.0, error.message.as_str()), (-32602, "Invalid params: this method needs params"));
    }

    #[test]
    fn notifications_and_answers_come_back_as_their_own_kind() {
        let notification = br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3}}"#;
        let Ok(Incoming::Notification { method, params }) = Incoming::parse(notification) else {
            panic!("not a notification");
        };
        assert_eq!(
            (method.as_ref(), params.map(RawValue::get)),
            ("notifications/cancelled", Some(r#"{"requestId":3}"#))
        );

        let Ok(Incoming::Notification { params: None, .. }) =
            Incoming::parse(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)
        else {
            panic!("not a notification without params");
        };

        let Ok(Incoming::Response { id, result }) =
            Incoming::parse(br#"{"jsonrpc":"2.0","id":"s-1","result":{"roots":[]}}"#)
        else {
            panic!("not a response");
        };
        assert_eq!((id, result.get()), (RequestId::from("s-1"), r#"{"roots":[]}"#));

        let answer = br#"{"jsonrpc":"2.0","id":4,"error":{"code":-32603,"message":"boom"}}"#;
        let Ok(Incoming::Error { id, error }) = Incoming::parse(answer) else {
            panic!("not an error response");
        };
        assert_eq!((id, error), (Some(RequestId::from(4)), ErrorObject::new(ErrorCode::INTERNAL_ERROR, "boom")));

        let unread = br#"{"jsonrpc":"2.0","error":{"code":-32700,"message":"Parse error"}}"#;
        let Ok(Incoming::Error { id: None, error }) = Incoming::parse(unread) else {
            panic!("not an error response without an id");
        };
        assert_eq!(error.code, ErrorCode::PARSE_ERROR);
    }
}
