//! A rate limit on requests: token buckets keyed by principal, tool, both, or one for all.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use tokio::time::Instant;

use crate::error::RpcError;
use crate::layer::{Layer, LayerFuture, McpRequest, Next};

/// How many requests a bucket allows: a sustained rate, and a burst on top of it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Quota {
    /// How long one spent token takes to come back.
    refill: Duration,
    burst: u32,
}

impl Quota {
    /// `count` requests per second, in a burst of up to `count`.
    pub fn per_second(count: u32) -> Quota {
        Quota::per(Duration::from_secs(1), count)
    }

    /// `count` requests per minute, in a burst of up to `count`.
    pub fn per_minute(count: u32) -> Quota {
        Quota::per(Duration::from_secs(60), count)
    }

    /// `count` requests per `period`, in a burst of up to `count` (at least one). A token
    /// takes at least a microsecond to come back.
    pub fn per(period: Duration, count: u32) -> Quota {
        let count = count.max(1);
        Quota { refill: (period / count).max(MIN_REFILL), burst: count }
    }

    /// The same rate with a different burst (at least one): how many requests may come at
    /// once after a quiet spell.
    pub fn burst(mut self, burst: u32) -> Quota {
        self.burst = burst.max(1);
        self
    }

    /// The whole bucket's refill time.
    fn full_refill(&self) -> Duration {
        self.refill.checked_mul(self.burst).unwrap_or(Duration::MAX)
    }
}

/// The shortest refill time: a zero one would divide by zero.
const MIN_REFILL: Duration = Duration::from_micros(1);

/// The tool part of the key for calls of tools the server does not have: one bucket for all of
/// them, so that made-up names cannot fill the table.
const UNKNOWN_TOOL: &str = "";

/// What a bucket is kept for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum RateKey {
    /// One bucket per principal (or, for a request without one, per 2025 session; all
    /// anonymous stateless requests share one).
    Principal,
    /// One bucket per tool (or per method, for requests that are not tool calls), shared by
    /// every caller.
    Tool,
    /// One bucket per principal and tool: each caller's own rate for each tool.
    PrincipalAndTool,
    /// One bucket for the whole server.
    Global,
}

/// A rate limit on requests, as token buckets (a [`Layer`]).
///
/// By default it limits `tools/call`, one bucket per principal and tool (calls of tools the
/// server does not have share one). A request over its quota is answered at once with
/// [`RpcError::rate_limited`] (`-32000`, `retryAfterSeconds` in `data`; over HTTP, 429 with
/// `Retry-After` when the answer goes out as JSON), and its handler never runs.
///
/// Requests without a principal are keyed by their 2025 session, which a client can replace
/// by opening another, and all anonymous stateless requests share one bucket: put
/// authentication in front of a rate limit that must hold per client. Each round of a
/// 2026-07-28 request that asks for input is a request of its own and takes a token.
///
/// ```
/// use wharf_server::middleware::{Quota, RateKey, RateLimit};
///
/// let limit = RateLimit::new(Quota::per_second(5).burst(10))
///     .keyed_by(RateKey::PrincipalAndTool)
///     .tool("expensive_search", Quota::per_minute(6));
/// ```
#[derive(Debug)]
pub struct RateLimit {
    quota: Quota,
    tools: HashMap<String, Quota>,
    key: RateKey,
    every_request: bool,
    max_buckets: usize,
    buckets: Mutex<HashMap<BucketKey, Bucket>>,
}

/// A bucket's key: the caller's part and the tool's part, either empty when not keyed by it.
type BucketKey = (Option<String>, Option<String>);

#[derive(Debug, Clone, Copy)]
struct Bucket {
    /// Tokens left, as of `updated`, in units of one request.
    tokens: f64,
    updated: Instant,
    /// How long this bucket's quota takes to fill it: past that, it is full again.
    full_refill: Duration,
}

