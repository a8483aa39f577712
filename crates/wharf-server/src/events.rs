//! What happens on the server that connections may need to hear of: list changes, resource
//! updates and task changes, broadcast to every connection and listener.

use std::sync::Arc;

use crate::scopes::Scopes;
use crate::task::record::TaskRecord;

/// Which list a change touched.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ListKind {
    Tools,
    Prompts,
    Resources,
}

/// Something that every connection may need to hear about.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum ServerEvent {
    /// A list changed because of a component requiring these scopes: only those who may see
    /// it hear of the change.
    ListChanged(ListKind, Scopes),
    /// A resource changed; `relayed` when it changed on another instance of the server, which
    /// told this one (so this one does not tell the others again).
    ResourceUpdated { uri: Arc<str>, relayed: bool },
    /// A task changed.
    Task(Arc<TaskRecord>),
}
