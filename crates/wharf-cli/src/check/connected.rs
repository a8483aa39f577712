//! What `wharf check` learnt of a server once connected, for the checks made without the client
//! (the raw probes, the Server Card).

use wharf::protocol::Implementation;

/// What the server said of itself once connected.
#[derive(Debug, Default)]
pub(crate) struct Connected {
    /// True when it speaks 2026-07-28.
    pub(crate) stateless: bool,
    /// Its `serverInfo`.
    pub(crate) info: Option<Implementation>,
    /// The revisions it speaks: what `server/discover` lists, and those a session negotiated.
    pub(crate) revisions: Vec<String>,
}
