//! Compact JWS (RFC 7515 §7.1), the form of access tokens and DPoP proofs: the three parts, the
//! header and payload read as JSON, and the signature checked by ring with a public JWK under
//! one of the accepted algorithms (RFC 7518 §3.3 to §3.5, RFC 8037 §3.1).

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use ring::signature::{self, RsaPublicKeyComponents, UnparsedPublicKey};
use serde::de::DeserializeOwned;

use crate::jwk::Jwk;

/// The signature algorithms accepted: asymmetric only, so no key published for verifying can
/// also sign, and never `none`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Alg {
    Rs256,
    Rs384,
    Rs512,
    Ps256,
    Es256,
    Es384,
    EdDsa,
}

impl Alg {
    const ALL: [Alg; 7] = [Alg::Rs256, Alg::Rs384, Alg::Rs512, Alg::Ps256, Alg::Es256, Alg::Es384, Alg::EdDsa];

    /// The accepted algorithm a header's `alg` names, if it is one.
    pub(crate) fn named(name: &str) -> Option<Alg> {
        Alg::ALL.into_iter().find(|alg| alg.name() == name)
    }

    /// Its name in `alg` (RFC 7518 §3.1, RFC 8037 §3.1).
    pub(crate) fn name(self) -> &'static str {
        match self {
            Alg::Rs256 => "RS256",
            Alg::Rs384 => "RS384",
            Alg::Rs512 => "RS512",
            Alg::Ps256 => "PS256",
            Alg::Es256 => "ES256",
            Alg::Es384 => "ES384",
            Alg::EdDsa => "EdDSA",
        }
    }

    /// True when `key` is of the type, and curve, this algorithm signs with. `EdDSA` also names
    /// Ed448 (RFC 8037 §3.1), which ring does not verify: only Ed25519 keys fit.
    pub(crate) fn fits(self, key: &Jwk) -> bool {
        let (kty, crv) = match self {
            Alg::Rs256 | Alg::Rs384 | Alg::Rs512 | Alg::Ps256 => ("RSA", None),
            Alg::Es256 => ("EC", Some("P-256")),
            Alg::Es384 => ("EC", Some("P-384")),
            Alg::EdDsa => ("OKP", Some("Ed25519")),
        };
        key.kty == kty && crv.is_none_or(|crv| key.crv.as_deref() == Some(crv))
    }
}

/// Why a signature was not verified.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Rejected {
    /// The key cannot check the algorithm's signatures: another type or curve, a member missing
    /// or malformed, or an RSA modulus outside 2048 to 8192 bits.
    Key,
    /// The signature is not base64url, or not the key's over the signing input.
    Signature,
}

/// A compact JWS, `header.payload.signature`, each part base64url without padding.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Compact<'t> {
    /// `header.payload`: the ASCII the signature is over (RFC 7515 §5.1 step 5).
    signing_input: &'t str,
    header: &'t str,
    payload: &'t str,
    signature: &'t str,
}

