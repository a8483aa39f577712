//! The connections [`serve_http`](crate::serve_http) keeps open: bounded in number in all and
//! per client address (one past either is answered 503 and closed unread), and closed once idle
//! (no request being handled, no response being sent) for the idle timeout (at most twice it).

use std::collections::HashMap;
use std::convert::Infallible;
use std::net::IpAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http_body::{Body, Frame, SizeHint};
use tokio::net::TcpStream;

use super::body::McpBody;
use crate::client_key::client_key;

/// How many connections are open, in all and from each client address.
#[derive(Debug)]
pub(crate) struct ConnectionLimits {
    max: usize,
    per_address: usize,
    open: Mutex<OpenConnections>,
}

#[derive(Debug, Default)]
struct OpenConnections {
    total: usize,
    by_address: HashMap<Arc<str>, usize>,
}

/// A connection's place among those open, given back when it is dropped.
#[derive(Debug)]
pub(crate) struct ConnectionSlot {
    limits: Arc<ConnectionLimits>,
    address: Arc<str>,
}

/// Which bound a connection is past.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Refusal {
    Total(usize),
    PerAddress(usize),
}

impl ConnectionLimits {
    pub(crate) fn new(max: usize, per_address: usize) -> Arc<ConnectionLimits> {
        Arc::new(ConnectionLimits { max, per_address, open: Mutex::default() })
    }

    /// A place for a connection from `peer`, held until the slot is dropped; or the bound it
    /// is past.
    pub(crate) fn admit(self: &Arc<Self>, peer: IpAddr) -> Result<ConnectionSlot, Refusal> {
        let address = client_key(None, Some(peer)).unwrap_or_else(|| Arc::from(""));
        let mut open = self.open.lock().unwrap_or_else(PoisonError::into_inner);
        if open.total >= self.max {
            return Err(Refusal::Total(self.max));
        }
        let from_address = open.by_address.entry(address.clone()).or_default();
        if *from_address >= self.per_address {
            return Err(Refusal::PerAddress(self.per_address));
        }
        *from_address += 1;
        open.total += 1;
        Ok(ConnectionSlot { limits: self.clone(), address })
    }
}

impl Drop for ConnectionSlot {
    fn drop(&mut self) {
        let mut open = self.limits.open.lock().unwrap_or_else(PoisonError::into_inner);
        open.total -= 1;
        if let Some(from_address) = open.by_address.get_mut(&self.address) {
            *from_address -= 1;
            if *from_address == 0 {
                open.by_address.remove(&self.address);
            }
        }
    }
}

impl Refusal {
    /// Answers the connection 503 and closes it, without reading what it sent and without
    /// waiting for it: what the socket does not take at once is not sent.
    pub(crate) fn refuse(self, stream: TcpStream) {
        let message = match self {
            Refusal::Total(limit) => format!(
                "Service unavailable: the server has {limit} connections open, its limit \
                 (HttpOptions::max_connections); try again later\n"
            ),
            Refusal::PerAddress(limit) => format!(
                "Service unavailable: {limit} connections from this address are open, the limit per address \
                 (HttpOptions::max_connections_per_address); close one or try again later\n"
            ),
        };
        let response = format!(
            "HTTP/1.1 503 Service Unavailable\r\nconnection: close\r\nretry-after: 1\r\ncontent-type: text/plain\r\n\
             content-length: {}\r\n\r\n{message}",
            message.len()
        );
        let _ = stream.try_write(response.as_bytes());
    }
}

/// What one connection is doing: how many requests are being handled (each until its response
/// was sent), and a count of every start and end, so that a request that began and ended
/// between two looks still counts as activity. Plain counters: a request wakes nothing.
#[derive(Debug, Default)]
pub(crate) struct Activity {
    handling: AtomicUsize,
    changes: AtomicU64,
}

/// Marks a request as being handled while it lives: it goes into the response's body.
#[derive(Debug)]
pub(crate) struct Busy(Arc<Activity>);

impl Activity {
    pub(crate) fn new() -> Arc<Activity> {
        Arc::new(Activity::default())
    }

    pub(crate) fn begin(self: &Arc<Self>) -> Busy {
        self.handling.fetch_add(1, Ordering::Relaxed);
        self.changes.fetch_add(1, Ordering::Release);
        Busy(self.clone())
    }

    /// Completes once the connection has had nothing in hand, and nothing begin or end, for a
    /// whole `timeout`: it looks once per `timeout`, so an idle connection goes after between
    /// one and two timeouts.
    pub(crate) async fn idle_for(&self, timeout: Duration) {
        loop {
            let before = self.changes.load(Ordering::Acquire);
            tokio::time::sleep(timeout).await;
            if self.handling.load(Ordering::Relaxed) == 0 && self.changes.load(Ordering::Acquire) == before {
                return;
            }
        }
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        self.0.handling.fetch_sub(1, Ordering::Relaxed);
        self.0.changes.fetch_add(1, Ordering::Release);
    }
}

/// A response body that keeps its request marked as being handled until it is dropped, which
/// hyper does once it was sent (or the connection ended).
#[derive(Debug)]
pub(crate) struct TrackedBody {
    body: McpBody,
    _busy: Busy,
}

impl TrackedBody {
    pub(crate) fn new(body: McpBody, busy: Busy) -> TrackedBody {
        TrackedBody { body, _busy: busy }
    }
}

impl Body for TrackedBody {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn connections_are_bounded_in_all_and_per_address_and_slots_come_back() {
        let limits = ConnectionLimits::new(3, 2);
        let (one, two): (IpAddr, IpAddr) = ("127.0.0.1".parse().unwrap(), "127.0.0.2".parse().unwrap());
        let first = limits.admit(one).unwrap();
        let _second = limits.admit(one).unwrap();
        assert!(matches!(limits.admit(one), Err(Refusal::PerAddress(2))));
        let _third = limits.admit(two).unwrap();
        assert!(matches!(limits.admit(two), Err(Refusal::Total(3))));
        drop(first);
        assert!(limits.admit(one).is_ok());
        // An IPv6 host counts by its /64.
        let limits = ConnectionLimits::new(10, 1);
        let _v6 = limits.admit("2001:db8::1".parse().unwrap()).unwrap();
        assert!(limits.admit("2001:db8::2".parse().unwrap()).is_err());
    }

    #[tokio::test(start_paused = true)]
    async fn a_connection_is_idle_only_with_nothing_in_hand_for_a_whole_timeout() {
        let activity = Activity::new();
        let timeout = Duration::from_secs(10);
        let started = tokio::time::Instant::now();
        let busy = activity.begin();
        let watcher = {
            let activity = activity.clone();
            tokio::spawn(async move {
                activity.idle_for(timeout).await;
                tokio::time::Instant::now()
            })
        };
        tokio::time::sleep(timeout * 3 + timeout / 4).await;
        assert!(!watcher.is_finished(), "a connection handling a request is not idle");
        // Ends at 32.5 s: the look at 40 s sees the end, the one at 50 s nothing new.
        drop(busy);
        tokio::time::sleep(timeout).await;
        // A request that begins and ends between two looks (at 42.5 s) counts as activity.
        drop(activity.begin());
        let idle_at = watcher.await.unwrap();
        assert_eq!(idle_at - started, timeout * 6, "the looks at 40 and 50 s saw changes, the one at 60 s none");
    }
}
