//! Where the whole of a result too large for its client waits to be read in pages: the
//! [`ResultStore`] trait, and [`MemoryResultStore`], bounded, for one process (a store that
//! instances share, such as Redis, lets any of them answer for the pages).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::task::store::StoreFuture;

/// A result kept for reading in pages.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpilledResult {
    /// Who may read it: the principal, else the session, that made the call; empty when the
    /// call had neither (then the unguessable link is the only key).
    pub owner: String,
    /// The content's media type.
    pub mime_type: Option<String>,
    /// True when each page is base64 of bytes (a blob), false when it is text.
    pub binary: bool,
    /// The pages, in order: text, or base64.
    pub pages: Vec<Arc<str>>,
    /// The size of the whole, in bytes (decoded, for binary content).
    pub size: u64,
}

/// One page of a kept result, with what the reader needs to know of the whole.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpilledPage {
    /// Who may read it (see [`SpilledResult::owner`]).
    pub owner: String,
    /// The content's media type.
    pub mime_type: Option<String>,
    /// True when the page is base64 of bytes.
    pub binary: bool,
    /// The page asked for.
    pub page: Arc<str>,
    /// How many pages there are.
    pub pages: usize,
    /// The size of the whole, in bytes.
    pub size: u64,
}

/// Why a store could not keep a result.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ResultStoreError {
    /// The store holds as much as it may.
    Full,
    /// The store could not be reached or written; the text says why.
    Unavailable(String),
}

impl std::fmt::Display for ResultStoreError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ResultStoreError::Full => f.write_str("the store of large results is full"),
            ResultStoreError::Unavailable(why) => write!(f, "the store of large results is unavailable: {why}"),
        }
    }
}

/// Keeps results too large for their clients for `ttl`, to be read a page at a time.
pub trait ResultStore: Send + Sync + 'static {
    /// Keeps `result` under `id` for `ttl`.
    fn put<'a>(
        &'a self,
        id: &'a str,
        result: SpilledResult,
        ttl: Duration,
    ) -> StoreFuture<'a, Result<(), ResultStoreError>>;
    /// Page `page` (counted from 1) of the result kept under `id`; `None` when there is no such
    /// result (never kept, or expired) or no such page.
    fn page<'a>(&'a self, id: &'a str, page: usize) -> StoreFuture<'a, Option<SpilledPage>>;
}

/// A [`ResultStore`] in this process's memory: at most `max_bytes` of pages in all (expired
/// results are dropped to make room).
#[derive(Debug)]
pub struct MemoryResultStore {
    kept: Mutex<HashMap<String, (Instant, Arc<SpilledResult>)>>,
    max_bytes: usize,
}

impl Default for MemoryResultStore {
    /// At most 256 MiB of pages.
    fn default() -> MemoryResultStore {
        MemoryResultStore::new(256 * 1024 * 1024)
    }
}

impl MemoryResultStore {
    /// A store of at most `max_bytes` of pages.
    pub fn new(max_bytes: usize) -> MemoryResultStore {
        MemoryResultStore { kept: Mutex::default(), max_bytes }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, (Instant, Arc<SpilledResult>)>> {
        self.kept.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

fn bytes_of(result: &SpilledResult) -> usize {
    result.pages.iter().map(|page| page.len()).sum()
}

impl ResultStore for MemoryResultStore {
    fn put<'a>(
        &'a self,
        id: &'a str,
        result: SpilledResult,
        ttl: Duration,
    ) -> StoreFuture<'a, Result<(), ResultStoreError>> {
        Box::pin(async move {
            let now = Instant::now();
            let mut kept = self.lock();
            kept.retain(|_, (expires, _)| *expires > now);
            let held: usize = kept.values().map(|(_, kept)| bytes_of(kept)).sum();
            if held + bytes_of(&result) > self.max_bytes {
                return Err(ResultStoreError::Full);
            }
            kept.insert(id.to_owned(), (now + ttl, Arc::new(result)));
            Ok(())
        })
    }

    fn page<'a>(&'a self, id: &'a str, page: usize) -> StoreFuture<'a, Option<SpilledPage>> {
        Box::pin(async move {
            let kept =
                self.lock().get(id).filter(|(expires, _)| *expires > Instant::now()).map(|(_, kept)| kept.clone())?;
            let text = kept.pages.get(page.checked_sub(1)?)?.clone();
            Some(SpilledPage {
                owner: kept.owner.clone(),
                mime_type: kept.mime_type.clone(),
                binary: kept.binary,
                page: text,
                pages: kept.pages.len(),
                size: kept.size,
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result(pages: &[&str]) -> SpilledResult {
        SpilledResult {
            owner: "ada".to_owned(),
            mime_type: Some("text/plain".to_owned()),
            binary: false,
            pages: pages.iter().map(|page| Arc::from(*page)).collect(),
            size: pages.iter().map(|page| page.len() as u64).sum(),
        }
    }

    #[tokio::test]
    async fn pages_are_read_by_number_until_the_result_expires() {
        let store = MemoryResultStore::default();
        store.put("r", result(&["one ", "two"]), Duration::from_secs(60)).await.unwrap();
        let second = store.page("r", 2).await.unwrap();
        assert_eq!((&*second.page, second.pages, second.size, second.owner.as_str()), ("two", 2, 7, "ada"));
        assert_eq!(store.page("r", 0).await, None);
        assert_eq!(store.page("r", 3).await, None);
        assert_eq!(store.page("other", 1).await, None);
        store.put("gone", result(&["x"]), Duration::ZERO).await.unwrap();
        assert_eq!(store.page("gone", 1).await, None, "expired");
    }

    #[tokio::test]
    async fn the_store_is_bounded() {
        let store = MemoryResultStore::new(10);
        store.put("a", result(&["12345678"]), Duration::from_secs(60)).await.unwrap();
        assert_eq!(store.put("b", result(&["123"]), Duration::from_secs(60)).await, Err(ResultStoreError::Full));
    }
}
