//! The chain of layers itself: what `next.run` gives a layer is polled with the layer's own
//! wakers, and dropping it stops the handler or never starts it.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::json;
use wharf_protocol::ClientCapabilities;
use wharf_server::testing::InMemoryClient;
use wharf_server::{LayerFuture, McpResponse, RpcError, ToolDef, layer_fn};

use crate::middleware::text_of;
use wharf_testkit::fixture;

/// Polls the future `next` gave it only when that future's own waker fired, as
/// `FuturesUnordered` and other combinators with a waker per child do.
struct PollsOnlyWhenWoken<'a> {
    inner: LayerFuture<'a>,
    waker: Arc<ChildWaker>,
    polled: bool,
}

#[derive(Default)]
struct ChildWaker {
    woken: std::sync::atomic::AtomicBool,
    parent: Mutex<Option<std::task::Waker>>,
}

impl std::task::Wake for ChildWaker {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.woken.store(true, Ordering::SeqCst);
        if let Some(parent) = self.parent.lock().unwrap().as_ref() {
            parent.wake_by_ref();
        }
    }
}

impl std::future::Future for PollsOnlyWhenWoken<'_> {
    type Output = McpResponse;

    fn poll(mut self: std::pin::Pin<&mut Self>, cx: &mut std::task::Context<'_>) -> std::task::Poll<McpResponse> {
        *self.waker.parent.lock().unwrap() = Some(cx.waker().clone());
        if self.polled && !self.waker.woken.swap(false, Ordering::SeqCst) {
            return std::task::Poll::Pending;
        }
        self.polled = true;
        let waker = std::task::Waker::from(self.waker.clone());
        std::pin::Pin::new(&mut self.inner).poll(&mut std::task::Context::from_waker(&waker))
    }
}

fn nap_tool() -> ToolDef {
    ToolDef::new("nap", || async {
        tokio::time::sleep(Duration::from_millis(20)).await;
        "rested"
    })
}

#[tokio::test]
async fn a_layer_that_polls_with_wakers_of_its_own_is_woken_when_the_server_answers() {
    let server = fixture::builder()
        .tool(nap_tool())
        .layer(layer_fn(|request, next| {
            LayerFuture::new(PollsOnlyWhenWoken { inner: next.run(request), waker: Arc::default(), polled: false })
        }))
        .build()
        .unwrap();
    for client in [
        InMemoryClient::latest_session(server.clone()).await,
        InMemoryClient::stateless(server, ClientCapabilities::default()),
    ] {
        let called = tokio::time::timeout(Duration::from_secs(10), client.call_tool("nap", json!({})));
        let result = called.await.expect("the layer was never woken for the answer").unwrap();
        assert_eq!(text_of(&result), "rested");
    }
}

/// Counts drops: a handler that holds one was stopped when the count went up.
struct DropCounter(Arc<AtomicUsize>);

impl Drop for DropCounter {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

#[tokio::test]
async fn a_layer_that_drops_what_next_gave_it_stops_the_handler_or_never_starts_it() {
    let started = Arc::new(AtomicUsize::new(0));
    let stopped = Arc::new(AtomicUsize::new(0));
    let (started_in, stopped_in) = (started.clone(), stopped.clone());
    let stopped_seen = stopped.clone();
    let server = fixture::builder()
        .tool(ToolDef::new("forever", move || {
            started_in.fetch_add(1, Ordering::SeqCst);
            let guard = DropCounter(stopped_in.clone());
            async move {
                let _guard = guard;
                std::future::pending::<String>().await
            }
        }))
        .layer(layer_fn(move |request, next| {
            if request.tool_name() != Some("forever") {
                return next.run(request);
            }
            let stopped = stopped_seen.clone();
            let unpolled = request.params().meta().is_some_and(|meta| meta.other.contains_key("test/unpolled"));
            LayerFuture::new(async move {
                let work = next.run(request);
                if unpolled {
                    drop(work);
                } else {
                    // The handler starts, and is stopped when its future is dropped here.
                    assert!(tokio::time::timeout(Duration::from_millis(30), work).await.is_err());
                }
                // Still waiting itself: the handler must be gone already.
                tokio::time::sleep(Duration::from_millis(50)).await;
                McpResponse::error(RpcError::new(-32000, format!("stopped={}", stopped.load(Ordering::SeqCst))))
            })
        }))
        .build()
        .unwrap();
    let client = InMemoryClient::latest_session(server).await;
    let answered = client.request("tools/call", json!({"name": "forever"})).await.unwrap_err();
    assert_eq!(answered.message, "stopped=1");
    assert_eq!(started.load(Ordering::SeqCst), 1);

    let unpolled = json!({"name": "forever", "_meta": {"test/unpolled": true}});
    let answered = client.request("tools/call", unpolled).await.unwrap_err();
    assert_eq!(answered.message, "stopped=1");
    assert_eq!(started.load(Ordering::SeqCst), 1, "a request whose future was never polled is not served");
}
