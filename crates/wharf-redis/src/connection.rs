//! [`Redis`]: the connection to one Redis, to the primary of a Redis that Sentinel manages, or
//! to a Redis Cluster, shared by every store of a server. It connects on first use and reconnects after a failure, and every command has a
//! deadline, so that while Redis is down requests fail at once (and are answered 503) instead
//! of waiting.

use std::sync::Arc;
use std::time::Duration;

use redis::aio::ConnectionManager;
use redis::cluster::{ClusterClient, ClusterClientBuilder};

use crate::commands::{Commands, LazyCluster};
use crate::deadlines::{self, CLUSTER_COMMAND_TIMEOUT, CLUSTER_RETRIES, CONNECT_TIMEOUT, RESPONSE_TIMEOUT};
use crate::keys::Keys;
use crate::lane::{Lane, Node};
use crate::sentinel::SentinelPrimary;

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
    /// The primary Sentinel names at each subscription.
    Sentinel(Arc<SentinelPrimary>),
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
    /// Wharf's own connection to one Redis over plain TCP, for a session's read on every
    /// request; `None` on a cluster, behind Sentinel, or over TLS or a Unix socket.
    pub(crate) lane: Option<Lane>,
    /// How many replicas a write that must survive a failover waits for, and how long.
    durability: Option<(u32, Duration)>,
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
        let connection = ConnectionManager::new_lazy_with_config(client.clone(), deadlines::one_node())
            .map_err(|err| RedisError::new(RedisErrorKind::Url, without_secrets(&err)))?;
        let lane = Node::of(client.get_connection_info()).map(Lane::new);
        Ok(Redis {
            subscriber: Subscriber::One(client),
            connection: Commands::One(connection),
            keys: Arc::new(Keys::new("wharf")),
            lane,
            durability: None,
        })
    }

    /// A connection to the primary of a Redis that Sentinel manages: `sentinels`
    /// (`redis://host:port`, with the sentinels' own user and password if they need them) are
    /// asked where the primary called `master` is, when it is first needed and again whenever
    /// it stops answering or answers as a replica, so that commands follow a failover to the
    /// replica promoted in its place. `master` is the name alone (`mymaster`), or a URL whose
    /// host is the name and which gives the data nodes' user, password and database
    /// (`redis://:PASSWORD@mymaster/0`). Keys start with `wharf`. Fails only for a URL that is
    /// not one, no sentinel at all, or when called outside a Tokio runtime.
    pub fn connect_sentinel<S: AsRef<str>>(sentinels: &[S], master: &str) -> Result<Redis, RedisError> {
        if tokio::runtime::Handle::try_current().is_err() {
            return Err(RedisError::new(RedisErrorKind::NoRuntime, "connect within the Tokio runtime that serves"));
        }
        if sentinels.is_empty() {
            return Err(RedisError::new(RedisErrorKind::Url, "Sentinel needs at least one sentinel to ask"));
        }
        let sentinels = connection_infos(sentinels)?;
        let (name, node) = if master.contains("://") {
            let info = redis::IntoConnectionInfo::into_connection_info(master)
                .map_err(|err| RedisError::new(RedisErrorKind::Url, without_secrets(&err)))?;
            match info.addr() {
                redis::ConnectionAddr::Tcp(name, _) => (name.clone(), info.redis_settings().clone()),
                _ => return Err(RedisError::new(RedisErrorKind::Url, "the primary is named by redis://NAME")),
            }
        } else {
            (master.to_owned(), redis::RedisConnectionInfo::default())
        };
        if name.is_empty() {
            return Err(RedisError::new(RedisErrorKind::Url, "the primary needs a name"));
        }
        let primary = Arc::new(SentinelPrimary::new(sentinels, name, node));
        Ok(Redis {
            subscriber: Subscriber::Sentinel(primary.clone()),
            connection: Commands::Sentinel(primary),
            keys: Arc::new(Keys::new("wharf")),
            lane: None,
            durability: None,
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
        let seeds = Arc::new(ClusterSeeds { nodes: connection_infos(seeds)? });
        let client = seeds.client(None).map_err(|err| RedisError::new(RedisErrorKind::Url, without_secrets(&err)))?;
        Ok(Redis {
            subscriber: Subscriber::Cluster(seeds),
            connection: Commands::Cluster(Arc::new(LazyCluster::new(client, runtime))),
            keys: Arc::new(Keys::new("wharf")),
            lane: None,
            durability: None,
        })
    }

    /// Puts every key under `prefix` instead of `wharf`: servers that share one Redis keep
    /// apart by their prefixes.
    pub fn prefix(mut self, prefix: &str) -> Redis {
        self.keys = Arc::new(Keys::new(prefix));
        self
    }

    /// Makes each write that must survive a failover (a session opened, a task's record, an
    /// idempotency key claimed or finished, a large result's pages) wait, before its request
    /// goes on, until `replicas` replicas of its node have it (`WAIT`), for at most `timeout`.
    /// Redis replicates asynchronously: without this, the last writes a primary acknowledged
    /// before it died can be missing from the replica elected in its place. A write that
    /// `timeout` passes on still stands on the primary, and the request goes on (a warning is
    /// logged). Off unless set; set it only where every primary has that many replicas, or
    /// each such write waits the whole `timeout`.
    pub fn wait_for_replicas(mut self, replicas: u32, timeout: Duration) -> Redis {
        self.durability = (replicas > 0).then_some((replicas, timeout));
        self
    }

    /// Waits, when [`Redis::wait_for_replicas`] asks, until the writes made so far to `key`'s
    /// node reach its replicas. The `WAIT` goes in one pipeline with a read of `key`, which
    /// takes it to that node (on a cluster) and its connection.
    pub(crate) async fn replicated(&self, key: &str) {
        let Some((replicas, timeout)) = self.durability else { return };
        let millis = millis(timeout);
        let mut connection = self.connection.clone();
        let waited: redis::RedisResult<(i64, i64)> = redis::pipe()
            .cmd("EXISTS")
            .arg(key)
            .cmd("WAIT")
            .arg(replicas)
            .arg(millis)
            .query_async(&mut connection)
            .await;
        match waited {
            Ok((_, acknowledged)) if acknowledged >= i64::from(replicas) => {}
            Ok((_, acknowledged)) => {
                tracing::warn!(acknowledged, replicas, "a write reached fewer replicas than asked in time")
            }
            Err(err) => tracing::warn!(error = %without_secrets(&err), "waiting for replicas failed"),
        }
    }
}

/// Each of `urls`, read as the client reads a Redis URL.
fn connection_infos<S: AsRef<str>>(urls: &[S]) -> Result<Vec<redis::ConnectionInfo>, RedisError> {
    urls.iter()
        .map(|url| redis::IntoConnectionInfo::into_connection_info(url.as_ref()))
        .collect::<redis::RedisResult<Vec<_>>>()
        .map_err(|err| RedisError::new(RedisErrorKind::Url, without_secrets(&err)))
}

/// `duration` in whole milliseconds, at least one: what `PEXPIRE` and `WAIT` take.
pub(crate) fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX).max(1)
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