impl<'t> Compact<'t> {
    /// The parts of `token`, if it has exactly three.
    pub(crate) fn split(token: &'t str) -> Option<Compact<'t>> {
        let (signing_input, signature) = token.rsplit_once('.')?;
        let (header, payload) = signing_input.split_once('.')?;
        if payload.contains('.') {
            return None;
        }
        Some(Compact { signing_input, header, payload, signature })
    }

    /// The header, read from its JSON as `T`.
    pub(crate) fn header<T: DeserializeOwned>(&self) -> Option<T> {
        json(self.header)
    }

    /// The payload, read from its JSON as `T`: to be believed only once [`Compact::verify`]
    /// has said yes.
    pub(crate) fn payload<T: DeserializeOwned>(&self) -> Option<T> {
        json(self.payload)
    }

    /// Checks the signature with `key` under `alg` (RFC 7515 §5.2 step 8).
    pub(crate) fn verify(&self, key: &Jwk, alg: Alg) -> Result<(), Rejected> {
        if !alg.fits(key) {
            return Err(Rejected::Key);
        }
        let member = |member: &Option<String>| {
            member.as_deref().and_then(|text| URL_SAFE_NO_PAD.decode(text).ok()).ok_or(Rejected::Key)
        };
        let signature = URL_SAFE_NO_PAD.decode(self.signature).map_err(|_| Rejected::Signature)?;
        let message = self.signing_input.as_bytes();
        let checked = match alg {
            Alg::Rs256 | Alg::Rs384 | Alg::Rs512 | Alg::Ps256 => {
                let mut n = member(&key.n)?;
                // RFC 7518 §6.3.1.1 forbids zero octets in front of the modulus, but some
                // providers write one (a sign byte): the number is the same, and ring takes it
                // without them.
                let leading_zeros = n.iter().take_while(|&&byte| byte == 0).count();
                n.drain(..leading_zeros);
                // ring takes 2048- to 8192-bit moduli and refuses others only by failing the
                // signature: checked here, so that the key is named as the problem.
                if !(256..=1024).contains(&n.len()) {
                    return Err(Rejected::Key);
                }
                let parameters = match alg {
                    Alg::Rs256 => &signature::RSA_PKCS1_2048_8192_SHA256,
                    Alg::Rs384 => &signature::RSA_PKCS1_2048_8192_SHA384,
                    Alg::Rs512 => &signature::RSA_PKCS1_2048_8192_SHA512,
                    _ => &signature::RSA_PSS_2048_8192_SHA256,
                };
                RsaPublicKeyComponents { n, e: member(&key.e)? }.verify(parameters, message, &signature)
            }
            Alg::Es256 | Alg::Es384 => {
                let (length, algorithm) = match alg {
                    Alg::Es256 => (32, &signature::ECDSA_P256_SHA256_FIXED),
                    _ => (48, &signature::ECDSA_P384_SHA384_FIXED),
                };
                let (x, y) = (member(&key.x)?, member(&key.y)?);
                // RFC 7518 §6.2.1.2: each coordinate is the full size of the curve's field.
                if x.len() != length || y.len() != length {
                    return Err(Rejected::Key);
                }
                // The uncompressed point (SEC 1 §2.3.3), as ring takes a public key.
                let point = [&[4][..], &x, &y].concat();
                UnparsedPublicKey::new(algorithm, point).verify(message, &signature)
            }
            Alg::EdDsa => {
                let x = member(&key.x)?;
                if x.len() != signature::ED25519_PUBLIC_KEY_LEN {
                    return Err(Rejected::Key);
                }
                UnparsedPublicKey::new(&signature::ED25519, x).verify(message, &signature)
            }
        };
        checked.map_err(|_| Rejected::Signature)
    }
}

/// A part's JSON as `T`; `None` when it is not base64url without padding or not such JSON.
fn json<T: DeserializeOwned>(part: &str) -> Option<T> {
    URL_SAFE_NO_PAD.decode(part).ok().and_then(|bytes| serde_json::from_slice(&bytes).ok())
}

#[cfg(test)]
pub(crate) mod tests {
    use base64::engine::general_purpose::STANDARD;
    use ring::rand::SystemRandom;
    use ring::signature::{EcdsaKeyPair, KeyPair as _, RsaKeyPair};
    use serde_json::{Value, json};

    use super::*;

    /// A 2048-bit RSA key made once with `openssl genpkey -algorithm RSA -pkeyopt
    /// rsa_keygen_bits:2048` (ring cannot make RSA keys).
    pub(crate) fn rsa_key() -> RsaKeyPair {
        let pem = include_str!("../tests/fixtures/rsa-2048.pem");
        let base64: String = pem.lines().filter(|line| !line.starts_with("-----")).collect();
        RsaKeyPair::from_pkcs8(&STANDARD.decode(base64).unwrap()).unwrap()
    }

    /// The public JWK of `key`.
    pub(crate) fn rsa_jwk(key: &RsaKeyPair) -> Jwk {
        let public = RsaPublicKeyComponents::<Vec<u8>>::from(key.public());
        jwk(json!({"kty": "RSA", "n": URL_SAFE_NO_PAD.encode(public.n), "e": URL_SAFE_NO_PAD.encode(public.e)}))
    }

