//! Attaching a mount: reaching its upstream, listing what it offers of every kind, and claiming
//! the names its components take on the gateway, at build or while the gateway serves.

use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex, PoisonError};

use wharf_client::Notifications;

use crate::claims::Claims;
use crate::component::{Component, Upstream};
use crate::connection::Connection;
use crate::error::{GatewayError, GatewayErrorKind};
use crate::kind::Kind;
use crate::link::Link;
use crate::mount::Mount;
use crate::names::UriPrefix;
use crate::parked::Parking;

/// A mount reached and listed, its names claimed: its components, to add to the server.
pub(crate) struct Attached {
    pub(crate) upstream: Upstream,
    /// Each with the name it takes on the gateway.
    pub(crate) components: Vec<(String, Component)>,
    pub(crate) held: HashMap<Kind, Vec<String>>,
    /// The upstream's notifications, heard from before its lists were read: a change made
    /// between the reading and the watcher's start is not missed.
    pub(crate) notifications: Option<Notifications>,
}

/// Reaches `mount`'s upstream and claims its names in `claims`; on failure nothing stays
/// claimed, and the error names the mount.
pub(crate) async fn attach(
    mount: &Mount,
    claims: &Arc<Mutex<Claims>>,
    parking: &Arc<Parking>,
    separator: &str,
) -> Result<Attached, GatewayError> {
    if mount.name.trim().is_empty() {
        return Err(GatewayError::new(GatewayErrorKind::Mount, "a mount needs a name"));
    }
    let namespace = mount.effective_namespace().to_owned();
    let prefix = UriPrefix::new(&namespace)
        .map_err(|why| GatewayError::new(GatewayErrorKind::Mount, format!("the mount `{}`: {why}", mount.name)))?;
    let connection = Arc::new(Connection::open(mount).await?);
    let link = Link { mount: mount.name.as_str().into(), connection, parking: parking.clone() };
    let policy = Arc::new(mount.policy.clone());
    let upstream =
        Upstream { link, namespace, separator: separator.to_owned(), prefix, policy, links_views: Arc::default() };
    let notifications = upstream.link.connection.current().map(|client| client.notifications());
    let listed = list_and_claim(&upstream, claims).await;
    match listed {
        Ok((components, held)) => Ok(Attached { upstream, components, held, notifications }),
        Err(err) => {
            claims.lock().unwrap_or_else(PoisonError::into_inner).release_all(&mount.name);
            upstream.link.connection.close().await;
            Err(err)
        }
    }
}

async fn list_and_claim(
    upstream: &Upstream,
    claims: &Mutex<Claims>,
) -> Result<(Vec<(String, Component)>, HashMap<Kind, Vec<String>>), GatewayError> {
    let mount = &upstream.link.mount;
    let mut components = Vec::new();
    let mut held = HashMap::new();
    for kind in Kind::ALL {
        let listed = upstream.list(kind).await.map_err(|err| {
            GatewayError::new(
                GatewayErrorKind::Upstream,
                format!("the mount `{mount}` did not list its {}s: {err}", kind.label()),
            )
        })?;
        let mut names = Vec::new();
        for (name, original, component) in listed {
            claims.lock().unwrap_or_else(PoisonError::into_inner).claim(kind, &name, mount, &original)?;
            components.push((name.clone(), component));
            names.push(name);
        }
        held.insert(kind, names);
    }
    let with_views = upstream.links_views.load(Ordering::Relaxed);
    claims.lock().unwrap_or_else(PoisonError::into_inner).set_views(mount, with_views);
    Ok((components, held))
}
