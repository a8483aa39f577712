//! JWT access tokens (RFC 9068 §4): the header's type and algorithm, the issuer's key it names,
//! and the signature, checked before any claim is believed.

use jsonwebtoken::jwk::{AlgorithmParameters, Jwk, JwkSet, PublicKeyUse};
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use wharf_protocol::JsonObject;

/// The signature algorithms accepted: asymmetric only, so no key published for verifying can
/// also sign, and never `none`.
pub(crate) const ALLOWED: [Algorithm; 7] = [
    Algorithm::RS256,
    Algorithm::RS384,
    Algorithm::RS512,
    Algorithm::PS256,
    Algorithm::ES256,
    Algorithm::ES384,
    Algorithm::EdDSA,
];

/// Why a token was not verified.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Unverified {
    /// No key of the issuer's has the token's `kid`: the keys may have rotated.
    UnknownKey,
    /// Anything else, said in the challenge.
    Invalid(&'static str),
}

/// The claims of `token`, if its header is acceptable and it is signed by a key of `keys`.
/// `accept_plain_jwt` also accepts `typ: JWT` (or none), which common providers issue, beside
/// RFC 9068's `at+jwt`.
pub(crate) fn verify(token: &str, keys: &JwkSet, accept_plain_jwt: bool) -> Result<JsonObject, Unverified> {
    let header =
        jsonwebtoken::decode_header(token).map_err(|_| Unverified::Invalid("the token is not a signed JWT"))?;
    let typ = header.typ.as_deref().map(str::to_ascii_lowercase);
    let typed = match typ.as_deref() {
        Some("at+jwt" | "application/at+jwt") => true,
        Some("jwt") | None => accept_plain_jwt,
        Some(_) => false,
    };
    if !typed {
        return Err(Unverified::Invalid("the token is not an access token (typ)"));
    }
    if !ALLOWED.contains(&header.alg) {
        return Err(Unverified::Invalid("the token's algorithm is not accepted"));
    }
    // RFC 7515 §4.1.11: a recipient that does not understand every extension `crit` names
    // must refuse the token. This one understands none, and an empty list is itself invalid.
    if header.crit.is_some() {
        return Err(Unverified::Invalid("the token names critical header extensions this server does not know (crit)"));
    }
    let key = find_key(keys, header.kid.as_deref(), header.alg)?;
    let decoding = DecodingKey::from_jwk(key).map_err(|_| Unverified::Invalid("the issuer's key cannot be used"))?;
    let mut validation = Validation::new(header.alg);
    // The claims are checked by `claims::principal`, with errors of its own.
    validation.validate_exp = false;
    validation.validate_nbf = false;
    validation.validate_aud = false;
    validation.required_spec_claims.clear();
    let data = jsonwebtoken::decode::<JsonObject>(token, &decoding, &validation)
        .map_err(|_| Unverified::Invalid("the token's signature is not valid"))?;
    Ok(data.claims)
}

