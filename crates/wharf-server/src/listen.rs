//! `subscriptions/listen` (2026-07-28): a long-lived request whose stream carries the list
//! changes and resource updates a client asked for, each tagged with the subscription's id.
//!
//! A listener is a request like any other, so both transports carry it unchanged: on stdio its
//! notifications go out on the connection and `notifications/cancelled` ends it; over HTTP they
//! form its SSE response, with keep-alive comments, and closing the response ends it.
//!
//! Every listener reads the server's events on its own. One that cannot keep up (its client
//! reads slowly, its buffer is full) only holds up itself; when it falls so far behind that
//! events it never saw are dropped, it tells its client that every list it watches, and every
//! resource it watches, may have changed, which is all a missed event would have said.

use serde_json::Value;
use tokio::sync::broadcast::error::RecvError;
use wharf_protocol::{
    AcknowledgedParams, JsonObject, ListenParams, ListenResult, META_SUBSCRIPTION_ID, NotificationMeta, RequestId,
    ResourceUriParams, ServerCapabilities, ServerNotification, SubscriptionFilter, TASKS_EXTENSION,
};

use crate::context::RequestContext;
use crate::events::{ListKind, ServerEvent};
use crate::principal::Principal;
use crate::scopes::Scopes;
use crate::server::Server;

/// Serves one listener until the server ends its subscriptions, or the client ends it.
pub(crate) async fn listen(
    server: &Server,
    context: &RequestContext,
    id: &RequestId,
    params: ListenParams,
) -> ListenResult {
    let honored = honored(&params.notifications, &server.capabilities());
    let tag = Tag { meta: subscription_meta(id), principal: context.principal().cloned() };
    // Subscribing before acknowledging: nothing that happens after the acknowledgement is
    // missed.
    let mut events = server.subscribe_events();
    let mut ending = server.subscriptions_ending();
    let acknowledged = AcknowledgedParams { notifications: honored.clone(), meta: Some(tag.meta.clone()) };
    context.notify(ServerNotification::SubscriptionsAcknowledged(acknowledged)).await;
    loop {
        tokio::select! {
            event = events.recv() => match event {
                Ok(event) => {
                    if let Some(notification) = notification_for(&honored, &event, &tag) {
                        context.notify(notification).await;
                    }
                }
                Err(RecvError::Lagged(missed)) => {
                    tracing::debug!(%id, missed, "a listener fell behind; telling it everything it watches changed");
                    for notification in everything_changed(&honored, &tag) {
                        context.notify(notification).await;
                    }
                }
                Err(RecvError::Closed) => break,
            },
            _ = ending.changed() => break,
            // The client closed its input (stdin): it listens no more.
            () = context.client_input_ended() => break,
        }
    }
    ListenResult { result_type: None, meta: Some(tag.meta) }
}

/// What every notification of one listener carries, and whose tasks it may hear of.
struct Tag {
    meta: JsonObject,
    principal: Option<Principal>,
}

/// `_meta` naming the subscription: the JSON-RPC id of the listen request.
fn subscription_meta(id: &RequestId) -> JsonObject {
    let mut meta = JsonObject::new();
    meta.insert(META_SUBSCRIPTION_ID.to_owned(), serde_json::to_value(id).unwrap_or(Value::Null));
    meta
}

/// The part of what the client asked for that this server can deliver.
fn honored(requested: &SubscriptionFilter, capabilities: &ServerCapabilities) -> SubscriptionFilter {
    let wanted = |flag: Option<bool>, offered: bool| (flag == Some(true) && offered).then_some(true);
    let resources = capabilities.resources.is_some();
    SubscriptionFilter {
        tools_list_changed: wanted(requested.tools_list_changed, capabilities.tools.is_some()),
        prompts_list_changed: wanted(requested.prompts_list_changed, capabilities.prompts.is_some()),
        resources_list_changed: wanted(requested.resources_list_changed, resources),
        resource_subscriptions: requested.resource_subscriptions.clone().filter(|uris| resources && !uris.is_empty()),
        task_ids: requested.task_ids.clone().filter(|ids| {
            let tasks =
                capabilities.extensions.as_ref().is_some_and(|extensions| extensions.contains_key(TASKS_EXTENSION));
            tasks && !ids.is_empty()
        }),
    }
}

/// True when an update of `updated` concerns a subscription to `watched`: the same resource,
/// or one below it.
fn concerns(watched: &str, updated: &str) -> bool {
    updated
        .strip_prefix(watched)
        .is_some_and(|rest| rest.is_empty() || watched.ends_with('/') || rest.starts_with(['/', '#', '?']))
}

