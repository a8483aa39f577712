//! The JSON-RPC 2.0 envelope: request ids, the strict decoder for incoming messages, and the
//! encoders for outgoing ones.
//!
//! Decoding is done in two steps. [`Envelope::parse`] reads the envelope members strictly
//! (`jsonrpc` must be `"2.0"`, ids are strings or integers, duplicate members are rejected) and
//! keeps `params`, `result` and `error` as raw JSON. The caller then decodes the params with the
//! method-specific decoder, chosen by the `method` string.

use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;

use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde::ser::{SerializeMap, Serializer};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use crate::error::{ErrorCode, ErrorObject};

/// A JSON-RPC request id: a string or an integer, never null.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RequestId(IdRepr);

#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum IdRepr {
    Number(i64),
    String(Arc<str>),
}

impl RequestId {
    /// An integer id.
    pub fn number(value: i64) -> RequestId {
        RequestId(IdRepr::Number(value))
    }

    /// A string id.
    pub fn string(value: impl Into<Arc<str>>) -> RequestId {
        RequestId(IdRepr::String(value.into()))
    }

    /// The integer value, if this is an integer id.
    pub fn as_number(&self) -> Option<i64> {
        match &self.0 {
            IdRepr::Number(number) => Some(*number),
            IdRepr::String(_) => None,
        }
    }

    /// The string value, if this is a string id.
    pub fn as_string(&self) -> Option<&str> {
        match &self.0 {
            IdRepr::Number(_) => None,
            IdRepr::String(text) => Some(text),
        }
    }
}

impl fmt::Debug for RequestId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl fmt::Display for RequestId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            IdRepr::Number(number) => write!(f, "{number}"),
            IdRepr::String(text) => write!(f, "{text:?}"),
        }
    }
}

impl From<i64> for RequestId {
    fn from(value: i64) -> RequestId {
        RequestId::number(value)
    }
}

impl From<&str> for RequestId {
    fn from(value: &str) -> RequestId {
        RequestId::string(value)
    }
}

impl Serialize for RequestId {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match &self.0 {
            IdRepr::Number(number) => serializer.serialize_i64(*number),
            IdRepr::String(text) => serializer.serialize_str(text),
        }
    }
}

impl<'de> Deserialize<'de> for RequestId {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<RequestId, D::Error> {
        struct IdVisitor;
        impl Visitor<'_> for IdVisitor {
            type Value = RequestId;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string or integer request id")
            }
            fn visit_i64<E: de::Error>(self, value: i64) -> Result<RequestId, E> {
                Ok(RequestId::number(value))
            }
            fn visit_u64<E: de::Error>(self, value: u64) -> Result<RequestId, E> {
                i64::try_from(value)
                    .map(RequestId::number)
                    .map_err(|_| E::custom("request id does not fit in a 64-bit integer"))
            }
            fn visit_str<E: de::Error>(self, value: &str) -> Result<RequestId, E> {
                Ok(RequestId::string(value))
            }
        }
        deserializer.deserialize_any(IdVisitor)
    }
}

/// The `"jsonrpc": "2.0"` marker, which is the only accepted value.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct JsonRpc2;

impl Serialize for JsonRpc2 {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str("2.0")
    }
}

/// Why an incoming message could not be decoded as a JSON-RPC message.
#[derive(Debug, Clone, PartialEq)]
pub struct DecodeError {
    /// The id, when the envelope was readable enough to find one.
    pub id: Option<RequestId>,
    /// The error to send back: `-32700` for malformed JSON, `-32600` for a malformed envelope.
    pub error: ErrorObject,
}

impl DecodeError {
    fn from_json(err: serde_json::Error) -> DecodeError {
        let code = match err.classify() {
            serde_json::error::Category::Data => ErrorCode::INVALID_REQUEST,
            _ => ErrorCode::PARSE_ERROR,
        };
        let what = if code == ErrorCode::PARSE_ERROR { "Parse error" } else { "Invalid request" };
        DecodeError { id: None, error: ErrorObject::new(code, format!("{what}: {err}")) }
    }

