//! [`Commands`]: where the stores' commands go, one Redis, the primary Sentinel names, or a
//! Redis Cluster, behind the client's own connection trait, and [`query_apart`] for a
//! pipeline whose keys lie in several hash slots (one pipeline reaches one node of a cluster).

use std::sync::Arc;
use std::time::Duration;

use redis::aio::{ConnectionLike, ConnectionManager};
use redis::cluster::ClusterClient;
use redis::cluster_async::ClusterConnection;
use redis::{Cmd, Pipeline, RedisFuture, RedisResult, ServerErrorKind, Value};
use tokio::sync::OnceCell;

use crate::sentinel::SentinelPrimary;

/// The connection the stores send their commands on: cheap to clone, shared by all.
#[derive(Clone)]
pub(crate) enum Commands {
    /// One Redis (or Valkey), on one multiplexed connection remade after a failure.
    One(ConnectionManager),
    /// The primary of a Redis that Sentinel manages, asked for again after it is lost.
    Sentinel(Arc<SentinelPrimary>),
    /// A Redis Cluster: a connection to each node, each command sent to the primary holding
    /// its key's slot, redirections (`MOVED`, `ASK`) followed and the slots learnt again after
    /// a failover.
    Cluster(Arc<LazyCluster>),
}

/// A cluster connection made on first use, and made again at the next use after an attempt
/// failed, so that a cluster down at start shows as requests refused until it answers. Its
/// work runs on the runtime it was made for, whichever runtime first uses it.
pub(crate) struct LazyCluster {
    client: ClusterClient,
    runtime: tokio::runtime::Handle,
    connection: OnceCell<ClusterConnection>,
}

impl LazyCluster {
    pub(crate) fn new(client: ClusterClient, runtime: tokio::runtime::Handle) -> LazyCluster {
        LazyCluster { client, runtime, connection: OnceCell::new() }
    }

    async fn connection(&self) -> RedisResult<ClusterConnection> {
        let connect = || async {
            let client = self.client.clone();
            match self.runtime.spawn(async move { client.get_async_connection().await }).await {
                Ok(connected) => connected,
                Err(_) => Err(redis::RedisError::from((redis::ErrorKind::Io, "the runtime that serves has stopped"))),
            }
        };
        self.connection.get_or_try_init(connect).await.cloned()
    }
}

impl ConnectionLike for Commands {
    fn req_packed_command<'a>(&'a mut self, cmd: &'a Cmd) -> RedisFuture<'a, Value> {
        match self {
            Commands::One(connection) => connection.req_packed_command(cmd),
            Commands::Sentinel(managed) => Box::pin(on_sentinel_primary(
                managed,
                move |mut primary| async move { primary.req_packed_command(cmd).await },
                |answered| answered.as_ref().is_err_and(|err| error_of(err, &REFUSED_BY_REPLICA)),
            )),
            Commands::Cluster(lazy) => Box::pin(async move { lazy.connection().await?.req_packed_command(cmd).await }),
        }
    }

    fn req_packed_commands<'a>(
        &'a mut self,
        pipeline: &'a Pipeline,
        offset: usize,
        count: usize,
    ) -> RedisFuture<'a, Vec<Value>> {
        match self {
            Commands::One(connection) => connection.req_packed_commands(pipeline, offset, count),
            Commands::Sentinel(managed) => Box::pin(on_sentinel_primary(
                managed,
                move |mut primary| async move { primary.req_packed_commands(pipeline, offset, count).await },
                |answered| answered_with(answered, &REFUSED_BY_REPLICA),
            )),
            Commands::Cluster(lazy) => Box::pin(async move {
                let mut connection = lazy.connection().await?;
                let mut pause = Duration::from_millis(50);
                for _ in 0..PIPELINE_REDIRECTIONS {
                    let answered = connection.req_packed_commands(pipeline, offset, count).await;
                    if !answered_with(&answered, &REDIRECTED) {
                        return answered;
                    }
                    // A pipeline's keys share one slot: redirected, none of it ran. A single
                    // command to that slot follows the redirection, and has the client learn
                    // the slots again, before the pipeline goes once more.
                    if let Some(key) = first_key(pipeline) {
                        let _ = redis::cmd("EXISTS").arg(key).query_async::<i64>(&mut connection).await;
                    }
                    tokio::time::sleep(pause).await;
                    pause = (pause * 2).min(Duration::from_secs(1));
                }
                connection.req_packed_commands(pipeline, offset, count).await
            }),
        }
    }

    fn get_db(&self) -> i64 {
        match self {
            Commands::One(connection) => connection.get_db(),
            Commands::Sentinel(managed) => managed.db(),
            Commands::Cluster(_) => 0,
        }
    }
}

impl Commands {
    /// True on a Redis Cluster.
    pub(crate) fn is_cluster(&self) -> bool {
        matches!(self, Commands::Cluster(_))
    }
}

