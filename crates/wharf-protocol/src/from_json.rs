//! [`FromJson`]: the protocol's types read from JSON text, bytes or a `Value` by functions that
//! are compiled once, in this crate.
//!
//! `serde_json::from_str::<T>` is generic: every crate that calls it compiles `T`'s decoder
//! (for `CallToolResult`, every content type) again, and a server binary holds one copy per
//! crate that reads the type. Other crates read these types through [`FromJson`], whose
//! functions are not generic, so the decoders exist once.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde::de::{Deserializer, Error as _};
use serde_json::Value;

use crate::error::ErrorObject;
use crate::types::apps::{ToolUiMeta, ViewMeta};
use crate::types::capabilities::{ClientCapabilities, ServerCapabilities};
use crate::types::client_features::{CreateMessageParams, CreateMessageResult, ElicitResult, ListRootsResult};
use crate::types::common::Implementation;
use crate::types::completion::CompleteResult;
use crate::types::content::ContentBlock;
use crate::types::lifecycle::{DiscoverResult, InitializeResult};
use crate::types::logging_level::LoggingLevel;
use crate::types::mrtr::{InputRequest, InputRequiredResult};
use crate::types::prompts::{GetPromptResult, ListPromptsResult};
use crate::types::request_meta::RequestMeta;
use crate::types::resources::{ListResourceTemplatesResult, ListResourcesResult, ReadResourceResult};
use crate::types::skills::ListSkillsResult;
use crate::types::tools::{CallToolResult, ListToolsResult};

/// A type read from JSON by this crate's own copy of its decoder.
pub trait FromJson: Sized {
    /// Reads `text`.
    fn from_json(text: &str) -> serde_json::Result<Self>;

    /// Reads `bytes`, which must be UTF-8.
    fn from_json_bytes(bytes: &[u8]) -> serde_json::Result<Self> {
        let text = std::str::from_utf8(bytes).map_err(|err| serde_json::Error::custom(format!("not UTF-8: {err}")))?;
        Self::from_json(text)
    }

    /// Reads `value`.
    fn from_json_value(value: Value) -> serde_json::Result<Self>;

    /// Reads `value`, which stays the caller's.
    fn from_json_ref(value: &Value) -> serde_json::Result<Self>;
}

/// Implements [`FromJson`] for each type, the decoders never inlined into a caller in another
/// crate (which would copy them there again).
macro_rules! from_json_once {
    ($($type:ty),* $(,)?) => {
        $(
            impl FromJson for $type {
                #[inline(never)]
                fn from_json(text: &str) -> ::serde_json::Result<$type> {
                    ::serde_json::from_str(text)
                }

                #[inline(never)]
                fn from_json_value(value: ::serde_json::Value) -> ::serde_json::Result<$type> {
                    ::serde_json::from_value(value)
                }

                #[inline(never)]
                fn from_json_ref(value: &::serde_json::Value) -> ::serde_json::Result<$type> {
                    <$type as ::serde::Deserialize>::deserialize(value)
                }
            }
        )*
    };
}

from_json_once!(
    Value,
    ErrorObject,
    Implementation,
    ClientCapabilities,
    ServerCapabilities,
    LoggingLevel,
    RequestMeta,
    ContentBlock,
    InitializeResult,
    DiscoverResult,
    CallToolResult,
    ListToolsResult,
    ListPromptsResult,
    GetPromptResult,
    ListResourcesResult,
    ListResourceTemplatesResult,
    ReadResourceResult,
    CompleteResult,
    ListSkillsResult,
    CreateMessageParams,
    CreateMessageResult,
    ElicitResult,
    ListRootsResult,
    InputRequest,
    InputRequiredResult,
    BTreeMap<String, InputRequest>,
    Vec<(String, InputRequest)>,
    ViewMeta,
    ToolUiMeta,
);

/// A member of another type's record read with [`FromJson`]:
/// `#[serde(deserialize_with = "wharf_protocol::through_value")]`. The member is read as a
/// `Value` first (whose decoder every crate has anyway), so that the record's own derived
/// decoder does not compile the member's again.
pub fn through_value<'de, D: Deserializer<'de>, T: FromJson>(deserializer: D) -> Result<T, D::Error> {
    T::from_json_value(Value::deserialize(deserializer)?).map_err(D::Error::custom)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn each_way_in_reads_the_same_result() {
        let wire = json!({"content": [{"type": "text", "text": "hi"}], "isError": false});
        let text = wire.to_string();
        let from_text = CallToolResult::from_json(&text).unwrap();
        assert_eq!(CallToolResult::from_json_bytes(text.as_bytes()).unwrap(), from_text);
        assert_eq!(CallToolResult::from_json_ref(&wire).unwrap(), from_text);
        assert_eq!(CallToolResult::from_json_value(wire).unwrap(), from_text);
        assert!(matches!(&from_text.content[..], [ContentBlock::Text(text)] if text.text == "hi"));
    }

    #[test]
    fn bytes_that_are_not_utf8_and_a_wrong_shape_are_errors() {
        let err = ErrorObject::from_json_bytes(b"{\"code\": 1, \"message\": \"\xff\"}").unwrap_err();
        assert!(err.to_string().contains("not UTF-8"), "{err}");
        assert!(InputRequest::from_json(r#"{"method": "sampling/createMessage", "params": {}}"#).is_err());
    }

    #[derive(Debug, serde::Deserialize)]
    struct Record {
        #[serde(deserialize_with = "crate::through_value")]
        asked: Vec<(String, InputRequest)>,
    }

    #[test]
    fn a_member_read_through_a_value_is_checked_as_the_type_would_be() {
        let good = r#"{"asked": [["k", {"method": "roots/list"}]]}"#;
        let record: Record = serde_json::from_str(good).unwrap();
        assert_eq!(record.asked.len(), 1);
        assert!(matches!(record.asked[0].1, InputRequest::ListRoots(_)));
        let with_params = r#"{"asked": [["e", {"method": "elicitation/create", "params": {"message": "Name?",
            "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}}}}]]}"#;
        let record: Record = serde_json::from_str(with_params).unwrap();
        assert!(
            matches!(&record.asked[0].1, InputRequest::Elicitation(params) if params.message == "Name?"),
            "{record:?}"
        );
        let bad = r#"{"asked": [["k", {"method": "no/such"}]]}"#;
        assert!(serde_json::from_str::<Record>(bad).is_err());
    }
}
