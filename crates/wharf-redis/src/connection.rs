//! [`Redis`]: the connection to one Redis, or to a Redis Cluster, shared by every store of a
//! server. It connects on first use and reconnects after a failure, and every command has a
//! deadline, so that while Redis is down requests fail at once (and are answered 503) instead
//! of waiting.

use std::sync::Arc;
use std::time::Duration;

use redis::aio::{ConnectionManager, ConnectionManagerConfig};
use redis::cluster::{ClusterClient, ClusterClientBuilder};

use crate::commands::{Commands, LazyCluster};
use crate::keys::Keys;

/// How long a command may wait for Redis's answer.
const RESPONSE_TIMEOUT: Duration = Duration::from_secs(2);
/// How long connecting may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(1);
/// How long a command on a cluster may take in all, its retries included: a failover (a
/// replica elected in the place of a primary that stopped answering) takes about the
/// cluster's node timeout, and a request waits through a short one rather than fail.
const CLUSTER_COMMAND_TIMEOUT: Duration = Duration::from_secs(4);
/// How often a command on a cluster is tried again after a redirection or a lost node.
const CLUSTER_RETRIES: u32 = 6;

/// What kind of thing went wrong with Redis.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum RedisErrorKind {
    /// The URL is not one the client understands.
    Url,
    /// [`Redis::connect`] was called outside a Tokio runtime.
    NoRuntime,
    /// Redis did not answer, or answered with an error.
    Unavailable,
    /// Redis holds something else than Wharf wrote under a key it reads.
    UnexpectedValue,
    /// The operating system's random source failed.
    NoRandomSource,
}

/// Why Redis could not be used: its kind, and a reason that never holds the URL's password.
#[derive(Debug)]
pub struct RedisError {
    kind: RedisErrorKind,
    reason: String,
}

impl RedisError {
    pub(crate) fn new(kind: RedisErrorKind, reason: impl Into<String>) -> RedisError {
        RedisError { kind, reason: reason.into() }
    }

    /// What kind of thing went wrong.
    pub fn kind(&self) -> RedisErrorKind {
        self.kind
    }
}

impl std::fmt::Display for RedisError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "cannot use Redis: {}", self.reason)
    }
}

impl std::error::Error for RedisError {}

/// Where subscriptions are made: each on a connection of its own, which a shared connection
/// cannot carry.
#[derive(Clone)]
pub(crate) enum Subscriber {
    One(redis::Client),
    /// The cluster's seed nodes, from which each subscription makes a client of its own (the
    /// messages of a cluster connection go to the sender it was built with).
    Cluster(Arc<ClusterSeeds>),
}

/// How to reach a cluster again.
pub(crate) struct ClusterSeeds {
    pub(crate) nodes: Vec<redis::ConnectionInfo>,
}

impl ClusterSeeds {
    /// A client of the cluster with Wharf's deadlines, its pushed messages (RESP3) sent to
    /// `pushed` when it is given.
    pub(crate) fn client(
        &self,
        pushed: Option<tokio::sync::mpsc::UnboundedSender<redis::PushInfo>>,
    ) -> redis::RedisResult<ClusterClient> {
        let mut builder = ClusterClientBuilder::new(self.nodes.clone())
            .connection_timeout(CONNECT_TIMEOUT)
            .response_timeout(RESPONSE_TIMEOUT)
            .overall_response_timeout(Some(CLUSTER_COMMAND_TIMEOUT))
            .retries(CLUSTER_RETRIES)
            .min_retry_wait(50)
            .max_retry_wait(1000);
        if let Some(pushed) = pushed {
            builder = builder.use_protocol(redis::ProtocolVersion::RESP3).push_sender(pushed);
        }
        builder.build()
    }
}

/// A connection to Redis (or Valkey), or to a Redis Cluster, and the prefix of every key
/// Wharf writes there.
#[derive(Clone)]
pub struct Redis {
    pub(crate) subscriber: Subscriber,
    pub(crate) connection: Commands,
    pub(crate) keys: Arc<Keys>,
}

