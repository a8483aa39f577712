//! DPoP proofs (RFC 9449 §4.3): the one `DPoP` header of a request checked step by step (a JWT
//! of type `dpop+jwt`, an asymmetric algorithm from the allowlist, signed by the public key it
//! embeds, which holds no private member; `htm` and `htu` naming this request, `iat` within the
//! window, a `jti`, and `ath` the hash of the access token), and the key's RFC 7638 thumbprint,
//! which the token's `cnf.jkt` must equal. Whether a `jti` was seen before is the
//! [`ProofReplayCache`]'s to say.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use http::HeaderMap;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::jwk::Jwk;
use crate::jws::{Alg, Compact, Rejected};

/// The header a proof comes in.
pub(crate) const DPOP_HEADER: &str = "dpop";

/// The longest proof read; longer ones are refused before they are decoded.
const MAX_PROOF_BYTES: usize = 8 * 1024;
/// The longest `jti` kept.
const MAX_JTI_BYTES: usize = 256;

/// Members only a private JWK has (RFC 7518 §6.2.2, §6.3.2, §6.4; RFC 8037 §2).
const PRIVATE_MEMBERS: [&str; 8] = ["d", "p", "q", "dp", "dq", "qi", "oth", "k"];

/// What a valid proof says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Proof {
    /// The RFC 7638 thumbprint of its key (SHA-256, base64url).
    pub(crate) thumbprint: String,
    /// Its unique id.
    pub(crate) jti: String,
}

/// Server nonces (RFC 9449 §8): the HMAC of the current period under a secret, so that every
/// replica with the same secret makes and takes the same ones, without storing any. A nonce is
/// taken in its period and the next.
pub(crate) struct Nonces {
    secret: [u8; 32],
    period: u64,
}

impl std::fmt::Debug for Nonces {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Nonces").field("period", &self.period).finish_non_exhaustive()
    }
}

impl Nonces {
    /// Nonces under `secret`, each made for a period of `period`.
    pub(crate) fn new(secret: [u8; 32], period: Duration) -> Nonces {
        Nonces { secret, period: period.as_secs().max(1) }
    }

    fn of_period(&self, index: u64) -> String {
        use hmac::Mac as _;
        let mut mac = hmac::Hmac::<Sha256>::new_from_slice(&self.secret).expect("HMAC takes a key of any length");
        mac.update(b"wharf dpop nonce");
        mac.update(&index.to_be_bytes());
        URL_SAFE_NO_PAD.encode(mac.finalize().into_bytes())
    }

    /// The nonce to give clients at `now` (seconds since the epoch).
    pub(crate) fn current(&self, now: u64) -> String {
        self.of_period(now / self.period)
    }

    /// True for the nonce of `now`'s period or the one before.
    pub(crate) fn accepts(&self, nonce: &str, now: u64) -> bool {
        let index = now / self.period;
        nonce == self.of_period(index) || index.checked_sub(1).is_some_and(|before| nonce == self.of_period(before))
    }
}

/// Why a proof is refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Refused {
    /// It breaks a step of §4.3.
    Invalid(&'static str),
    /// It carries no nonce, or one no longer taken: the client is to retry with the current one.
    UseNonce,
}

impl From<&'static str> for Refused {
    fn from(why: &'static str) -> Refused {
        Refused::Invalid(why)
    }
}

/// What a proof must match: the request, the access token it comes with, and the clock.
#[derive(Debug)]
pub(crate) struct Expected<'a> {
    /// The request's method.
    pub(crate) method: &'a str,
    /// The request's URL as clients reach it, without query.
    pub(crate) url: &'a str,
    /// The access token the request presents.
    pub(crate) access_token: &'a str,
    /// Seconds since the epoch.
    pub(crate) now: u64,
    /// How far `iat` may be from `now`, either way.
    pub(crate) window: Duration,
    /// The server nonces a proof must carry, when the server gives them.
    pub(crate) nonces: Option<&'a Nonces>,
}

