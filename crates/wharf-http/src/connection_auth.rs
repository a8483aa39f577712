//! The principal a connection's last request was given, kept for the connection's next ones
//! when the authenticator allows it (`Authenticator::reusable_until`): a request presenting the
//! same `Authorization` header, byte for byte and as its only credential, is given it again
//! until the instant the authenticator named. The header's bytes are copied, so that what is
//! kept is the token, not the buffer it was read into; it goes with the connection.

use std::sync::{Mutex, PoisonError};
use std::time::Instant;

use http::HeaderMap;
use http::header::AUTHORIZATION;
use wharf_server::contract::Principal;

/// The `DPoP` header: a request with a proof is authenticated every time.
const DPOP: http::HeaderName = http::HeaderName::from_static("dpop");

/// One connection's remembered principal.
#[derive(Debug, Default)]
pub(crate) struct ConnectionAuth {
    kept: Mutex<Option<Kept>>,
}

#[derive(Debug)]
struct Kept {
    authorization: Box<[u8]>,
    principal: Principal,
    until: Instant,
}

impl ConnectionAuth {
    /// The principal kept for a request with these headers and this query, if it may be
    /// given again now.
    pub(crate) fn recall(&self, headers: &HeaderMap, query: Option<&str>) -> Option<Principal> {
        let authorization = sole_credential(headers, query)?;
        let kept = self.kept.lock().unwrap_or_else(PoisonError::into_inner);
        let kept = kept.as_ref()?;
        (*kept.authorization == *authorization && Instant::now() < kept.until).then(|| kept.principal.clone())
    }

    /// Keeps `principal`, given for a request with these headers and this query, until
    /// `until`; a request with any other credential leaves nothing kept.
    pub(crate) fn keep(&self, headers: &HeaderMap, query: Option<&str>, principal: &Principal, until: Instant) {
        let kept = sole_credential(headers, query).map(|authorization| Kept {
            authorization: authorization.into(),
            principal: principal.clone(),
            until,
        });
        *self.kept.lock().unwrap_or_else(PoisonError::into_inner) = kept;
    }
}

/// The `Authorization` header's bytes, when it is the request's only credential: one such
/// header, no `DPoP` proof, no query (where a token may also be sent).
fn sole_credential<'a>(headers: &'a HeaderMap, query: Option<&str>) -> Option<&'a [u8]> {
    if query.is_some() || headers.contains_key(DPOP) {
        return None;
    }
    let mut values = headers.get_all(AUTHORIZATION).iter();
    let authorization = values.next()?;
    values.next().is_none().then(|| authorization.as_bytes())
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use http::HeaderValue;

    use super::*;

    fn with(authorization: &'static str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(AUTHORIZATION, HeaderValue::from_static(authorization));
        headers
    }

    #[test]
    fn the_same_header_alone_is_given_the_kept_principal_until_the_instant_named() {
        let memo = ConnectionAuth::default();
        let ada = Principal::new("ada");
        let later = Instant::now() + Duration::from_secs(60);
        memo.keep(&with("Bearer one"), None, &ada, later);
        assert_eq!(memo.recall(&with("Bearer one"), None), Some(ada.clone()));
        assert_eq!(memo.recall(&with("Bearer two"), None), None, "another token");
        assert_eq!(memo.recall(&with("Bearer one "), None), None, "not byte for byte");
        assert_eq!(memo.recall(&with("Bearer one"), Some("access_token=x")), None, "a query");
        let mut with_proof = with("DPoP one");
        with_proof.insert(DPOP, HeaderValue::from_static("proof"));
        assert_eq!(memo.recall(&with_proof, None), None, "a DPoP proof");
        let mut twice = with("Bearer one");
        twice.append(AUTHORIZATION, HeaderValue::from_static("Bearer one"));
        assert_eq!(memo.recall(&twice, None), None, "two headers");
        assert_eq!(memo.recall(&HeaderMap::new(), None), None, "none");

        memo.keep(&with("Bearer one"), None, &ada, Instant::now());
        assert_eq!(memo.recall(&with("Bearer one"), None), None, "past the instant");
        memo.keep(&with("Bearer one"), None, &ada, later);
        memo.keep(&with("Bearer one"), Some("access_token=x"), &ada, later);
        assert_eq!(memo.recall(&with("Bearer one"), None), None, "another credential forgets it");
    }
}
