//! [`Bus`]: messages between the instances of one deployment, on named channels (Redis
//! pub/sub, for example), for work that one instance holds and another is asked about.

use tokio::sync::mpsc;

use crate::task::store::StoreFuture;

/// Why a message could not be sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BusError(String);

impl BusError {
    /// An error saying `why`; never put a secret (a URL with a password) in it.
    pub fn new(why: impl Into<String>) -> BusError {
        BusError(why.into())
    }
}

impl std::fmt::Display for BusError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "the bus between instances is unavailable: {}", self.0)
    }
}

impl std::error::Error for BusError {}

/// Channels shared by the instances of one deployment: what one publishes on a channel
/// reaches every instance subscribed to it at that moment, in the order one sender sent it;
/// nothing is kept for an instance that subscribes later.
pub trait Bus: Send + Sync + std::fmt::Debug + 'static {
    /// Sends `message` on `channel`; how many subscribers it reached (0 when no instance
    /// listens there now).
    fn publish<'a>(&'a self, channel: &'a str, message: Vec<u8>) -> StoreFuture<'a, Result<usize, BusError>>;

    /// What is published on `channel` from now on, for as long as the receiver is kept.
    /// Called within the server's async runtime.
    fn subscribe(&self, channel: &str) -> mpsc::Receiver<Vec<u8>>;
}
