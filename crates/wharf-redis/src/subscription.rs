//! The pub/sub channels of the deployment: publishing on one, and listening on one for as long
//! as someone takes what comes, on a connection of its own (a subscribed connection carries
//! nothing else), subscribed again after each failure.
//!
//! Pub/sub alone loses what is published while a subscription is down (a Redis failover, a
//! lost connection): a client's answer relayed to the instance awaiting it would be lost, and
//! its handler would wait out its deadline. So each message is also kept, for a minute, in a
//! Redis stream beside its channel (the channel's log, in its slot), and what is published is
//! only a wake-up: a listener reads the log from the last message it handed over, when woken
//! and each time it subscribes again, so that it misses nothing kept and hands nothing twice.
//!
//! On a Redis Cluster the channels are sharded (`SPUBLISH`, `SSUBSCRIBE`): a channel lives on
//! the shard holding its name's slot, so a message crosses no other node, where a classic
//! `PUBLISH` is copied to every node of the cluster. Each of the deployment's few channels
//! (relayed messages, task signals, each bus channel) is then on one shard; after a failover
//! its subscription is made again on the shard's new primary.

use std::time::Duration;

use futures_util::StreamExt;
use tokio::sync::mpsc;

use crate::connection::{ClusterSeeds, Redis, Subscriber, without_secrets};

/// How many messages wait for their taker; more are dropped.
pub(crate) const BUFFER: usize = 1024;
/// How long to wait before subscribing again after the subscription failed.
const RESUBSCRIBE_AFTER: Duration = Duration::from_millis(200);
/// How many of a channel's latest messages its log keeps (about), and for how long after the
/// last: enough for what a listener misses while it subscribes again.
const LOGGED_MESSAGES: usize = 1000;
const LOGGED_FOR: Duration = Duration::from_secs(60);

/// The key of `channel`'s log, and whether it lies in the channel's slot: not for a channel
/// whose name holds braces (a bus channel may), whose log then lies in a slot of its own.
fn log_key(channel: &str) -> (String, bool) {
    if channel.contains(['{', '}']) { (format!("{channel}:log"), false) } else { (format!("{{{channel}}}:log"), true) }
}

/// Publishes `payload` on `channel`, for every instance listening there: kept in the
/// channel's log, then a wake-up published (in one round trip where the log shares the
/// channel's slot). How many listeners were woken.
pub(crate) async fn publish(redis: &Redis, channel: String, payload: Vec<u8>) -> Result<usize, redis::RedisError> {
    let mut connection = redis.connection.clone();
    let command = if redis.connection.is_cluster() { "SPUBLISH" } else { "PUBLISH" };
    let (log, same_slot) = log_key(&channel);
    let mut logged = redis::pipe();
    logged.cmd("XADD").arg(&log).arg("MAXLEN").arg("~").arg(LOGGED_MESSAGES).arg("*").arg("m").arg(payload).ignore();
    logged.cmd("PEXPIRE").arg(&log).arg(LOGGED_FOR.as_millis() as u64).ignore();
    if same_slot {
        logged.cmd(command).arg(&channel).arg("");
        let (woken,): (usize,) = logged.query_async(&mut connection).await?;
        return Ok(woken);
    }
    logged.query_async::<()>(&mut connection).await?;
    redis::cmd(command).arg(channel).arg("").query_async::<usize>(&mut connection).await
}

/// A Redis stream entry's id, ordered as Redis orders them.
fn entry_id(id: &str) -> Option<(u64, u64)> {
    let (millis, sequence) = id.split_once('-')?;
    Some((millis.parse().ok()?, sequence.parse().ok()?))
}

/// Where a listener is in a channel's log: the last message it handed over.
struct LogReader<'a, T> {
    redis: &'a Redis,
    channel: &'a str,
    log: String,
    decode: fn(&[u8]) -> Option<T>,
    taker: &'a mpsc::Sender<T>,
    last: Option<String>,
    /// True when the log could not be read when it last should have been: it is read again
    /// a moment later, without waiting for the next message.
    behind: bool,
}

impl<'a, T> LogReader<'a, T> {
    fn new(redis: &'a Redis, channel: &'a str, decode: fn(&[u8]) -> Option<T>, taker: &'a mpsc::Sender<T>) -> Self {
        LogReader { redis, channel, log: log_key(channel).0, decode, taker, last: None, behind: false }
    }

    /// Once subscribed: what was kept since the last message handed over (or since the start,
    /// learnt before the first subscription); the start itself if it could not be learnt.
    async fn subscribed(&mut self) {
        if self.last.is_some() { self.catch_up().await } else { self.learn_start().await }
    }

    /// The point from which messages are new: the log's last entry.
    async fn learn_start(&mut self) {
        let mut connection = self.redis.connection.clone();
        let newest: redis::RedisResult<Vec<(String, Vec<Vec<u8>>)>> = redis::cmd("XREVRANGE")
            .arg(&self.log)
            .arg("+")
            .arg("-")
            .arg("COUNT")
            .arg(1)
            .query_async(&mut connection)
            .await;
        match newest {
            Ok(newest) => {
                self.last = Some(newest.into_iter().next().map_or_else(|| "0-0".to_owned(), |(id, _)| id));
                self.behind = false;
            }
            Err(err) => {
                tracing::warn!(channel = %self.channel, error = %without_secrets(&err), "a channel's log could not be read; reading it again soon");
                self.behind = true;
            }
        }
    }

    /// A message came on the channel: a wake-up (what is new is read from the log), or, from
    /// an instance that keeps no log, the message itself.
    async fn woken(&mut self, payload: &[u8]) {
        if payload.is_empty() {
            self.catch_up().await;
        } else {
            hand_over(self.channel, (self.decode)(payload), self.taker);
        }
    }

