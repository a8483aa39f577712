//! Sealing `requestState`: HMAC-SHA256 over the state, with named keys so that a key can be
//! rotated while requests sealed with the old one are still coming back.

use std::sync::{Arc, RwLock};

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use hmac::{Hmac, Mac};
use sha2::Sha256;

type HmacSha256 = Hmac<Sha256>;

/// The token format's version, the first dot-separated part of every sealed state.
const FORMAT: &str = "w1";

/// A named secret that seals and opens request state.
#[derive(Clone)]
pub(crate) struct StateKey {
    id: Arc<str>,
    secret: Arc<[u8]>,
}

impl StateKey {
    pub(crate) fn new(id: &str, secret: &[u8]) -> StateKey {
        StateKey { id: id.into(), secret: secret.into() }
    }

    /// A key of 32 random bytes, for a server that was given none. State it seals is only
    /// understood by this process.
    pub(crate) fn random() -> Result<StateKey, getrandom::Error> {
        let mut secret = [0u8; 32];
        getrandom::fill(&mut secret)?;
        Ok(StateKey::new("local", &secret))
    }

    fn mac(&self, signed: &str) -> HmacSha256 {
        // HMAC accepts keys of every length, so this cannot fail.
        let mut mac = HmacSha256::new_from_slice(&self.secret).expect("HMAC takes keys of any length");
        mac.update(signed.as_bytes());
        mac
    }
}

impl std::fmt::Debug for StateKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The secret never appears in logs.
        f.debug_struct("StateKey").field("id", &self.id).finish_non_exhaustive()
    }
}

/// The keys of a server: one that seals, and any number that are still accepted.
#[derive(Debug, Default)]
pub(crate) struct Sealer {
    keys: RwLock<Keys>,
}

#[derive(Debug, Default)]
struct Keys {
    current: Option<StateKey>,
    accepted: Vec<StateKey>,
}

/// Why sealed state was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum OpenError {
    /// Not a token this server makes.
    Malformed,
    /// Sealed with a key this server does not know (any more).
    UnknownKey,
    /// The seal does not match: the state was changed.
    Tampered,
}

impl Sealer {
    pub(crate) fn new(current: StateKey, accepted: Vec<StateKey>) -> Sealer {
        Sealer { keys: RwLock::new(Keys { current: Some(current), accepted }) }
    }

    /// Seals with `key` from now on; the previous sealing key is still accepted.
    pub(crate) fn rotate(&self, key: StateKey) {
        let mut keys = self.keys.write().unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(previous) = keys.current.replace(key) {
            keys.accepted.retain(|accepted| accepted.id != previous.id);
            keys.accepted.push(previous);
        }
    }

    /// Forgets the key named `id`, unless it is the one that seals.
    pub(crate) fn retire(&self, id: &str) {
        let mut keys = self.keys.write().unwrap_or_else(std::sync::PoisonError::into_inner);
        keys.accepted.retain(|accepted| &*accepted.id != id);
    }

    /// `w1.<key id>.<payload, base64url>.<HMAC-SHA256 of everything before it, base64url>`.
    pub(crate) fn seal(&self, payload: &[u8]) -> String {
        let keys = self.keys.read().unwrap_or_else(std::sync::PoisonError::into_inner);
        let key = keys.current.as_ref().expect("a sealer always has a current key");
        let signed = format!("{FORMAT}.{}.{}", key.id, URL_SAFE_NO_PAD.encode(payload));
        let tag = key.mac(&signed).finalize().into_bytes();
        format!("{signed}.{}", URL_SAFE_NO_PAD.encode(tag))
    }

    /// The payload of a token this server sealed, with any key it still accepts.
    pub(crate) fn open(&self, token: &str) -> Result<Vec<u8>, OpenError> {
        let (signed, tag) = token.rsplit_once('.').ok_or(OpenError::Malformed)?;
        let mut parts = signed.splitn(3, '.');
        let (Some(FORMAT), Some(key_id), Some(payload)) = (parts.next(), parts.next(), parts.next()) else {
            return Err(OpenError::Malformed);
        };
        let tag = URL_SAFE_NO_PAD.decode(tag).map_err(|_| OpenError::Tampered)?;
        let keys = self.keys.read().unwrap_or_else(std::sync::PoisonError::into_inner);
        let key = keys
            .current
            .iter()
            .chain(keys.accepted.iter())
            .find(|key| &*key.id == key_id)
            .ok_or(OpenError::UnknownKey)?;
        // `verify_slice` compares in constant time.
        key.mac(signed).verify_slice(&tag).map_err(|_| OpenError::Tampered)?;
        URL_SAFE_NO_PAD.decode(payload).map_err(|_| OpenError::Malformed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sealed_state_opens_and_any_change_is_refused() {
        let sealer = Sealer::new(StateKey::new("k1", b"secret one"), Vec::new());
        let token = sealer.seal(br#"{"a":1}"#);
        assert!(token.starts_with("w1.k1."));
        assert_eq!(sealer.open(&token).unwrap(), br#"{"a":1}"#);
        assert_eq!(sealer.open(&format!("{token}-TAMPERED")), Err(OpenError::Tampered));
        // Another payload under the same tag.
        let parts: Vec<&str> = token.split('.').collect();
        let forged = format!("w1.k1.{}.{}", URL_SAFE_NO_PAD.encode(br#"{"a":2}"#), parts[3]);
        assert_eq!(sealer.open(&forged), Err(OpenError::Tampered));
        assert_eq!(sealer.open("not a token"), Err(OpenError::Malformed));
        assert_eq!(sealer.open(&token.replacen("k1", "k9", 1)), Err(OpenError::UnknownKey));
    }

    #[test]
    fn rotation_keeps_accepting_the_previous_key_until_it_is_retired() {
        let sealer = Sealer::new(StateKey::new("k1", b"secret one"), Vec::new());
        let old = sealer.seal(b"old");
        sealer.rotate(StateKey::new("k2", b"secret two"));
        let new = sealer.seal(b"new");
        assert!(new.starts_with("w1.k2."));
        assert_eq!(sealer.open(&old).unwrap(), b"old");
        assert_eq!(sealer.open(&new).unwrap(), b"new");
        sealer.retire("k1");
        assert_eq!(sealer.open(&old), Err(OpenError::UnknownKey));
        // Another instance with the same key accepts the state.
        let other = Sealer::new(StateKey::new("k2", b"secret two"), Vec::new());
        assert_eq!(other.open(&new).unwrap(), b"new");
        // The same key id with another secret does not.
        let impostor = Sealer::new(StateKey::new("k2", b"guessed"), Vec::new());
        assert_eq!(impostor.open(&new), Err(OpenError::Tampered));
    }
}
