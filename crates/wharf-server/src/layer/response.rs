//! How a request ended, as middleware sees and returns it: [`McpResponse`].

use serde::Serialize;

use crate::error::RpcError;
use crate::wire::respond;

use super::request::McpRequest;

/// How a request ended: its encoded result, or its error.
#[derive(Debug)]
pub struct McpResponse {
    outcome: Result<Vec<u8>, RpcError>,
    tool_error: bool,
}

impl McpResponse {
    /// An error answer: a layer that refuses the request.
    pub fn error(error: RpcError) -> McpResponse {
        McpResponse { outcome: Err(error), tool_error: false }
    }

    /// A result answer to `request`, written as given: a layer that answers the request itself
    /// (a 2026-07-28 result should carry `resultType`).
    pub fn result<R: Serialize>(request: &McpRequest<'_>, result: &R) -> McpResponse {
        McpResponse { outcome: Ok(respond(request.id(), result)), tool_error: false }
    }

    pub(crate) fn from_outcome(outcome: Result<Vec<u8>, RpcError>, tool_error: bool) -> McpResponse {
        McpResponse { outcome, tool_error }
    }

    pub(crate) fn into_outcome(self) -> Result<Vec<u8>, RpcError> {
        self.outcome
    }

    /// True when the answer is a JSON-RPC error.
    pub fn is_error(&self) -> bool {
        self.outcome.is_err()
    }

    /// The JSON-RPC error, if the answer is one.
    pub fn error_object(&self) -> Option<&RpcError> {
        self.outcome.as_ref().err()
    }

    /// True when a `tools/call` answered a result with `isError: true`: the tool failed, and
    /// the model is told so.
    pub fn is_tool_error(&self) -> bool {
        self.tool_error
    }

    /// The whole JSON-RPC response (`{"jsonrpc":"2.0","id":…,"result":…}`), when the answer is
    /// a result.
    pub fn response_bytes(&self) -> Option<&[u8]> {
        self.outcome.as_deref().ok()
    }
}