/// The one `DPoP` header of a request, or why there is not one.
pub(crate) fn proof_header(headers: &HeaderMap) -> Result<&str, &'static str> {
    let mut values = headers.get_all(DPOP_HEADER).iter();
    let value = values.next().ok_or("the request has no DPoP proof")?;
    if values.next().is_some() {
        return Err("the request has more than one DPoP header");
    }
    let value = value.to_str().map_err(|_| "the DPoP header is not text")?;
    if value.len() > MAX_PROOF_BYTES {
        return Err("the DPoP proof is too long");
    }
    Ok(value)
}

/// The RFC 7638 thumbprint of a public JWK: its required members, in order, hashed.
pub(crate) fn thumbprint(jwk: &Value) -> Result<String, &'static str> {
    let member = |name: &str| jwk.get(name).and_then(Value::as_str).ok_or("the proof's key lacks a required member");
    // serde_json's map keeps keys sorted: the members come out in RFC 7638's order.
    let required = match jwk.get("kty").and_then(Value::as_str) {
        Some("EC") => json!({"crv": member("crv")?, "kty": "EC", "x": member("x")?, "y": member("y")?}),
        Some("RSA") => json!({"e": member("e")?, "kty": "RSA", "n": member("n")?}),
        Some("OKP") => json!({"crv": member("crv")?, "kty": "OKP", "x": member("x")?}),
        _ => return Err("the proof's key is of no known type"),
    };
    Ok(URL_SAFE_NO_PAD.encode(Sha256::digest(required.to_string().as_bytes())))
}

/// The hash of an access token a proof names in `ath`.
pub(crate) fn token_hash(access_token: &str) -> String {
    URL_SAFE_NO_PAD.encode(Sha256::digest(access_token.as_bytes()))
}

/// `url` as compared with `htu` (RFC 9449 §4.3 step 9, RFC 3986 §6.2.2 and §6.2.3): scheme and
/// host in lower case, the default port dropped, an empty path as `/`, percent-encodings in
/// upper case, without query and fragment.
pub(crate) fn normalized_target(url: &str) -> Option<String> {
    let url = url.split(['?', '#']).next()?;
    let (scheme, rest) = url.split_once("://")?;
    let scheme = scheme.to_ascii_lowercase();
    let (authority, path) = rest.find('/').map_or((rest, "/"), |slash| (&rest[..slash], &rest[slash..]));
    if authority.is_empty() || authority.contains('@') {
        return None;
    }
    let authority = authority.to_ascii_lowercase();
    let default_port = match scheme.as_str() {
        "https" => ":443",
        "http" => ":80",
        _ => return None,
    };
    let authority = authority.strip_suffix(default_port).unwrap_or(&authority);
    let mut normal_path = String::with_capacity(path.len());
    let mut chars = path.chars();
    while let Some(character) = chars.next() {
        normal_path.push(character);
        if character == '%' {
            normal_path.extend(chars.by_ref().take(2).map(|digit| digit.to_ascii_uppercase()));
        }
    }
    Some(format!("{scheme}://{authority}{normal_path}"))
}

