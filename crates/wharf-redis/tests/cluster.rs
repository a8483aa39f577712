//! The stores on a real Redis Cluster (three primaries with a replica each, started here on
//! free loopback ports and stopped at the end): keys of one record across slots, pub/sub
//! sharded, and a failover that the stores ride through.

mod support;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use serde_json::json;
use support::failover::{call_until_stopped, instance, served_again};
use support::{Streamed, change_until_heard, initialize, publish_until_heard, request, send};
use wharf_redis::Redis;
use wharf_server::Bus;
use wharf_testkit::redis_cluster::RedisCluster;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bus_messages_reach_every_instance_subscribed_through_sharded_channels() {
    let cluster = RedisCluster::start();
    let (first, second) =
        (Redis::connect_cluster(&cluster.seeds()).unwrap(), Redis::connect_cluster(&cluster.seeds()).unwrap());
    let (first, second) = (first.prefix("bus").bus(), second.prefix("bus").bus());
    let mut heard_by_first = first.subscribe("news");
    let mut heard_by_second = second.subscribe("news");
    assert!(
        publish_until_heard(&*first, "news", b"one", &mut heard_by_first).await,
        "the publisher's own subscription"
    );
    assert!(publish_until_heard(&*first, "news", b"two", &mut heard_by_second).await, "another instance's");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sessions_and_their_relayed_changes_go_on_after_the_primary_holding_them_is_killed_or_failed_over() {
    let mut cluster = RedisCluster::start();
    let redis = Redis::connect_cluster(&cluster.seeds()).unwrap().prefix("failover");
    let (a, b) = (instance(&redis).await, instance(&redis).await);
    let opened = initialize(a).await;
    let id = opened.header("mcp-session-id").expect("a session id").to_owned();
    let initialized = send(b, "POST", Some(&id), r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#).await;
    assert_eq!(initialized.status, 202, "{initialized:?}");
    let subscribe = request(1, "resources/subscribe", json!({"uri": "demo://note"}));
    assert_eq!(send(a, "POST", Some(&id), &subscribe).await.status, 200);
    let mut stream = Streamed::get(b, &id).await;
    stream.until("200 OK").await;
    assert!(change_until_heard(a, &id, "touch_note", "demo://note", &mut stream).await, "B hears what A relays");

    // The primary holding the session's slot dies: its replica takes over, and the session
    // (written with no WAIT, so what the dead primary had not yet passed on could be lost: here
    // the replica is waited for first) is served again by both instances.
    // Calls keep coming meanwhile, each answered right or refused with 503.
    let session_key = format!("failover:{{{id}}}:session");
    let primary = cluster.primary_of(&session_key);
    let replica = cluster.replica_of(primary);
    cluster.wait_until_replicated(primary);
    let stop = Arc::new(AtomicBool::new(false));
    let calling = tokio::spawn(call_until_stopped(b, id.clone(), stop.clone()));
    tokio::time::sleep(Duration::from_millis(300)).await;
    cluster.kill(primary);
    assert_eq!(cluster.primary_of(&session_key), replica, "the replica took over");
    served_again(b, &id).await;
    assert_eq!(served_again(a, &id).await, 0, "served at once once B was");
    stop.store(true, Ordering::SeqCst);
    let (answered, refused) = calling.await.unwrap();
    assert!(answered > 0, "calls were answered before and after the kill");
    println!("calls during the kill and failover: {answered} answered, {refused} refused (503)");

    // The relay channel's shard may have been the one failed over: changes still reach B.
    let mut stream = Streamed::get(b, &id).await;
    stream.until("200 OK").await;
    assert!(change_until_heard(a, &id, "touch_note", "demo://note", &mut stream).await, "B hears A after the kill");

    // The old primary comes back, as a replica; then a planned failover hands its slots back.
    cluster.restart(primary);
    assert_eq!(cluster.replica_of(replica), primary);
    cluster.fail_over_to(primary);
    assert_eq!(cluster.primary_of(&session_key), primary);
    served_again(a, &id).await;
    // The relay channel's shard failed over on purpose, then its primary killed: the
    // subscriptions follow the slot each time.
    let relay_replica = cluster.replica_of(cluster.primary_of("failover:relay"));
    cluster.fail_over_to(relay_replica);
    assert_eq!(cluster.primary_of("failover:relay"), relay_replica);
    let mut stream = Streamed::get(b, &id).await;
    stream.until("200 OK").await;
    assert!(change_until_heard(a, &id, "touch_note", "demo://note", &mut stream).await, "B hears A after the failover");
    cluster.kill(relay_replica);
    let mut stream = Streamed::get(b, &id).await;
    stream.until("200 OK").await;
    assert!(change_until_heard(a, &id, "touch_note", "demo://note", &mut stream).await, "B hears A after that kill");
    let deleted = send(b, "DELETE", Some(&id), "").await;
    assert_eq!(deleted.status, 204, "{deleted:?}");
}

/// How many `WAIT`s the node on `port` has run.
fn waits(cluster: &RedisCluster, port: u16) -> u64 {
    let stats = cluster.command(port, &["INFO", "commandstats"]).unwrap_or_default();
    stats
        .lines()
        .find_map(|line| line.strip_prefix("cmdstat_wait:calls=")?.split(',').next()?.parse().ok())
        .unwrap_or(0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_opened_waits_for_a_replica_and_outlives_its_primary_killed_the_moment_after() {
    let mut cluster = RedisCluster::start();
    let redis = Redis::connect_cluster(&cluster.seeds())
        .unwrap()
        .prefix("durable")
        .wait_for_replicas(1, Duration::from_secs(1));
    let (a, b) = (instance(&redis).await, instance(&redis).await);
    let opened = initialize(a).await;
    assert_eq!(opened.status, 200, "{opened:?}");
    let id = opened.header("mcp-session-id").expect("a session id").to_owned();
    let initialized = send(b, "POST", Some(&id), r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#).await;
    assert_eq!(initialized.status, 202, "{initialized:?}");
    let session_key = format!("durable:{{{id}}}:session");
    let primary = cluster.primary_of(&session_key);
    assert!(waits(&cluster, primary) >= 1, "the session's primary ran a WAIT for it");
    // Killed at once: the replica had the session before the client had its id.
    cluster.kill(primary);
    served_again(b, &id).await;
}
