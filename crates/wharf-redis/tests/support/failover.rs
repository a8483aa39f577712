//! What the failover tests share: a server that says which session a call came in, instances
//! of it on one Redis deployment, and calls that go on while Redis fails over.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use serde_json::json;
use tokio::net::TcpListener;
use wharf_http::{HttpOptions, serve};
use wharf_redis::Redis;
use wharf_server::{RequestContext, ResourceDef, Server, ToolDef};

use super::{request, send};

/// A server whose `whoami` answers the session's id, and whose `touch_note` changes the
/// resource `demo://note`.
pub fn server() -> Server {
    Server::builder("cluster", "1")
        .tool(ToolDef::new("whoami", |context: RequestContext| async move { context.session_id().to_owned() }))
        .tool(ToolDef::new("touch_note", |context: RequestContext| async move {
            context.server().notify_resource_updated("demo://note");
            "touched"
        }))
        .resource(ResourceDef::text("demo://note", "note", "a note"))
        .build()
        .unwrap()
}

/// One more instance on a free loopback port, its sessions in `redis`.
pub async fn instance(redis: &Redis) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let options = HttpOptions::default().session_store(redis.session_store());
    tokio::spawn(serve(listener, server()).options(options).into_future());
    port
}

pub fn whoami(id: u64) -> String {
    request(id, "tools/call", json!({"name": "whoami", "arguments": {}}))
}

/// Calls `whoami` in `session` on `port` until it answers 200 (503 meanwhile, never another
/// status or a wrong answer), for at most 15 s; how many 503s came first.
pub async fn served_again(port: u16, session: &str) -> usize {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(15);
    let mut refused = 0;
    loop {
        let reply = send(port, "POST", Some(session), &whoami(100)).await;
        match reply.status {
            200 => {
                assert_eq!(reply.json()["result"]["content"][0]["text"], session, "{reply:?}");
                return refused;
            }
            503 => refused += 1,
            other => panic!("a request during the failover got {other}: {reply:?}"),
        }
        assert!(tokio::time::Instant::now() < deadline, "not served again within 15 s ({refused} refused)");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Calls `whoami` in `session` on `port` one after another until `stop`; each answer must be
/// the session's id or a 503. How many were answered, and how many refused.
pub async fn call_until_stopped(port: u16, session: String, stop: Arc<AtomicBool>) -> (usize, usize) {
    let (mut answered, mut refused) = (0, 0);
    while !stop.load(Ordering::SeqCst) {
        let reply = send(port, "POST", Some(&session), &whoami(200)).await;
        match reply.status {
            200 => {
                assert_eq!(reply.json()["result"]["content"][0]["text"], session.as_str(), "{reply:?}");
                answered += 1;
            }
            503 => refused += 1,
            other => panic!("a call during the failover got {other}: {reply:?}"),
        }
    }
    (answered, refused)
}