/// Sends a command (by `send`) to the primary Sentinel names. When `refused_by_replica` says
/// its answer came from a replica (a failover demoted the primary: the command was not run),
/// it goes once more to the primary the sentinels name in its place; when the primary did not
/// answer, the next command asks the sentinels again.
async fn on_sentinel_primary<T, Sent>(
    managed: &SentinelPrimary,
    send: impl Fn(ConnectionManager) -> Sent,
    refused_by_replica: impl Fn(&RedisResult<T>) -> bool,
) -> RedisResult<T>
where
    Sent: std::future::Future<Output = RedisResult<T>>,
{
    let primary = managed.primary().await?;
    let answered = send(primary.connection.clone()).await;
    if refused_by_replica(&answered) {
        managed.forget(&primary);
        return send(managed.primary().await?.connection).await;
    }
    if let Err(err) = &answered
        && (err.is_io_error() || err.is_connection_dropped() || err.is_connection_refusal() || err.is_timeout())
    {
        managed.forget(&primary);
    }
    answered
}

/// How often a pipeline a cluster redirected (its slot moved: a failover) is sent again,
/// the pauses between growing to a second: about as long as a failover takes.
const PIPELINE_REDIRECTIONS: usize = 7;

/// What a cluster's node answers a pipeline whose slot is elsewhere, or not served for a
/// moment (a failover under way). The client follows such answers to a single command
/// itself, but hands them back inside a pipeline's answers.
const REDIRECTED: [ServerErrorKind; 6] = [
    ServerErrorKind::Moved,
    ServerErrorKind::Ask,
    ServerErrorKind::TryAgain,
    ServerErrorKind::ClusterDown,
    ServerErrorKind::MasterDown,
    ServerErrorKind::ExecAbort,
];

/// What a replica answers a write (or a transaction it aborted for one): nothing was run.
const REFUSED_BY_REPLICA: [ServerErrorKind; 2] = [ServerErrorKind::ReadOnly, ServerErrorKind::ExecAbort];

/// True when `err` is a server's error of one of `kinds`.
fn error_of(err: &redis::RedisError, kinds: &[ServerErrorKind]) -> bool {
    matches!(err.kind(), redis::ErrorKind::Server(kind) if kinds.contains(&kind))
}

/// True when a pipeline's answer, or one of the answers inside it, is a server's error of one
/// of `kinds`.
fn answered_with(answered: &RedisResult<Vec<Value>>, kinds: &[ServerErrorKind]) -> bool {
    match answered {
        Ok(values) => values.iter().any(
            |value| matches!(value, Value::ServerError(err) if err.kind().is_some_and(|kind| kinds.contains(&kind))),
        ),
        Err(err) => error_of(err, kinds),
    }
}

/// The key of a pipeline's first command that names one.
fn first_key(pipeline: &Pipeline) -> Option<Vec<u8>> {
    pipeline.cmd_iter().find_map(|cmd| match cmd.args_iter().nth(1)? {
        redis::Arg::Simple(key) => Some(key.to_vec()),
        _ => None,
    })
}

/// Runs `parts`, pipelines each of whose keys share one hash slot but whose slots may differ,
/// and gives each part's answers (an array of one value per command: a part must not
/// `ignore()` any). On one Redis (Sentinel's primary too) they go as one pipeline (one round
/// trip, atomic when any part is); on a cluster each part is a pipeline of its own (atomic as it says), all sent at once,
/// so that the round trips overlap.
pub(crate) async fn query_apart(commands: &Commands, parts: &[Pipeline]) -> RedisResult<Vec<Value>> {
    match (commands, parts) {
        // One part needs no copy of its commands into another pipeline.
        (_, [only]) => {
            let mut connection = commands.clone();
            Ok(vec![Value::Array(only.query_async(&mut connection).await?)])
        }
        (Commands::One(_) | Commands::Sentinel(_), _) => {
            let mut whole = redis::pipe();
            if parts.iter().any(Pipeline::is_transaction) {
                whole.atomic();
            }
            for part in parts {
                for cmd in part.cmd_iter() {
                    whole.add_command(cmd.clone());
                }
            }
            let mut connection = commands.clone();
            let mut answers: Vec<Value> = whole.query_async(&mut connection).await?;
            let mut split = Vec::with_capacity(parts.len());
            for part in parts.iter().rev() {
                let tail = answers.split_off(answers.len().saturating_sub(part.len()));
                split.push(Value::Array(tail));
            }
            split.reverse();
            Ok(split)
        }
        (Commands::Cluster(_), _) => {
            let sent = parts.iter().map(|part| {
                let mut connection = commands.clone();
                async move { part.query_async::<Vec<Value>>(&mut connection).await.map(Value::Array) }
            });
            futures_util::future::try_join_all(sent).await
        }
    }
}
