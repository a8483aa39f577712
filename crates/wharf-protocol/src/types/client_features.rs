//! What a server can ask of a client: sampling, elicitation and roots. In 2025 sessions these are
//! server-to-client requests; in 2026-07-28 they travel inside an `InputRequiredResult`.

use std::collections::BTreeMap;
use std::fmt;

use serde::de::{self, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Serialize, Serializer};
use serde_json::{Number, Value};

use crate::types::common::{JsonObject, Role};
use crate::types::content::{ContentBlock, ImageContent, TextContent};
use crate::types::request_meta::RequestMeta;
use crate::types::tools::Tool;

/// One block of sampling content, tagged by `type`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type")]
pub enum SamplingContent {
    /// `{"type":"text"}`
    #[serde(rename = "text")]
    Text(TextContent),
    /// `{"type":"image"}`
    #[serde(rename = "image")]
    Image(ImageContent),
    /// `{"type":"audio"}`
    #[serde(rename = "audio")]
    Audio(ImageContent),
    /// `{"type":"tool_use"}`: the model asks to call a tool (2025-11-25 and later).
    #[serde(rename = "tool_use")]
    ToolUse(ToolUseContent),
    /// `{"type":"tool_result"}`: the result of a tool the model called (2025-11-25 and later).
    #[serde(rename = "tool_result")]
    ToolResult(ToolResultContent),
}

/// The model's request to call a tool during sampling.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolUseContent {
    /// Identifies this call, for the matching `tool_result`.
    pub id: String,
    /// The tool's name.
    pub name: String,
    /// The arguments.
    pub input: JsonObject,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
}

/// The result of a tool the model called during sampling.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolResultContent {
    /// The `id` of the `tool_use` this answers.
    pub tool_use_id: String,
    /// The unstructured result.
    pub content: Vec<ContentBlock>,
    /// The structured result.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub structured_content: Option<Value>,
    /// True when the tool failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub is_error: Option<bool>,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
}

/// Sampling content that is either one block or a list of blocks.
#[derive(Debug, Clone, PartialEq)]
pub enum OneOrMany {
    /// A single block (the only form before 2025-11-25).
    One(Box<SamplingContent>),
    /// Several blocks.
    Many(Vec<SamplingContent>),
}

impl Serialize for OneOrMany {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            OneOrMany::One(block) => block.serialize(serializer),
            OneOrMany::Many(blocks) => blocks.serialize(serializer),
        }
    }
}

impl<'de> Deserialize<'de> for OneOrMany {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<OneOrMany, D::Error> {
        // The JSON type (object or array) decides the form; nothing is tried twice.
        struct OneOrManyVisitor;
        impl<'de> Visitor<'de> for OneOrManyVisitor {
            type Value = OneOrMany;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a content block or an array of content blocks")
            }
            fn visit_map<M: MapAccess<'de>>(self, map: M) -> Result<OneOrMany, M::Error> {
                SamplingContent::deserialize(de::value::MapAccessDeserializer::new(map))
                    .map(|block| OneOrMany::One(Box::new(block)))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<OneOrMany, A::Error> {
                Vec::<SamplingContent>::deserialize(de::value::SeqAccessDeserializer::new(seq)).map(OneOrMany::Many)
            }
        }
        deserializer.deserialize_any(OneOrManyVisitor)
    }
}

/// One message of a sampling conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SamplingMessage {
    /// Who speaks.
    pub role: Role,
    /// What is said.
    pub content: OneOrMany,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
}

/// The server's model preferences for sampling.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelPreferences {
    /// Model name hints, in order of preference.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hints: Option<Vec<ModelHint>>,
    /// How much to favour cheap models, 0 to 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_priority: Option<f64>,
    /// How much to favour fast models, 0 to 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub speed_priority: Option<f64>,
    /// How much to favour capable models, 0 to 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub intelligence_priority: Option<f64>,
}

/// A model name hint.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ModelHint {
    /// A full or partial model name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

/// Params of `sampling/createMessage`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CreateMessageParams {
    /// The conversation.
    pub messages: Vec<SamplingMessage>,
    /// Model preferences.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_preferences: Option<ModelPreferences>,
    /// A system prompt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_prompt: Option<String>,
    /// `"none"`, `"thisServer"` or `"allServers"` (the last two are soft-deprecated).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub include_context: Option<String>,
    /// Sampling temperature.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    /// The most tokens to generate.
    pub max_tokens: u64,
    /// Stop sequences.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_sequences: Option<Vec<String>>,
    /// Provider-specific metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<JsonObject>,
    /// Tools the model may call (2025-11-25 and later; needs `sampling.tools`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<Vec<Tool>>,
    /// How the model should use the tools.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_choice: Option<JsonObject>,
    /// Asks the client to run the request as a task (2025-11-25).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task: Option<JsonObject>,
    /// Request metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Box<RequestMeta>>,
}

impl CreateMessageParams {
    /// Asks for a completion of one user message of plain text, at most `max_tokens` long.
    pub fn user_text(text: impl Into<String>, max_tokens: u64) -> CreateMessageParams {
        CreateMessageParams {
            messages: vec![SamplingMessage {
                role: Role::User,
                content: OneOrMany::One(Box::new(SamplingContent::Text(TextContent {
                    text: text.into(),
                    annotations: None,
                    meta: None,
                }))),
                meta: None,
            }],
            max_tokens,
            model_preferences: None,
            system_prompt: None,
            include_context: None,
            temperature: None,
            stop_sequences: None,
            metadata: None,
            tools: None,
            tool_choice: None,
            task: None,
            meta: None,
        }
    }
}