    /// A compact JWS of `header` and the fixed payload, signed by `key` with `padding` (RS* or PS*).
    pub(crate) fn rsa_signed(key: &RsaKeyPair, padding: &'static dyn signature::RsaEncoding, header: &Value) -> String {
        signed(header, |input| {
            let mut signature = vec![0; key.public().modulus_len()];
            key.sign(padding, &SystemRandom::new(), input, &mut signature).unwrap();
            signature
        })
    }

    fn jwk(value: Value) -> Jwk {
        serde_json::from_value(value).unwrap()
    }

    /// A compact JWS of `header` and a fixed payload, signed by `sign`.
    fn signed(header: &Value, sign: impl FnOnce(&[u8]) -> Vec<u8>) -> String {
        let input =
            format!("{}.{}", URL_SAFE_NO_PAD.encode(header.to_string()), URL_SAFE_NO_PAD.encode(r#"{"sub":"ann"}"#));
        let signature = sign(input.as_bytes());
        format!("{input}.{}", URL_SAFE_NO_PAD.encode(signature))
    }

    /// A P-384 key made by ring (no independent P-384 signer is at hand), and its public JWK.
    fn p384_key() -> (EcdsaKeyPair, Jwk) {
        let algorithm = &signature::ECDSA_P384_SHA384_FIXED_SIGNING;
        let random = SystemRandom::new();
        let pkcs8 = EcdsaKeyPair::generate_pkcs8(algorithm, &random).unwrap();
        let key = EcdsaKeyPair::from_pkcs8(algorithm, pkcs8.as_ref(), &random).unwrap();
        let point = key.public_key().as_ref();
        let (x, y) = point[1..].split_at(48);
        let jwk =
            jwk(json!({"kty": "EC", "crv": "P-384", "x": URL_SAFE_NO_PAD.encode(x), "y": URL_SAFE_NO_PAD.encode(y)}));
        (key, jwk)
    }

    /// A P-256 key of the p256 crate and its public JWK.
    fn p256_key() -> (p256::ecdsa::SigningKey, Jwk) {
        let key = p256::ecdsa::SigningKey::from_bytes(&[3; 32].into()).unwrap();
        let point = key.verifying_key().to_encoded_point(false);
        let jwk = jwk(json!({"kty": "EC", "crv": "P-256", "x": URL_SAFE_NO_PAD.encode(point.x().unwrap()),
            "y": URL_SAFE_NO_PAD.encode(point.y().unwrap())}));
        (key, jwk)
    }

    /// An Ed25519 key of the ed25519-dalek crate and its public JWK.
    fn ed25519_key() -> (ed25519_dalek::SigningKey, Jwk) {
        let key = ed25519_dalek::SigningKey::from_bytes(&[5; 32]);
        let x = URL_SAFE_NO_PAD.encode(key.verifying_key().as_bytes());
        (key, jwk(json!({"kty": "OKP", "crv": "Ed25519", "x": x})))
    }

    /// One token per accepted algorithm, with the key that verifies it.
    fn one_of_each() -> Vec<(Alg, String, Jwk)> {
        let header = |alg: Alg| json!({"alg": alg.name(), "typ": "at+jwt"});
        let rsa = rsa_key();
        let (es256, es256_jwk) = p256_key();
        let (es384, es384_jwk) = p384_key();
        let (ed25519, ed25519_jwk) = ed25519_key();
        let es256_token = signed(&header(Alg::Es256), |input| {
            use p256::ecdsa::signature::Signer as _;
            let signature: p256::ecdsa::Signature = es256.sign(input);
            signature.to_bytes().to_vec()
        });
        let es384_token =
            signed(&header(Alg::Es384), |input| es384.sign(&SystemRandom::new(), input).unwrap().as_ref().to_vec());
        let ed25519_token = signed(&header(Alg::EdDsa), |input| {
            use ed25519_dalek::Signer as _;
            ed25519.sign(input).to_bytes().to_vec()
        });
        vec![
            (Alg::Rs256, rsa_signed(&rsa, &signature::RSA_PKCS1_SHA256, &header(Alg::Rs256)), rsa_jwk(&rsa)),
            (Alg::Rs384, rsa_signed(&rsa, &signature::RSA_PKCS1_SHA384, &header(Alg::Rs384)), rsa_jwk(&rsa)),
            (Alg::Rs512, rsa_signed(&rsa, &signature::RSA_PKCS1_SHA512, &header(Alg::Rs512)), rsa_jwk(&rsa)),
            (Alg::Ps256, rsa_signed(&rsa, &signature::RSA_PSS_SHA256, &header(Alg::Ps256)), rsa_jwk(&rsa)),
            (Alg::Es256, es256_token, es256_jwk),
            (Alg::Es384, es384_token, es384_jwk),
            (Alg::EdDsa, ed25519_token, ed25519_jwk),
        ]
    }

    #[test]
    fn each_accepted_algorithm_verifies_its_signatures_and_no_other() {
        for (alg, token, key) in one_of_each() {
            let jws = Compact::split(&token).unwrap();
            assert_eq!(jws.verify(&key, alg), Ok(()), "{alg:?}");
            assert_eq!(Alg::named(alg.name()), Some(alg));
            let header: Value = jws.header().unwrap();
            assert_eq!(header["alg"], alg.name());
            let payload: Value = jws.payload().unwrap();
            assert_eq!(payload["sub"], "ann");
            // The same key under another algorithm of its type: another hash or padding.
            for other in Alg::ALL.into_iter().filter(|other| *other != alg && other.fits(&key)) {
                assert_eq!(jws.verify(&key, other), Err(Rejected::Signature), "{alg:?} as {other:?}");
            }
            // A changed payload, and a changed signature.
            let (input, signature) = token.rsplit_once('.').unwrap();
            let (head, _) = input.split_once('.').unwrap();
            let tampered = format!("{head}.{}.{signature}", URL_SAFE_NO_PAD.encode(r#"{"sub":"admin"}"#));
            assert_eq!(Compact::split(&tampered).unwrap().verify(&key, alg), Err(Rejected::Signature), "{alg:?}");
            let mut bytes = URL_SAFE_NO_PAD.decode(signature).unwrap();
            bytes[10] ^= 1;
            let flipped = format!("{input}.{}", URL_SAFE_NO_PAD.encode(bytes));
            assert_eq!(Compact::split(&flipped).unwrap().verify(&key, alg), Err(Rejected::Signature), "{alg:?}");
        }
        for refused in ["none", "HS256", "PS384", "ES512", "Ed25519", "rs256", ""] {
            assert_eq!(Alg::named(refused), None, "{refused}");
        }
    }

    #[test]
    fn a_key_of_another_type_or_curve_or_size_is_named_as_the_problem() {
        let tokens = one_of_each();
        let token_of =
            |alg: Alg| tokens.iter().find(|(each, ..)| *each == alg).map(|(_, token, key)| (token, key)).unwrap();
        let verify_with = |alg: Alg, key: Value| {
            let jws = Compact::split(token_of(alg).0).unwrap();
            jws.verify(&jwk(key), alg)
        };
        let rsa = rsa_jwk(&rsa_key());
        let (n, e) = (rsa.n.clone().unwrap(), rsa.e.clone().unwrap());
        let es256 = token_of(Alg::Es256).1.clone();
        let (x, y) = (es256.x.clone().unwrap(), es256.y.clone().unwrap());
        let ed_x = token_of(Alg::EdDsa).1.x.clone().unwrap();

        // The type must be the algorithm's: never a symmetric key, nor another asymmetric type.
        assert_eq!(verify_with(Alg::Rs256, json!({"kty": "EC", "crv": "P-256", "x": x, "y": y})), Err(Rejected::Key));
        assert_eq!(verify_with(Alg::Es256, json!({"kty": "RSA", "n": n, "e": e})), Err(Rejected::Key));
        assert_eq!(verify_with(Alg::EdDsa, json!({"kty": "oct", "k": ed_x})), Err(Rejected::Key));
        assert_eq!(verify_with(Alg::Rs256, json!({"n": n, "e": e})), Err(Rejected::Key), "no kty");
        // The curve must be the algorithm's, and each coordinate its full length.
        assert_eq!(verify_with(Alg::Es256, json!({"kty": "EC", "crv": "P-384", "x": x, "y": y})), Err(Rejected::Key));
        assert_eq!(verify_with(Alg::Es256, json!({"kty": "EC", "x": x, "y": y})), Err(Rejected::Key), "no crv");
        let short = URL_SAFE_NO_PAD.encode(&URL_SAFE_NO_PAD.decode(&x).unwrap()[1..]);
        let long = URL_SAFE_NO_PAD.encode([&[0][..], &URL_SAFE_NO_PAD.decode(&x).unwrap()].concat());
        for x in [short, long] {
            assert_eq!(
                verify_with(Alg::Es256, json!({"kty": "EC", "crv": "P-256", "x": x, "y": y})),
                Err(Rejected::Key)
            );
        }
        assert_eq!(verify_with(Alg::Es256, json!({"kty": "EC", "crv": "P-256", "x": x})), Err(Rejected::Key), "no y");
        // Ed448 is EdDSA too, but not verified here; an Ed25519 key is 32 bytes.
        assert_eq!(verify_with(Alg::EdDsa, json!({"kty": "OKP", "crv": "Ed448", "x": ed_x})), Err(Rejected::Key));
        let ed_short = URL_SAFE_NO_PAD.encode([0; 31]);
        assert_eq!(verify_with(Alg::EdDsa, json!({"kty": "OKP", "crv": "Ed25519", "x": ed_short})), Err(Rejected::Key));
        // An RSA modulus under 2048 bits, even with a signature that would otherwise be checked
        // against it, and one whose zero octets in front hide how short it is.
        let n_bytes = URL_SAFE_NO_PAD.decode(&n).unwrap();
        let small = URL_SAFE_NO_PAD.encode(&n_bytes[..128]);
        assert_eq!(verify_with(Alg::Rs256, json!({"kty": "RSA", "n": small, "e": e})), Err(Rejected::Key));
        let padded_small = URL_SAFE_NO_PAD.encode([&[0; 128][..], &n_bytes[..128]].concat());
        assert_eq!(verify_with(Alg::Rs256, json!({"kty": "RSA", "n": padded_small, "e": e})), Err(Rejected::Key));
        // A modulus written with a zero octet in front (a sign byte) is the same key.
        let zero_led = URL_SAFE_NO_PAD.encode([&[0][..], &n_bytes].concat());
        assert_eq!(verify_with(Alg::Rs256, json!({"kty": "RSA", "n": zero_led, "e": e})), Ok(()));
        // Members that are not base64url.
        assert_eq!(verify_with(Alg::Rs256, json!({"kty": "RSA", "n": format!("{n}=="), "e": e})), Err(Rejected::Key));
        assert_eq!(
            verify_with(Alg::Rs256, json!({"kty": "RSA", "n": n.replace('-', "+"), "e": e})),
            Err(Rejected::Key)
        );
    }

    #[test]
    fn only_three_parts_of_unpadded_base64url_are_a_jws() {
        let (alg, token, key) = one_of_each().pop().unwrap();
        let (input, signature) = token.rsplit_once('.').unwrap();
        // The Ed25519 signature's 64 bytes leave a partial group, which padding would fill.
        let padded = format!("{input}.{signature}==");
        assert_eq!(Compact::split(&padded).unwrap().verify(&key, alg), Err(Rejected::Signature));
        // base64 with the standard alphabet and padding.
        let standard = format!("{input}.{}", STANDARD.encode(URL_SAFE_NO_PAD.decode(signature).unwrap()));
        assert_eq!(Compact::split(&standard).unwrap().verify(&key, alg), Err(Rejected::Signature));
        let (head, payload) = input.split_once('.').unwrap();
        assert!(Compact::split(&format!("{head}=.{payload}.{signature}")).unwrap().header::<Value>().is_none());
        assert!(Compact::split(&format!("{head}.{payload}=.{signature}")).unwrap().payload::<Value>().is_none());
        for malformed in [input, "a", "", "a.b.c.d", format!("{token}.").as_str()] {
            assert!(Compact::split(malformed).is_none(), "{malformed}");
        }
        let empty = Compact::split("..").unwrap();
        assert!(empty.header::<Value>().is_none());
        assert_eq!(empty.verify(&key, alg), Err(Rejected::Signature));
    }
}
