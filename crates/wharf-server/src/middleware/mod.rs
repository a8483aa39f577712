//! Built-in [`Layer`](crate::Layer)s: a rate limit, a timeout per tool, a concurrency limit per
//! tool, and an audit log.
//!
//! - [`rate_limit`]: token buckets per principal and/or tool;
//! - [`timeout`]: a time limit per tool, or a call turned into a task when it outlives it;
//! - [`concurrency`]: calls of a tool running at once;
//! - [`audit`]: who called what, with which outcome, through `tracing`.

mod audit;
mod concurrency;
mod rate_limit;
mod timeout;

pub use audit::Audit;
pub use concurrency::ConcurrencyLimit;
pub use rate_limit::{Quota, RateKey, RateLimit};
pub use timeout::Timeout;
