//! Prompts: their definitions, `prompts/list`, and `prompts/get` with its result.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::types::common::{Icon, JsonObject, Role};
use crate::types::content::ContentBlock;
use crate::types::request_meta::RequestMeta;
use crate::types::result::result_struct;

/// A prompt template the user can pick.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Prompt {
    /// The name used in `prompts/get`.
    pub name: String,
    /// A human-readable name (2025-06-18 and later).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What the prompt is for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The arguments the prompt takes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<Vec<PromptArgument>>,
    /// Icons (2025-11-25 and later).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icons: Option<Vec<Icon>>,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
}

/// One argument of a prompt.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PromptArgument {
    /// The argument's name.
    pub name: String,
    /// A human-readable name (2025-06-18 and later).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What the argument means.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// True when `prompts/get` must supply it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub required: Option<bool>,
}

/// One message of a rendered prompt.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PromptMessage {
    /// Who speaks.
    pub role: Role,
    /// What is said.
    pub content: ContentBlock,
}

/// Params of `prompts/get`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct GetPromptParams {
    /// The prompt's name.
    pub name: String,
    /// The argument values.
    #[serde(
        default,
        deserialize_with = "crate::types::unique::optional_strings",
        skip_serializing_if = "Option::is_none"
    )]
    pub arguments: Option<BTreeMap<String, String>>,
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
    /// Result of `prompts/get`.
    pub struct GetPromptResult {
        /// A description of the rendered prompt.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub description: Option<String>,
        /// The messages.
        pub messages: Vec<PromptMessage>,
    }
}

result_struct! {
    /// Result of `prompts/list`.
    #[cacheable]
    pub struct ListPromptsResult {
        /// This page of prompts.
        pub prompts: Vec<Prompt>,
        /// The cursor of the next page, if any.
        #[serde(rename = "nextCursor", default, skip_serializing_if = "Option::is_none")]
        pub next_cursor: Option<String>,
    }
}
