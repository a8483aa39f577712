//! Which server events a 2025 session hears of, as notifications: list changes for the
//! capabilities offered, updates of the resources it subscribed to, and its own tasks' status.
//! (2026-07-28 clients hear of events through `subscriptions/listen` instead.)

use wharf_protocol::{NotificationMeta, ProtocolVersion, ResourceUriParams, ServerCapabilities, ServerNotification};

use crate::events::{ListKind, ServerEvent};
use crate::session::Session;
use crate::wire::encode_notification;

/// The notification a server event becomes for one 2025 session, if the session is to hear of
/// it: list changes for the capabilities offered, and updates of resources it subscribed to.
pub fn event_notification(
    capabilities: &ServerCapabilities,
    session: &Session,
    event: &ServerEvent,
) -> Option<Vec<u8>> {
    if !session.is_initialized() {
        return None;
    }
    let notification = match event {
        // A change to what the session's principal cannot see did not change its view.
        ServerEvent::ListChanged { scopes, .. } if !scopes.allow(session.principal()) => return None,
        ServerEvent::ListChanged { kind: ListKind::Tools, .. } if capabilities.tools.is_some() => {
            ServerNotification::ToolListChanged(NotificationMeta::default())
        }
        ServerEvent::ListChanged { kind: ListKind::Prompts, .. } if capabilities.prompts.is_some() => {
            ServerNotification::PromptListChanged(NotificationMeta::default())
        }
        ServerEvent::ListChanged { kind: ListKind::Resources, .. } if capabilities.resources.is_some() => {
            ServerNotification::ResourceListChanged(NotificationMeta::default())
        }
        ServerEvent::ResourceUpdated { uri, .. } if session.is_subscribed(uri) => {
            ServerNotification::ResourceUpdated(ResourceUriParams { uri: uri.to_string(), meta: None })
        }
        // 2025-11-25 task status, to the session that made the task.
        ServerEvent::Task { record: task, .. }
            if task.principal.as_deref().and_then(|owner| owner.strip_prefix("session:")) == Some(session.id())
                && session
                    .negotiated()
                    .is_some_and(|negotiated| negotiated.version == ProtocolVersion::V2025_11_25) =>
        {
            ServerNotification::TaskStatus(task.session_task())
        }
        _ => return None,
    };
    Some(encode_notification(&notification))
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::time::Instant;

    use tokio::sync::mpsc;
    use wharf_protocol::{ClientCapabilities, Implementation};

    use super::*;
    use crate::principal::Principal;
    use crate::scopes::Scopes;
    use crate::session::{Negotiated, Transport};

    fn session_of(principal: Option<&Principal>) -> Arc<Session> {
        let (sender, _receiver) = mpsc::channel(1);
        let session = Session::new("s".to_owned(), Transport::Stream, sender);
        let negotiated = Negotiated {
            version: ProtocolVersion::V2025_11_25,
            at: Instant::now(),
            client_capabilities: Arc::new(ClientCapabilities::default()),
            client_info: Arc::new(Implementation::default()),
        };
        assert!(session.negotiate(negotiated, principal));
        session.mark_initialized();
        session
    }

    #[test]
    fn a_list_change_reaches_only_the_sessions_whose_view_it_changed() {
        let capabilities = ServerCapabilities { tools: Some(Default::default()), ..Default::default() };
        let admin = Principal::new("ann").with_scopes(["tools:admin"]);
        let reader = Principal::new("bo").with_scopes(["files:read"]);
        let scoped =
            ServerEvent::ListChanged { kind: ListKind::Tools, scopes: Scopes::new(["tools:admin"]), relayed: false };
        let open = ServerEvent::ListChanged { kind: ListKind::Tools, scopes: Scopes::default(), relayed: false };
        let heard = |principal: Option<&Principal>, event: &ServerEvent| {
            event_notification(&capabilities, &session_of(principal), event).is_some()
        };
        assert!(heard(Some(&admin), &scoped));
        assert!(!heard(Some(&reader), &scoped));
        assert!(!heard(None, &scoped));
        assert!(heard(Some(&reader), &open) && heard(None, &open));
    }
}
