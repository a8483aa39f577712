//! [`RedisProofReplayCache`], a [`wharf_auth::ProofReplayCache`] every replica shares: each
//! DPoP proof's key recorded with `SET NX PX`, so that a proof accepted by one replica is a
//! replay on all of them.

use std::time::Duration;

use wharf_auth::{ProofReplayCache, ReplayFuture};

use crate::connection::{Redis, without_secrets};

/// The DPoP proofs every replica has accepted, each kept for its time to live.
#[derive(Debug, Clone)]
pub struct RedisProofReplayCache {
    redis: Redis,
}

impl Redis {
    /// The replay cache of DPoP proofs, for
    /// [`ResourceServerBuilder::dpop_replay_cache`](wharf_auth::ResourceServerBuilder::dpop_replay_cache).
    pub fn dpop_replay_cache(&self) -> RedisProofReplayCache {
        RedisProofReplayCache { redis: self.clone() }
    }
}

impl ProofReplayCache for RedisProofReplayCache {
    fn first_use<'a>(&'a self, key: &'a str, ttl: Duration) -> ReplayFuture<'a> {
        Box::pin(async move {
            let mut connection = self.redis.connection.clone();
            let set: Option<String> = redis::cmd("SET")
                .arg(self.redis.keys.dpop_proof(key))
                .arg("1")
                .arg("NX")
                .arg("PX")
                .arg(ttl.as_millis().max(1).to_string())
                .query_async(&mut connection)
                .await
                .map_err(|err| without_secrets(&err))?;
            Ok(set.is_some())
        })
    }
}
