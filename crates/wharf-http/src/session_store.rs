//! What several instances of a server share through a store: the [`SessionStore`] trait, which
//! keeps 2025 sessions and their streams' events where every instance finds them, and relays
//! what one instance must tell the others. Without one (the default), a session lives only in
//! the instance that opened it.

use std::fmt::Debug;
use std::time::Duration;

use bytes::Bytes;
use tokio::sync::mpsc;

use wharf_server::contract::StoreFuture;

/// What a shared store keeps of one 2025 session: what `initialize` settled, written once,
/// and the parts that change later, each written on its own so that two instances changing
/// different parts at once lose neither change.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StoredSession {
    /// What `initialize` settled (revision, client info and capabilities, the principal), in
    /// a form only Wharf reads.
    pub opened: Vec<u8>,
    /// True once the client sent `notifications/initialized`.
    pub initialized: bool,
    /// The level the client set with `logging/setLevel`, by its wire name.
    pub log_level: Option<String>,
    /// The resource URIs the client subscribed to.
    pub subscriptions: Vec<String>,
}

/// One change to a stored session.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum SessionChange {
    /// The client sent `notifications/initialized`.
    Initialized,
    /// The client set its log level (the level's wire name).
    LogLevel(String),
    /// The client subscribed to a resource.
    Subscribed(String),
    /// The client unsubscribed from a resource.
    Unsubscribed(String),
}

/// What one instance of a server tells the others.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Relayed {
    /// A client's message for a session that the instance it reached could not place: an
    /// answer to a request another instance sent, or a cancellation of a request another
    /// instance runs.
    ClientMessage {
        /// The session's id.
        session: String,
        /// The client's JSON-RPC message, as it sent it.
        message: Vec<u8>,
    },
    /// A resource changed on the instance that relays this: every instance tells its own
    /// subscribers.
    ResourceUpdated(String),
    /// A list (`tools`, `prompts` or `resources`) changed on the instance that relays this,
    /// because of a component requiring these scopes: every instance tells its own clients
    /// and listeners that may see it to look again.
    ListChanged(String, Vec<String>),
    /// A component of a list (`tools`, `prompts` or `resources`), named by its key, was
    /// enabled (`true`) or disabled on the instance that relays this: every instance does the
    /// same. Relayed before the list change it makes.
    Toggled(String, String, bool),
    /// A message a session's handlers sent outside any request, for the session's GET stream,
    /// which the instance that relays this does not hold.
    ToStream {
        /// The session's id.
        session: String,
        /// The JSON-RPC message.
        message: Vec<u8>,
    },
    /// A task running on the instance that relays this changed (its record, as JSON): every
    /// instance tells its own listeners and sessions that watch it.
    TaskChanged(Vec<u8>),
}

/// The caps a store holds a new session to, across every instance that shares it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct SessionLimits<'a> {
    /// The most sessions of all instances together
    /// ([`HttpOptions::max_sessions`](crate::HttpOptions::max_sessions)).
    pub max_sessions: usize,
    /// The client the session counts against: `principal:` and the principal's identity, or
    /// `address:` and the network address of an anonymous client; `None` when neither is
    /// known, and then no quota applies.
    pub client: Option<&'a str>,
    /// The most sessions one client may hold
    /// ([`HttpOptions::max_sessions_per_client`](crate::HttpOptions::max_sessions_per_client)).
    pub max_per_client: usize,
}

/// The store could not be reached or did not answer; requests that need it are answered 503
/// with `Retry-After` meanwhile.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionStoreError {
    reason: String,
    stream_gone: bool,
}

impl SessionStoreError {
    /// The store is unavailable because of `reason` (which must hold no secret: it is logged).
    pub fn unavailable(reason: impl Into<String>) -> SessionStoreError {
        SessionStoreError { reason: reason.into(), stream_gone: false }
    }

    /// A stream asked to be resumed ([`SessionStore::resume_events`]) will never go on: the
    /// instance sending it stopped before it ended, and nothing after the point asked for is
    /// kept. The client is answered `410 Gone` (it stops resuming, and its request fails).
    pub fn stream_gone(reason: impl Into<String>) -> SessionStoreError {
        SessionStoreError { reason: reason.into(), stream_gone: true }
    }

