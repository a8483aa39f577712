//! The 2025-era sessions of the HTTP transport: random ids, idle expiry, a bound on their
//! number, the standalone GET stream, and the live state of resumable streams.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use bytes::Bytes;
use tokio::sync::mpsc;

use crate::session::Session;

/// How many server-initiated messages wait for a session's standalone GET stream.
const STANDALONE_BUFFER: usize = 16;

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// One 2025 session reached over HTTP.
#[derive(Debug)]
pub(crate) struct HttpSession {
    pub(crate) session: Arc<Session>,
    /// Milliseconds since the table's epoch when the client was last heard from.
    last_seen: AtomicU64,
    /// Requests running and streams open; a session with any is never idle.
    active: AtomicUsize,
    /// Server-initiated messages, taken by the GET stream while it is open.
    standalone: Mutex<Option<mpsc::Receiver<Vec<u8>>>>,
    streams: Mutex<HashMap<u64, LiveStream>>,
    next_stream: AtomicU64,
}

/// A resumable stream's state beyond its stored events.
#[derive(Debug, Default)]
pub(crate) struct LiveStream {
    /// The last event's sequence number.
    pub(crate) sequence: u64,
    /// True once the response was sent: a resumed stream ends after the replay.
    pub(crate) finished: bool,
    /// The GET stream of a client that resumed this stream, if one is open.
    pub(crate) listener: Option<mpsc::Sender<Bytes>>,
}

impl HttpSession {
    pub(crate) fn next_stream(&self) -> u64 {
        self.next_stream.fetch_add(1, Ordering::Relaxed)
    }

    pub(crate) fn streams(&self) -> MutexGuard<'_, HashMap<u64, LiveStream>> {
        lock(&self.streams)
    }

    /// Takes the server-initiated messages for a GET stream; None while another GET has them.
    pub(crate) fn take_standalone(&self) -> Option<mpsc::Receiver<Vec<u8>>> {
        lock(&self.standalone).take()
    }

    pub(crate) fn return_standalone(&self, receiver: mpsc::Receiver<Vec<u8>>) {
        *lock(&self.standalone) = Some(receiver);
    }
}

/// Marks a session active while it lives; the session may expire only when none is held.
#[derive(Debug)]
pub(crate) struct ActiveGuard {
    session: Arc<HttpSession>,
}

impl ActiveGuard {
    pub(crate) fn new(session: Arc<HttpSession>) -> ActiveGuard {
        session.active.fetch_add(1, Ordering::AcqRel);
        ActiveGuard { session }
    }
}

impl Drop for ActiveGuard {
    fn drop(&mut self) {
        self.session.active.fetch_sub(1, Ordering::AcqRel);
    }
}

/// Every session the transport knows.
#[derive(Debug)]
pub(crate) struct SessionTable {
    sessions: Mutex<HashMap<String, Arc<HttpSession>>>,
    epoch: Instant,
    idle_timeout: Duration,
    max_sessions: usize,
}

/// Why no session could be made.
#[derive(Debug)]
pub(crate) enum CreateError {
    /// Every session slot is taken by a session that is not idle.
    Full,
    /// The operating system's random source failed.
    Random(String),
}

impl SessionTable {
    pub(crate) fn new(idle_timeout: Duration, max_sessions: usize) -> SessionTable {
        SessionTable { sessions: Mutex::new(HashMap::new()), epoch: Instant::now(), idle_timeout, max_sessions }
    }

