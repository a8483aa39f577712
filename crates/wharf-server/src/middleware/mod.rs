//! Built-in [`Layer`](crate::Layer)s: a rate limit, a timeout per tool, a concurrency limit per
//! tool, and an audit log.
//!
//! - [`RateLimit`]: token buckets per principal and/or tool;
//! - [`Timeout`]: a time limit per tool, or a call turned into a task when it outlives it;
//! - [`ConcurrencyLimit`]: calls of a tool running at once;
//! - [`Audit`]: who called what, with which outcome, through `tracing`.

mod audit;
mod concurrency;
mod rate_limit;
mod timeout;

pub use audit::Audit;
pub use concurrency::ConcurrencyLimit;
pub use rate_limit::{Quota, RateKey, RateLimit};
pub use timeout::Timeout;