/// Checks `proof` against `expected`, step by step; what it says, or the first step it fails
/// (the nonce last, once the proof is otherwise good).
pub(crate) fn verify(proof: &str, expected: &Expected<'_>) -> Result<Proof, Refused> {
    let jws = Compact::split(proof).ok_or("the DPoP proof is not a JWT")?;
    let header: Value = jws.header().ok_or("the DPoP proof is not a JWT")?;
    if header.get("typ").and_then(Value::as_str) != Some("dpop+jwt") {
        return Err("the DPoP proof's typ is not dpop+jwt".into());
    }
    let alg = header
        .get("alg")
        .and_then(Value::as_str)
        .and_then(Alg::named)
        .ok_or("the DPoP proof's algorithm is not accepted")?;
    // RFC 7515 §4.1.11, as for access tokens: no extension is understood here.
    if header.get("crit").is_some() {
        return Err("the DPoP proof names critical header extensions this server does not know (crit)".into());
    }
    let jwk = header.get("jwk").filter(|jwk| jwk.is_object()).ok_or("the DPoP proof embeds no public key (jwk)")?;
    if PRIVATE_MEMBERS.iter().any(|member| jwk.get(*member).is_some()) {
        return Err("the DPoP proof's key holds a private member".into());
    }
    let key: Jwk = serde_json::from_value(jwk.clone()).map_err(|_| "the DPoP proof's key is not a usable JWK")?;
    jws.verify(&key, alg).map_err(|rejected| match rejected {
        Rejected::Key => "the DPoP proof's key is not a usable JWK",
        Rejected::Signature => "the DPoP proof's signature is not valid",
    })?;
    let claims: Value = jws.payload().ok_or("the DPoP proof is not a JWT")?;
    let text = |name: &str| claims.get(name).and_then(Value::as_str);
    let jti = text("jti").filter(|jti| !jti.is_empty()).ok_or("the DPoP proof has no jti")?;
    if jti.len() > MAX_JTI_BYTES {
        return Err("the DPoP proof's jti is too long".into());
    }
    let htm = text("htm").ok_or("the DPoP proof has no htm")?;
    let htu = text("htu").ok_or("the DPoP proof has no htu")?;
    let iat = claims.get("iat").and_then(Value::as_u64).ok_or("the DPoP proof has no iat")?;
    if htm != expected.method {
        return Err("the DPoP proof's htm is not this request's method".into());
    }
    let target = normalized_target(htu);
    if target.is_none() || target != normalized_target(expected.url) {
        return Err("the DPoP proof's htu is not this request's URL".into());
    }
    if iat.abs_diff(expected.now) > expected.window.as_secs() {
        return Err("the DPoP proof's iat is outside the accepted window".into());
    }
    match text("ath") {
        None => return Err("the DPoP proof has no ath".into()),
        Some(ath) if ath != token_hash(expected.access_token) => {
            return Err("the DPoP proof's ath is not the access token's hash".into());
        }
        Some(_) => {}
    }
    if let Some(nonces) = expected.nonces
        && !text("nonce").is_some_and(|nonce| nonces.accepts(nonce, expected.now))
    {
        return Err(Refused::UseNonce);
    }
    Ok(Proof { thumbprint: thumbprint(jwk)?, jti: jti.to_owned() })
}

/// What [`ProofReplayCache::first_use`] returns.
pub type ReplayFuture<'a> = Pin<Box<dyn Future<Output = Result<bool, String>> + Send + 'a>>;

/// Where the `jti` of every accepted proof is kept for as long as its `iat` is in the window,
/// so that a proof is used once: in memory ([`MemoryReplayCache`]), or shared by every replica
/// (`wharf_redis`).
pub trait ProofReplayCache: Send + Sync + 'static {
    /// Records `key` for `ttl`: true when it was not recorded already (the proof's first use),
    /// false for a replay; an error when the store cannot say, and the proof is refused.
    fn first_use<'a>(&'a self, key: &'a str, ttl: Duration) -> ReplayFuture<'a>;
}

/// The proofs seen recently, in memory, at most `capacity` (the oldest forgotten first).
#[derive(Debug)]
pub struct MemoryReplayCache {
    seen: Mutex<HashMap<String, Instant>>,
    capacity: usize,
}

impl MemoryReplayCache {
    /// A cache of at most `capacity` proofs.
    pub fn new(capacity: usize) -> MemoryReplayCache {
        MemoryReplayCache { seen: Mutex::new(HashMap::new()), capacity: capacity.max(1) }
    }
}

impl Default for MemoryReplayCache {
    fn default() -> MemoryReplayCache {
        MemoryReplayCache::new(100_000)
    }
}

