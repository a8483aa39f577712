//! ES256 signatures (RFC 7515, RFC 7518 §3.4) for what OAuth asks a client to sign: private
//! key JWT client assertions (RFC 7523) and DPoP proofs (RFC 9449). Keys are P-256, loaded from
//! PKCS#8 PEM or made at random.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use p256::ecdsa::signature::Signer;
use p256::ecdsa::{Signature, SigningKey};
use p256::pkcs8::DecodePrivateKey;
use serde_json::{Value, json};

/// A P-256 private key.
#[derive(Clone)]
pub(crate) struct EsKey {
    key: SigningKey,
}

impl EsKey {
    /// A new key from the system's randomness.
    pub(crate) fn generate() -> Result<EsKey, String> {
        // A random 32-byte string is a valid scalar but for a negligible share of values;
        // draw again in that case.
        for _ in 0..16 {
            let mut bytes = [0u8; 32];
            getrandom::fill(&mut bytes).map_err(|err| format!("no randomness: {err}"))?;
            if let Ok(key) = SigningKey::from_bytes(&bytes.into()) {
                return Ok(EsKey { key });
            }
        }
        Err("could not draw a P-256 key".to_owned())
    }

    /// A key from PKCS#8 PEM (`-----BEGIN PRIVATE KEY-----`).
    pub(crate) fn from_pkcs8_pem(pem: &str) -> Result<EsKey, String> {
        SigningKey::from_pkcs8_pem(pem).map(|key| EsKey { key }).map_err(|err| format!("not a P-256 PKCS#8 key: {err}"))
    }

    /// The public key as a JWK.
    pub(crate) fn public_jwk(&self) -> Value {
        let point = self.key.verifying_key().to_encoded_point(false);
        let coordinate = |bytes: Option<&p256::FieldBytes>| bytes.map(|bytes| URL_SAFE_NO_PAD.encode(bytes));
        json!({"kty": "EC", "crv": "P-256", "x": coordinate(point.x()), "y": coordinate(point.y())})
    }

    /// `header.claims.signature`, compact, with `alg: ES256` added to the header.
    pub(crate) fn sign(&self, mut header: Value, claims: &Value) -> String {
        header["alg"] = json!("ES256");
        let signing_input =
            format!("{}.{}", URL_SAFE_NO_PAD.encode(header.to_string()), URL_SAFE_NO_PAD.encode(claims.to_string()));
        let signature: Signature = self.key.sign(signing_input.as_bytes());
        format!("{signing_input}.{}", URL_SAFE_NO_PAD.encode(signature.to_bytes()))
    }
}

#[cfg(test)]
mod tests {
    use p256::ecdsa::VerifyingKey;
    use p256::ecdsa::signature::Verifier;

    use super::*;

    #[test]
    fn a_signature_verifies_with_the_published_key() {
        let key = EsKey::generate().unwrap();
        let token = key.sign(json!({"typ": "dpop+jwt"}), &json!({"jti": "1"}));
        let parts: Vec<&str> = token.split('.').collect();
        assert_eq!(parts.len(), 3);
        let header: Value = serde_json::from_slice(&URL_SAFE_NO_PAD.decode(parts[0]).unwrap()).unwrap();
        assert_eq!((header["alg"].as_str(), header["typ"].as_str()), (Some("ES256"), Some("dpop+jwt")));
        let jwk = key.public_jwk();
        let mut point = vec![4u8];
        point.extend(URL_SAFE_NO_PAD.decode(jwk["x"].as_str().unwrap()).unwrap());
        point.extend(URL_SAFE_NO_PAD.decode(jwk["y"].as_str().unwrap()).unwrap());
        let verifying = VerifyingKey::from_sec1_bytes(&point).unwrap();
        let signature = Signature::from_slice(&URL_SAFE_NO_PAD.decode(parts[2]).unwrap()).unwrap();
        verifying.verify(format!("{}.{}", parts[0], parts[1]).as_bytes(), &signature).unwrap();
    }
}
