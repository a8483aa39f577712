//! Keeping the gateway's copy of an upstream's lists current: when the upstream says a list
//! changed (a notification in a 2025 session, a `subscriptions/listen` event on 2026-07-28),
//! that list is read again and the gateway's components for it replaced in one update, which
//! tells the gateway's own clients, in their era, that the list changed. A resource the
//! upstream says was updated is announced to the gateway's subscribers under its gateway URI.

use std::collections::{BTreeSet, HashMap};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use tokio::sync::watch;

use wharf_client::{Client, ErrorKind, Notifications};
use wharf_protocol::{Era, ServerNotification, SubscriptionFilter};
use wharf_server::Server;

use crate::claims::Claims;
use crate::component::{Upstream, add_each, remove};
use crate::connection::Connection;
use crate::kind::Kind;

/// The first pause before a mount that went down is started again, and the longest one (the
/// pause doubles with each failed start).
const FIRST_RESTART_PAUSE: Duration = Duration::from_millis(500);
const MAX_RESTART_PAUSE: Duration = Duration::from_secs(30);

/// How long an upstream must have stayed up for its next restart to start from the first
/// pause again.
const STAYED_UP: Duration = Duration::from_secs(60);

/// The longest wait before listening again after an upstream closed its listen stream.
const MAX_RELISTEN_DELAY: Duration = Duration::from_secs(30);

/// Watches `upstream` for list changes and resource updates while its client lives, keeping
/// `server` in step; `held` is what the upstream's components are named on the gateway now, by
/// kind, and `listened` names the resources to listen for on a 2026-07-28 upstream;
/// `notifications` are its client's, heard from since before `held` was listed.
pub(crate) fn spawn(
    server: Server,
    upstream: Upstream,
    claims: Arc<Mutex<Claims>>,
    held: HashMap<Kind, Vec<String>>,
    listened: watch::Receiver<BTreeSet<String>>,
    notifications: Option<Notifications>,
) -> Watcher {
    let stopped = Arc::new(AtomicBool::new(false));
    let watching = run(server, upstream, claims, held, listened, notifications, stopped.clone());
    let task = tokio::spawn(watching).abort_handle();
    Watcher { task, stopped }
}

/// A mount's watcher, to stop when the mount goes.
pub(crate) struct Watcher {
    task: tokio::task::AbortHandle,
    stopped: Arc<AtomicBool>,
}

impl Watcher {
    /// Stops it. Called with the claims locked (as the unmount that takes the mount's
    /// components away holds them), no refresh of it changes the server after: one that was
    /// under way when the task is aborted finds it stopped once it has the claims.
    pub(crate) fn stop(&self) {
        self.stopped.store(true, Ordering::SeqCst);
        self.task.abort();
    }
}

async fn run(
    server: Server,
    upstream: Upstream,
    claims: Arc<Mutex<Claims>>,
    mut held: HashMap<Kind, Vec<String>>,
    listened: watch::Receiver<BTreeSet<String>>,
    notifications: Option<Notifications>,
    stopped: Arc<AtomicBool>,
) {
    let watched = Watched { server: &server, upstream: &upstream, claims: &claims, stopped: &stopped };
    let connection = upstream.link.connection.clone();
    let mut pause = FIRST_RESTART_PAUSE;
    let (Some(mut client), Some(mut notifications)) = (connection.current(), notifications) else { return };
    loop {
        let started = Instant::now();
        follow(&watched, &client, notifications, &mut held, listened.clone()).await;
        // The connection ended: the program exited, or was killed.
        if started.elapsed() > STAYED_UP {
            pause = FIRST_RESTART_PAUSE;
        }
        connection.went_down("its connection ended: the program exited".to_owned(), pause);
        loop {
            tokio::time::sleep(pause).await;
            pause = (pause * 2).min(MAX_RESTART_PAUSE);
            match connection.restart().await {
                Ok(restarted) => {
                    // Heard from before the lists are read again, as at the start.
                    notifications = restarted.notifications();
                    resubscribe(&connection, &restarted).await;
                    refresh(&watched, &mut held, &Kind::ALL).await;
                    client = restarted;
                    break;
                }
                Err(err) => connection.went_down(err.to_string(), pause),
            }
        }
    }
}

/// Sends a 2025 upstream that started again the subscriptions it had.
async fn resubscribe(connection: &Connection, client: &Client) {
    if client.era() == Era::Stateless {
        return;
    }
    let uris: Vec<String> =
        connection.subscribed.lock().unwrap_or_else(PoisonError::into_inner).iter().cloned().collect();
    for uri in uris {
        if let Err(err) = client.subscribe(&uri).await {
            tracing::warn!(mount = connection.mount(), %err, %uri, "a restarted upstream refused a subscription");
        }
    }
}

/// What a watcher keeps in step, and whether it was stopped.
struct Watched<'a> {
    server: &'a Server,
    upstream: &'a Upstream,
    claims: &'a Mutex<Claims>,
    stopped: &'a AtomicBool,
}