    /// True for [`SessionStoreError::stream_gone`].
    pub fn is_stream_gone(&self) -> bool {
        self.stream_gone
    }

    /// Why the store is unavailable.
    pub fn reason(&self) -> &str {
        &self.reason
    }
}

impl std::fmt::Display for SessionStoreError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "the session store is unavailable: {}", self.reason)
    }
}

impl std::error::Error for SessionStoreError {}

/// Keeps 2025 sessions where every instance of a server finds them, so that any instance
/// serves any request of a session (behind a load balancer without sticky sessions).
///
/// Every request of a session loads it once ([`SessionStore::load`]), and now and then that
/// load also keeps it alive for another `idle`: a session expires fleet-wide once no instance
/// has heard from its client for about that long, and a session deleted on one instance is
/// gone for all of them.
pub trait SessionStore: Send + Sync + Debug + 'static {
    /// Keeps a new session for `idle`, within `limits` across all instances: with
    /// `max_per_client` sessions of the same client kept already, that client's session heard
    /// from longest ago is deleted first, so that one client opening sessions by the thousand
    /// ends its own; then, with `max_sessions` sessions kept, the one heard from longest ago is
    /// deleted. Fails when the store is unreachable.
    fn open<'a>(
        &'a self,
        id: &'a str,
        opened: &'a [u8],
        idle: Duration,
        limits: SessionLimits<'a>,
    ) -> StoreFuture<'a, Result<(), SessionStoreError>>;

    /// The session, its expiry pushed `refresh` into the future when that is given; `None`
    /// once it was deleted or expired.
    fn load<'a>(
        &'a self,
        id: &'a str,
        refresh: Option<Duration>,
    ) -> StoreFuture<'a, Result<Option<StoredSession>, SessionStoreError>>;

    /// Records one change to a session that exists.
    fn change<'a>(
        &'a self,
        id: &'a str,
        change: &'a SessionChange,
        idle: Duration,
    ) -> StoreFuture<'a, Result<(), SessionStoreError>>;

    /// Deletes the session, for every instance.
    fn close<'a>(&'a self, id: &'a str) -> StoreFuture<'a, Result<(), SessionStoreError>>;

    /// Keeps event `sequence` of response stream `stream` of `session`, so that a client that
    /// lost the stream resumes it on any instance (`Last-Event-ID`); the newest of each session
    /// are kept while the session lives (`idle` from the last one). The stream sends the event
    /// to its client once this resolves: an event a client saw was kept first, and survives
    /// the instance that sent it. A stream's events are kept in the order they are given.
    fn keep_event<'a>(
        &'a self,
        session: &'a str,
        stream: u64,
        sequence: u64,
        frame: Bytes,
        idle: Duration,
    ) -> StoreFuture<'a, Result<(), SessionStoreError>>;

    /// Marks response stream `stream` of `session` as ended (its response was sent), after
    /// the events kept before, so that an instance following it stops there.
    fn keep_stream_end(&self, session: &str, stream: u64, idle: Duration);

    /// Resumes `stream` of `session` after event `after`, for a client that lost it: the kept
    /// events that followed, in order, then those that keep coming from the instance still
    /// sending it, until the stream ended there (or nothing came for a while: the instance may
    /// have died; the client resumes again if it wants). `None` when no event of that stream
    /// is kept at all; [`SessionStoreError::stream_gone`] when its sender is known to have
    /// stopped and nothing after `after` is kept.
    fn resume_events<'a>(
        &'a self,
        session: &'a str,
        stream: u64,
        after: u64,
    ) -> StoreFuture<'a, Result<Option<mpsc::Receiver<Bytes>>, SessionStoreError>>;

    /// Hands `relayed` to every other instance. What is relayed while an instance is not
    /// listening is lost to it.
    fn relay<'a>(&'a self, relayed: &'a Relayed) -> StoreFuture<'a, Result<(), SessionStoreError>>;

    /// The messages other instances relay, from now on, for as long as the receiver is kept.
    /// Called once per endpoint, within its async runtime.
    fn relayed(&self) -> mpsc::Receiver<Relayed>;
}
