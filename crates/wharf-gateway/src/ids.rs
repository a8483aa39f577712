//! Ids no one can guess or meet again, for parked requests and for the replicas of a gateway.

use std::collections::hash_map::RandomState;
use std::hash::BuildHasher;
use std::sync::atomic::{AtomicU64, Ordering};

/// Ids of 128 bits from the process's random hash keys, and a counter.
pub(crate) struct IdSource {
    keys: RandomState,
    salt: RandomState,
    count: AtomicU64,
}

impl IdSource {
    pub(crate) fn new() -> IdSource {
        IdSource { keys: RandomState::new(), salt: RandomState::new(), count: AtomicU64::new(0) }
    }

    pub(crate) fn next(&self) -> String {
        let count = self.count.fetch_add(1, Ordering::Relaxed);
        format!("{:016x}{:016x}", self.keys.hash_one(count), self.salt.hash_one(count))
    }
}
