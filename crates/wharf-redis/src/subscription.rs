//! The pub/sub channels of the deployment: publishing on one, and listening on one for as long
//! as someone takes what comes, on a connection of its own (a subscribed connection carries
//! nothing else), subscribed again after each failure.
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

/// Publishes `payload` on `channel`, for every instance listening there; how many were.
pub(crate) async fn publish(redis: &Redis, channel: String, payload: Vec<u8>) -> Result<usize, redis::RedisError> {
    let mut connection = redis.connection.clone();
    let command = if redis.connection.is_cluster() { "SPUBLISH" } else { "PUBLISH" };
    redis::cmd(command).arg(channel).arg(payload).query_async::<usize>(&mut connection).await
}

/// Hands what is published on `channel`, decoded, to `taker`, until `taker` is dropped.
pub(crate) async fn listen<T>(redis: Redis, channel: String, decode: fn(&[u8]) -> Option<T>, taker: mpsc::Sender<T>) {
    if let Subscriber::Cluster(seeds) = &redis.subscriber {
        return listen_sharded(seeds, &channel, decode, &taker).await;
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
        let mut messages = pubsub.on_message();
        loop {
            let message = tokio::select! {
                message = messages.next() => message,
                () = taker.closed() => return,
            };
            let Some(message) = message else { break };
            hand_over(&channel, decode(message.get_payload_bytes()), &taker);
        }
        tracing::warn!(%channel, "the subscription ended; subscribing again");
        tokio::time::sleep(RESUBSCRIBE_AFTER).await;
    }
}

/// [`listen`] on a cluster: `SSUBSCRIBE` on a cluster connection of its own, made again (with
/// the cluster's map learnt again) when a node is lost or the channel's slot moves, so that it
/// follows the slot to its new primary after a failover.
async fn listen_sharded<T>(
    seeds: &ClusterSeeds,
    channel: &str,
    decode: fn(&[u8]) -> Option<T>,
    taker: &mpsc::Sender<T>,
) {
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
        loop {
            let message = tokio::select! {
                message = messages.recv() => message,
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
            hand_over(channel, decode(payload), taker);
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
