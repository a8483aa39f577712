//! OAuth 2.1 for Streamable HTTP, as the MCP authorization spec describes it: a 401 starts
//! discovery (protected resource metadata, then the authorization server's), the client
//! identifies itself (pre-registered, a client ID metadata document, or dynamic registration),
//! the user authorizes with PKCE, and the token goes with every request; a 403
//! `insufficient_scope` asks again for more scopes, and tokens are refreshed when they expire.
//!
//! The step only a person can take (visiting the authorization URL) is an [`Authorizer`]'s;
//! tokens and registrations can outlive the process in a [`TokenStore`].

mod challenge;
mod config;
mod discovery;
mod fetch;
mod file_store;
mod flow;
mod form;
mod jws;
mod loopback;
mod pkce;

pub use config::{
    Authorizer, EnterpriseManaged, ImmediateRedirect, MemoryTokenStore, OAuth, PreRegistered, RefreshHold,
    StoredTokens, TokenStore,
};
pub use file_store::FileTokenStore;
pub(crate) use flow::OAuthState;
pub use form::requested_scopes;
pub use loopback::{LoopbackAuthorizer, Opener};
