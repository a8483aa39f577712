//! [`Gateway`]: mounts upstreams and yields a [`Server`] whose tools, prompts and resources are
//! theirs under namespaces, kept current as the upstreams' lists change, so that every
//! transport, authentication, middleware and store of Wharf applies to the gateway unchanged.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use wharf_server::{Bus, Server, ServerBuilder};

use crate::attach::{Attached, attach};
use crate::claims::Claims;
use crate::component::add_each;
use crate::elsewhere::listen_to_replicas;
use crate::error::{GatewayError, GatewayErrorKind};
use crate::handle::{GatewayHandle, SessionEnds};
use crate::health::Health;
use crate::lazy::{LazyMounts, StartLazily};
use crate::mount::Mount;
use crate::parked::Parking;
use crate::subscribe::{SubscribedMounts, Subscriptions};
use crate::task::StayACall;
use crate::view_calls::ViewCalls;

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
    bus: Option<Arc<dyn Bus>>,
}

impl Gateway {
    /// A gateway that names itself `name` and `version` to its clients.
    pub fn new(name: impl Into<String>, version: impl Into<String>) -> Gateway {
        Gateway::with_builder(Server::builder(name, version))
    }

    /// A gateway built on `builder`: its options, layers, state and own components come with
    /// it (a gateway may offer tools of its own beside the upstreams').
    pub fn with_builder(builder: ServerBuilder) -> Gateway {
        Gateway { builder, mounts: Vec::new(), separator: "_".to_owned(), bus: None }
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

    /// The gateway runs as one of several replicas behind a load balancer, which share `bus`
    /// (and the key that seals `requestState`): a 2026-07-28 client's retry that lands on
    /// another replica than the one whose upstream request waits for its answers is carried
    /// there, and the rest of the request comes back through it.
    pub fn replicas(mut self, bus: Arc<dyn Bus>) -> Gateway {
        self.bus = Some(bus);
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
        let (server, handle) = self.build_with_handle().await?;
        Ok((server, handle.health()))
    }

    /// [`Gateway::build`], with a [`GatewayHandle`] that mounts and unmounts upstreams while the
    /// gateway serves, and reports their health.
    pub async fn build_with_handle(self) -> Result<(Server, GatewayHandle), GatewayError> {
        let Gateway { mut builder, mounts, separator, bus } = self;
        let claims = Arc::new(Mutex::new(Claims::default()));
        let parking = Parking::new(PARKED_LIFETIME, bus);
        listen_to_replicas(&parking);
        let (lazy_mounts, mounts): (Vec<Mount>, Vec<Mount>) = mounts.into_iter().partition(|mount| mount.lazy);
        let lazy = (!lazy_mounts.is_empty()).then(LazyMounts::new);
        if let Some(lazy) = &lazy {
            builder = builder.layer(StartLazily { mounts: lazy.clone() });
        }
        let subscribed = SubscribedMounts::default();
        let health = Health::default();
        builder = builder
            .layer(ViewCalls { claims: claims.clone() })
            .layer(StayACall { claims: claims.clone() })
            .layer(Subscriptions { mounts: subscribed.clone(), claims: claims.clone() })
            .layer(SessionEnds { health: health.clone() });
        let mut attached: Vec<Attached> = Vec::new();
        for mount in &mounts {
            if attached.iter().any(|done| *done.upstream.link.mount == *mount.name) {
                return Err(GatewayError::new(
                    GatewayErrorKind::Mount,
                    format!("two mounts are named `{}`", mount.name),
                ));
            }
            attached.push(attach(mount, &claims, &parking, &separator).await?);
        }
        let server = builder.build().map_err(|err| GatewayError::new(GatewayErrorKind::Server, err.to_string()))?;
        let handle = GatewayHandle::new(server.clone(), claims, parking, separator, subscribed, health, lazy_mounts);
        if let Some(lazy) = &lazy {
            lazy.set_handle(handle.downgrade());
        }
        for mut done in attached {
            // Added after the build, one by one: a component the server refuses is left out.
            let components = std::mem::take(&mut done.components);
            server
                .update(|update| add_each(update, &done.upstream.link.mount, components))
                .map_err(|err| GatewayError::new(GatewayErrorKind::Server, err.to_string()))?;
            handle.register(done);
        }
        Ok((server, handle))
    }
}