    /// Hands over, in order, what the log kept after the last message handed over.
    async fn catch_up(&mut self) {
        let Some(last) = self.last.clone() else {
            // The start was never learnt (Redis did not answer): from now on.
            return self.learn_start().await;
        };
        let mut connection = self.redis.connection.clone();
        let entries: redis::RedisResult<Vec<(String, Vec<Vec<u8>>)>> =
            redis::cmd("XRANGE").arg(&self.log).arg(format!("({last}")).arg("+").query_async(&mut connection).await;
        let entries = match entries {
            Ok(entries) => entries,
            Err(err) => {
                tracing::warn!(channel = %self.channel, error = %without_secrets(&err), "a channel's log could not be read; reading it again soon");
                self.behind = true;
                return;
            }
        };
        self.behind = false;
        let handed = entry_id(&last);
        for (id, fields) in entries {
            if entry_id(&id) <= handed {
                continue;
            }
            if let [_, payload] = fields.as_slice() {
                hand_over(self.channel, (self.decode)(payload), self.taker);
            }
            self.last = Some(id);
        }
    }
}

/// Hands what is published on `channel`, decoded, to `taker`, until `taker` is dropped.
pub(crate) async fn listen<T>(redis: Redis, channel: String, decode: fn(&[u8]) -> Option<T>, taker: mpsc::Sender<T>) {
    let mut reader = LogReader::new(&redis, &channel, decode, &taker);
    // Learnt before subscribing, not after: what is published while the subscription is being
    // made (a cluster connection takes a few round trips) is then read from the log once
    // subscribed, where it would otherwise be older than the start and lost.
    reader.learn_start().await;
    if let Subscriber::Cluster(seeds) = &redis.subscriber {
        return listen_sharded(seeds, &channel, &mut reader).await;
    }
    while !taker.is_closed() {
        let subscribed = async {
            let client = match &redis.subscriber {
                Subscriber::One(client) => client.clone(),
                // Asked at each subscription: after a failover, the primary in its place.
                Subscriber::Sentinel(primary) => primary.client().await?,
                Subscriber::Cluster(_) => unreachable!("listened to above"),
            };
            let mut pubsub = client.get_async_pubsub().await?;
            pubsub.subscribe(&channel).await?;
            Ok::<_, redis::RedisError>(pubsub)
        };
        let mut pubsub = match subscribed.await {
            Ok(pubsub) => pubsub,
            Err(err) => {
                tracing::warn!(%channel, error = %without_secrets(&err), "cannot subscribe; trying again");
                tokio::time::sleep(RESUBSCRIBE_AFTER).await;
                continue;
            }
        };
        reader.subscribed().await;
        let mut messages = pubsub.on_message();
        loop {
            let message = tokio::select! {
                message = messages.next() => message,
                () = tokio::time::sleep(RESUBSCRIBE_AFTER), if reader.behind => {
                    reader.catch_up().await;
                    continue;
                }
                () = taker.closed() => return,
            };
            let Some(message) = message else { break };
            reader.woken(message.get_payload_bytes()).await;
        }
        tracing::warn!(%channel, "the subscription ended; subscribing again");
        tokio::time::sleep(RESUBSCRIBE_AFTER).await;
    }
}

/// [`listen`] on a cluster: `SSUBSCRIBE` on a cluster connection of its own, made again (with
/// the cluster's map learnt again) when a node is lost or the channel's slot moves, so that it
/// follows the slot to its new primary after a failover.
async fn listen_sharded<T>(seeds: &ClusterSeeds, channel: &str, reader: &mut LogReader<'_, T>) {
    let taker = reader.taker;
    while !taker.is_closed() {
        let (pushed, mut messages) = mpsc::unbounded_channel();
        let subscribed = async {
            let mut connection = seeds.client(Some(pushed))?.get_async_connection().await?;
            connection.ssubscribe(channel).await?;
            Ok::<_, redis::RedisError>(connection)
        };
        let _connection = match subscribed.await {
            Ok(connection) => connection,
            Err(err) => {
                tracing::warn!(%channel, error = %without_secrets(&err), "cannot subscribe; trying again");
                tokio::time::sleep(RESUBSCRIBE_AFTER).await;
                continue;
            }
        };
        reader.subscribed().await;
        loop {
            let message = tokio::select! {
                message = messages.recv() => message,
                () = tokio::time::sleep(RESUBSCRIBE_AFTER), if reader.behind => {
                    reader.catch_up().await;
                    continue;
                }
                () = taker.closed() => return,
            };
            let Some(message) = message else { break };
            let payload = match (&message.kind, message.data.as_slice()) {
                (redis::PushKind::SMessage, [_, redis::Value::BulkString(payload)]) => payload,
                // A node lost, or the channel's slot moved to another (a failover, a resharding):
                // the subscription is made again from the cluster's map as it is now.
                (redis::PushKind::Disconnection | redis::PushKind::SUnsubscribe, _) => break,
                _ => continue,
            };
            reader.woken(payload).await;
        }
        tracing::warn!(%channel, "the subscription ended; subscribing again");
        tokio::time::sleep(RESUBSCRIBE_AFTER).await;
    }
}

/// Hands a message published on `channel`, decoded, to `taker`; one that did not decode (not
/// written by Wharf) or that nobody takes in time is dropped.
fn hand_over<T>(channel: &str, decoded: Option<T>, taker: &mpsc::Sender<T>) {
    match decoded {
        Some(decoded) => {
            if taker.try_send(decoded).is_err() {
                tracing::warn!(%channel, "dropped a message: nothing is taking them");
            }
        }
        None => tracing::debug!(%channel, "ignoring a message Wharf did not write"),
    }
}