    fn invalid(id: Option<RequestId>, message: &str) -> DecodeError {
        DecodeError { id, error: ErrorObject::new(ErrorCode::INVALID_REQUEST, format!("Invalid request: {message}")) }
    }
}

/// One decoded JSON-RPC message whose params or result are still raw JSON.
#[derive(Debug)]
pub enum Envelope<'a> {
    /// A request: it has an id and a method, and expects exactly one response.
    Request {
        /// The request id.
        id: RequestId,
        /// The method name, such as `"tools/call"`.
        method: Cow<'a, str>,
        /// The raw params, if present.
        params: Option<&'a RawValue>,
    },
    /// A notification: a method without an id; it is never answered.
    Notification {
        /// The method name, such as `"notifications/cancelled"`.
        method: Cow<'a, str>,
        /// The raw params, if present.
        params: Option<&'a RawValue>,
    },
    /// A successful response to a request this side sent.
    Response {
        /// The id of the request being answered.
        id: RequestId,
        /// The raw result.
        result: &'a RawValue,
    },
    /// An error response to a request this side sent.
    Error {
        /// The id of the request being answered, when the peer could read it.
        id: Option<RequestId>,
        /// The error.
        error: ErrorObject,
    },
}

impl<'a> Envelope<'a> {
    /// Decodes one JSON-RPC message from bytes.
    ///
    /// Invalid JSON (including invalid UTF-8) gives `-32700`; a JSON value that is not a valid
    /// JSON-RPC message gives `-32600`, with the id when one could be read.
    pub fn parse(bytes: &'a [u8]) -> Result<Envelope<'a>, DecodeError> {
        let raw: RawEnvelope<'a> = serde_json::from_slice(bytes).map_err(DecodeError::from_json)?;
        raw.classify()
    }

    /// Decodes one JSON-RPC message that has already been parsed as raw JSON, for example one
    /// element of a batch.
    pub fn from_raw(raw: &'a RawValue) -> Result<Envelope<'a>, DecodeError> {
        Envelope::parse(raw.get().as_bytes())
    }
}

/// Returns the elements of a JSON-RPC batch if `bytes` is a JSON array, `None` if it is not an
/// array, and an error for malformed JSON or an empty batch.
pub fn parse_batch(bytes: &[u8]) -> Option<Result<Vec<&RawValue>, DecodeError>> {
    let first = bytes.iter().find(|byte| !byte.is_ascii_whitespace())?;
    if *first != b'[' {
        return None;
    }
    Some(match serde_json::from_slice::<Vec<&RawValue>>(bytes) {
        Ok(items) if items.is_empty() => Err(DecodeError::invalid(None, "empty batch")),
        Ok(items) => Ok(items),
        Err(err) => Err(DecodeError::from_json(err)),
    })
}

/// The envelope members, read without interpreting params or results.
#[derive(Default)]
struct RawEnvelope<'a> {
    jsonrpc: Option<Cow<'a, str>>,
    id: Option<&'a RawValue>,
    method: Option<Cow<'a, str>>,
    params: Option<&'a RawValue>,
    result: Option<&'a RawValue>,
    error: Option<&'a RawValue>,
}

impl<'a> RawEnvelope<'a> {
    fn classify(self) -> Result<Envelope<'a>, DecodeError> {
        let id = match self.id {
            None => None,
            Some(raw) if raw.get() == "null" => {
                return Err(DecodeError::invalid(None, "the id must be a string or an integer, not null"));
            }
            Some(raw) => Some(
                serde_json::from_str::<RequestId>(raw.get())
                    .map_err(|_| DecodeError::invalid(None, "the id must be a string or an integer"))?,
            ),
        };
        match self.jsonrpc.as_deref() {
            Some("2.0") => {}
            Some(_) => return Err(DecodeError::invalid(id, "\"jsonrpc\" must be \"2.0\"")),
            None => return Err(DecodeError::invalid(id, "missing \"jsonrpc\": \"2.0\"")),
        }
        if let Some(params) = self.params {
            let first = params.get().as_bytes().first().copied();
            if !matches!(first, Some(b'{') | Some(b'[')) {
                return Err(DecodeError::invalid(id, "\"params\" must be an object or an array"));
            }
        }
        match (self.method, id, self.result, self.error) {
            (Some(method), Some(id), None, None) => Ok(Envelope::Request { id, method, params: self.params }),
            (Some(method), None, None, None) => Ok(Envelope::Notification { method, params: self.params }),
            (None, Some(id), Some(result), None) if self.params.is_none() => Ok(Envelope::Response { id, result }),
            (None, id, None, Some(error)) if self.params.is_none() => {
                let error: ErrorObject = serde_json::from_str(error.get())
                    .map_err(|_| DecodeError::invalid(id.clone(), "malformed \"error\" member"))?;
                Ok(Envelope::Error { id, error })
            }
            (Some(_), id, _, _) => Err(DecodeError::invalid(id, "a request must not carry \"result\" or \"error\"")),
            (None, id, Some(_), Some(_)) => {
                Err(DecodeError::invalid(id, "a response carries either \"result\" or \"error\", not both"))
            }
            (None, id, _, _) => Err(DecodeError::invalid(id, "missing \"method\"")),
        }
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for RawEnvelope<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<RawEnvelope<'a>, D::Error> {
        struct EnvelopeVisitor<'a>(std::marker::PhantomData<&'a ()>);

