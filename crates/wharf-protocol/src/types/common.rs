//! Shapes shared by many messages: JSON objects, progress tokens, implementation info, icons,
//! annotations, roles, cache hints and `resultType`.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::jsonrpc::RequestId;

/// A JSON object, used where the schema allows arbitrary members.
pub type JsonObject = Map<String, Value>;

/// A progress token: the string or integer a client puts in `_meta.progressToken`.
pub type ProgressToken = RequestId;

/// The name and version of a client or server implementation.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Implementation {
    /// The programmatic name.
    pub name: String,
    /// A human-readable name (2025-06-18 and later).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The version.
    pub version: String,
    /// A description (2025-11-25 and later).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// A website (2025-11-25 and later).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub website_url: Option<String>,
    /// Icons (2025-11-25 and later).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icons: Option<Vec<Icon>>,
}

/// An icon for a server, tool, prompt or resource (2025-11-25 and later).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Icon {
    /// An `https:` or `data:` URI.
    pub src: String,
    /// The image's MIME type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Sizes such as `"48x48"` or `"any"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sizes: Option<Vec<String>>,
    /// `"light"` or `"dark"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub theme: Option<String>,
}

/// Who a message or content block is meant for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// The human user.
    User,
    /// The AI assistant.
    Assistant,
}

/// Hints about how a client should use a content block or resource.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Annotations {
    /// Who the content is for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub audience: Option<Vec<Role>>,
    /// Importance from 0 (least) to 1 (most).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priority: Option<f64>,
    /// An ISO 8601 timestamp.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_modified: Option<String>,
}

/// The `resultType` of a 2026-07-28 result: `"complete"`, `"input_required"`, or an extension's.
///
/// The standard ones are borrowed: every 2026-07-28 result carries one, and an owned string
/// cost each an allocation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ResultType(pub std::borrow::Cow<'static, str>);

impl ResultType {
    /// The request finished.
    pub fn complete() -> ResultType {
        ResultType(std::borrow::Cow::Borrowed("complete"))
    }

    /// The server needs input from the client before it can finish (MRTR).
    pub fn input_required() -> ResultType {
        ResultType(std::borrow::Cow::Borrowed("input_required"))
    }
}

/// Whether a cached result may be shared between users (2026-07-28).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CacheScope {
    /// Any client may reuse the result.
    Public,
    /// Only the same authenticated user may reuse the result.
    Private,
}
