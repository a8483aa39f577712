//! JWT access tokens (RFC 9068 §4): the header's type and algorithm, the issuer's key it names,
//! and the signature, checked before any claim is believed.

use serde::Deserialize;
use serde::de::IgnoredAny;
use wharf_protocol::JsonObject;

use crate::jwk::{Jwk, JwkSet};
use crate::jws::{Alg, Compact, Rejected};

/// Why a token was not verified.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Unverified {
    /// No key of the issuer's has the token's `kid`: the keys may have rotated.
    UnknownKey,
    /// Anything else, said in the challenge.
    Invalid(&'static str),
}

const NOT_A_JWT: Unverified = Unverified::Invalid("the token is not a signed JWT");

/// The header members read here; others are ignored, and one of the wrong type makes the token
/// no JWT.
#[derive(Deserialize)]
struct Header {
    alg: String,
    typ: Option<String>,
    kid: Option<String>,
    /// Refused whatever it says (see [`verify`]), so not read further.
    crit: Option<IgnoredAny>,
}

/// The claims of `token`, if its header is acceptable and it is signed by a key of `keys`.
/// `accept_plain_jwt` also accepts `typ: JWT` (or none), which common providers issue, beside
/// RFC 9068's `at+jwt`.
pub(crate) fn verify(token: &str, keys: &JwkSet, accept_plain_jwt: bool) -> Result<JsonObject, Unverified> {
    let jws = Compact::split(token).ok_or(NOT_A_JWT)?;
    let header: Header = jws.header().ok_or(NOT_A_JWT)?;
    let typ = header.typ.as_deref().map(str::to_ascii_lowercase);
    let typed = match typ.as_deref() {
        Some("at+jwt" | "application/at+jwt") => true,
        Some("jwt") | None => accept_plain_jwt,
        Some(_) => false,
    };
    if !typed {
        return Err(Unverified::Invalid("the token is not an access token (typ)"));
    }
    let alg = Alg::named(&header.alg).ok_or(Unverified::Invalid("the token's algorithm is not accepted"))?;
    // RFC 7515 §4.1.11: a recipient that does not understand every extension `crit` names
    // must refuse the token. This one understands none, and an empty list is itself invalid.
    if header.crit.is_some() {
        return Err(Unverified::Invalid("the token names critical header extensions this server does not know (crit)"));
    }
    let key = find_key(keys, header.kid.as_deref(), alg)?;
    jws.verify(key, alg).map_err(|rejected| match rejected {
        Rejected::Key => Unverified::Invalid("the issuer's key cannot be used"),
        Rejected::Signature => Unverified::Invalid("the token's signature is not valid"),
    })?;
    // A JWT's payload is a JSON object (RFC 7519 §7.2 step 10). The claims in it are checked
    // by `claims::principal`, with errors of its own.
    jws.payload().ok_or(NOT_A_JWT)
}

/// The issuer's signing key the token names by `kid` (or, without one, the only key that fits
/// the algorithm). A key of another type than the algorithm's (a symmetric one among them) is
/// never used, and a key marked for another use or another algorithm is not this token's.
fn find_key<'k>(keys: &'k JwkSet, kid: Option<&str>, alg: Alg) -> Result<&'k Jwk, Unverified> {
    let fits = |key: &&Jwk| {
        let for_signing = key.usage.as_deref().is_none_or(|usage| usage == "sig");
        let same_alg = key.alg.as_deref().is_none_or(|key_alg| key_alg == alg.name());
        alg.fits(key) && for_signing && same_alg
    };
    match kid {
        Some(kid) => {
            let named = keys.keys.iter().find(|key| key.kid.as_deref() == Some(kid));
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

    #[test]
    fn an_rsa_issuer_key_verifies_rs256_and_ps256_tokens_unless_it_names_another_alg() {
        use ring::signature::{RSA_PKCS1_SHA256, RSA_PSS_SHA256};

        use crate::jws::tests::{rsa_jwk, rsa_key, rsa_signed};

        let rsa = rsa_key();
        let public = rsa_jwk(&rsa);
        let set = |alg: Option<&str>| JwkSet {
            keys: vec![Jwk { kid: Some("r1".into()), alg: alg.map(Into::into), ..public.clone() }],
        };
        let rs256 = rsa_signed(&rsa, &RSA_PKCS1_SHA256, &json!({"alg": "RS256", "typ": "at+jwt", "kid": "r1"}));
        let ps256 = rsa_signed(&rsa, &RSA_PSS_SHA256, &json!({"alg": "PS256", "typ": "at+jwt", "kid": "r1"}));
        assert_eq!(verify(&rs256, &set(None), false).unwrap()["sub"], "ann");
        assert_eq!(verify(&ps256, &set(None), false).unwrap()["sub"], "ann");
        assert!(verify(&rs256, &set(Some("RS256")), false).is_ok());
        assert_eq!(
            verify(&ps256, &set(Some("RS256")), false),
            Err(Unverified::Invalid("the issuer's key does not fit the token"))
        );
        // A modulus under 2048 bits is not used, whatever the signature.
        let n = URL_SAFE_NO_PAD.decode(public.n.as_deref().unwrap()).unwrap();
        let small =
            JwkSet { keys: vec![Jwk { kid: Some("r1".into()), n: Some(URL_SAFE_NO_PAD.encode(&n[..128])), ..public }] };
        assert_eq!(verify(&rs256, &small, false), Err(Unverified::Invalid("the issuer's key cannot be used")));
    }

    #[test]
    fn only_a_key_of_the_algorithms_type_fits_and_unknown_keys_do_not_spoil_the_set() {
        let x = URL_SAFE_NO_PAD.encode(key().verifying_key().as_bytes());
        let set: JwkSet = serde_json::from_value(json!({"keys": [
            {"kty": "oct", "k": x, "kid": "s1"},
            {"kty": "AKP", "alg": "ML-DSA-44", "pub": "AAAA", "kid": "m1"},
            {"kty": "OKP", "crv": "Ed448", "x": x, "kid": "o1"},
            {"kty": "RSA", "kid": "r1", "use": "enc", "n": "AQAB", "e": "AQAB", "x5c": ["MIIB"]},
            {"kid": "no-type"},
            {"kty": "EC", "crv": "P-256", "x": x, "y": x, "kid": "e1"},
            {"kty": "OKP", "crv": "Ed25519", "x": x, "kid": "k1", "key_ops": ["verify"], "ext": true},
        ]}))
        .unwrap();
        let token_for = |kid: Option<&str>| {
            let mut header = json!({"alg": "EdDSA", "typ": "at+jwt"});
            if let Some(kid) = kid {
                header["kid"] = json!(kid);
            }
            token(header, json!({"sub": "ann"}))
        };
        assert!(verify(&token_for(Some("k1")), &set, false).is_ok());
        assert!(verify(&token_for(None), &set, false).is_ok(), "the one Ed25519 key, among keys of other types");
        for other in ["s1", "m1", "o1", "r1", "no-type", "e1"] {
            assert_eq!(
                verify(&token_for(Some(other)), &set, false),
                Err(Unverified::Invalid("the issuer's key does not fit the token")),
                "{other}"
            );
        }
        assert!(serde_json::from_value::<JwkSet>(json!({"no keys": []})).is_err());
    }
}
