//! [`RedisIdempotencyStore`], a [`wharf_server::IdempotencyStore`] every instance shares: one
//! hash per key (the arguments' fingerprint, then the recorded outcome) that expires with the
//! key's time to live, and beside it a lease that the instance running the call renews. Each
//! step is one script, so that two instances claiming one key at once see one winner.

use std::sync::Arc;
use std::time::Duration;

use wharf_server::{Claimed, IdempotencyStore, IdempotencyStoreError, StoreFuture};

use crate::connection::{Redis, without_secrets};

/// Claims a key: `run` when it was free (the record and the lease made), else what holds it.
const CLAIM: &str = r"
if redis.call('EXISTS', KEYS[1]) == 0 then
  redis.call('HSET', KEYS[1], 'f', ARGV[1])
  redis.call('PEXPIRE', KEYS[1], ARGV[3])
  redis.call('SET', KEYS[2], '1', 'PX', ARGV[2])
  return {'run'}
end
if redis.call('HGET', KEYS[1], 'f') ~= ARGV[1] then return {'conflict'} end
local recorded = redis.call('HGET', KEYS[1], 'r')
if recorded then return {'finished', recorded} end
if redis.call('EXISTS', KEYS[2]) == 1 then return {'running'} end
return {'unknown'}
";

/// Renews the lease of a key whose call has not finished.
const RENEW: &str = r"
if redis.call('EXISTS', KEYS[1]) == 1 and redis.call('HEXISTS', KEYS[1], 'r') == 0 then
  redis.call('SET', KEYS[2], '1', 'PX', ARGV[1])
end
return 1
";

/// Records the outcome of a key that still exists; its expiry stays as claimed.
const FINISH: &str = r"
if redis.call('EXISTS', KEYS[1]) == 1 then
  redis.call('HSET', KEYS[1], 'r', ARGV[1])
  redis.call('DEL', KEYS[2])
end
return 1
";

/// Forgets a key whose call has not finished.
const RELEASE: &str = r"
if redis.call('HEXISTS', KEYS[1], 'r') == 0 then
  redis.call('DEL', KEYS[1], KEYS[2])
end
return 1
";

/// Keeps idempotency keys in Redis for every instance of a server: a key claimed on one is
/// answered on all, and a key whose instance died stops being renewed and is reported as of
/// unknown outcome. Keys are not capped in number: each expires with its time to live.
#[derive(Debug, Clone)]
pub struct RedisIdempotencyStore {
    redis: Redis,
    max_result_bytes: usize,
}

impl Redis {
    /// The store of idempotency keys, for
    /// [`ServerBuilder::idempotency_store`](wharf_server::ServerBuilder::idempotency_store),
    /// keeping results of up to 1 MiB.
    pub fn idempotency_store(&self) -> Arc<RedisIdempotencyStore> {
        Arc::new(RedisIdempotencyStore { redis: self.clone(), max_result_bytes: 1024 * 1024 })
    }
}

impl RedisIdempotencyStore {
    /// Keeps results of up to `bytes` (larger ones are recorded as an error saying the call
    /// ran).
    pub fn with_max_result_bytes(&self, bytes: usize) -> Arc<RedisIdempotencyStore> {
        Arc::new(RedisIdempotencyStore { redis: self.redis.clone(), max_result_bytes: bytes })
    }

    /// Runs `script` on the key's record and lease with `args`.
    async fn run<T: redis::FromRedisValue>(
        &self,
        script: &str,
        key: &str,
        args: &[&str],
    ) -> Result<T, IdempotencyStoreError> {
        let mut command = redis::cmd("EVAL");
        command.arg(script).arg(2).arg(self.redis.keys.idempotency(key)).arg(self.redis.keys.idempotency_lease(key));
        for arg in args {
            command.arg(*arg);
        }
        let mut connection = self.redis.connection.clone();
        command
            .query_async(&mut connection)
            .await
            .map_err(|err| IdempotencyStoreError::Unavailable(without_secrets(&err)))
    }
}

fn millis(duration: Duration) -> String {
    duration.as_millis().max(1).to_string()
}

impl IdempotencyStore for RedisIdempotencyStore {
    fn claim<'a>(
        &'a self,
        key: &'a str,
        fingerprint: &'a str,
        lease: Duration,
        ttl: Duration,
    ) -> StoreFuture<'a, Result<Claimed, IdempotencyStoreError>> {
        Box::pin(async move {
            let answer: Vec<String> = self.run(CLAIM, key, &[fingerprint, &millis(lease), &millis(ttl)]).await?;
            let mut answer = answer.into_iter();
            match (answer.next().as_deref(), answer.next()) {
                (Some("run"), _) => {
                    // A claim a failover forgot would let another instance run the call again.
                    self.redis.replicated(&self.redis.keys.idempotency(key)).await;
                    Ok(Claimed::Run)
                }
                (Some("finished"), Some(recorded)) => Ok(Claimed::Finished(Arc::from(recorded))),
                (Some("running"), _) => Ok(Claimed::Running),
                (Some("conflict"), _) => Ok(Claimed::Conflict),
                (Some("unknown"), _) => Ok(Claimed::OutcomeUnknown),
                _ => Err(IdempotencyStoreError::Unavailable("an unexpected answer to a claim".to_owned())),
            }
        })
    }

    fn renew<'a>(&'a self, key: &'a str, lease: Duration) -> StoreFuture<'a, Result<(), IdempotencyStoreError>> {
        Box::pin(async move { self.run::<i64>(RENEW, key, &[&millis(lease)]).await.map(drop) })
    }

    fn finish<'a>(&'a self, key: &'a str, result: Arc<str>) -> StoreFuture<'a, Result<(), IdempotencyStoreError>> {
        Box::pin(async move {
            if result.len() > self.max_result_bytes {
                return Err(IdempotencyStoreError::TooLarge);
            }
            self.run::<i64>(FINISH, key, &[&result]).await?;
            self.redis.replicated(&self.redis.keys.idempotency(key)).await;
            Ok(())
        })
    }

    fn release<'a>(&'a self, key: &'a str) -> StoreFuture<'a, ()> {
        Box::pin(async move {
            if let Err(err) = self.run::<i64>(RELEASE, key, &[]).await {
                // The key stays claimed: its lease runs out, and it reads as of unknown outcome.
                tracing::warn!(error = %err, "an idempotency key could not be given back");
            }
        })
    }
}