        fn set_once<T, E: de::Error>(slot: &mut Option<T>, value: T, key: &str) -> Result<(), E> {
            if slot.is_some() {
                return Err(E::custom(format_args!("duplicate member `{key}`")));
            }
            *slot = Some(value);
            Ok(())
        }

        impl<'de: 'a, 'a> Visitor<'de> for EnvelopeVisitor<'a> {
            type Value = RawEnvelope<'a>;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON-RPC 2.0 message object")
            }

            fn visit_map<M: MapAccess<'de>>(self, mut map: M) -> Result<RawEnvelope<'a>, M::Error> {
                let mut envelope = RawEnvelope::default();
                while let Some(key) = map.next_key::<Member>()? {
                    match key {
                        Member::Jsonrpc => {
                            set_once(&mut envelope.jsonrpc, map.next_value::<Text<'de>>()?.0, "jsonrpc")?
                        }
                        Member::Id => set_once(&mut envelope.id, map.next_value::<&'de RawValue>()?, "id")?,
                        Member::Method => set_once(&mut envelope.method, map.next_value::<Text<'de>>()?.0, "method")?,
                        Member::Params => set_once(&mut envelope.params, map.next_value::<&'de RawValue>()?, "params")?,
                        Member::Result => set_once(&mut envelope.result, map.next_value::<&'de RawValue>()?, "result")?,
                        Member::Error => set_once(&mut envelope.error, map.next_value::<&'de RawValue>()?, "error")?,
                        Member::Other => {
                            map.next_value::<de::IgnoredAny>()?;
                        }
                    }
                }
                Ok(envelope)
            }
        }

        deserializer.deserialize_map(EnvelopeVisitor(std::marker::PhantomData))
    }
}

/// The envelope members, recognised without allocating a string for the key.
enum Member {
    Jsonrpc,
    Id,
    Method,
    Params,
    Result,
    Error,
    Other,
}

impl<'de> Deserialize<'de> for Member {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Member, D::Error> {
        struct MemberVisitor;
        impl Visitor<'_> for MemberVisitor {
            type Value = Member;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a member name")
            }
            fn visit_str<E: de::Error>(self, name: &str) -> Result<Member, E> {
                // Exact, case-sensitive names: `Method` is not `method`.
                Ok(match name {
                    "jsonrpc" => Member::Jsonrpc,
                    "id" => Member::Id,
                    "method" => Member::Method,
                    "params" => Member::Params,
                    "result" => Member::Result,
                    "error" => Member::Error,
                    _ => Member::Other,
                })
            }
        }
        deserializer.deserialize_identifier(MemberVisitor)
    }
}

/// A string that borrows from the input when it has no escapes, and is copied only when it
/// does. (`Cow<str>` itself always copies when deserialized.)
struct Text<'de>(Cow<'de, str>);

