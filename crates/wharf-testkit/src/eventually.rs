//! Waiting for what a test expects to happen, with a deadline: on time out, the test fails and
//! says what it waited for.

use std::future::Future;
use std::time::{Duration, Instant};

/// How often a condition is looked at again.
const POLL: Duration = Duration::from_millis(10);

/// Waits until `check` gives a value, looking every 10 ms for at most `limit`; panics saying
/// `what` did not happen otherwise.
pub async fn eventually<T>(what: &str, limit: Duration, mut check: impl FnMut() -> Option<T>) -> T {
    eventually_async(what, limit, || std::future::ready(check())).await
}

/// Waits until `done` is true (see [`eventually`]).
pub async fn until(what: &str, limit: Duration, mut done: impl FnMut() -> bool) {
    eventually(what, limit, || done().then_some(())).await;
}

/// [`eventually`] for a check that is itself async (a request to a server, say).
pub async fn eventually_async<T, F: Future<Output = Option<T>>>(
    what: &str,
    limit: Duration,
    mut check: impl FnMut() -> F,
) -> T {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(value) = check().await {
            return value;
        }
        if Instant::now() >= deadline {
            panic!("waited {limit:?} for {what}");
        }
        tokio::time::sleep(POLL).await;
    }
}

/// [`eventually`] on a thread that may block: a test without a runtime.
pub fn eventually_blocking<T>(what: &str, limit: Duration, mut check: impl FnMut() -> Option<T>) -> T {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(value) = check() {
            return value;
        }
        if Instant::now() >= deadline {
            panic!("waited {limit:?} for {what}");
        }
        std::thread::sleep(POLL);
    }
}

/// Waits until `done` is true (see [`eventually_blocking`]).
pub fn until_blocking(what: &str, limit: Duration, mut done: impl FnMut() -> bool) {
    eventually_blocking(what, limit, || done().then_some(()));
}

/// The next notification `method` that `client` receives within 5 s, others skipped; panics
/// naming the method otherwise.
pub async fn next_notification_of(client: &wharf_server::testing::InMemoryClient, method: &str) -> serde_json::Value {
    eventually_async(method, Duration::from_secs(5), || async {
        client
            .next_notification(Duration::from_millis(200))
            .await
            .filter(|notification| notification["method"] == method)
    })
    .await
}