impl std::fmt::Debug for Redis {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The URL may hold a password: it is not kept, and never shown.
        f.debug_struct("Redis").field("keys", &self.keys).finish_non_exhaustive()
    }
}

impl Redis {
    /// A connection to the Redis at `url` (`redis://host:port/db`, with a user and password
    /// if it needs them), made on first use; keys start with `wharf`. Fails only for a URL
    /// that is not one, or when called outside a Tokio runtime (the connection's work runs on
    /// it); an unreachable Redis shows as each request's 503 until it answers.
    pub fn connect(url: &str) -> Result<Redis, RedisError> {
        if tokio::runtime::Handle::try_current().is_err() {
            return Err(RedisError::new(RedisErrorKind::NoRuntime, "connect within the Tokio runtime that serves"));
        }
        let client =
            redis::Client::open(url).map_err(|err| RedisError::new(RedisErrorKind::Url, without_secrets(&err)))?;
        let config = ConnectionManagerConfig::new()
            .set_response_timeout(Some(RESPONSE_TIMEOUT))
            .set_connection_timeout(Some(CONNECT_TIMEOUT))
            .set_number_of_retries(1)
            .set_max_delay(Duration::from_millis(200));
        let connection = ConnectionManager::new_lazy_with_config(client.clone(), config)
            .map_err(|err| RedisError::new(RedisErrorKind::Url, without_secrets(&err)))?;
        Ok(Redis {
            subscriber: Subscriber::One(client),
            connection: Commands::One(connection),
            keys: Arc::new(Keys::new("wharf")),
        })
    }

    /// A connection to the Redis Cluster (or Valkey cluster) that `seeds` belong to
    /// (`redis://host:port`, each a node of it: one that answers is enough), made on first use;
    /// keys start with `wharf`. Every command goes to the primary that holds its key's slot;
    /// redirections are followed, and after a failover the slots are learnt again and the
    /// command retried, for up to four seconds. Pub/sub is sharded (`SPUBLISH`,
    /// `SSUBSCRIBE`): each channel lives on the shard that holds its name's slot. Fails only for
    /// a URL that is not one, no seed at all, or when called outside a Tokio runtime.
    pub fn connect_cluster<S: AsRef<str>>(seeds: &[S]) -> Result<Redis, RedisError> {
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return Err(RedisError::new(RedisErrorKind::NoRuntime, "connect within the Tokio runtime that serves"));
        };
        if seeds.is_empty() {
            return Err(RedisError::new(RedisErrorKind::Url, "a cluster needs at least one node to start from"));
        }
        let nodes = seeds
            .iter()
            .map(|seed| redis::IntoConnectionInfo::into_connection_info(seed.as_ref()))
            .collect::<redis::RedisResult<Vec<_>>>()
            .map_err(|err| RedisError::new(RedisErrorKind::Url, without_secrets(&err)))?;
        let seeds = Arc::new(ClusterSeeds { nodes });
        let client = seeds.client(None).map_err(|err| RedisError::new(RedisErrorKind::Url, without_secrets(&err)))?;
        Ok(Redis {
            subscriber: Subscriber::Cluster(seeds),
            connection: Commands::Cluster(Arc::new(LazyCluster::new(client, runtime))),
            keys: Arc::new(Keys::new("wharf")),
        })
    }

    /// Puts every key under `prefix` instead of `wharf`: servers that share one Redis keep
    /// apart by their prefixes.
    pub fn prefix(mut self, prefix: &str) -> Redis {
        self.keys = Arc::new(Keys::new(prefix));
        self
    }
}

/// Now, in Unix milliseconds.
pub(crate) fn unix_millis() -> u64 {
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    u64::try_from(now.as_millis()).unwrap_or(u64::MAX)
}

/// What the client says went wrong, by its kind only: its text may quote the URL, and with it
/// a password.
pub(crate) fn without_secrets(err: &redis::RedisError) -> String {
    format!("{:?} error", err.kind())
}
