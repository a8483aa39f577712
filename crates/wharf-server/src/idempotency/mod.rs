//! Tool calls that take effect once (issue 43, first floors): the key a call is known by
//! (`key.rs`: the client's, or derived from who calls, the tool and its canonical arguments;
//! the arguments' fingerprint that a reused key must match) and where claims live
//! (`store.rs`: [`IdempotencyStore`], and [`MemoryIdempotencyStore`] for one process). A key is
//! claimed before the handler runs; a finished call's result answers every later call with
//! the key; a claim whose lease ran out before it finished is reported as of unknown outcome,
//! never run again.

mod key;
mod store;

pub use key::{IDEMPOTENCY_KEY_META, arguments_fingerprint, derived_key};
pub use store::{Claimed, IdempotencyStore, IdempotencyStoreError, MemoryIdempotencyStore};
