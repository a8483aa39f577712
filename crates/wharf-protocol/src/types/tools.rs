//! Tools: their definitions, `tools/list`, and `tools/call` with its result.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::types::arguments::ToolArguments;
use crate::types::common::{Icon, JsonObject};
use crate::types::content::{ContentBlock, TextContent};
use crate::types::request_meta::RequestMeta;
use crate::types::result::result_struct;

/// A tool the client's model can call.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Tool {
    /// The name used in `tools/call`.
    pub name: String,
    /// A human-readable name (2025-06-18 and later).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What the tool does, for the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The JSON Schema of the arguments; always `"type": "object"`.
    pub input_schema: JsonObject,
    /// The JSON Schema of `structuredContent` (2025-06-18 and later).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<JsonObject>,
    /// Behaviour hints.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<ToolAnnotations>,
    /// Icons (2025-11-25 and later).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icons: Option<Vec<Icon>>,
    /// Task support (2025-11-25 only; an extension in 2026-07-28).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub execution: Option<ToolExecution>,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
}

/// Hints about a tool's behaviour. Clients must not rely on them for security.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolAnnotations {
    /// A human-readable name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The tool does not change its environment (default false).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_only_hint: Option<bool>,
    /// The tool may destroy data (default true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub destructive_hint: Option<bool>,
    /// Repeating a call has no further effect (default false).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idempotent_hint: Option<bool>,
    /// The tool reaches outside the server (default true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open_world_hint: Option<bool>,
}

/// How a tool may be run as a task (2025-11-25).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolExecution {
    /// `"forbidden"`, `"optional"` or `"required"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_support: Option<String>,
}

result_struct! {
    /// Result of `tools/list`.
    #[cacheable]
    pub struct ListToolsResult {
        /// This page of tools.
        pub tools: Vec<Tool>,
        /// The cursor of the next page, if any.
        #[serde(rename = "nextCursor", default, skip_serializing_if = "Option::is_none")]
        pub next_cursor: Option<String>,
    }
}

/// Params of `tools/call`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CallToolParams {
    /// The tool's name.
    pub name: String,
    /// The arguments, checked against the tool's `inputSchema`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<ToolArguments>,
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
    /// Asks to run the call as a task (2025-11-25).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task: Option<JsonObject>,
    /// Request metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Box<RequestMeta>>,
}

result_struct! {
    /// Result of `tools/call`.
    pub struct CallToolResult {
        /// The unstructured result.
        pub content: Vec<ContentBlock>,
        /// The structured result, conforming to the tool's `outputSchema`. An object before
        /// 2026-07-28; any JSON value on 2026-07-28.
        #[serde(rename = "structuredContent", default, skip_serializing_if = "Option::is_none")]
        pub structured_content: Option<Value>,
        /// True when the tool failed; the content then describes the failure for the model.
        #[serde(rename = "isError", default, skip_serializing_if = "Option::is_none")]
        pub is_error: Option<bool>,
    }
}

impl CallToolResult {
    /// Appends the result as compact JSON: the bytes [`encode_into`](crate::encode_into)
    /// writes, with the member names and plain text blocks written from literals instead of
    /// going through serde one piece at a time. A busy server answers `tools/call` more than
    /// anything else.
    pub fn encode_into(&self, out: &mut Vec<u8>) -> Result<(), serde_json::Error> {
        // Taken apart, so that a new member cannot be forgotten here.
        let CallToolResult { content, structured_content, is_error, result_type, meta } = self;
        out.extend_from_slice(b"{\"content\":[");
        for (index, block) in content.iter().enumerate() {
            if index > 0 {
                out.push(b',');
            }
            match block {
                ContentBlock::Text(TextContent { text, annotations: None, meta: None }) => {
                    out.extend_from_slice(b"{\"type\":\"text\",\"text\":");
                    crate::encode::write_str(out, text);
                    out.push(b'}');
                }
                other => crate::encode_into(out, other)?,
            }
        }
        out.push(b']');
        if let Some(structured) = structured_content {
            out.extend_from_slice(b",\"structuredContent\":");
            crate::encode_into(out, structured)?;
        }
        match is_error {
            Some(true) => out.extend_from_slice(b",\"isError\":true"),
            Some(false) => out.extend_from_slice(b",\"isError\":false"),
            None => {}
        }
        if let Some(result_type) = result_type {
            out.extend_from_slice(b",\"resultType\":");
            crate::encode_into(out, result_type)?;
        }
        if let Some(meta) = meta {
            out.extend_from_slice(b",\"_meta\":");
            crate::encode_into(out, meta)?;
        }
        out.push(b'}');
        Ok(())
    }

    /// The text of the first content block, when it is text.
    pub fn first_text(&self) -> Option<&str> {
        match self.content.first() {
            Some(ContentBlock::Text(text)) => Some(&text.text),
            _ => None,
        }
    }

    /// A successful result with one text block.
    pub fn text(text: impl Into<String>) -> CallToolResult {
        CallToolResult { content: vec![ContentBlock::text(text)], ..CallToolResult::default() }
    }

    /// The result of a tool with an MCP Apps view: `text` for the model (and for hosts that draw
    /// no views, which the extension requires to get meaningful text), `data` as
    /// `structuredContent` for the view to draw (not added to the model's context).
    pub fn for_view(text: impl Into<String>, data: Value) -> CallToolResult {
        CallToolResult { structured_content: Some(data), ..CallToolResult::text(text) }
    }

    /// A failed result (`isError: true`) with one text block explaining the failure.
    pub fn error(text: impl Into<String>) -> CallToolResult {
        CallToolResult { is_error: Some(true), ..CallToolResult::text(text) }
    }
}