impl<'de> Deserialize<'de> for Text<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Text<'de>, D::Error> {
        struct TextVisitor;
        impl<'de> Visitor<'de> for TextVisitor {
            type Value = Text<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E: de::Error>(self, text: &'de str) -> Result<Text<'de>, E> {
                Ok(Text(Cow::Borrowed(text)))
            }
            fn visit_str<E: de::Error>(self, text: &str) -> Result<Text<'de>, E> {
                Ok(Text(Cow::Owned(text.to_owned())))
            }
            fn visit_string<E: de::Error>(self, text: String) -> Result<Text<'de>, E> {
                Ok(Text(Cow::Owned(text)))
            }
        }
        deserializer.deserialize_str(TextVisitor)
    }
}

/// An outgoing request: `{"jsonrpc":"2.0","id":…,"method":…,"params":…}`.
#[derive(Debug, Clone, Serialize)]
pub struct RequestMessage<'a, P: Serialize> {
    /// Always `"2.0"`.
    pub jsonrpc: JsonRpc2,
    /// The request id.
    pub id: &'a RequestId,
    /// The method name.
    pub method: &'a str,
    /// The params.
    #[serde(skip_serializing_if = "is_unit_like")]
    pub params: Option<P>,
}

/// An outgoing notification: `{"jsonrpc":"2.0","method":…,"params":…}`.
#[derive(Debug, Clone, Serialize)]
pub struct NotificationMessage<'a, P: Serialize> {
    /// Always `"2.0"`.
    pub jsonrpc: JsonRpc2,
    /// The method name.
    pub method: &'a str,
    /// The params.
    #[serde(skip_serializing_if = "is_unit_like")]
    pub params: Option<P>,
}

fn is_unit_like<P>(params: &Option<P>) -> bool {
    params.is_none()
}

/// An outgoing successful response: `{"jsonrpc":"2.0","id":…,"result":…}`.
#[derive(Debug, Clone, Serialize)]
pub struct ResponseMessage<'a, R: Serialize> {
    /// Always `"2.0"`.
    pub jsonrpc: JsonRpc2,
    /// The id of the request being answered.
    pub id: &'a RequestId,
    /// The result.
    pub result: R,
}

/// An outgoing error response. The id is omitted only when the request's id could not be read.
#[derive(Debug, Clone)]
pub struct ErrorMessage<'a> {
    /// The id of the request being answered, if it could be read.
    pub id: Option<&'a RequestId>,
    /// The error.
    pub error: &'a ErrorObject,
}

