//! The pub/sub channels of the deployment: publishing on one, and listening on one for as long
//! as someone takes what comes, on a connection of its own (a subscribed connection carries
//! nothing else), subscribed again after each failure.

use std::time::Duration;

use futures_util::StreamExt;
use tokio::sync::mpsc;

use crate::connection::{Redis, without_secrets};

/// How many messages wait for their taker; more are dropped.
pub(crate) const BUFFER: usize = 1024;
/// How long to wait before subscribing again after the subscription failed.
const RESUBSCRIBE_AFTER: Duration = Duration::from_millis(200);

/// Publishes `payload` on `channel`, for every instance listening there; how many were.
pub(crate) async fn publish(redis: &Redis, channel: String, payload: Vec<u8>) -> Result<usize, redis::RedisError> {
    let mut connection = redis.connection.clone();
    redis::cmd("PUBLISH").arg(channel).arg(payload).query_async::<usize>(&mut connection).await
}

/// Hands what is published on `channel`, decoded, to `taker`, until `taker` is dropped.
pub(crate) async fn listen<T>(redis: Redis, channel: String, decode: fn(&[u8]) -> Option<T>, taker: mpsc::Sender<T>) {
    while !taker.is_closed() {
        let subscribed = async {
            let mut pubsub = redis.client.get_async_pubsub().await?;
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
            match decode(message.get_payload_bytes()) {
                Some(decoded) => {
                    if taker.try_send(decoded).is_err() {
                        tracing::warn!(%channel, "dropped a message: nothing is taking them");
                    }
                }
                None => tracing::debug!(%channel, "ignoring a message Wharf did not write"),
            }
        }
        tracing::warn!(%channel, "the subscription ended; subscribing again");
        tokio::time::sleep(RESUBSCRIBE_AFTER).await;
    }
}
