//! Params shared by several requests: those that carry only `_meta`, and those of the `*/list`
//! requests.

use serde::{Deserialize, Serialize};

use crate::types::request_meta::RequestMeta;

/// Params that carry nothing but `_meta`, as `ping` and `server/discover` do.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct EmptyParams {
    /// The request metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Box<RequestMeta>>,
}

/// Params of the `*/list` requests.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PaginatedParams {
    /// The opaque cursor from the previous page's `nextCursor`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cursor: Option<String>,
    /// The request metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Box<RequestMeta>>,
}
