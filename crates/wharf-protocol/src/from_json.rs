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