impl ProofReplayCache for MemoryReplayCache {
    fn first_use<'a>(&'a self, key: &'a str, ttl: Duration) -> ReplayFuture<'a> {
        let now = Instant::now();
        let mut seen = self.seen.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let first = match seen.get(key) {
            Some(until) if *until > now => false,
            _ => {
                if seen.len() >= self.capacity {
                    seen.retain(|_, until| *until > now);
                }
                if seen.len() >= self.capacity
                    && let Some(oldest) = seen.iter().min_by_key(|(_, until)| **until).map(|(key, _)| key.clone())
                {
                    seen.remove(&oldest);
                }
                seen.insert(key.to_owned(), now + ttl);
                true
            }
        };
        Box::pin(async move { Ok(first) })
    }
}

#[cfg(test)]
mod tests {
    use p256::ecdsa::signature::Signer;
    use p256::ecdsa::{Signature, SigningKey};

    use super::*;

    const URL: &str = "https://mcp.example.com/mcp";
    const TOKEN: &str = "an.access.token";
    const NOW: u64 = 1_800_000_000;

    fn key(seed: u8) -> SigningKey {
        SigningKey::from_bytes(&[seed; 32].into()).unwrap()
    }

    fn public_jwk(key: &SigningKey) -> Value {
        let point = key.verifying_key().to_encoded_point(false);
        json!({"kty": "EC", "crv": "P-256", "x": URL_SAFE_NO_PAD.encode(point.x().unwrap()),
            "y": URL_SAFE_NO_PAD.encode(point.y().unwrap())})
    }

    fn sign(key: &SigningKey, header: &Value, claims: &Value) -> String {
        let input =
            format!("{}.{}", URL_SAFE_NO_PAD.encode(header.to_string()), URL_SAFE_NO_PAD.encode(claims.to_string()));
        let signature: Signature = key.sign(input.as_bytes());
        format!("{input}.{}", URL_SAFE_NO_PAD.encode(signature.to_bytes()))
    }

    fn header() -> Value {
        json!({"typ": "dpop+jwt", "alg": "ES256", "jwk": public_jwk(&key(1))})
    }

    fn claims() -> Value {
        json!({"jti": "e1j3V_bKic8-LAEB", "htm": "POST", "htu": URL, "iat": NOW, "ath": token_hash(TOKEN)})
    }

