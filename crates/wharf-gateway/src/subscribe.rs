//! Resource subscriptions across the gateway: a client's subscription to a mounted resource
//! (`resources/subscribe` in a 2025 session, a `subscriptions/listen` filter on 2026-07-28)
//! subscribes the gateway to it upstream, once, in the upstream's own era; the upstream's
//! `resources/updated` reaches the gateway's subscribers under the URI they know (see
//! `watch.rs`).

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex, PoisonError, RwLock};

use tokio::sync::watch;
use wharf_protocol::{ClientRequest, Era};
use wharf_server::{Layer, LayerFuture, McpRequest, Next};

use crate::claims::Claims;
use crate::connection::Connection;
use crate::kind::Kind;
use crate::names::UriPrefix;

/// One mount's side of the subscriptions.
pub(crate) struct Subscribed {
    pub(crate) mount: Arc<str>,
    /// How its resource URIs are listed on the gateway.
    pub(crate) prefix: UriPrefix,
    pub(crate) connection: Arc<Connection>,
    /// The URIs a 2026-07-28 upstream is listened to for.
    pub(crate) listened: watch::Sender<BTreeSet<String>>,
}

/// The layer that subscribes upstream as the gateway's clients subscribe.
pub(crate) struct Subscriptions {
    pub(crate) mounts: SubscribedMounts,
    pub(crate) claims: Arc<Mutex<Claims>>,
}

/// The mounts as subscriptions see them, which change as mounts come and go.
pub(crate) type SubscribedMounts = Arc<RwLock<Vec<Arc<Subscribed>>>>;

impl Subscriptions {
    /// The mount a gateway URI belongs to, and the URI as its upstream knows it: the mount
    /// whose prefix it carries, or among mounts without one the mount that lists it, or the
    /// only such mount.
    fn upstream_of(&self, uri: &str) -> Option<(Arc<Subscribed>, String)> {
        let mounts = self.mounts.read().unwrap_or_else(PoisonError::into_inner);
        for mount in mounts.iter().filter(|mount| !mount.prefix.is_empty()) {
            if let Some(upstream_uri) = mount.prefix.inward(uri) {
                return Some((mount.clone(), upstream_uri));
            }
        }
        let unprefixed: Vec<&Arc<Subscribed>> = mounts.iter().filter(|mount| mount.prefix.is_empty()).collect();
        let holder =
            self.claims.lock().unwrap_or_else(PoisonError::into_inner).holder(Kind::Resource, uri).map(str::to_owned);
        let mount = match holder {
            Some(holder) => unprefixed.into_iter().find(|mount| *mount.mount == *holder)?,
            None if unprefixed.len() == 1 => unprefixed[0],
            None => return None,
        };
        Some((mount.clone(), uri.to_owned()))
    }

    /// Subscribes the gateway to `uri` upstream, unless it is already.
    async fn subscribe(&self, uri: &str) {
        let Some((mount, upstream_uri)) = self.upstream_of(uri) else { return };
        // A 2026-07-28 upstream is listened to for it, even while it is down.
        let Ok(client) = mount.connection.client() else {
            mount.listened.send_if_modified(|uris| uris.insert(upstream_uri));
            return;
        };
        if client.era() == Era::Stateless {
            mount.listened.send_if_modified(|uris| uris.insert(upstream_uri));
            return;
        }
        let subscribes = client.capabilities().resources.as_ref().and_then(|resources| resources.subscribe);
        if subscribes != Some(true) {
            return;
        }
        let sent = &mount.connection.subscribed;
        if !sent.lock().unwrap_or_else(PoisonError::into_inner).insert(upstream_uri.clone()) {
            return;
        }
        if let Err(err) = client.subscribe(&upstream_uri).await {
            tracing::warn!(mount = %mount.mount, %err, uri = %upstream_uri, "an upstream refused a subscription");
            sent.lock().unwrap_or_else(PoisonError::into_inner).remove(&upstream_uri);
        }
    }
}

impl Layer for Subscriptions {
    fn reads_transport_data(&self) -> bool {
        false
    }

    fn handle<'a>(&'a self, request: McpRequest<'a>, next: Next<'a>) -> LayerFuture<'a> {
        let uris: Vec<String> = match request.params() {
            ClientRequest::Subscribe(params) => vec![params.uri.clone()],
            ClientRequest::Listen(params) => params.notifications.resource_subscriptions.clone().unwrap_or_default(),
            _ => return next.run(request),
        };
        LayerFuture::new(async move {
            for uri in &uris {
                self.subscribe(uri).await;
            }
            next.run(request).await
        })
    }
}
