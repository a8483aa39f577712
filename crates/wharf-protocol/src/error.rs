//! JSON-RPC error objects and the error codes MCP assigns meaning to.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A JSON-RPC error code.
///
/// The associated constants are the codes MCP uses; applications may use their own codes
/// outside the reserved range `-32768..=-32000`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ErrorCode(pub i64);

impl ErrorCode {
    /// The message was not valid JSON.
    pub const PARSE_ERROR: ErrorCode = ErrorCode(-32700);
    /// The message was JSON but not a valid JSON-RPC request.
    pub const INVALID_REQUEST: ErrorCode = ErrorCode(-32600);
    /// The method does not exist, or its capability was not advertised.
    pub const METHOD_NOT_FOUND: ErrorCode = ErrorCode(-32601);
    /// The parameters were invalid: unknown tool or prompt, bad cursor, missing arguments, ...
    pub const INVALID_PARAMS: ErrorCode = ErrorCode(-32602);
    /// The server failed while handling a valid request.
    pub const INTERNAL_ERROR: ErrorCode = ErrorCode(-32603);
    /// A resource was not found (2025 revisions only; 2026-07-28 uses `-32602`).
    pub const RESOURCE_NOT_FOUND: ErrorCode = ErrorCode(-32002);
    /// URL elicitation is required before the request can proceed (2025-11-25 only).
    pub const URL_ELICITATION_REQUIRED: ErrorCode = ErrorCode(-32042);
    /// An HTTP header disagrees with the body, or a required header is missing (2026-07-28).
    pub const HEADER_MISMATCH: ErrorCode = ErrorCode(-32020);
    /// The request needs a client capability the client did not declare (2026-07-28).
    pub const MISSING_REQUIRED_CLIENT_CAPABILITY: ErrorCode = ErrorCode(-32021);
    /// The requested protocol revision is not supported (2026-07-28).
    pub const UNSUPPORTED_PROTOCOL_VERSION: ErrorCode = ErrorCode(-32022);
}

/// The `error` member of a JSON-RPC error response.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ErrorObject {
    /// What kind of error this is.
    pub code: ErrorCode,
    /// One sentence for a human.
    pub message: String,
    /// Structured detail, such as `supported` versions or the missing capability.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
}

impl ErrorObject {
    /// Builds an error object without data.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> ErrorObject {
        ErrorObject { code, message: message.into(), data: None }
    }

    /// Adds structured data.
    pub fn with_data(mut self, data: Value) -> ErrorObject {
        self.data = Some(data);
        self
    }
}
