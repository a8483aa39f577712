//! An issuer's signing keys: fetched from its `jwks_uri` (found by discovery) on first use and
//! kept; a token naming a key not in the set fetches it again, at most once per interval, so
//! that keys rotate without a restart and a flood of made-up `kid`s costs the issuer nothing.

use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

use crate::discovery::discover;
use crate::fetch::{FetchError, Fetcher};
use crate::jwk::JwkSet;

/// The keys of one issuer, as last fetched.
#[derive(Debug)]
pub(crate) struct IssuerKeys {
    issuer: String,
    fetcher: Fetcher,
    /// The fewest seconds between two fetches of the set.
    refetch_interval: Duration,
    /// Kept at most this long, so that a withdrawn key stops working.
    max_age: Duration,
    state: RwLock<State>,
    /// Held while fetching, so that many requests with an unknown key cause one fetch.
    fetching: tokio::sync::Mutex<()>,
}

#[derive(Debug, Default)]
struct State {
    jwks_uri: Option<String>,
    keys: Option<Arc<JwkSet>>,
    fetched_at: Option<Instant>,
}

impl IssuerKeys {
    pub(crate) fn new(issuer: String, fetcher: Fetcher, refetch_interval: Duration, max_age: Duration) -> IssuerKeys {
        IssuerKeys {
            issuer,
            fetcher,
            refetch_interval,
            max_age,
            state: RwLock::new(State::default()),
            fetching: tokio::sync::Mutex::new(()),
        }
    }

    /// The keys, fetched first if there are none yet or they are too old.
    pub(crate) async fn current(&self) -> Result<Arc<JwkSet>, FetchError> {
        {
            let state = self.state.read().unwrap_or_else(std::sync::PoisonError::into_inner);
            if let (Some(keys), Some(at)) = (&state.keys, state.fetched_at)
                && at.elapsed() < self.max_age
            {
                return Ok(keys.clone());
            }
        }
        self.fetch(None).await
    }

    /// The keys again after a token named one not in `seen`: fetched anew unless they were
    /// fetched less than the interval ago (then `seen` is what there is).
    pub(crate) async fn after_unknown_key(&self, seen: &Arc<JwkSet>) -> Result<Arc<JwkSet>, FetchError> {
        self.fetch(Some(seen)).await
    }

    async fn fetch(&self, seen: Option<&Arc<JwkSet>>) -> Result<Arc<JwkSet>, FetchError> {
        let _one_at_a_time = self.fetching.lock().await;
        let jwks_uri = {
            let state = self.state.read().unwrap_or_else(std::sync::PoisonError::into_inner);
            if let Some(at) = state.fetched_at {
                match &state.keys {
                    Some(keys) => {
                        // Another request fetched while this one waited, or the set is fresh
                        // enough.
                        let newer = seen.is_none_or(|seen| !Arc::ptr_eq(seen, keys));
                        if (newer && at.elapsed() < self.max_age) || at.elapsed() < self.refetch_interval {
                            return Ok(keys.clone());
                        }
                    }
                    None if at.elapsed() < self.refetch_interval => {
                        return Err(format!("the keys of {} could not be fetched; trying again shortly", self.issuer));
                    }
                    None => {}
                }
            }
            state.jwks_uri.clone()
        };
        let outcome: Result<(String, JwkSet), FetchError> = async {
            let jwks_uri = match jwks_uri {
                Some(uri) => uri,
                None => discover(&self.fetcher, &self.issuer)
                    .await?
                    .jwks_uri
                    .ok_or_else(|| format!("the issuer {} publishes no jwks_uri", self.issuer))?,
            };
            let document = self.fetcher.json(&jwks_uri).await?;
            let keys = serde_json::from_value(document).map_err(|err| format!("{jwks_uri} is not a JWK set: {err}"))?;
            Ok((jwks_uri, keys))
        }
        .await;
        let mut state = self.state.write().unwrap_or_else(std::sync::PoisonError::into_inner);
        // A failed fetch also waits the interval before the next, so a broken issuer is not
        // asked on every request.
        state.fetched_at = Some(Instant::now());
        match outcome {
            Ok((jwks_uri, keys)) => {
                tracing::debug!(issuer = %self.issuer, keys = keys.keys.len(), "fetched the issuer's keys");
                let keys = Arc::new(keys);
                state.jwks_uri = Some(jwks_uri);
                state.keys = Some(keys.clone());
                Ok(keys)
            }
            Err(problem) => {
                tracing::warn!(issuer = %self.issuer, %problem, "the issuer's keys could not be fetched");
                state.keys.clone().ok_or(problem)
            }
        }
    }
}
