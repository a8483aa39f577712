//! What a tool handler may return, and how each becomes a `CallToolResult`.

use std::fmt::Display;

use schemars::JsonSchema;
use serde::Serialize;
use wharf_protocol::{CallToolResult, ContentBlock};

use crate::error::RpcError;

/// A value a tool handler can return.
///
/// `Err` values of a `Result<T, E>` with `E: Display` become a result with `isError: true`,
/// which the model sees and can act on. Return `Result<T, RpcError>` to answer with a JSON-RPC
/// error instead.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be returned from a tool handler",
    note = "return a `String`, a `ContentBlock`, a `Vec<ContentBlock>`, `Json<T>`, a `CallToolResult`, or a `Result` of one of these"
)]
pub trait IntoToolResult {
    /// Converts the value.
    fn into_tool_result(self) -> Result<CallToolResult, RpcError>;
}

impl IntoToolResult for CallToolResult {
    fn into_tool_result(self) -> Result<CallToolResult, RpcError> {
        Ok(self)
    }
}

impl IntoToolResult for String {
    fn into_tool_result(self) -> Result<CallToolResult, RpcError> {
        Ok(CallToolResult::text(self))
    }
}

impl IntoToolResult for &'static str {
    fn into_tool_result(self) -> Result<CallToolResult, RpcError> {
        Ok(CallToolResult::text(self))
    }
}

impl IntoToolResult for ContentBlock {
    fn into_tool_result(self) -> Result<CallToolResult, RpcError> {
        Ok(CallToolResult { content: vec![self], ..CallToolResult::default() })
    }
}

impl IntoToolResult for Vec<ContentBlock> {
    fn into_tool_result(self) -> Result<CallToolResult, RpcError> {
        Ok(CallToolResult { content: self, ..CallToolResult::default() })
    }
}

impl IntoToolResult for () {
    fn into_tool_result(self) -> Result<CallToolResult, RpcError> {
        Ok(CallToolResult::default())
    }
}

/// Structured output: `T` is sent as `structuredContent`, with its JSON text mirrored in a text
/// block for clients that read only `content`. Declare the tool's `outputSchema` with
/// `ToolDef::output::<T>()`.
#[derive(Debug, Clone, Default)]
pub struct Json<T>(pub T);

impl<T: Serialize + JsonSchema> IntoToolResult for Json<T> {
    fn into_tool_result(self) -> Result<CallToolResult, RpcError> {
        let value = serde_json::to_value(&self.0)
            .map_err(|err| RpcError::internal(format!("the tool's output could not be serialized: {err}")))?;
        Ok(CallToolResult {
            content: vec![ContentBlock::text(value.to_string())],
            structured_content: Some(value),
            ..CallToolResult::default()
        })
    }
}

impl<T: IntoToolResult> IntoToolResult for Result<T, RpcError> {
    fn into_tool_result(self) -> Result<CallToolResult, RpcError> {
        self.and_then(IntoToolResult::into_tool_result)
    }
}

impl<T: IntoToolResult, E: Display> IntoToolResult for Result<T, E> {
    fn into_tool_result(self) -> Result<CallToolResult, RpcError> {
        match self {
            Ok(value) => value.into_tool_result(),
            Err(error) => Ok(CallToolResult::error(error.to_string())),
        }
    }
}
