//! What a transport hands a request besides its message: where the messages about it go, how
//! it is stopped, whether its response stream can be closed early, and who it acts for.

use std::any::Any;
use std::net::IpAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use tokio::sync::Notify;

use crate::cancel::Cancellation;
use crate::principal::Principal;
use crate::session::Outbound;

/// Where a request's messages go and how it is stopped.
#[allow(missing_debug_implementations, reason = "its transport data is of any type")]
pub struct Delivery {
    /// Notifications and server-to-client requests about this request, when they do not go
    /// to the session's own queue.
    pub sink: Option<Outbound>,
    /// Raised when the request is cancelled.
    pub cancel: Cancellation,
    /// Set by transports whose response stream a handler may close early (HTTP with SSE).
    pub stream: Option<Arc<StreamControl>>,
    /// Who the request acts for, when the transport knows.
    pub principal: Option<Principal>,
    /// The network address of the client, when the transport knows: quotas count anonymous
    /// callers by it.
    pub client_address: Option<IpAddr>,
    /// What the transport knows of the request beyond its message (an HTTP request's headers,
    /// say), for middleware to read by type; transports keep it only when middleware is
    /// installed.
    pub transport_data: Option<Arc<dyn Any + Send + Sync>>,
}

impl Delivery {
    /// Messages about the request go to the session's queue.
    pub fn to_session(cancel: Cancellation) -> Delivery {
        Delivery { sink: None, cancel, stream: None, principal: None, client_address: None, transport_data: None }
    }
}

/// Lets a handler end its request's HTTP response stream before the response, so that the
/// client reconnects later and picks up the rest (SSE polling, protocol revision 2025-11-25).
#[derive(Debug, Default)]
pub struct StreamControl {
    close_requested: AtomicBool,
    notify: Notify,
}

impl StreamControl {
    /// Asks the transport to close the response stream.
    pub(crate) fn request_close(&self) {
        self.close_requested.store(true, Ordering::SeqCst);
        self.notify.notify_waiters();
    }

    /// Completes once the handler asked to close the stream.
    pub async fn close_requested(&self) {
        loop {
            let notified = self.notify.notified();
            if self.close_requested.load(Ordering::SeqCst) {
                return;
            }
            notified.await;
        }
    }
}