impl CreateMessageResult {
    /// The text blocks of the answer, joined with newlines; other blocks are skipped.
    pub fn text(&self) -> String {
        let blocks: &[SamplingContent] = match &self.content {
            OneOrMany::One(block) => std::slice::from_ref(&**block),
            OneOrMany::Many(blocks) => blocks,
        };
        let texts: Vec<&str> = blocks
            .iter()
            .filter_map(|block| match block {
                SamplingContent::Text(text) => Some(text.text.as_str()),
                _ => None,
            })
            .collect();
        texts.join("\n")
    }
}

/// Result of `sampling/createMessage`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CreateMessageResult {
    /// Who speaks (the assistant).
    pub role: Role,
    /// What the model said.
    pub content: OneOrMany,
    /// The model that answered.
    pub model: String,
    /// Why generation stopped: `endTurn`, `stopSequence`, `maxTokens`, `toolUse`, or another.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_reason: Option<String>,
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
}

/// Params of `elicitation/create`, in form or URL mode.
///
/// One struct serves both modes so that decoding never has to guess: `mode` says which members
/// apply (`requestedSchema` for form mode; `url` and, on 2025-11-25, `elicitationId` for URL mode).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ElicitParams {
    /// `"form"` (the default when absent) or `"url"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<String>,
    /// What the user is asked, in words.
    pub message: String,
    /// The form's fields (form mode).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requested_schema: Option<ElicitSchema>,
    /// The page the user should open (URL mode).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// Identifies a URL elicitation (2025-11-25 only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub elicitation_id: Option<String>,
    /// Asks the client to run the request as a task (2025-11-25).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task: Option<JsonObject>,
    /// Request metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Box<RequestMeta>>,
}

/// The flat object schema of an elicitation form.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ElicitSchema {
    /// The JSON Schema dialect.
    #[serde(rename = "$schema", default, skip_serializing_if = "Option::is_none")]
    pub schema: Option<String>,
    /// Always `"object"`.
    #[serde(rename = "type")]
    pub kind: String,
    /// The fields.
    pub properties: BTreeMap<String, PrimitiveSchema>,
    /// The fields the user must fill in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub required: Option<Vec<String>>,
}

/// One field of an elicitation form: a string, number, integer, boolean, or a single- or
/// multi-select enum. The members present say which kind it is.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PrimitiveSchema {
    /// `"string"`, `"number"`, `"integer"`, `"boolean"` or `"array"` (multi-select).
    #[serde(rename = "type")]
    pub kind: String,
    /// A label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Help text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The pre-filled value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<Value>,
    /// Shortest string.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_length: Option<u64>,
    /// Longest string.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_length: Option<u64>,
    /// `email`, `uri`, `date` or `date-time`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format: Option<String>,
    /// Smallest number.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub minimum: Option<Number>,
    /// Largest number.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub maximum: Option<Number>,
    /// Allowed values of a single-select enum without titles.
    #[serde(rename = "enum", default, skip_serializing_if = "Option::is_none")]
    pub enum_values: Option<Vec<String>>,
    /// Display names of a legacy titled enum.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enum_names: Option<Vec<String>>,
    /// Allowed values of a single-select enum with titles.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub one_of: Option<Vec<TitledValue>>,
    /// The items of a multi-select enum.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub items: Option<Box<MultiSelectItems>>,
    /// Fewest selections of a multi-select enum.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_items: Option<u64>,
    /// Most selections of a multi-select enum.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_items: Option<u64>,
}

/// An enum value with a display title.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TitledValue {
    /// The value.
    #[serde(rename = "const")]
    pub value: String,
    /// The display title.
    pub title: String,
}

/// The `items` of a multi-select enum.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MultiSelectItems {
    /// `"string"` for untitled items.
    #[serde(rename = "type", default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// Allowed values, untitled.
    #[serde(rename = "enum", default, skip_serializing_if = "Option::is_none")]
    pub enum_values: Option<Vec<String>>,
    /// Allowed values with titles.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub any_of: Option<Vec<TitledValue>>,
}

/// What the user did with an elicitation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ElicitAction {
    /// The user submitted the form or consented to open the URL.
    Accept,
    /// The user refused.
    Decline,
    /// The user dismissed the request.
    Cancel,
}

/// Result of `elicitation/create`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ElicitResult {
    /// What the user did.
    pub action: ElicitAction,
    /// The submitted values (form mode, on accept).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<JsonObject>,
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
}

/// A filesystem root the client exposes.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Root {
    /// A `file://` URI.
    pub uri: String,
    /// A display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
}

/// Result of `roots/list`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ListRootsResult {
    /// The roots.
    pub roots: Vec<Root>,
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
}

/// Params of `notifications/elicitation/complete` (2025-11-25): the URL elicitation whose
/// out-of-band flow finished.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ElicitationCompleteParams {
    /// The `elicitationId` of the `elicitation/create` request.
    pub elicitation_id: String,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
}
