//! Argument completion: `completion/complete` for prompt arguments and template variables.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::types::request_meta::RequestMeta;
use crate::types::result::result_struct;

/// What is being completed: a prompt or a resource template, tagged by `type`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type")]
pub enum CompletionReference {
    /// `{"type":"ref/prompt","name":…}`
    #[serde(rename = "ref/prompt")]
    Prompt {
        /// The prompt's name.
        name: String,
        /// The prompt's title.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        title: Option<String>,
    },
    /// `{"type":"ref/resource","uri":…}`: a resource template.
    #[serde(rename = "ref/resource")]
    ResourceTemplate {
        /// The URI template.
        uri: String,
    },
}

/// The argument being completed.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CompletionArgument {
    /// The argument or template variable name.
    pub name: String,
    /// What the user has typed so far.
    pub value: String,
}

/// Values of other arguments already chosen.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CompletionContext {
    /// Other arguments, by name.
    #[serde(
        default,
        deserialize_with = "crate::types::unique::optional_strings",
        skip_serializing_if = "Option::is_none"
    )]
    pub arguments: Option<BTreeMap<String, String>>,
}

/// Params of `completion/complete`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CompleteParams {
    /// The prompt or template.
    #[serde(rename = "ref")]
    pub reference: CompletionReference,
    /// The argument being completed.
    pub argument: CompletionArgument,
    /// Values of arguments already chosen (2025-06-18 and later).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<CompletionContext>,
    /// Request metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Box<RequestMeta>>,
}

/// The completion values.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Completion {
    /// At most 100 values.
    pub values: Vec<String>,
    /// How many values there are in all.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total: Option<u64>,
    /// True when there are more values than returned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub has_more: Option<bool>,
}

result_struct! {
    /// Result of `completion/complete`.
    pub struct CompleteResult {
        /// The values.
        pub completion: Completion,
    }
}
