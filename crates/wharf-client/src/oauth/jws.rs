//! ES256 signatures (RFC 7515, RFC 7518 §3.4) for what OAuth asks a client to sign: private
//! key JWT client assertions (RFC 7523) and DPoP proofs (RFC 9449). Keys are P-256, loaded from
//! PKCS#8 PEM or made at random; ring, which TLS already links, signs.

use std::sync::Arc;

use base64::Engine;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use ring::rand::SystemRandom;
use ring::signature::{ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair, KeyPair as _};
use serde_json::{Value, json};

/// A P-256 private key (shared: ring's key pairs are not `Clone`).
#[derive(Clone)]
pub(crate) struct EsKey {
    key: Arc<EcdsaKeyPair>,
}

impl EsKey {
    /// A new key from the system's randomness.
    pub(crate) fn generate() -> Result<EsKey, String> {
        let random = SystemRandom::new();
        let pkcs8 = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &random)
            .map_err(|_| "no randomness to make a P-256 key".to_owned())?;
        EsKey::from_pkcs8_der(pkcs8.as_ref(), &random)
    }

    /// A key from unencrypted PKCS#8 PEM (`-----BEGIN PRIVATE KEY-----`), which must carry the
    /// public key beside the private one, as the keys openssl makes do.
    pub(crate) fn from_pkcs8_pem(pem: &str) -> Result<EsKey, String> {
        let der = pkcs8_der(pem).map_err(|why| format!("not a P-256 PKCS#8 key: {why}"))?;
        EsKey::from_pkcs8_der(&der, &SystemRandom::new())
    }

    fn from_pkcs8_der(der: &[u8], random: &SystemRandom) -> Result<EsKey, String> {
        let key = EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, der, random).map_err(|rejected| {
            // ring says why in a word, and says `InvalidEncoding` for a missing public key too.
            let why = match rejected.to_string().as_str() {
                "InvalidEncoding" | "PublicKeyIsMissing" => "it is malformed, or lacks the public key, which this \
                    client needs inside the PKCS#8 beside the private key (openssl's keys carry it)"
                    .to_owned(),
                "WrongAlgorithm" => "it is a key of another algorithm or curve".to_owned(),
                other => other.to_owned(),
            };
            format!("not a P-256 PKCS#8 key: {why}")
        })?;
        Ok(EsKey { key: Arc::new(key) })
    }

    /// The public key as a JWK.
    pub(crate) fn public_jwk(&self) -> Value {
        // The uncompressed point: 0x04, then x and y of 32 bytes each.
        let (x, y) = self.key.public_key().as_ref()[1..].split_at(32);
        json!({"kty": "EC", "crv": "P-256", "x": URL_SAFE_NO_PAD.encode(x), "y": URL_SAFE_NO_PAD.encode(y)})
    }

    /// `header.claims.signature`, compact, with `alg: ES256` added to the header.
    pub(crate) fn sign(&self, mut header: Value, claims: &Value) -> Result<String, String> {
        header["alg"] = json!("ES256");
        let signing_input =
            format!("{}.{}", URL_SAFE_NO_PAD.encode(header.to_string()), URL_SAFE_NO_PAD.encode(claims.to_string()));
        // Each ECDSA signature takes a fresh secret nonce, drawn from the system's randomness.
        let signature = self
            .key
            .sign(&SystemRandom::new(), signing_input.as_bytes())
            .map_err(|_| "no randomness to sign with".to_owned())?;
        Ok(format!("{signing_input}.{}", URL_SAFE_NO_PAD.encode(signature.as_ref())))
    }
}

/// The DER between the `-----BEGIN PRIVATE KEY-----` and `-----END PRIVATE KEY-----` lines of
/// a PEM (RFC 7468 §10): base64, whitespace ignored.
fn pkcs8_der(pem: &str) -> Result<Vec<u8>, &'static str> {
    let Some((_, after_begin)) = pem.split_once("-----BEGIN PRIVATE KEY-----") else {
        return Err(if pem.contains("-----BEGIN EC PRIVATE KEY-----") {
            "it is a SEC 1 key (EC PRIVATE KEY); `openssl pkcs8 -topk8 -nocrypt` turns it into PKCS#8"
        } else if pem.contains("-----BEGIN ENCRYPTED PRIVATE KEY-----") {
            "it is encrypted, and this client takes unencrypted keys only"
        } else {
            "no -----BEGIN PRIVATE KEY----- line"
        });
    };
    let (body, _) = after_begin.split_once("-----END PRIVATE KEY-----").ok_or("no -----END PRIVATE KEY----- line")?;
    let base64: String = body.chars().filter(|character| !character.is_ascii_whitespace()).collect();
    STANDARD.decode(base64).map_err(|_| "what is between its BEGIN and END lines is not base64")
}

#[cfg(test)]
mod tests {
    use p256::ecdsa::signature::Verifier;
    use p256::ecdsa::{Signature, SigningKey, VerifyingKey};
    use p256::pkcs8::{DecodePrivateKey as _, EncodePrivateKey as _, LineEnding};
    use ring::signature::ECDSA_P384_SHA384_FIXED_SIGNING;

    use super::*;

    /// Made with `openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256`.
    const OPENSSL_PEM: &str = "-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgNtEVnpxStJGhoTfa
OEt+5TqmwxY+iwI60HqrIryhCFGhRANCAAQbe2umFw5ZEki9r5LZpMNmC7jXcn44
R9JX//HUxmsbqd3xao2/A80JgjzdeUdJC4XD2RYoG/5ldAe8sl3MMDYa
-----END PRIVATE KEY-----
";