    fn expected() -> Expected<'static> {
        Expected {
            method: "POST",
            url: URL,
            access_token: TOKEN,
            now: NOW,
            window: Duration::from_secs(300),
            nonces: None,
        }
    }

    fn with(mut value: Value, key: &str, member: Value) -> Value {
        if member.is_null() {
            value.as_object_mut().unwrap().remove(key);
        } else {
            value[key] = member;
        }
        value
    }

    #[test]
    fn a_valid_proof_gives_its_keys_thumbprint() {
        let proof = verify(&sign(&key(1), &header(), &claims()), &expected()).unwrap();
        assert_eq!(proof.thumbprint, thumbprint(&public_jwk(&key(1))).unwrap());
        assert_eq!(proof.jti, "e1j3V_bKic8-LAEB");
        // The URL compared as RFC 3986 normalizes it: case, default port, query dropped.
        let spelled = with(claims(), "htu", json!("HTTPS://MCP.example.com:443/mcp?x=1"));
        assert!(verify(&sign(&key(1), &header(), &spelled), &expected()).is_ok());
        let late = with(claims(), "iat", json!(NOW - 299));
        assert!(verify(&sign(&key(1), &header(), &late), &expected()).is_ok());
    }

    #[test]
    fn rfc_7638s_example_thumbprint() {
        // RFC 7638 §3.1's RSA key and its thumbprint.
        let n = "0vx7agoebGcQSuuPiLJXZptN9nndrQmbXEps2aiAFbWhM78LhWx4cbbfAAtVT86zwu1RK7aPFFxuhDR1L6tSoc_BJECPebWKRXjBZCiFV4n3oknjhMstn64tZ_2W-5JsGY4Hc5n9yBXArwl93lqt7_RN5w6Cf0h4QyQ5v-65YGjQR0_FDW2QvzqY368QQMicAtaSqzs8KJZgnYb9c7d0zgdAZHzu6qMQvRL5hajrn1n91CbOpbISD08qNLyrdkt-bFTWhAI4vMQFh6WeZu0fM4lFd2NcRwr3XPksINHaQ-G_xBniIqbw0Ls1jF44-csFCur-kEgU8awapJzKnqDKgw";
        let jwk = json!({"kty": "RSA", "n": n, "e": "AQAB", "alg": "RS256", "kid": "2011-04-29"});
        assert_eq!(thumbprint(&jwk).unwrap(), "NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs");
    }

    #[test]
    fn every_broken_proof_is_refused_at_its_step() {
        let refused = |header: &Value, claims: &Value| match verify(&sign(&key(1), header, claims), &expected()) {
            Err(Refused::Invalid(why)) => why,
            other => panic!("{other:?}"),
        };
        assert!(refused(&with(header(), "typ", json!("JWT")), &claims()).contains("typ"));
        assert!(refused(&with(header(), "typ", Value::Null), &claims()).contains("typ"));
        assert!(refused(&with(header(), "alg", json!("none")), &claims()).contains("algorithm"));
        assert!(refused(&with(header(), "alg", json!("HS256")), &claims()).contains("algorithm"));
        assert!(refused(&with(header(), "jwk", Value::Null), &claims()).contains("jwk"));
        let private = with(header(), "jwk", with(public_jwk(&key(1)), "d", json!("AAAA")));
        assert!(refused(&private, &claims()).contains("private"));
        // Signed by another key than the one it embeds.
        let forged = verify(&sign(&key(2), &header(), &claims()), &expected()).unwrap_err();
        assert_eq!(forged, Refused::Invalid("the DPoP proof's signature is not valid"));
        let (head, rest) =
            sign(&key(1), &header(), &claims()).split_once('.').map(|(a, b)| (a.to_owned(), b.to_owned())).unwrap();
        let signature = rest.rsplit('.').next().unwrap().to_owned();
        let tampered =
            format!("{head}.{}.{signature}", URL_SAFE_NO_PAD.encode(with(claims(), "htm", json!("GET")).to_string()));
        assert_eq!(
            verify(&tampered, &expected()).unwrap_err(),
            Refused::Invalid("the DPoP proof's signature is not valid")
        );
        for missing in ["jti", "htm", "htu", "iat", "ath"] {
            assert!(refused(&header(), &with(claims(), missing, Value::Null)).contains(missing), "{missing}");
        }
        assert!(refused(&header(), &with(claims(), "htm", json!("GET"))).contains("htm"));
        assert!(refused(&header(), &with(claims(), "htu", json!("https://other.example.com/mcp"))).contains("htu"));
        assert!(refused(&header(), &with(claims(), "htu", json!("https://mcp.example.com/other"))).contains("htu"));
        assert!(refused(&header(), &with(claims(), "iat", json!(NOW - 301))).contains("iat"));
        assert!(refused(&header(), &with(claims(), "iat", json!(NOW + 301))).contains("iat"));
        assert!(refused(&header(), &with(claims(), "ath", json!(token_hash("another token")))).contains("ath"));
        assert!(verify("not a jwt", &expected()).is_err());
        assert!(verify(&"x".repeat(10), &expected()).is_err());
    }

    #[test]
    fn a_proof_naming_critical_extensions_is_refused() {
        let critical = with(with(header(), "crit", json!(["x-unknown"])), "x-unknown", json!(1));
        assert_eq!(
            verify(&sign(&key(1), &critical, &claims()), &expected()),
            Err(Refused::Invalid("the DPoP proof names critical header extensions this server does not know (crit)"))
        );
        assert!(verify(&sign(&key(1), &header(), &claims()), &expected()).is_ok());
    }

    #[test]
    fn a_proof_whose_key_is_not_of_its_algorithm_is_refused() {
        let checked = |jwk: Value| verify(&sign(&key(1), &with(header(), "jwk", jwk), &claims()), &expected());
        let unusable = Err(Refused::Invalid("the DPoP proof's key is not a usable JWK"));
        assert_eq!(checked(with(public_jwk(&key(1)), "crv", json!("P-384"))), unusable);
        assert_eq!(checked(with(public_jwk(&key(1)), "kty", json!("OKP"))), unusable);
        assert_eq!(checked(with(public_jwk(&key(1)), "y", Value::Null)), unusable);
        assert_eq!(checked(with(public_jwk(&key(1)), "x", json!(5))), unusable);
        assert_eq!(checked(json!({"kty": "RSA", "n": "AQAB", "e": "AQAB"})), unusable);
        // Other members (its `alg`, a `kid`) are not checked: RFC 9449 asks for a public key only.
        assert!(checked(with(with(public_jwk(&key(1)), "alg", json!("ES256")), "kid", json!("any"))).is_ok());
    }

    #[test]
    fn one_header_only_and_each_proof_once() {
        let mut headers = HeaderMap::new();
        assert!(proof_header(&headers).is_err());
        headers.append(DPOP_HEADER, "a".parse().unwrap());
        assert_eq!(proof_header(&headers), Ok("a"));
        headers.append(DPOP_HEADER, "b".parse().unwrap());
        assert!(proof_header(&headers).unwrap_err().contains("more than one"));

        let cache = MemoryReplayCache::new(2);
        let ttl = Duration::from_secs(600);
        let first = |key: &str| futures_lite(cache.first_use(key, ttl));
        assert!(first("a"));
        assert!(!first("a"), "a replay");
        assert!(first("b"));
        assert!(first("c"), "past capacity, the oldest is forgotten");
        assert_eq!(cache.seen.lock().unwrap().len(), 2);
    }

    /// Runs a future that is ready at once.
    fn futures_lite(future: ReplayFuture<'_>) -> bool {
        let waker = std::task::Waker::noop();
        let mut context = std::task::Context::from_waker(waker);
        let mut future = future;
        match future.as_mut().poll(&mut context) {
            std::task::Poll::Ready(result) => result.unwrap(),
            std::task::Poll::Pending => panic!("the memory cache answers at once"),
        }
    }

    #[test]
    fn a_server_giving_nonces_takes_the_current_and_the_last_and_asks_for_a_new_one() {
        let nonces = Nonces::new([5; 32], Duration::from_secs(60));
        let given = nonces.current(NOW);
        assert!(nonces.accepts(&given, NOW) && nonces.accepts(&given, NOW + 60), "its period and the next");
        assert!(!nonces.accepts(&given, NOW + 120), "then no longer");
        assert!(!Nonces::new([6; 32], Duration::from_secs(60)).accepts(&given, NOW), "another secret's");
        let expected = Expected { nonces: Some(&nonces), ..expected() };
        let without = sign(&key(1), &header(), &claims());
        assert_eq!(verify(&without, &expected), Err(Refused::UseNonce));
        let stale = sign(&key(1), &header(), &with(claims(), "nonce", json!(nonces.current(NOW - 120))));
        assert_eq!(verify(&stale, &expected), Err(Refused::UseNonce));
        let fresh = sign(&key(1), &header(), &with(claims(), "nonce", json!(given)));
        assert!(verify(&fresh, &expected).is_ok());
        // A proof broken otherwise is refused for that, not sent for a nonce.
        let broken = sign(&key(1), &header(), &with(claims(), "htm", json!("GET")));
        assert!(matches!(verify(&broken, &expected), Err(Refused::Invalid(_))));
    }

    #[test]
    fn targets_are_normalized_as_rfc_3986_says() {
        assert_eq!(normalized_target("HTTP://Example.COM:80"), Some("http://example.com/".to_owned()));
        assert_eq!(
            normalized_target("https://a.example:8443/p%2fq?x#y"),
            Some("https://a.example:8443/p%2Fq".to_owned())
        );
        assert_eq!(normalized_target("ftp://a/"), None);
        assert_eq!(normalized_target("https://user@a/"), None);
        assert_eq!(normalized_target("/relative"), None);
    }
}
