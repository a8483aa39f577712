//! What a tool asks of its calls' idempotency ([`Idempotency`]): where the key comes from (the
//! client's `_meta`, or derived from who calls, the tool and its arguments), how long a key is
//! kept, how long the call that holds one vouches for it at a time, and how long a duplicate
//! waits for the result of a call still running.

use std::time::Duration;

use serde_json::{Value, json};

/// The tool `_meta` member that tells clients a tool honours idempotency keys, and how.
pub const IDEMPOTENCY_TOOL_META: &str = "wharf/idempotency";

/// Where a call's idempotency key comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum KeySource {
    /// Only the client's `_meta["wharf/idempotencyKey"]`: a call without one runs as any call.
    Client,
    /// The client's key when it sends one, else one derived from the principal, the tool and
    /// the canonical arguments: the same call by the same caller within the key's time to
    /// live takes effect once.
    ClientOrDerived,
}

/// How a tool's calls take effect once: the key is claimed before the handler runs, and a
/// later call with the same key is answered with the first one's result.
///
/// ```
/// use std::time::Duration;
/// use wharf_server::{Idempotency, ToolDef};
///
/// let tool = ToolDef::new("send_email", || async { "sent" })
///     .idempotency(Idempotency::client_key().ttl(Duration::from_secs(3600)));
/// # let _ = tool;
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Idempotency {
    pub(crate) keys: KeySource,
    pub(crate) ttl: Duration,
    pub(crate) lease: Duration,
    pub(crate) wait: Duration,
}

impl Idempotency {
    /// Keys that clients send in `_meta["wharf/idempotencyKey"]` (a string of 1 to 255
    /// characters); a call without one runs as any call.
    pub fn client_key() -> Idempotency {
        Idempotency {
            keys: KeySource::Client,
            ttl: Duration::from_secs(24 * 60 * 60),
            lease: Duration::from_secs(10),
            wait: Duration::from_secs(20),
        }
    }

    /// The client's key when it sends one; otherwise a key derived from the principal (every
    /// caller without one shares a single name), the tool and the canonical arguments, so that
    /// the same call repeated within the time to live takes effect once.
    pub fn derived() -> Idempotency {
        Idempotency { keys: KeySource::ClientOrDerived, ..Idempotency::client_key() }
    }

    /// How long a key and the result it answers with are kept (default: a day). After it, a
    /// call with the key runs again.
    pub fn ttl(mut self, ttl: Duration) -> Idempotency {
        self.ttl = ttl.max(Duration::from_secs(1));
        self
    }

    /// How long the instance running a call vouches for it at a time (default: 10 seconds;
    /// it renews every third of it). A call whose instance died is reported as of unknown
    /// outcome this long after its last renewal, at most.
    pub fn lease(mut self, lease: Duration) -> Idempotency {
        self.lease = lease.max(Duration::from_millis(300));
        self
    }

    /// How long a duplicate of a running call waits for its result before it is told to try
    /// again later (default: 20 seconds).
    pub fn wait(mut self, wait: Duration) -> Idempotency {
        self.wait = wait;
        self
    }

    /// What the tool's `_meta[IDEMPOTENCY_TOOL_META]` tells clients.
    pub(crate) fn advertised(&self) -> Value {
        let key = match self.keys {
            KeySource::Client => "client",
            KeySource::ClientOrDerived => "derived",
        };
        json!({ "key": key, "ttlSeconds": self.ttl.as_secs() })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_policy_is_advertised_with_its_key_source_and_ttl() {
        let policy = Idempotency::derived().ttl(Duration::from_secs(90));
        assert_eq!(policy.advertised(), json!({"key": "derived", "ttlSeconds": 90}));
        assert_eq!(Idempotency::client_key().advertised()["key"], "client");
        assert_eq!(Idempotency::client_key().ttl(Duration::ZERO).ttl, Duration::from_secs(1), "a key lives a second");
    }
}
