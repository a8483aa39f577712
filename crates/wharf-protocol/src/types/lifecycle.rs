//! Connection lifecycle: `initialize` (2025 revisions) and `server/discover` (2026-07-28).

use serde::{Deserialize, Serialize};

use crate::types::capabilities::{ClientCapabilities, ServerCapabilities};
use crate::types::common::{Implementation, JsonObject};
use crate::types::request_meta::RequestMeta;
use crate::types::result::result_struct;

/// Params of `initialize`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InitializeParams {
    /// The newest revision the client supports.
    pub protocol_version: String,
    /// What the client can do.
    pub capabilities: ClientCapabilities,
    /// The client's name and version.
    pub client_info: Implementation,
    /// Request metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Box<RequestMeta>>,
}

/// Result of `initialize`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InitializeResult {
    /// The revision the session will use.
    pub protocol_version: String,
    /// What the server can do.
    pub capabilities: ServerCapabilities,
    /// The server's name and version.
    pub server_info: Implementation,
    /// How to use the server, for the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
}

result_struct! {
    /// Result of `server/discover` (2026-07-28). Its `resultType` is always `"complete"`, and its
    /// `_meta` carries the server's name and version under `io.modelcontextprotocol/serverInfo`.
    #[cacheable]
    pub struct DiscoverResult {
        /// Every revision the server supports.
        #[serde(rename = "supportedVersions")]
        pub supported_versions: Vec<String>,
        /// What the server can do.
        pub capabilities: ServerCapabilities,
        /// How to use the server, for the model.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub instructions: Option<String>,
    }
}
