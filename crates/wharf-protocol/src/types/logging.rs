//! Logging: `logging/setLevel` and `notifications/message`.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::types::common::JsonObject;
use crate::types::logging_level::LoggingLevel;
use crate::types::request_meta::RequestMeta;

/// Params of `logging/setLevel` (2025 revisions).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SetLevelParams {
    /// The least severe level the client wants.
    pub level: LoggingLevel,
    /// Request metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Box<RequestMeta>>,
}

/// Params of `notifications/message`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LoggingMessageParams {
    /// The severity.
    pub level: LoggingLevel,
    /// The logger's name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logger: Option<String>,
    /// The message: a string or any JSON value.
    pub data: Value,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
}
