//! [`RedisBus`], a [`wharf_server::Bus`] on Redis pub/sub: channels under the deployment's
//! prefix, each subscription on a connection of its own.

use std::sync::Arc;

use tokio::sync::mpsc;
use wharf_server::{Bus, BusError, StoreFuture};

use crate::connection::{Redis, without_secrets};
use crate::subscription;

/// Messages between the instances sharing one Redis, on pub/sub channels named under the
/// prefix (`PREFIX:bus:NAME`). A message is delivered to those subscribed when it is sent,
/// and to no one else: Redis keeps nothing.
#[derive(Debug)]
pub struct RedisBus {
    redis: Redis,
}

impl Redis {
    /// A [`Bus`] on this Redis's pub/sub, for the instances of a deployment that share it.
    pub fn bus(&self) -> Arc<RedisBus> {
        Arc::new(RedisBus { redis: self.clone() })
    }
}

impl Bus for RedisBus {
    fn publish<'a>(&'a self, channel: &'a str, message: Vec<u8>) -> StoreFuture<'a, Result<usize, BusError>> {
        Box::pin(async move {
            subscription::publish(&self.redis, self.redis.keys.bus(channel), message)
                .await
                .map_err(|err| BusError::new(without_secrets(&err)))
        })
    }

    fn subscribe(&self, channel: &str) -> mpsc::Receiver<Vec<u8>> {
        let (sender, receiver) = mpsc::channel(subscription::BUFFER);
        tokio::spawn(subscription::listen(self.redis.clone(), self.redis.keys.bus(channel), whole, sender));
        receiver
    }
}

fn whole(payload: &[u8]) -> Option<Vec<u8>> {
    Some(payload.to_vec())
}
