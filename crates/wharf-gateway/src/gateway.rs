//! [`Gateway`]: mounts upstreams and yields a [`Server`] whose tools, prompts and resources are
//! theirs under namespaces, kept current as the upstreams' lists change, so that every
//! transport, authentication, middleware and store of Wharf applies to the gateway unchanged.

use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use wharf_server::{Server, ServerBuilder};

use crate::claims::Claims;
use crate::component::Upstream;
use crate::connection::Connection;
use crate::error::{GatewayError, GatewayErrorKind};
use crate::health::Health;
use crate::kind::Kind;
use crate::link::Link;
use crate::mount::Mount;
use crate::names::uri_prefix;
use crate::parked::Parking;
use crate::subscribe::{Subscribed, Subscriptions};
use crate::task::StayACall;
use crate::watch;

/// How long an upstream request waits, parked, for the retry of a 2026-07-28 client that was
/// asked for input.
const PARKED_LIFETIME: Duration = Duration::from_secs(600);

/// Builds a gateway: `Gateway::new("name", "1.0.0").mount(...).build().await` gives a
/// [`Server`] to serve like any other.
#[derive(Debug)]
pub struct Gateway {
    builder: ServerBuilder,
    mounts: Vec<Mount>,
    separator: String,
}

impl Gateway {
    /// A gateway that names itself `name` and `version` to its clients.
    pub fn new(name: impl Into<String>, version: impl Into<String>) -> Gateway {
        Gateway::with_builder(Server::builder(name, version))
    }

    /// A gateway built on `builder`: its options, layers, state and own components come with
    /// it (a gateway may offer tools of its own beside the upstreams').
    pub fn with_builder(builder: ServerBuilder) -> Gateway {
        Gateway { builder, mounts: Vec::new(), separator: "_".to_owned() }
    }

    /// Adds an upstream.
    pub fn mount(mut self, mount: Mount) -> Gateway {
        self.mounts.push(mount);
        self
    }

    /// What joins a namespace and a name (`docs_search`). Default `_`.
    pub fn separator(mut self, separator: impl Into<String>) -> Gateway {
        self.separator = separator.into();
        self
    }

    /// Reaches every upstream, lists its tools, prompts, resources and resource templates, and
    /// builds the server. Fails
    /// naming the mount when one cannot be reached, and naming both sources when two offer the
    /// same name once namespaced.
    pub async fn build(self) -> Result<Server, GatewayError> {
        Ok(self.build_with_health().await?.0)
    }

    /// [`Gateway::build`], with the [`Health`] of the mounts for a health endpoint.
    pub async fn build_with_health(self) -> Result<(Server, Health), GatewayError> {
        let Gateway { mut builder, mounts, separator } = self;
        let claims = Arc::new(Mutex::new(Claims::default()));
        let parking = Parking::new(PARKED_LIFETIME);
        builder = builder.layer(StayACall { claims: claims.clone() });
        let mut mounted = Vec::new();
        for mount in &mounts {
            if mount.name.trim().is_empty() {
                return Err(GatewayError::new(GatewayErrorKind::Mount, "a mount needs a name"));
            }
            if mounted.iter().any(|(upstream, _): &(Upstream, _)| *upstream.link.mount == *mount.name) {
                return Err(GatewayError::new(
                    GatewayErrorKind::Mount,
                    format!("two mounts are named `{}`", mount.name),
                ));
            }
            let namespace = mount.effective_namespace().to_owned();
            let prefix = uri_prefix(&namespace).map_err(|why| {
                GatewayError::new(GatewayErrorKind::Mount, format!("the mount `{}`: {why}", mount.name))
            })?;
            let connection = Arc::new(Connection::open(mount).await?);
            let link = Link { mount: mount.name.as_str().into(), connection, parking: parking.clone() };
            let policy = Arc::new(mount.policy.clone());
            let upstream = Upstream { link, namespace, separator: separator.clone(), prefix: prefix.into(), policy };
            let mut held = HashMap::new();
            for kind in Kind::ALL {
                let listed = upstream.list(kind).await.map_err(|err| {
                    GatewayError::new(
                        GatewayErrorKind::Upstream,
                        format!("the mount `{}` did not list its {}s: {err}", mount.name, kind.label()),
                    )
                })?;
                let mut names = Vec::new();
                for (name, original, component) in listed {
                    claims.lock().unwrap_or_else(PoisonError::into_inner).claim(kind, &name, &mount.name, &original)?;
                    builder = component.add_to(builder);
                    names.push(name);
                }
                held.insert(kind, names);
            }
            mounted.push((upstream, held));
        }
        let mut subscribed = Vec::new();
        let mut listened = Vec::new();
        for (upstream, _) in &mounted {
            let (sender, receiver) = tokio::sync::watch::channel(BTreeSet::new());
            subscribed.push(Arc::new(Subscribed {
                mount: upstream.link.mount.clone(),
                prefix: upstream.prefix.clone(),
                connection: upstream.link.connection.clone(),
                listened: sender,
            }));
            listened.push(receiver);
        }
        builder = builder.layer(Subscriptions { mounts: subscribed, claims: claims.clone() });
        let server = builder.build().map_err(|err| GatewayError::new(GatewayErrorKind::Server, err.to_string()))?;
        let health = Health::new(mounted.iter().map(|(upstream, _)| upstream.link.connection.clone()).collect());
        for ((upstream, held), listened) in mounted.into_iter().zip(listened) {
            watch::spawn(server.clone(), upstream, claims.clone(), held, listened);
        }
        Ok((server, health))
    }
}
