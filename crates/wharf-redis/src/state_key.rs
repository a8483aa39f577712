//! The key that seals `requestState` (2026-07-28 input rounds), shared through Redis: the
//! first instance of a deployment to ask makes one at random and stores it, the others read
//! it, so that a round started on one instance is finished on any other.

use crate::connection::{Redis, RedisError, RedisErrorKind, without_secrets};

/// The random bytes of a key.
const SECRET_BYTES: usize = 32;

impl Redis {
    /// The key every instance under this prefix seals `requestState` with, as `(id, secret)`
    /// for `ServerBuilder::request_state_key`: 32 random bytes made and stored by the first
    /// instance that asks (`SET NX`), read by the others. It stays in Redis until removed, so
    /// restarts keep it; to rotate it, delete the key `PREFIX:request-state-key` and restart the
    /// instances, or give the keys explicitly. Whoever can read this Redis can read the key:
    /// where that is too many, give every instance the keys yourself (`wharf serve` reads them
    /// from `WHARF_REQUEST_STATE_KEYS`) and do not call this. Fails when Redis does not answer
    /// or holds something else under that key.
    pub async fn shared_request_state_key(&self) -> Result<(String, Vec<u8>), RedisError> {
        let key = self.keys.request_state_key();
        let mut random = [0u8; SECRET_BYTES + 4];
        getrandom::fill(&mut random).map_err(|err| {
            RedisError::new(RedisErrorKind::NoRandomSource, format!("no random source for a key: {err}"))
        })?;
        let (id, secret) = random.split_at(4);
        let offered = format!("shared-{}={}", hex(id), hex(secret));
        let mut connection = self.connection.clone();
        let failed = |err: redis::RedisError| {
            RedisError::new(
                RedisErrorKind::Unavailable,
                format!("the shared request state key: {}", without_secrets(&err)),
            )
        };
        // Only the first offer is stored: every instance then reads the same key.
        let _: Option<String> =
            redis::cmd("SET").arg(&key).arg(&offered).arg("NX").query_async(&mut connection).await.map_err(failed)?;
        let stored: Option<String> = redis::cmd("GET").arg(&key).query_async(&mut connection).await.map_err(failed)?;
        stored.as_deref().and_then(parse).ok_or_else(|| {
            RedisError::new(
                RedisErrorKind::UnexpectedValue,
                format!("`{key}` does not hold a request state key (ID=HEX of {SECRET_BYTES} bytes or more)"),
            )
        })
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}

/// `ID=HEX` as an id and its secret, if the secret is long enough.
fn parse(stored: &str) -> Option<(String, Vec<u8>)> {
    let (id, hex) = stored.split_once('=')?;
    if id.is_empty() || hex.len() % 2 != 0 {
        return None;
    }
    let secret = (0..hex.len())
        .step_by(2)
        .map(|at| hex.get(at..at + 2).and_then(|pair| u8::from_str_radix(pair, 16).ok()))
        .collect::<Option<Vec<u8>>>()?;
    (secret.len() >= SECRET_BYTES).then(|| (id.to_owned(), secret))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stored_key_is_an_id_and_enough_hex() {
        let secret = "ab".repeat(SECRET_BYTES);
        assert_eq!(parse(&format!("shared-01=ab{secret}")).unwrap().1.len(), SECRET_BYTES + 1);
        assert!(parse(&format!("={secret}")).is_none());
        assert!(parse("k=abcd").is_none(), "too short");
        assert!(parse(&format!("k={secret}g")).is_none());
    }
}