impl RateLimit {
    /// A limit of `quota` on each principal's calls of each tool.
    pub fn new(quota: Quota) -> RateLimit {
        RateLimit {
            quota,
            tools: HashMap::new(),
            key: RateKey::PrincipalAndTool,
            every_request: false,
            max_buckets: 10_000,
            buckets: Mutex::new(HashMap::new()),
        }
    }

    /// What each bucket is kept for (by default [`RateKey::PrincipalAndTool`]).
    pub fn keyed_by(mut self, key: RateKey) -> RateLimit {
        self.key = key;
        self
    }

    /// A quota of its own for one tool, instead of the default.
    pub fn tool(mut self, name: impl Into<String>, quota: Quota) -> RateLimit {
        self.tools.insert(name.into(), quota);
        self
    }

    /// Limits every request, not only `tools/call` (`ping` and `initialize` excepted). With a
    /// tool in the key, other requests are keyed by their method.
    pub fn every_request(mut self) -> RateLimit {
        self.every_request = true;
        self
    }

    /// How many buckets are kept at most (10,000 by default). Buckets that have filled up
    /// again are forgotten first; past the bound, the tenth updated longest ago goes.
    pub fn max_buckets(mut self, max_buckets: usize) -> RateLimit {
        self.max_buckets = max_buckets.max(1);
        self
    }

    /// Takes a token for `request`: `None` when it may go on, otherwise the error to answer.
    fn take(&self, request: &McpRequest<'_>) -> Option<RpcError> {
        let tool = request.tool_name();
        if tool.is_none() && (!self.every_request || matches!(request.method(), "ping" | "initialize")) {
            return None;
        }
        let quota = tool.and_then(|name| self.tools.get(name)).copied().unwrap_or(self.quota);
        let subject = match tool {
            Some(name) if request.is_known_tool() => name,
            Some(_) => UNKNOWN_TOOL,
            None => request.method(),
        };
        let caller = || match (request.principal(), request.session_id()) {
            (Some(principal), _) => format!("principal:{}", principal.as_str()),
            (None, Some(session)) => format!("session:{session}"),
            (None, None) => "anonymous".to_owned(),
        };
        let key = match self.key {
            RateKey::Principal => (Some(caller()), None),
            RateKey::Tool => (None, Some(subject.to_owned())),
            RateKey::PrincipalAndTool => (Some(caller()), Some(subject.to_owned())),
            RateKey::Global => (None, None),
        };
        let wait = self.spend(key, quota, Instant::now())?;
        let what = match tool {
            Some(name) => format!("calls of tool `{name}`"),
            None => "requests".to_owned(),
        };
        let message = format!(
            "Rate limit exceeded: {what} are limited to {} at once and then one every {:.3} s; retry in {:.3} s",
            quota.burst,
            quota.refill.as_secs_f64(),
            wait.as_secs_f64()
        );
        Some(RpcError::rate_limited(message, wait))
    }

    /// Spends a token from the bucket at `key`: `None` when there was one, else how long until
    /// there is.
    fn spend(&self, key: BucketKey, quota: Quota, now: Instant) -> Option<Duration> {
        let mut buckets = self.buckets.lock().unwrap_or_else(PoisonError::into_inner);
        if buckets.len() >= self.max_buckets && !buckets.contains_key(&key) {
            make_room(&mut buckets, self.max_buckets, now);
        }
        let full_refill = quota.full_refill();
        let bucket = buckets.entry(key).or_insert(Bucket { tokens: f64::from(quota.burst), updated: now, full_refill });
        let refilled = now.saturating_duration_since(bucket.updated).as_secs_f64() / quota.refill.as_secs_f64();
        bucket.tokens = (bucket.tokens + refilled).min(f64::from(quota.burst));
        bucket.updated = now;
        if bucket.tokens >= 1.0 {
            bucket.tokens -= 1.0;
            return None;
        }
        let wait = quota.refill.as_secs_f64() * (1.0 - bucket.tokens);
        Some(Duration::try_from_secs_f64(wait).unwrap_or(Duration::MAX))
    }
}

