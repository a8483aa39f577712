//! Where idempotency claims live: the [`IdempotencyStore`] trait, and
//! [`MemoryIdempotencyStore`], bounded and in memory, for one process (a store that instances
//! share, such as Redis, makes a key good across replicas).

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use std::sync::Arc;

use crate::task::store::StoreFuture;

/// What claiming a key found.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Claimed {
    /// The key was free, and is now this call's: it runs, and records its result with
    /// [`IdempotencyStore::finish`] (or gives the key back with [`IdempotencyStore::release`]
    /// when it failed before it could take effect).
    Run,
    /// A call with this key and these arguments finished: its result (JSON text), as recorded.
    Finished(Arc<str>),
    /// A call with this key and these arguments is running, its lease alive.
    Running,
    /// The key was used with other arguments.
    Conflict,
    /// The call that claimed the key stopped renewing its lease before it finished (its
    /// instance died): whether it took effect is unknown, and it is not run again.
    OutcomeUnknown,
}

/// Why a store could not answer.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum IdempotencyStoreError {
    /// The store holds as many keys as it may.
    Full,
    /// A result is larger than the store keeps.
    TooLarge,
    /// The store could not be reached or written; the text says why.
    Unavailable(String),
}

impl std::fmt::Display for IdempotencyStoreError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            IdempotencyStoreError::Full => f.write_str("the idempotency store is full"),
            IdempotencyStoreError::TooLarge => f.write_str("the result is larger than the idempotency store keeps"),
            IdempotencyStoreError::Unavailable(why) => write!(f, "the idempotency store is unavailable: {why}"),
        }
    }
}

/// Keeps idempotency keys: claimed before a call's handler runs, its result recorded when it
/// finishes, both forgotten once the key's time to live has passed.
pub trait IdempotencyStore: Send + Sync + 'static {
    /// Claims `key` for a call whose arguments have `fingerprint`: [`Claimed::Run`] when it was
    /// free (then held for `lease`, renewed with [`IdempotencyStore::renew`], and kept for
    /// `ttl`), else what holds it. One claim wins when several race.
    fn claim<'a>(
        &'a self,
        key: &'a str,
        fingerprint: &'a str,
        lease: Duration,
        ttl: Duration,
    ) -> StoreFuture<'a, Result<Claimed, IdempotencyStoreError>>;
    /// Keeps this instance's running claim of `key` alive for another `lease`.
    fn renew<'a>(&'a self, key: &'a str, lease: Duration) -> StoreFuture<'a, Result<(), IdempotencyStoreError>>;
    /// Records the result of the call that holds `key`; later claims get it until the key's
    /// time to live has passed.
    fn finish<'a>(&'a self, key: &'a str, result: Arc<str>) -> StoreFuture<'a, Result<(), IdempotencyStoreError>>;
    /// Gives `key` back: the call that held it failed before it could take effect.
    fn release<'a>(&'a self, key: &'a str) -> StoreFuture<'a, ()>;
}

/// One key's state in memory.
#[derive(Debug)]
struct Entry {
    fingerprint: String,
    expires: Instant,
    state: State,
}

#[derive(Debug)]
enum State {
    Running { lease_until: Instant },
    Finished(Arc<str>),
}

/// An [`IdempotencyStore`] in this process's memory: at most `max_keys` keys (expired ones
/// are dropped to make room), results of at most `max_result_bytes` each.
#[derive(Debug)]
pub struct MemoryIdempotencyStore {
    entries: Mutex<HashMap<String, Entry>>,
    max_keys: usize,
    max_result_bytes: usize,
}

impl Default for MemoryIdempotencyStore {
    /// 10,000 keys, results of up to 1 MiB.
    fn default() -> MemoryIdempotencyStore {
        MemoryIdempotencyStore::new(10_000, 1024 * 1024)
    }
}

impl MemoryIdempotencyStore {
    /// A store of at most `max_keys` keys and results of at most `max_result_bytes`.
    pub fn new(max_keys: usize, max_result_bytes: usize) -> MemoryIdempotencyStore {
        MemoryIdempotencyStore { entries: Mutex::default(), max_keys, max_result_bytes }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Entry>> {
        self.entries.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn claim_now(
        &self,
        key: &str,
        fingerprint: &str,
        lease: Duration,
        ttl: Duration,
    ) -> Result<Claimed, IdempotencyStoreError> {
        let now = Instant::now();
        let mut entries = self.lock();
        if let Some(entry) = entries.get(key).filter(|entry| entry.expires > now) {
            if entry.fingerprint != fingerprint {
                return Ok(Claimed::Conflict);
            }
            return Ok(match &entry.state {
                State::Finished(result) => Claimed::Finished(result.clone()),
                State::Running { lease_until } if *lease_until > now => Claimed::Running,
                State::Running { .. } => Claimed::OutcomeUnknown,
            });
        }
        if entries.len() >= self.max_keys {
            entries.retain(|_, entry| entry.expires > now);
            if entries.len() >= self.max_keys {
                return Err(IdempotencyStoreError::Full);
            }
        }
        let state = State::Running { lease_until: now + lease };
        entries.insert(key.to_owned(), Entry { fingerprint: fingerprint.to_owned(), expires: now + ttl, state });
        Ok(Claimed::Run)
    }
}

impl IdempotencyStore for MemoryIdempotencyStore {
    fn claim<'a>(
        &'a self,
        key: &'a str,
        fingerprint: &'a str,
        lease: Duration,
        ttl: Duration,
    ) -> StoreFuture<'a, Result<Claimed, IdempotencyStoreError>> {
        Box::pin(async move { self.claim_now(key, fingerprint, lease, ttl) })
    }