    fn now(&self) -> u64 {
        u64::try_from(self.epoch.elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    fn is_expired(&self, session: &HttpSession, now: u64) -> bool {
        let idle_for = now.saturating_sub(session.last_seen.load(Ordering::Relaxed));
        session.active.load(Ordering::Acquire) == 0 && u128::from(idle_for) > self.idle_timeout.as_millis()
    }

    /// Makes a session with a fresh random id. At the limit, expired sessions go first, then
    /// the one idle longest; returns the ids of sessions that ended to make room.
    pub(crate) fn create(
        &self,
        outbound_for: impl FnOnce(String, mpsc::Sender<Vec<u8>>) -> Arc<Session>,
    ) -> Result<(Arc<HttpSession>, Vec<String>), CreateError> {
        let id = random_id().map_err(CreateError::Random)?;
        let (sender, receiver) = mpsc::channel(STANDALONE_BUFFER);
        let now = self.now();
        let session = Arc::new(HttpSession {
            session: outbound_for(id.clone(), sender),
            last_seen: AtomicU64::new(now),
            active: AtomicUsize::new(0),
            standalone: Mutex::new(Some(receiver)),
            streams: Mutex::new(HashMap::new()),
            next_stream: AtomicU64::new(1),
        });
        let mut sessions = lock(&self.sessions);
        let mut ended = Vec::new();
        if sessions.len() >= self.max_sessions {
            sessions.retain(|id, session| {
                let keep = !self.is_expired(session, now);
                if !keep {
                    ended.push(id.clone());
                }
                keep
            });
        }
        if sessions.len() >= self.max_sessions {
            let oldest_idle = sessions
                .iter()
                .filter(|(_, session)| session.active.load(Ordering::Acquire) == 0)
                .min_by_key(|(_, session)| session.last_seen.load(Ordering::Relaxed))
                .map(|(id, _)| id.clone());
            let Some(oldest) = oldest_idle else { return Err(CreateError::Full) };
            sessions.remove(&oldest);
            ended.push(oldest);
        }
        sessions.insert(id, session.clone());
        Ok((session, ended))
    }

    /// The live session with this id; an expired one is removed and reported as gone.
    pub(crate) fn get(&self, id: &str) -> Option<Arc<HttpSession>> {
        let now = self.now();
        let mut sessions = lock(&self.sessions);
        let session = sessions.get(id)?;
        if self.is_expired(session, now) {
            sessions.remove(id);
            return None;
        }
        session.last_seen.store(now, Ordering::Relaxed);
        Some(session.clone())
    }

    pub(crate) fn remove(&self, id: &str) -> Option<Arc<HttpSession>> {
        lock(&self.sessions).remove(id)
    }

    /// Every live session, for delivering server events.
    pub(crate) fn all(&self) -> Vec<Arc<HttpSession>> {
        lock(&self.sessions).values().cloned().collect()
    }

    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        lock(&self.sessions).len()
    }
}

/// 128 bits from the operating system's random source, as 32 hex digits: visible ASCII, as
/// `Mcp-Session-Id` requires, and unguessable.
fn random_id() -> Result<String, String> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).map_err(|err| err.to_string())?;
    Ok(bytes.iter().map(|byte| format!("{byte:02x}")).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(max: usize) -> SessionTable {
        SessionTable::new(Duration::from_secs(60), max)
    }

    fn make(table: &SessionTable) -> Result<(Arc<HttpSession>, Vec<String>), CreateError> {
        table.create(Session::new)
    }

    #[test]
    fn ids_are_random_visible_ascii() {
        let table = table(10);
        let (first, _) = make(&table).unwrap();
        let (second, _) = make(&table).unwrap();
        let (a, b) = (first.session.id(), second.session.id());
        assert_ne!(a, b);
        assert_eq!(a.len(), 32);
        assert!(a.bytes().all(|byte| (0x21..=0x7e).contains(&byte)));
        assert!(table.get(a).is_some());
        assert!(table.get("nope").is_none());
    }

    #[test]
    fn at_the_limit_the_longest_idle_session_is_evicted_and_active_ones_are_kept() {
        let table = table(2);
        let (first, _) = make(&table).unwrap();
        let (second, _) = make(&table).unwrap();
        let _busy = ActiveGuard::new(second.clone());
        let (_, ended) = make(&table).unwrap();
        assert_eq!(ended, vec![first.session.id().to_owned()]);
        assert!(table.get(first.session.id()).is_none());
        assert_eq!(table.len(), 2);
        // Now one session is busy and the other idle; one more evicts the idle one.
        let (_, ended) = make(&table).unwrap();
        assert_eq!(ended.len(), 1);
        assert_ne!(ended[0], second.session.id());
    }

    #[test]
    fn when_every_session_is_busy_no_new_one_is_made() {
        let table = table(1);
        let (only, _) = make(&table).unwrap();
        let _busy = ActiveGuard::new(only);
        assert!(matches!(make(&table), Err(CreateError::Full)));
    }

    #[test]
    fn idle_sessions_expire() {
        let table = SessionTable::new(Duration::ZERO, 10);
        let (session, _) = make(&table).unwrap();
        std::thread::sleep(Duration::from_millis(5));
        assert!(table.get(session.session.id()).is_none());
    }
}
