//! Tokens verified already, by their SHA-256 (never the token itself), until they expire or a
//! bound: a client's token costs one verification, not one per request.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::Value;
use sha2::{Digest, Sha256};
use wharf_server::Principal;

/// Verified tokens, bounded in number and age.
#[derive(Debug)]
pub(crate) struct VerifiedTokens {
    entries: Mutex<HashMap<[u8; 32], Entry>>,
    capacity: usize,
    max_age: Duration,
}

#[derive(Debug)]
struct Entry {
    principal: Principal,
    until: SystemTime,
}

pub(crate) type TokenKey = [u8; 32];

impl VerifiedTokens {
    pub(crate) fn new(capacity: usize, max_age: Duration) -> VerifiedTokens {
        VerifiedTokens { entries: Mutex::new(HashMap::new()), capacity, max_age }
    }

    pub(crate) fn key(token: &[u8]) -> TokenKey {
        Sha256::digest(token).into()
    }

    /// The principal of a token verified before, while it is still good.
    pub(crate) fn get(&self, key: &TokenKey, now: SystemTime) -> Option<Principal> {
        let mut entries = self.entries.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let entry = entries.get(key)?;
        if now < entry.until {
            return Some(entry.principal.clone());
        }
        entries.remove(key);
        None
    }

    /// Until when the token with this key is kept, when it is and still good at `now`.
    pub(crate) fn kept_until(&self, key: &TokenKey, now: SystemTime) -> Option<SystemTime> {
        let entries = self.entries.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        entries.get(key).map(|entry| entry.until).filter(|until| now < *until)
    }

    /// Keeps a verified token's principal until its `exp` claim, or the bound if sooner.
    pub(crate) fn insert(&self, key: TokenKey, principal: &Principal, now: SystemTime) {
        let bound = now + self.max_age;
        let expiry = principal
            .claims()
            .and_then(|claims| claims.get("exp"))
            .and_then(Value::as_f64)
            .filter(|seconds| seconds.is_finite() && *seconds > 0.0)
            .map(|seconds| UNIX_EPOCH + Duration::from_secs_f64(seconds));
        let until = expiry.map_or(bound, |expiry| expiry.min(bound));
        let mut entries = self.entries.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if entries.len() >= self.capacity {
            entries.retain(|_, entry| now < entry.until);
            if entries.len() >= self.capacity {
                // Still full of live tokens: start over rather than grow; they verify again.
                entries.clear();
            }
        }
        entries.insert(key, Entry { principal: principal.clone(), until });
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_token_is_kept_until_its_expiry_or_the_bound() {
        let cache = VerifiedTokens::new(2, Duration::from_secs(300));
        let now = UNIX_EPOCH + Duration::from_secs(1_000_000);
        let Value::Object(claims) = json!({"exp": 1_000_060}) else { unreachable!() };
        let soon = Principal::new("ann").with_claims(claims);
        let key = VerifiedTokens::key(b"token-a");
        cache.insert(key, &soon, now);
        assert_eq!(cache.get(&key, now + Duration::from_secs(59)), Some(soon.clone()));
        assert_eq!(cache.get(&key, now + Duration::from_secs(60)), None, "expired with the token");
        let plain = Principal::new("bo");
        let other = VerifiedTokens::key(b"token-b");
        cache.insert(other, &plain, now);
        assert!(cache.get(&other, now + Duration::from_secs(299)).is_some());
        assert_eq!(cache.kept_until(&other, now), Some(now + Duration::from_secs(300)));
        assert_eq!(cache.kept_until(&other, now + Duration::from_secs(300)), None);
        assert!(cache.get(&other, now + Duration::from_secs(300)).is_none(), "the bound");
        assert_ne!(VerifiedTokens::key(b"token-a"), VerifiedTokens::key(b"token-b"));
    }

    #[test]
    fn the_cache_stays_within_its_capacity() {
        let cache = VerifiedTokens::new(2, Duration::from_secs(300));
        let now = UNIX_EPOCH + Duration::from_secs(1_000_000);
        for token in ["a", "b", "c"] {
            cache.insert(VerifiedTokens::key(token.as_bytes()), &Principal::new(token), now);
        }
        let kept = ["a", "b", "c"]
            .iter()
            .filter(|token| cache.get(&VerifiedTokens::key(token.as_bytes()), now).is_some())
            .count();
        assert!(kept <= 2, "{kept}");
        assert!(cache.get(&VerifiedTokens::key(b"c"), now).is_some(), "the newest is kept");
    }
}
