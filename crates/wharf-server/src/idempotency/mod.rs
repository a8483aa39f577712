//! Tool calls that take effect once, from the bottom up: the key a call is known by (`key.rs`:
//! the client's, or derived from who calls, the tool and its canonical arguments; the
//! arguments' fingerprint that a reused key must match), what a tool asks (`policy.rs`:
//! [`Idempotency`]), what is kept of an outcome (`recorded.rs`), where claims live (`store.rs`:
//! [`IdempotencyStore`], and [`MemoryIdempotencyStore`] for one process) and a claim held while
//! its call runs (`held.rs`). A key is claimed before the handler runs (`dispatch/idempotent.rs`);
//! a finished call's outcome answers every later call with the key; a claim whose lease ran
//! out before it finished is reported as of unknown outcome, never run again.

mod held;
mod key;
mod policy;
mod recorded;
mod store;

pub(crate) use held::HeldKey;
pub use key::{IDEMPOTENCY_KEY_META, IDEMPOTENT_REPLAY_META, arguments_fingerprint, derived_key};
pub(crate) use policy::KeySource;
pub use policy::{IDEMPOTENCY_TOOL_META, Idempotency};
pub(crate) use recorded::{Recorded, RecordedTask};
pub use store::{Claimed, IdempotencyStore, IdempotencyStoreError, MemoryIdempotencyStore};
