//! [`TokenVerifier`]: what turns a bearer token into a principal. [`JwtVerifier`] checks JWT
//! access tokens against their issuer's keys; anything else (an introspection endpoint, a
//! token store of your own) implements the trait.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use wharf_server::Principal;

use wharf_http::AuthRefusal;

use crate::claims::{self, Expected};
use crate::fetch::Fetcher;
use crate::jwt::{self, Unverified};
use crate::keys::IssuerKeys;
use crate::resource::ResourceUrl;

/// What [`TokenVerifier::verify`] returns.
pub type VerifyFuture<'a> = Pin<Box<dyn Future<Output = Result<Principal, AuthRefusal>> + Send + 'a>>;

/// What [`TokenVerifier::check`] returns: what could not be had, and from where.
pub type CheckFuture<'a> = Pin<Box<dyn Future<Output = Result<(), String>> + Send + 'a>>;

/// Turns a bearer token into the principal it stands for, or refuses it (an
/// [`AuthRefusal::invalid_token`] whose description never repeats the token).
pub trait TokenVerifier: Send + Sync + 'static {
    /// The principal behind `token`, which must be issued for this resource.
    fn verify<'a>(&'a self, token: &'a str) -> VerifyFuture<'a>;

    /// Fetches now what verifying needs from elsewhere (an issuer's metadata and keys, its
    /// introspection endpoint) and keeps it, so that a server can refuse to start without it.
    /// The error names each URL tried and why it did not do. Nothing, by default.
    fn check(&self) -> CheckFuture<'_> {
        Box::pin(std::future::ready(Ok(())))
    }
}

/// Verifies JWT access tokens (RFC 9068) of one issuer, for this resource.
#[derive(Debug)]
pub struct JwtVerifier {
    issuer: String,
    audiences: Vec<ResourceUrl>,
    leeway: Duration,
    accept_plain_jwt: bool,
    keys: IssuerKeys,
}

impl JwtVerifier {
    pub(crate) fn new(
        issuer: String,
        audiences: Vec<ResourceUrl>,
        leeway: Duration,
        accept_plain_jwt: bool,
        fetcher: Fetcher,
        refetch_interval: Duration,
    ) -> JwtVerifier {
        let keys = IssuerKeys::new(issuer.clone(), fetcher, refetch_interval, Duration::from_secs(24 * 3600));
        JwtVerifier { issuer, audiences, leeway, accept_plain_jwt, keys }
    }

    async fn principal(&self, token: &str) -> Result<Principal, AuthRefusal> {
        let unavailable = |problem: String| {
            tracing::warn!(issuer = %self.issuer, %problem, "a token could not be verified");
            AuthRefusal::invalid_token("the issuer's keys are not available")
        };
        let keys = self.keys.current().await.map_err(unavailable)?;
        let claims = match jwt::verify(token, &keys, self.accept_plain_jwt) {
            Err(Unverified::UnknownKey) => {
                // The issuer may have rotated its keys: fetch them once more (rate-limited).
                let keys = self.keys.after_unknown_key(&keys).await.map_err(unavailable)?;
                jwt::verify(token, &keys, self.accept_plain_jwt)
            }
            verified => verified,
        };
        let claims = claims.map_err(|unverified| match unverified {
            Unverified::UnknownKey => AuthRefusal::invalid_token("the token is signed with an unknown key"),
            Unverified::Invalid(why) => AuthRefusal::invalid_token(why),
        })?;
        let expected =
            Expected { issuer: &self.issuer, audiences: &self.audiences, leeway: self.leeway, expiry_required: true };
        claims::principal(claims, &expected, SystemTime::now()).map_err(AuthRefusal::invalid_token)
    }
}

impl TokenVerifier for JwtVerifier {
    fn verify<'a>(&'a self, token: &'a str) -> VerifyFuture<'a> {
        Box::pin(self.principal(token))
    }

    fn check(&self) -> CheckFuture<'_> {
        Box::pin(async { self.keys.current().await.map(drop) })
    }
}

impl<V: TokenVerifier> TokenVerifier for Arc<V> {
    fn verify<'a>(&'a self, token: &'a str) -> VerifyFuture<'a> {
        (**self).verify(token)
    }

    fn check(&self) -> CheckFuture<'_> {
        (**self).check()
    }
}