/// Follows `client`'s `notifications` until its connection ends.
async fn follow(
    watched: &Watched<'_>,
    client: &Client,
    mut notifications: Notifications,
    held: &mut HashMap<Kind, Vec<String>>,
    listened: watch::Receiver<BTreeSet<String>>,
) {
    let (server, upstream) = (watched.server, watched.upstream);
    let listening = (client.era() == Era::Stateless).then(|| tokio::spawn(listen(client.clone(), listened)));
    while let Some(notification) = notifications.next().await {
        let kinds: &[Kind] = match notification {
            ServerNotification::ResourceUpdated(params) => {
                server.notify_resource_updated(&upstream.prefix.outward(&params.uri));
                continue;
            }
            ServerNotification::ToolListChanged(_) => &[Kind::Tool],
            ServerNotification::PromptListChanged(_) => &[Kind::Prompt],
            // Tools that name views follow them: listed again in the same update.
            ServerNotification::ResourceListChanged(_) if upstream.links_views.load(Ordering::Relaxed) => {
                &[Kind::Resource, Kind::Template, Kind::Tool]
            }
            ServerNotification::ResourceListChanged(_) => &[Kind::Resource, Kind::Template],
            // A listen stream starts (again): what changed before it was heard of nowhere.
            ServerNotification::SubscriptionsAcknowledged(_) => &Kind::ALL,
            _ => continue,
        };
        refresh(watched, held, kinds).await;
    }
    if let Some(listening) = listening {
        listening.abort();
    }
}

/// Listens for the upstream's list changes and updates of the resources in `listened`
/// (2026-07-28) until its client is closed, listening again when `listened` changes, and, after
/// a growing pause, whenever the upstream ends the stream.
async fn listen(client: Client, mut listened: watch::Receiver<BTreeSet<String>>) {
    let mut delay = Duration::from_millis(100);
    loop {
        let uris: Vec<String> = listened.borrow_and_update().iter().cloned().collect();
        let filter = SubscriptionFilter {
            tools_list_changed: Some(true),
            prompts_list_changed: Some(true),
            resources_list_changed: Some(true),
            resource_subscriptions: (!uris.is_empty()).then_some(uris),
            ..SubscriptionFilter::default()
        };
        tokio::select! {
            listened = client.listen(filter) => match listened {
                Err(err) if err.kind() == ErrorKind::Closed => return,
                Err(err) => tracing::debug!(%err, "an upstream's listen stream failed; listening again"),
                Ok(()) => delay = Duration::from_millis(100),
            },
            // A new subscription: the stream is listened to again with it at once.
            Ok(()) = listened.changed() => continue,
        }
        tokio::time::sleep(delay).await;
        delay = (delay * 2).min(MAX_RELISTEN_DELAY);
    }
}

/// Reads the upstream's lists of `kinds` again and replaces the gateway's components for them
/// in one update. A name another mount holds is left out (and logged): the first mount to offer
/// it keeps it. A list that cannot be read is left as it was.
async fn refresh(watched: &Watched<'_>, held: &mut HashMap<Kind, Vec<String>>, kinds: &[Kind]) {
    let Watched { server, upstream, claims, stopped } = *watched;
    let mut lists = Vec::new();
    for &kind in kinds {
        match upstream.list(kind).await {
            Ok(listed) => lists.push((kind, listed)),
            Err(err) => {
                tracing::warn!(mount = %upstream.link.mount, %err, kind = kind.label(), "an upstream's changed list could not be read");
            }
        }
    }
    let mut old = Vec::new();
    let mut components = Vec::new();
    // The claims stay locked through the server's update, as an unmount holds them through its
    // own: a mount taken away meanwhile is never given its components back.
    let mut claims = claims.lock().unwrap_or_else(PoisonError::into_inner);
    if stopped.load(Ordering::SeqCst) {
        return;
    }
    {
        for (kind, listed) in lists {
            let released = held.remove(&kind).unwrap_or_default();
            for name in &released {
                claims.release(kind, name, &upstream.link.mount);
            }
            let mut kept = Vec::new();
            for (name, original, component) in listed {
                match claims.claim(kind, &name, &upstream.link.mount, &original) {
                    Ok(()) => {
                        kept.push(name.clone());
                        components.push((name, component));
                    }
                    Err(err) => tracing::warn!(%err, "an upstream's new component is left out"),
                }
            }
            old.push((kind, released));
            held.insert(kind, kept);
        }
        claims.set_views(&upstream.link.mount, upstream.links_views.load(Ordering::Relaxed));
    }
    let updated = server.update(|update| {
        for (kind, names) in &old {
            for name in names {
                remove(update, *kind, name);
            }
        }
        add_each(update, &upstream.link.mount, components)
    });
    drop(claims);
    if let Err(err) = updated {
        tracing::warn!(mount = %upstream.link.mount, %err, "the gateway refused an upstream's changed list");
    }
}