    fn renew<'a>(&'a self, key: &'a str, lease: Duration) -> StoreFuture<'a, Result<(), IdempotencyStoreError>> {
        Box::pin(async move {
            if let Some(Entry { state: State::Running { lease_until }, .. }) = self.lock().get_mut(key) {
                *lease_until = Instant::now() + lease;
            }
            Ok(())
        })
    }

    fn finish<'a>(&'a self, key: &'a str, result: Arc<str>) -> StoreFuture<'a, Result<(), IdempotencyStoreError>> {
        Box::pin(async move {
            if result.len() > self.max_result_bytes {
                // Kept as a call whose outcome is unknown rather than forgotten: it took effect.
                return Err(IdempotencyStoreError::TooLarge);
            }
            if let Some(entry) = self.lock().get_mut(key) {
                entry.state = State::Finished(result);
            }
            Ok(())
        })
    }

    fn release<'a>(&'a self, key: &'a str) -> StoreFuture<'a, ()> {
        Box::pin(async move {
            let mut entries = self.lock();
            if matches!(entries.get(key), Some(Entry { state: State::Running { .. }, .. })) {
                entries.remove(key);
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LEASE: Duration = Duration::from_secs(30);
    const TTL: Duration = Duration::from_secs(3600);

    #[tokio::test]
    async fn a_key_runs_once_and_then_answers_with_its_result() {
        let store = MemoryIdempotencyStore::default();
        assert_eq!(store.claim("k", "f", LEASE, TTL).await, Ok(Claimed::Run));
        assert_eq!(store.claim("k", "f", LEASE, TTL).await, Ok(Claimed::Running), "a duplicate while it runs");
        assert_eq!(store.claim("k", "other", LEASE, TTL).await, Ok(Claimed::Conflict), "other arguments");
        store.finish("k", Arc::from("{\"content\":[]}")).await.unwrap();
        assert_eq!(store.claim("k", "f", LEASE, TTL).await, Ok(Claimed::Finished(Arc::from("{\"content\":[]}"))));
        assert_eq!(store.claim("k", "other", LEASE, TTL).await, Ok(Claimed::Conflict));
    }

    #[tokio::test]
    async fn a_lost_claim_is_of_unknown_outcome_and_a_released_one_runs_again() {
        let store = MemoryIdempotencyStore::default();
        assert_eq!(store.claim("lost", "f", Duration::ZERO, TTL).await, Ok(Claimed::Run));
        assert_eq!(store.claim("lost", "f", LEASE, TTL).await, Ok(Claimed::OutcomeUnknown));
        assert_eq!(store.claim("renewed", "f", Duration::ZERO, TTL).await, Ok(Claimed::Run));
        store.renew("renewed", LEASE).await.unwrap();
        assert_eq!(store.claim("renewed", "f", LEASE, TTL).await, Ok(Claimed::Running));
        assert_eq!(store.claim("failed", "f", LEASE, TTL).await, Ok(Claimed::Run));
        store.release("failed").await;
        assert_eq!(store.claim("failed", "f", LEASE, TTL).await, Ok(Claimed::Run), "given back, it runs");
    }

    #[tokio::test]
    async fn keys_expire_and_the_store_is_bounded() {
        let store = MemoryIdempotencyStore::new(2, 8);
        assert_eq!(store.claim("a", "f", LEASE, Duration::ZERO).await, Ok(Claimed::Run));
        // Expired at once: the key is new again.
        assert_eq!(store.claim("a", "f", LEASE, TTL).await, Ok(Claimed::Run));
        assert_eq!(store.claim("b", "f", LEASE, TTL).await, Ok(Claimed::Run));
        assert_eq!(store.claim("c", "f", LEASE, TTL).await, Err(IdempotencyStoreError::Full));
        assert_eq!(store.finish("a", Arc::from("123456789")).await, Err(IdempotencyStoreError::TooLarge));
        assert_eq!(store.claim("a", "f", LEASE, TTL).await, Ok(Claimed::Running), "still held, not forgotten");
    }
}
