//! Resources, resource templates, their contents, and the `resources/*` requests and results.

use std::fmt;

use serde::de::Deserializer;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::types::common::{Annotations, Icon, JsonObject};
use crate::types::request_meta::RequestMeta;
use crate::types::result::result_struct;

/// A resource the server can read.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Resource {
    /// The resource's URI.
    pub uri: String,
    /// The programmatic name.
    pub name: String,
    /// A human-readable name (2025-06-18 and later).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What the resource is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The MIME type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Usage hints.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// The size in bytes, if known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
    /// Icons (2025-11-25 and later).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icons: Option<Vec<Icon>>,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
}

/// A family of resources described by an RFC 6570 URI template.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceTemplate {
    /// The URI template, such as `users://{id}/profile`.
    pub uri_template: String,
    /// The programmatic name.
    pub name: String,
    /// A human-readable name (2025-06-18 and later).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What the resources are.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The MIME type of every matching resource.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Usage hints.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// Icons (2025-11-25 and later).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icons: Option<Vec<Icon>>,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
}

/// The contents of a resource: text or base64 bytes.
///
/// The wire form has no tag; it is text when it has a `text` member and bytes when it has a
/// `blob` member.
#[derive(Debug, Clone, PartialEq)]
pub enum ResourceContents {
    /// Text contents.
    Text(TextResourceContents),
    /// Binary contents.
    Blob(BlobResourceContents),
}

/// Text contents of a resource.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TextResourceContents {
    /// The URI of the resource (or sub-resource) these contents belong to.
    pub uri: String,
    /// The MIME type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// The text.
    pub text: String,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
}

/// Binary contents of a resource.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BlobResourceContents {
    /// The URI of the resource (or sub-resource) these contents belong to.
    pub uri: String,
    /// The MIME type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// The base64-encoded bytes.
    pub blob: String,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
}

impl Serialize for ResourceContents {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            ResourceContents::Text(text) => text.serialize(serializer),
            ResourceContents::Blob(blob) => blob.serialize(serializer),
        }
    }
}

impl<'de> Deserialize<'de> for ResourceContents {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<ResourceContents, D::Error> {
        // Read every member once, then decide by which of `text` and `blob` is present. This
        // keeps the decision explicit instead of trying each variant in turn.
        #[derive(Deserialize)]
        struct Either {
            uri: String,
            #[serde(rename = "mimeType", default)]
            mime_type: Option<String>,
            #[serde(default)]
            text: Option<String>,
            #[serde(default)]
            blob: Option<String>,
            #[serde(rename = "_meta", default)]
            meta: Option<JsonObject>,
        }
        let either = Either::deserialize(deserializer)?;
        match (either.text, either.blob) {
            (Some(text), None) => Ok(ResourceContents::Text(TextResourceContents {
                uri: either.uri,
                mime_type: either.mime_type,
                text,
                meta: either.meta,
            })),
            (None, Some(blob)) => Ok(ResourceContents::Blob(BlobResourceContents {
                uri: either.uri,
                mime_type: either.mime_type,
                blob,
                meta: either.meta,
            })),
            _ => Err(serde::de::Error::custom(ExactlyOne)),
        }
    }
}

struct ExactlyOne;

impl fmt::Display for ExactlyOne {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("resource contents need exactly one of `text` and `blob`")
    }
}

/// Params of `resources/read`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ReadResourceParams {
    /// The URI to read.
    pub uri: String,
    /// Answers to a previous `InputRequiredResult` (2026-07-28).
    #[serde(
        rename = "inputResponses",
        default,
        deserialize_with = "crate::types::unique::optional_object",
        skip_serializing_if = "Option::is_none"
    )]
    pub input_responses: Option<JsonObject>,
    /// The state echoed from a previous `InputRequiredResult` (2026-07-28).
    #[serde(rename = "requestState", default, skip_serializing_if = "Option::is_none")]
    pub request_state: Option<String>,
    /// Request metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Box<RequestMeta>>,
}

result_struct! {
    /// Result of `resources/read`.
    #[cacheable]
    pub struct ReadResourceResult {
        /// The contents, one entry per resource or sub-resource.
        pub contents: Vec<ResourceContents>,
    }
}

result_struct! {
    /// Result of `resources/list`.
    #[cacheable]
    pub struct ListResourcesResult {
        /// This page of resources.
        pub resources: Vec<Resource>,
        /// The cursor of the next page, if any.
        #[serde(rename = "nextCursor", default, skip_serializing_if = "Option::is_none")]
        pub next_cursor: Option<String>,
    }
}

result_struct! {
    /// Result of `resources/templates/list`.
    #[cacheable]
    pub struct ListResourceTemplatesResult {
        /// This page of templates.
        #[serde(rename = "resourceTemplates")]
        pub resource_templates: Vec<ResourceTemplate>,
        /// The cursor of the next page, if any.
        #[serde(rename = "nextCursor", default, skip_serializing_if = "Option::is_none")]
        pub next_cursor: Option<String>,
    }
}

/// Params of `resources/subscribe` and `resources/unsubscribe` (2025 revisions), and of
/// `notifications/resources/updated`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ResourceUriParams {
    /// The resource URI.
    pub uri: String,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
}

/// The JSON value a resource-not-found error carries in `data` on 2026-07-28.
pub fn not_found_data(uri: &str) -> Value {
    serde_json::json!({ "uri": uri })
}

/// Params of `resources/subscribe` and `resources/unsubscribe` (2025 revisions).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SubscribeParams {
    /// The resource URI.
    pub uri: String,
    /// Request metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Box<RequestMeta>>,
}