/// Forgets buckets that have filled up again (they hold nothing a new bucket would not), and
/// if that is not enough, the tenth updated longest ago: a full table then takes one pass per
/// tenth of its size, not one per request.
fn make_room(buckets: &mut HashMap<BucketKey, Bucket>, max: usize, now: Instant) {
    buckets.retain(|_, bucket| now.saturating_duration_since(bucket.updated) < bucket.full_refill);
    if buckets.len() < max {
        return;
    }
    let mut ages: Vec<Instant> = buckets.values().map(|bucket| bucket.updated).collect();
    let cut = (max / 10).max(1).min(ages.len() - 1);
    let (_, &mut newest_gone, _) = ages.select_nth_unstable(cut);
    buckets.retain(|_, bucket| bucket.updated > newest_gone);
}

impl Layer for RateLimit {
    fn reads_transport_data(&self) -> bool {
        false
    }

    fn handle<'a>(&'a self, request: McpRequest<'a>, next: Next<'a>) -> LayerFuture<'a> {
        match self.take(&request) {
            None => next.run(request),
            Some(error) => crate::layer::McpResponse::error(error).ready(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spend_at(limit: &RateLimit, key: &str, at: Instant) -> Option<Duration> {
        limit.spend((Some(key.to_owned()), None), limit.quota, at)
    }

    #[test]
    fn a_burst_then_the_sustained_rate() {
        let limit = RateLimit::new(Quota::per_second(2).burst(3));
        let start = Instant::now();
        for _ in 0..3 {
            assert_eq!(spend_at(&limit, "a", start), None);
        }
        let wait = spend_at(&limit, "a", start).expect("the fourth request at once is refused");
        assert_eq!(wait, Duration::from_millis(500));
        // Half a second gives one token back, and no more.
        assert_eq!(spend_at(&limit, "a", start + Duration::from_millis(500)), None);
        assert!(spend_at(&limit, "a", start + Duration::from_millis(500)).is_some());
        // Another key has a bucket of its own.
        assert_eq!(spend_at(&limit, "b", start), None);
    }

    #[test]
    fn the_bucket_count_is_bounded_and_the_oldest_go_first() {
        let limit = RateLimit::new(Quota::per_minute(1)).max_buckets(20);
        let start = Instant::now();
        for second in 0..25 {
            let at = start + Duration::from_secs(second);
            assert_eq!(spend_at(&limit, &format!("k{second}"), at), None);
            assert!(limit.buckets.lock().unwrap().len() <= 20);
        }
        let buckets = limit.buckets.lock().unwrap();
        assert!(buckets.contains_key(&(Some("k24".to_owned()), None)), "the newest stays");
        assert!(!buckets.contains_key(&(Some("k0".to_owned()), None)), "the oldest went");
    }

    #[test]
    fn buckets_of_a_slower_quota_are_kept_until_they_are_full_again() {
        let limit = RateLimit::new(Quota::per_second(10)).max_buckets(2);
        let start = Instant::now();
        let slow = Quota::per_minute(1);
        assert_eq!(limit.spend((Some("slow".to_owned()), None), slow, start), None);
        assert_eq!(spend_at(&limit, "fast", start), None);
        // Ten seconds later the fast bucket is full again and goes; the slow one is still empty.
        assert_eq!(spend_at(&limit, "new", start + Duration::from_secs(10)), None);
        let wait = limit.spend((Some("slow".to_owned()), None), slow, start + Duration::from_secs(10));
        assert_eq!(wait, Some(Duration::from_secs(50)));
    }

    #[test]
    fn extreme_quotas_neither_panic_nor_stop_limiting() {
        let start = Instant::now();
        let limit = RateLimit::new(Quota::per(Duration::MAX, 1));
        assert_eq!(spend_at(&limit, "a", start), None);
        assert!(spend_at(&limit, "a", start).is_some_and(|wait| wait > Duration::from_secs(1 << 40)));
        let limit = RateLimit::new(Quota::per(Duration::ZERO, 1));
        assert_eq!(spend_at(&limit, "a", start), None);
        assert_eq!(spend_at(&limit, "a", start), Some(MIN_REFILL), "a zero period still spends tokens");
    }
}
