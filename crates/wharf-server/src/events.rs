//! What happens on the server that connections may need to hear of: list changes, resource
//! updates and task changes, broadcast to every connection and listener.

use std::sync::Arc;

use crate::scopes::Scopes;
use crate::task::record::TaskRecord;

/// Which list a change touched.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ListKind {
    /// `tools/list`.
    Tools,
    /// `prompts/list`.
    Prompts,
    /// `resources/list` and `resources/templates/list`.
    Resources,
}

impl ListKind {
    /// The list's name, as instances tell each other of its changes.
    pub fn name(self) -> &'static str {
        match self {
            ListKind::Tools => "tools",
            ListKind::Prompts => "prompts",
            ListKind::Resources => "resources",
        }
    }

    /// The list of that name.
    pub fn named(name: &str) -> Option<ListKind> {
        [ListKind::Tools, ListKind::Prompts, ListKind::Resources].into_iter().find(|kind| kind.name() == name)
    }
}

/// Something that every connection may need to hear about.
#[derive(Debug, Clone, PartialEq)]
#[allow(missing_docs, reason = "each variant's text says what its fields are")]
pub enum ServerEvent {
    /// A list changed because of a component requiring these scopes: only those who may see
    /// it hear of the change. `relayed` when it changed on another instance of the server.
    ListChanged { kind: ListKind, scopes: Scopes, relayed: bool },
    /// A resource changed; `relayed` when it changed on another instance of the server, which
    /// told this one (so this one does not tell the others again).
    ResourceUpdated { uri: Arc<str>, relayed: bool },
    /// A component was enabled or disabled here (`key` names it in its list); sent before the
    /// list change it makes, so that the other instances of a fleet, told of both in order, do
    /// the same before they tell their clients.
    Toggled { kind: ListKind, key: Arc<str>, enabled: bool },
    /// A task changed; `relayed` when it runs on another instance of the server, which told
    /// this one.
    Task { record: Arc<TaskRecord>, relayed: bool },
}