impl Serialize for ErrorMessage<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("jsonrpc", &JsonRpc2)?;
        // JSON-RPC 2.0 suggests `"id": null` when the id could not be read, but no MCP schema
        // accepts a null id; 2025-11-25 and later say to leave the member out, so we do.
        if let Some(id) = self.id {
            map.serialize_entry("id", id)?;
        }
        map.serialize_entry("error", self.error)?;
        map.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn error_code(input: &str) -> i64 {
        Envelope::parse(input.as_bytes()).unwrap_err().error.code.0
    }

    #[test]
    fn a_request_keeps_its_raw_params() {
        let input = br#"{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{"cursor":"x"}}"#;
        match Envelope::parse(input).unwrap() {
            Envelope::Request { id, method, params } => {
                assert_eq!(id, RequestId::number(7));
                assert_eq!(method, "tools/list");
                assert_eq!(params.unwrap().get(), r#"{"cursor":"x"}"#);
            }
            other => panic!("expected a request, got {other:?}"),
        }
    }

    #[test]
    fn malformed_json_is_a_parse_error_and_bad_envelopes_are_invalid_requests() {
        assert_eq!(error_code("{not json"), -32700);
        assert_eq!(error_code("\"\\ud800\""), -32700);
        assert_eq!(error_code(r#"{"jsonrpc":"1.0","id":1,"method":"ping"}"#), -32600);
        assert_eq!(error_code(r#"{"id":1,"method":"ping"}"#), -32600);
        assert_eq!(error_code(r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#), -32600);
        assert_eq!(error_code(r#"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#), -32600);
        assert_eq!(error_code(r#"{"jsonrpc":"2.0","id":{},"method":"ping"}"#), -32600);
        assert_eq!(error_code(r#"{"jsonrpc":"2.0","id":1,"Method":"ping"}"#), -32600);
        assert_eq!(error_code(r#"{"jsonrpc":"2.0","id":1,"method":"ping","params":3}"#), -32600);
        assert_eq!(error_code("[]"), -32600);
        assert_eq!(error_code("42"), -32600);
    }

    #[test]
    fn escaped_member_names_are_still_recognised() {
        let input = br#"{"jsonrpc":"2.0","id":1,"meth\u006fd":"ping"}"#;
        assert!(matches!(Envelope::parse(input).unwrap(), Envelope::Request { method, .. } if method == "ping"));
    }

    #[test]
    fn duplicate_members_are_rejected_instead_of_last_one_wins() {
        let input = r#"{"jsonrpc":"2.0","id":1,"method":"ping","method":"tools/call"}"#;
        let err = Envelope::parse(input.as_bytes()).unwrap_err();
        assert_eq!(err.error.code, ErrorCode::INVALID_REQUEST);
        assert!(err.error.message.contains("duplicate member `method`"), "{}", err.error.message);
    }

    #[test]
    fn the_id_is_reported_when_the_rest_of_the_envelope_is_bad() {
        let err = Envelope::parse(br#"{"jsonrpc":"3.0","id":"abc","method":"ping"}"#).unwrap_err();
        assert_eq!(err.id, Some(RequestId::string("abc")));
    }

    #[test]
    fn responses_and_errors_are_told_apart() {
        assert!(matches!(
            Envelope::parse(br#"{"jsonrpc":"2.0","id":1,"result":{}}"#).unwrap(),
            Envelope::Response { .. }
        ));
        assert!(matches!(
            Envelope::parse(br#"{"jsonrpc":"2.0","id":1,"error":{"code":-1,"message":"no"}}"#).unwrap(),
            Envelope::Error { id: Some(_), .. }
        ));
        assert_eq!(error_code(r#"{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":""}}"#), -32600);
    }

    #[test]
    fn error_messages_without_an_id_leave_it_out() {
        let error = ErrorObject::new(ErrorCode::PARSE_ERROR, "Parse error");
        let text = serde_json::to_string(&ErrorMessage { id: None, error: &error }).unwrap();
        assert_eq!(text, r#"{"jsonrpc":"2.0","error":{"code":-32700,"message":"Parse error"}}"#);
    }

    #[test]
    fn batches_are_recognised_by_their_first_byte() {
        assert!(parse_batch(b"  {\"a\":1}").is_none());
        assert_eq!(parse_batch(b" [1, {\"a\":2}]").unwrap().unwrap().len(), 2);
        assert_eq!(parse_batch(b"[]").unwrap().unwrap_err().error.code, ErrorCode::INVALID_REQUEST);
        assert_eq!(parse_batch(b"[1,").unwrap().unwrap_err().error.code, ErrorCode::PARSE_ERROR);
    }
}