/// The issuer's signing key the token names by `kid` (or, without one, the only key that fits
/// the algorithm). A symmetric key is never used, and a key marked for another use or another
/// algorithm is not this token's.
fn find_key<'k>(keys: &'k JwkSet, kid: Option<&str>, alg: Algorithm) -> Result<&'k Jwk, Unverified> {
    let fits = |key: &&Jwk| {
        let asymmetric = !matches!(key.algorithm, AlgorithmParameters::OctetKey(_));
        let for_signing = key.common.public_key_use.as_ref().is_none_or(|used| *used == PublicKeyUse::Signature);
        let same_alg = key.common.key_algorithm.is_none_or(|key_alg| format!("{key_alg:?}") == format!("{alg:?}"));
        asymmetric && for_signing && same_alg
    };
    match kid {
        Some(kid) => {
            let named = keys.keys.iter().find(|key| key.common.key_id.as_deref() == Some(kid));
            match named {
                None => Err(Unverified::UnknownKey),
                Some(key) if fits(&key) => Ok(key),
                Some(_) => Err(Unverified::Invalid("the issuer's key does not fit the token")),
            }
        }
        None => {
            let mut candidates = keys.keys.iter().filter(fits);
            match (candidates.next(), candidates.next()) {
                (Some(key), None) => Ok(key),
                _ => Err(Unverified::Invalid("the token names no key")),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use base64::Engine as _;
    use base64::engine::general_purpose::URL_SAFE_NO_PAD;
    use ed25519_dalek::{Signer, SigningKey};
    use serde_json::{Value, json};

    use super::*;

    fn key() -> SigningKey {
        SigningKey::from_bytes(&[7; 32])
    }

    fn keys(kid: &str) -> JwkSet {
        let x = URL_SAFE_NO_PAD.encode(key().verifying_key().as_bytes());
        serde_json::from_value(json!({"keys": [{"kty": "OKP", "crv": "Ed25519", "x": x, "kid": kid, "use": "sig"}]}))
            .unwrap()
    }

    fn token(header: Value, claims: Value) -> String {
        let signed =
            format!("{}.{}", URL_SAFE_NO_PAD.encode(header.to_string()), URL_SAFE_NO_PAD.encode(claims.to_string()));
        let signature = key().sign(signed.as_bytes());
        format!("{signed}.{}", URL_SAFE_NO_PAD.encode(signature.to_bytes()))
    }

    #[test]
    fn a_token_signed_by_the_issuers_key_is_verified() {
        let good = token(json!({"alg": "EdDSA", "typ": "at+jwt", "kid": "k1"}), json!({"sub": "ann"}));
        assert_eq!(verify(&good, &keys("k1"), false).unwrap()["sub"], "ann");
        let plain = token(json!({"alg": "EdDSA", "typ": "JWT", "kid": "k1"}), json!({"sub": "ann"}));
        assert!(verify(&plain, &keys("k1"), true).is_ok());
        assert_eq!(
            verify(&plain, &keys("k1"), false),
            Err(Unverified::Invalid("the token is not an access token (typ)"))
        );
        let untyped_single_key = token(json!({"alg": "EdDSA"}), json!({"sub": "ann"}));
        assert!(verify(&untyped_single_key, &keys("k1"), true).is_ok(), "no kid: the only fitting key");
    }

    #[test]
    fn forged_tampered_and_misdirected_tokens_are_refused() {
        let good = token(json!({"alg": "EdDSA", "typ": "at+jwt", "kid": "k1"}), json!({"sub": "ann"}));
        assert_eq!(verify(&good, &keys("k2"), false), Err(Unverified::UnknownKey));
        let (head, rest) = good.split_once('.').unwrap();
        let (_, signature) = rest.split_once('.').unwrap();
        let tampered = format!("{head}.{}.{signature}", URL_SAFE_NO_PAD.encode(json!({"sub": "admin"}).to_string()));
        assert_eq!(
            verify(&tampered, &keys("k1"), false),
            Err(Unverified::Invalid("the token's signature is not valid"))
        );
        let unsigned = format!(
            "{}.{}.",
            URL_SAFE_NO_PAD.encode(json!({"alg": "none", "typ": "at+jwt"}).to_string()),
            URL_SAFE_NO_PAD.encode(json!({"sub": "ann"}).to_string())
        );
        assert!(matches!(verify(&unsigned, &keys("k1"), true), Err(Unverified::Invalid(_))));
        // An HMAC token whose secret would be the published key is refused by its algorithm.
        let hmac = token(json!({"alg": "HS256", "typ": "at+jwt", "kid": "k1"}), json!({"sub": "ann"}));
        assert_eq!(verify(&hmac, &keys("k1"), true), Err(Unverified::Invalid("the token's algorithm is not accepted")));
        // A key the token carries itself is never used: only the issuer's set is.
        let x = URL_SAFE_NO_PAD.encode(key().verifying_key().as_bytes());
        let embedded = token(
            json!({"alg": "EdDSA", "typ": "at+jwt", "kid": "mine", "jwk": {"kty": "OKP", "crv": "Ed25519", "x": x}}),
            json!({"sub": "ann"}),
        );
        assert_eq!(verify(&embedded, &keys("k1"), true), Err(Unverified::UnknownKey));
        assert!(matches!(verify("garbage", &keys("k1"), true), Err(Unverified::Invalid(_))));
        // RFC 7515 §4.1.11: an extension marked critical that is not understood (issue 38).
        let critical = token(
            json!({"alg": "EdDSA", "typ": "at+jwt", "kid": "k1", "crit": ["x-unknown"], "x-unknown": 1}),
            json!({"sub": "ann"}),
        );
        assert!(matches!(verify(&critical, &keys("k1"), true), Err(Unverified::Invalid(why)) if why.contains("crit")));
    }
}