    /// The same key without its public key: `openssl ec -no_public | openssl pkcs8 -topk8
    /// -nocrypt`.
    const NO_PUBLIC_KEY_PEM: &str = "-----BEGIN PRIVATE KEY-----
MEECAQAwEwYHKoZIzj0CAQYIKoZIzj0DAQcEJzAlAgEBBCA20RWenFK0kaGhN9o4
S37lOqbDFj6LAjrQeqsivKEIUQ==
-----END PRIVATE KEY-----
";

    /// Checks `token`'s ES256 signature with p256 and the key `key` publishes; its header.
    fn verified_header(key: &EsKey, token: &str) -> Value {
        let parts: Vec<&str> = token.split('.').collect();
        assert_eq!(parts.len(), 3);
        let jwk = key.public_jwk();
        assert_eq!((jwk["kty"].as_str(), jwk["crv"].as_str()), (Some("EC"), Some("P-256")));
        let mut point = vec![4u8];
        point.extend(URL_SAFE_NO_PAD.decode(jwk["x"].as_str().unwrap()).unwrap());
        point.extend(URL_SAFE_NO_PAD.decode(jwk["y"].as_str().unwrap()).unwrap());
        let verifying = VerifyingKey::from_sec1_bytes(&point).unwrap();
        let signature = Signature::from_slice(&URL_SAFE_NO_PAD.decode(parts[2]).unwrap()).unwrap();
        verifying.verify(format!("{}.{}", parts[0], parts[1]).as_bytes(), &signature).unwrap();
        serde_json::from_slice(&URL_SAFE_NO_PAD.decode(parts[0]).unwrap()).unwrap()
    }

    /// The public JWK p256 derives from the same PEM, to compare with ring's.
    fn p256_jwk(pem: &str) -> Value {
        let point = SigningKey::from_pkcs8_pem(pem).unwrap().verifying_key().to_encoded_point(false);
        json!({"kty": "EC", "crv": "P-256", "x": URL_SAFE_NO_PAD.encode(point.x().unwrap()),
            "y": URL_SAFE_NO_PAD.encode(point.y().unwrap())})
    }

    #[test]
    fn a_signature_verifies_with_the_published_key() {
        let key = EsKey::generate().unwrap();
        let token = key.sign(json!({"typ": "dpop+jwt"}), &json!({"jti": "1"})).unwrap();
        let header = verified_header(&key, &token);
        assert_eq!((header["alg"].as_str(), header["typ"].as_str()), (Some("ES256"), Some("dpop+jwt")));
        assert_ne!(EsKey::generate().unwrap().public_jwk(), key.public_jwk(), "each key is new");
    }

    #[test]
    fn pkcs8_pem_from_openssl_and_from_p256_is_loaded() {
        let written = SigningKey::from_bytes(&[7; 32].into()).unwrap().to_pkcs8_pem(LineEnding::CRLF).unwrap();
        // Whitespace anywhere in the base64, and text around the PEM, are ignored.
        let indented = OPENSSL_PEM.replace('\n', "\n  ");
        let surrounded = format!("a key for the client:\n{OPENSSL_PEM}\nend of file\n");
        for (pem, p256_read) in [
            (OPENSSL_PEM, OPENSSL_PEM),
            (indented.as_str(), OPENSSL_PEM),
            (surrounded.as_str(), OPENSSL_PEM),
            (written.as_str(), written.as_str()),
        ] {
            let key = EsKey::from_pkcs8_pem(pem).unwrap_or_else(|err| panic!("{err}: {pem}"));
            assert_eq!(key.public_jwk(), p256_jwk(p256_read));
            verified_header(&key, &key.sign(json!({"typ": "JWT"}), &json!({"iss": "me"})).unwrap());
        }
    }

    #[test]
    fn a_key_ring_cannot_sign_with_is_refused_saying_why() {
        let refused = |pem: &str| match EsKey::from_pkcs8_pem(pem) {
            Err(why) => why,
            Ok(_) => panic!("{pem} was taken"),
        };
        assert!(refused(NO_PUBLIC_KEY_PEM).contains("lacks the public key"), "{}", refused(NO_PUBLIC_KEY_PEM));
        let truncated = "-----BEGIN PRIVATE KEY-----\nMIGHAgEA\n-----END PRIVATE KEY-----\n";
        assert!(refused(truncated).contains("malformed"), "{}", refused(truncated));
        let sec1 = OPENSSL_PEM.replace("PRIVATE KEY", "EC PRIVATE KEY");
        assert!(refused(&sec1).contains("openssl pkcs8 -topk8"));
        assert!(refused(&OPENSSL_PEM.replace("PRIVATE KEY", "ENCRYPTED PRIVATE KEY")).contains("encrypted"));
        assert!(refused("").contains("no -----BEGIN PRIVATE KEY----- line"));
        assert!(refused(OPENSSL_PEM.trim_end().trim_end_matches("-----END PRIVATE KEY-----")).contains("no -----END"));
        assert!(refused(&OPENSSL_PEM.replace("MIGH", "MIG*")).contains("not base64"));
        let random = SystemRandom::new();
        let p384 = EcdsaKeyPair::generate_pkcs8(&ECDSA_P384_SHA384_FIXED_SIGNING, &random).unwrap();
        let p384_pem = format!("-----BEGIN PRIVATE KEY-----\n{}\n-----END PRIVATE KEY-----\n", STANDARD.encode(p384));
        assert!(refused(&p384_pem).contains("another algorithm or curve"), "{}", refused(&p384_pem));
        for why in [refused(NO_PUBLIC_KEY_PEM), refused(""), refused(&p384_pem)] {
            assert!(why.starts_with("not a P-256 PKCS#8 key: "), "{why}");
        }
    }
}
