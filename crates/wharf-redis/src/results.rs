//! [`RedisResultStore`], a [`wharf_server::ResultStore`] every instance shares: a result too
//! large for its client is a hash (who may read it, its media type, its size, its number of
//! pages) and a list of pages beside it, both expiring together, so that any instance answers
//! for any page.

use std::sync::Arc;
use std::time::Duration;

use wharf_server::{ResultStore, ResultStoreError, SpilledPage, SpilledResult, StoreFuture};

use crate::connection::{Redis, without_secrets};

/// A result's hash as read: owner, media type, binary, size, pages.
type About = (Option<String>, Option<String>, Option<u8>, Option<u64>, Option<usize>);

/// Keeps large results in Redis for every instance of a server.
#[derive(Debug, Clone)]
pub struct RedisResultStore {
    redis: Redis,
}

impl Redis {
    /// The store of results too large for their clients, for
    /// [`ServerBuilder::result_store`](wharf_server::ServerBuilder::result_store).
    pub fn result_store(&self) -> Arc<RedisResultStore> {
        Arc::new(RedisResultStore { redis: self.clone() })
    }
}

impl ResultStore for RedisResultStore {
    fn put<'a>(
        &'a self,
        id: &'a str,
        result: SpilledResult,
        ttl: Duration,
    ) -> StoreFuture<'a, Result<(), ResultStoreError>> {
        Box::pin(async move {
            let (about, pages) = (self.redis.keys.result(id), self.redis.keys.result_pages(id));
            let millis = ttl.as_millis().max(1).to_string();
            let mut pipe = redis::pipe();
            pipe.atomic().cmd("DEL").arg(&about).arg(&pages).ignore();
            pipe.cmd("HSET")
                .arg(&about)
                .arg("owner")
                .arg(&result.owner)
                .arg("mime")
                .arg(result.mime_type.as_deref().unwrap_or_default())
                .arg("binary")
                .arg(u8::from(result.binary))
                .arg("size")
                .arg(result.size)
                .arg("pages")
                .arg(result.pages.len())
                .ignore();
            for chunk in result.pages.chunks(64) {
                pipe.cmd("RPUSH").arg(&pages);
                for page in chunk {
                    pipe.arg(page.as_bytes());
                }
                pipe.ignore();
            }
            pipe.cmd("PEXPIRE").arg(&about).arg(&millis).ignore();
            pipe.cmd("PEXPIRE").arg(&pages).arg(&millis).ignore();
            let mut connection = self.redis.connection.clone();
            pipe.query_async::<()>(&mut connection)
                .await
                .map_err(|err| ResultStoreError::Unavailable(without_secrets(&err)))?;
            self.redis.replicated(&about).await;
            Ok(())
        })
    }

    fn page<'a>(&'a self, id: &'a str, page: usize) -> StoreFuture<'a, Option<SpilledPage>> {
        Box::pin(async move {
            let index = page.checked_sub(1)?;
            let mut connection = self.redis.connection.clone();
            let answer: redis::RedisResult<(About, Option<String>)> = redis::pipe()
                .cmd("HMGET")
                .arg(self.redis.keys.result(id))
                .arg(&["owner", "mime", "binary", "size", "pages"][..])
                .cmd("LINDEX")
                .arg(self.redis.keys.result_pages(id))
                .arg(index)
                .query_async(&mut connection)
                .await;
            let ((owner, mime, binary, size, pages), text) = match answer {
                Ok(answer) => answer,
                Err(err) => {
                    tracing::warn!(error = %without_secrets(&err), "a page of a large result could not be read");
                    return None;
                }
            };
            Some(SpilledPage {
                owner: owner?,
                mime_type: mime.filter(|mime| !mime.is_empty()),
                binary: binary? == 1,
                page: Arc::from(text?),
                pages: pages?,
                size: size?,
            })
        })
    }
}
