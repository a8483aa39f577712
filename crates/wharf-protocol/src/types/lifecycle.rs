//! Connection lifecycle: `initialize` (2025 revisions) and `server/discover` (2026-07-28).

use serde::{Deserialize, Serialize};

use crate::types::capabilities::{ClientCapabilities, ServerCapabilities};
use crate::types::common::{CacheScope, Implementation, JsonObject, ResultType};
use crate::types::request_meta::RequestMeta;

/// Params of `initialize`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct InitializeParams {
    /// The newest revision the client supports.
    #[serde(rename = "protocolVersion")]
    pub protocol_version: String,
    /// What the client can do.
    pub capabilities: ClientCapabilities,
    /// The client's name and version.
    #[serde(rename = "clientInfo")]
    pub client_info: Implementation,
    /// Request metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Box<RequestMeta>>,
}

/// Result of `initialize`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct InitializeResult {
    /// The revision the session will use.
    #[serde(rename = "protocolVersion")]
    pub protocol_version: String,
    /// What the server can do.
    pub capabilities: ServerCapabilities,
    /// The server's name and version.
    #[serde(rename = "serverInfo")]
    pub server_info: Implementation,
    /// How to use the server, for the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
}

/// Result of `server/discover` (2026-07-28).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DiscoverResult {
    /// Every revision the server supports.
    #[serde(rename = "supportedVersions")]
    pub supported_versions: Vec<String>,
    /// What the server can do.
    pub capabilities: ServerCapabilities,
    /// How to use the server, for the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
    /// How long the result may be cached, in milliseconds.
    #[serde(rename = "ttlMs", default, skip_serializing_if = "Option::is_none")]
    pub ttl_ms: Option<u64>,
    /// Who may reuse a cached result.
    #[serde(rename = "cacheScope", default, skip_serializing_if = "Option::is_none")]
    pub cache_scope: Option<CacheScope>,
    /// Always `"complete"`.
    #[serde(rename = "resultType", default, skip_serializing_if = "Option::is_none")]
    pub result_type: Option<ResultType>,
    /// Result metadata, with the server's name and version under
    /// `io.modelcontextprotocol/serverInfo`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
}
