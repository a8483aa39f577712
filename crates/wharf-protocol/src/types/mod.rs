//! The MCP data types, grouped by feature. Every type is the union of all revisions' shapes;
//! fields that exist only in some revisions are optional, and the server leaves them out when
//! it speaks an older revision.

pub(crate) mod apps;
pub(crate) mod arguments;
pub(crate) mod capabilities;
pub(crate) mod client_features;
pub(crate) mod common;
pub(crate) mod completion;
pub(crate) mod content;
pub(crate) mod lifecycle;
pub(crate) mod logging;
pub(crate) mod logging_level;
pub(crate) mod meta_keys;
pub(crate) mod mrtr;
pub(crate) mod notifications;
pub(crate) mod params;
pub(crate) mod prompts;
pub(crate) mod request_meta;
pub(crate) mod resources;
pub(crate) mod result;
pub(crate) mod skills;
pub(crate) mod tasks;
pub(crate) mod tools;
pub(crate) mod unique;