fn notification_for(filter: &SubscriptionFilter, event: &ServerEvent, tag: &Tag) -> Option<ServerNotification> {
    let meta = || NotificationMeta { meta: Some(tag.meta.clone()) };
    match event {
        // A change to what the listener's principal cannot see did not change its view.
        ServerEvent::ListChanged { scopes, .. } if !scopes.allow(tag.principal.as_ref()) => None,
        ServerEvent::ListChanged { kind: ListKind::Tools, .. } if filter.tools_list_changed == Some(true) => {
            Some(ServerNotification::ToolListChanged(meta()))
        }
        ServerEvent::ListChanged { kind: ListKind::Prompts, .. } if filter.prompts_list_changed == Some(true) => {
            Some(ServerNotification::PromptListChanged(meta()))
        }
        ServerEvent::ListChanged { kind: ListKind::Resources, .. } if filter.resources_list_changed == Some(true) => {
            Some(ServerNotification::ResourceListChanged(meta()))
        }
        ServerEvent::ResourceUpdated { uri, .. }
            if filter.resource_subscriptions.iter().flatten().any(|watched| concerns(watched, uri)) =>
        {
            Some(ServerNotification::ResourceUpdated(ResourceUriParams {
                uri: uri.to_string(),
                meta: Some(tag.meta.clone()),
            }))
        }
        // Only tasks of the listener's own principal: a task id is no key to another's task.
        ServerEvent::Task { record: task, .. }
            if task.principal.as_deref() == tag.principal.as_ref().map(Principal::as_str)
                && filter.task_ids.iter().flatten().any(|id| *id == task.task_id) =>
        {
            let mut params = task.detailed();
            params.insert("_meta".to_owned(), Value::Object(tag.meta.clone()));
            Some(ServerNotification::Tasks(params))
        }
        _ => None,
    }
}

/// What a listener that missed events is told instead.
fn everything_changed(filter: &SubscriptionFilter, tag: &Tag) -> Vec<ServerNotification> {
    let mut notifications: Vec<ServerNotification> = [ListKind::Tools, ListKind::Prompts, ListKind::Resources]
        .into_iter()
        .filter_map(|kind| {
            notification_for(filter, &ServerEvent::ListChanged { kind, scopes: Scopes::default(), relayed: false }, tag)
        })
        .collect();
    for uri in filter.resource_subscriptions.iter().flatten() {
        notifications.push(ServerNotification::ResourceUpdated(ResourceUriParams {
            uri: uri.clone(),
            meta: Some(tag.meta.clone()),
        }));
    }
    notifications
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn updates_concern_the_watched_resource_and_those_below_it() {
        assert!(concerns("file:///a", "file:///a"));
        assert!(concerns("file:///a", "file:///a/b"));
        assert!(concerns("file:///a/", "file:///a/b"));
        assert!(concerns("db://t", "db://t#row"));
        assert!(!concerns("file:///a", "file:///ab"));
        assert!(!concerns("file:///a/b", "file:///a"));
    }

    #[test]
    fn listeners_hear_only_of_their_principals_tasks() {
        let filter = SubscriptionFilter { task_ids: Some(vec!["t1".to_owned()]), ..SubscriptionFilter::default() };
        let task = |owner: Option<&str>| ServerEvent::Task {
            relayed: false,
            record: std::sync::Arc::new(crate::task::record::TaskRecord {
                task_id: "t1".to_owned(),
                principal: owner.map(str::to_owned),
                ..Default::default()
            }),
        };
        let alice = Tag { meta: JsonObject::new(), principal: Some(Principal::new("alice")) };
        assert!(notification_for(&filter, &task(Some("alice")), &alice).is_some());
        assert!(notification_for(&filter, &task(Some("bob")), &alice).is_none());
        assert!(notification_for(&filter, &task(None), &alice).is_none());
        let other_id = SubscriptionFilter { task_ids: Some(vec!["t2".to_owned()]), ..SubscriptionFilter::default() };
        assert!(notification_for(&other_id, &task(Some("alice")), &alice).is_none());
    }

    #[test]
    fn listeners_hear_of_list_changes_only_to_what_they_may_see() {
        let filter = SubscriptionFilter { tools_list_changed: Some(true), ..SubscriptionFilter::default() };
        let scoped =
            ServerEvent::ListChanged { kind: ListKind::Tools, scopes: Scopes::new(["tools:admin"]), relayed: false };
        let tag = |principal: Option<Principal>| Tag { meta: JsonObject::new(), principal };
        let admin = tag(Some(Principal::new("ann").with_scopes(["tools:admin"])));
        assert!(notification_for(&filter, &scoped, &admin).is_some());
        assert!(notification_for(&filter, &scoped, &tag(Some(Principal::new("bo")))).is_none());
        assert!(notification_for(&filter, &scoped, &tag(None)).is_none());
        let open = ServerEvent::ListChanged { kind: ListKind::Tools, scopes: Scopes::default(), relayed: false };
        assert!(notification_for(&filter, &open, &tag(None)).is_some());
    }

    #[test]
    fn the_filter_keeps_only_what_the_server_offers() {
        let requested = SubscriptionFilter {
            tools_list_changed: Some(true),
            prompts_list_changed: Some(true),
            resources_list_changed: Some(false),
            resource_subscriptions: Some(vec!["file:///a".to_owned()]),
            ..SubscriptionFilter::default()
        };
        let capabilities = ServerCapabilities { tools: Some(Default::default()), ..ServerCapabilities::default() };
        let honored = honored(&requested, &capabilities);
        assert_eq!(honored.tools_list_changed, Some(true));
        assert_eq!(honored.prompts_list_changed, None);
        assert_eq!(honored.resources_list_changed, None);
        assert_eq!(honored.resource_subscriptions, None);
    }
}
