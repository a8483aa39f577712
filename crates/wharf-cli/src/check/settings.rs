//! What `wharf check` is told by its command line that the checks need: how to answer the
//! server's questions, and which tools to call.

use clap::ValueEnum;

/// How `wharf check` answers a server's elicitation requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum Elicitation {
    /// Decline (the default): as a user who says no.
    Decline,
    /// Accept, with values made from the requested schema.
    Accept,
    /// Dismiss.
    Cancel,
}

/// What the protocol checks need to know of the command line.
pub(crate) struct Settings {
    pub(crate) elicitation: Elicitation,
    pub(crate) sampling_reply: Option<String>,
    pub(crate) include_destructive: bool,
    /// Probe the constraints of destructive tools too.
    pub(crate) probe_destructive: bool,
    pub(crate) no_calls: bool,
    /// The longest a call may take when its progress keeps extending its deadline.
    pub(crate) max_timeout: std::time::Duration,
    /// Arguments to call tools with, by tool name (`--args-file`).
    pub(crate) sample_arguments: std::collections::BTreeMap<String, serde_json::Value>,
}
