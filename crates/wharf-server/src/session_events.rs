//! Which server events a 2025 session hears of, as notifications: list changes for the
//! capabilities offered, updates of the resources it subscribed to, and its own tasks' status.
//! (2026-07-28 clients hear of events through `subscriptions/listen` instead.)

use wharf_protocol::{NotificationMeta, ProtocolVersion, ResourceUriParams, ServerCapabilities, ServerNotification};

use crate::events::{ListKind, ServerEvent};
use crate::session::Session;
use crate::wire::encode_notification;

/// The notification a server event becomes for one 2025 session, if the session is to hear of
/// it: list changes for the capabilities offered, and updates of resources it subscribed to.
pub(crate) fn event_notification(
    capabilities: &ServerCapabilities,
    session: &Session,
    event: &ServerEvent,
) -> Option<Vec<u8>> {
    if !session.is_initialized() {
        return None;
    }
    let notification = match event {
        ServerEvent::ListChanged(ListKind::Tools) if capabilities.tools.is_some() => {
            ServerNotification::ToolListChanged(NotificationMeta::default())
        }
        ServerEvent::ListChanged(ListKind::Prompts) if capabilities.prompts.is_some() => {
            ServerNotification::PromptListChanged(NotificationMeta::default())
        }
        ServerEvent::ListChanged(ListKind::Resources) if capabilities.resources.is_some() => {
            ServerNotification::ResourceListChanged(NotificationMeta::default())
        }
        ServerEvent::ResourceUpdated(uri) if session.is_subscribed(uri) => {
            ServerNotification::ResourceUpdated(ResourceUriParams { uri: uri.to_string(), meta: None })
        }
        // 2025-11-25 task status, to the session that made the task.
        ServerEvent::Task(task)
            if task.principal.as_deref().and_then(|owner| owner.strip_prefix("session:")) == Some(session.id())
                && session
                    .negotiated()
                    .is_some_and(|negotiated| negotiated.version == ProtocolVersion::V2025_11_25) =>
        {
            ServerNotification::TaskStatus(task.legacy_task())
        }
        _ => return None,
    };
    Some(encode_notification(&notification))
}
