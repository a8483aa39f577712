//! The stores on a Redis that Sentinel manages (a primary and its replica under three
//! sentinels, started here on free loopback ports and stopped at the end): the primary killed,
//! then failed over on purpose, while calls come; sessions and relayed changes go on.

mod support;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use serde_json::json;
use support::failover::{call_until_stopped, instance, served_again};
use support::{Streamed, change_until_heard, request, send, session_across};
use wharf_redis::Redis;
use wharf_testkit::redis_sentinel::{PRIMARY_NAME, RedisSentinel};

/// Calls in `session` through `port` while `fail_over` runs (a blocking Redis change), each
/// answered right or refused with 503; how many of each.
async fn calling_through(port: u16, session: &str, fail_over: impl FnOnce() + Send + 'static) -> (usize, usize) {
    let stop = Arc::new(AtomicBool::new(false));
    let calling = tokio::spawn(call_until_stopped(port, session.to_owned(), stop.clone()));
    tokio::time::sleep(Duration::from_millis(300)).await;
    tokio::task::spawn_blocking(fail_over).await.unwrap();
    served_again(port, session).await;
    stop.store(true, Ordering::SeqCst);
    calling.await.unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sessions_and_their_relayed_changes_go_on_when_the_sentinels_replace_the_primary() {
    let sentinel = Arc::new(std::sync::Mutex::new(RedisSentinel::start()));
    let urls = sentinel.lock().unwrap().sentinels();
    let redis = Redis::connect_sentinel(&urls, PRIMARY_NAME).unwrap().prefix("sentinel");
    let (a, b) = (instance(&redis).await, instance(&redis).await);
    let id = session_across(a, b, json!({})).await;
    let subscribe = request(1, "resources/subscribe", json!({"uri": "demo://note"}));
    assert_eq!(send(a, "POST", Some(&id), &subscribe).await.status, 200);
    let mut stream = Streamed::get(b, &id).await;
    stream.until("200 OK").await;
    assert!(change_until_heard(a, &id, "touch_note", "demo://note", &mut stream).await, "B hears what A relays");

    // The primary dies: the sentinels promote its replica, and both instances, asking them,
    // serve the session again; the subscription that carries relayed changes is made anew.
    let killed = sentinel.lock().unwrap().primary();
    let failing = sentinel.clone();
    let (answered, refused) = calling_through(b, &id, move || {
        failing.lock().unwrap().kill_primary();
    })
    .await;
    assert!(answered > 0, "calls were answered before and after the kill");
    println!("calls while the primary was killed: {answered} answered, {refused} refused (503)");
    assert_eq!(served_again(a, &id).await, 0, "served at once once B was");
    let mut stream = Streamed::get(b, &id).await;
    stream.until("200 OK").await;
    assert!(change_until_heard(a, &id, "touch_note", "demo://note", &mut stream).await, "B hears A after the kill");

    // The old primary comes back as a replica, and the sentinels are asked to fail over to it:
    // the demoted primary refuses writes (or drops its clients), and commands go to the new one.
    sentinel.lock().unwrap().restart(killed);
    let failing = sentinel.clone();
    let (answered, refused) = calling_through(b, &id, move || {
        assert_eq!(failing.lock().unwrap().fail_over(), killed);
    })
    .await;
    assert!(answered > 0, "calls were answered through the failover");
    println!("calls through a planned failover: {answered} answered, {refused} refused (503)");
    assert_eq!(served_again(a, &id).await, 0);
    let mut stream = Streamed::get(b, &id).await;
    stream.until("200 OK").await;
    assert!(change_until_heard(a, &id, "touch_note", "demo://note", &mut stream).await, "B hears A after the failover");
    let deleted = send(b, "DELETE", Some(&id), "").await;
    assert_eq!(deleted.status, 204, "{deleted:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_primary_the_sentinels_do_not_know_refuses_requests_with_503_and_nothing_else() {
    let sentinel = RedisSentinel::start();
    let redis = Redis::connect_sentinel(&sentinel.sentinels(), "no-such-primary").unwrap();
    let port = instance(&redis).await;
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "sentinel-test", "version": "1"}}});
    let refused = send(port, "POST", None, &init.to_string()).await;
    assert_eq!(refused.status, 503, "{refused:?}");
    assert!(Redis::connect_sentinel::<&str>(&[], PRIMARY_NAME).is_err(), "no sentinel at all");
    assert!(Redis::connect_sentinel(&["not a url"], PRIMARY_NAME).is_err());
    assert!(Redis::connect_sentinel(&sentinel.sentinels(), "redis://").is_err(), "a URL without a name");
}
