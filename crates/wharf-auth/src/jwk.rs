//! Public JSON Web Keys (RFC 7517): an issuer's key set and a DPoP proof's key, with the members
//! that choosing a key and checking a signature read. Other members are ignored, and a key of a
//! type or curve this server does not verify with still parses: it just never fits a token.

use serde::Deserialize;

/// A JWK set (RFC 7517 §5), as an issuer's `jwks_uri` serves it.
#[derive(Debug, Clone, Deserialize)]
pub(crate) struct JwkSet {
    /// The keys, in the issuer's order.
    pub(crate) keys: Vec<Jwk>,
}

/// One public key: the common members (RFC 7517 §4) and the public parameters of RSA
/// (`n`, `e`: RFC 7518 §6.3.1), EC (`crv`, `x`, `y`: RFC 7518 §6.2.1) and OKP keys (`crv`, `x`:
/// RFC 8037 §2), each base64url where it is a number or a point.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub(crate) struct Jwk {
    /// `RSA`, `EC`, `OKP`, or another type; empty when missing, which fits nothing.
    pub(crate) kty: String,
    pub(crate) kid: Option<String>,
    /// `sig` or `enc`, when the issuer says.
    #[serde(rename = "use")]
    pub(crate) usage: Option<String>,
    /// The one algorithm the key is for, when the issuer says.
    pub(crate) alg: Option<String>,
    pub(crate) crv: Option<String>,
    pub(crate) n: Option<String>,
    pub(crate) e: Option<String>,
    pub(crate) x: Option<String>,
    pub(crate) y: Option<String>,
}
