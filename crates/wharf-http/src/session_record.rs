//! A 2025 session as a shared [`SessionStore`](super::session_store::SessionStore) keeps it:
//! what `initialize` settled, written once as JSON, and the parts that change later, read back
//! into the session an instance serves.

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use wharf_protocol::{ClientCapabilities, FromJson, Implementation, JsonObject, LoggingLevel, ProtocolVersion};

use super::session_store::{SessionChange, StoredSession};
use wharf_server::contract::Principal;
use wharf_server::contract::{Negotiated, Session};

/// What `initialize` settled, as stored.
#[derive(Serialize)]
struct Opened {
    version: String,
    client_info: Implementation,
    client_capabilities: ClientCapabilities,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    principal: Option<StoredPrincipal>,
}

/// What `initialize` settled, as read back: the protocol's types left as text for their own
/// decoders ([`FromJson`]), which are not compiled again here.
#[derive(Deserialize)]
struct OpenedText<'a> {
    version: String,
    #[serde(borrow)]
    client_info: &'a RawValue,
    #[serde(borrow)]
    client_capabilities: &'a RawValue,
    #[serde(default)]
    principal: Option<StoredPrincipal>,
}

/// The principal that opened the session, as stored.
#[derive(Serialize, Deserialize)]
struct StoredPrincipal {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    issuer: Option<String>,
    subject: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    client_id: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    scopes: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    claims: Option<JsonObject>,
}

impl StoredPrincipal {
    fn of(principal: &Principal) -> StoredPrincipal {
        StoredPrincipal {
            issuer: principal.issuer().map(str::to_owned),
            subject: principal.subject().to_owned(),
            client_id: principal.client_id().map(str::to_owned),
            scopes: principal.scopes().map(str::to_owned).collect(),
            claims: principal.claims().cloned(),
        }
    }

    fn principal(self) -> Principal {
        let mut principal = match &self.issuer {
            Some(issuer) => Principal::issued(issuer, &self.subject),
            None => Principal::new(self.subject),
        };
        if let Some(client_id) = self.client_id {
            principal = principal.with_client_id(client_id);
        }
        if !self.scopes.is_empty() {
            principal = principal.with_scopes(self.scopes);
        }
        if let Some(claims) = self.claims {
            principal = principal.with_claims(claims);
        }
        principal
    }
}

/// What `initialize` settled for `session`, for the store; None before it did.
pub(crate) fn opened(session: &Session) -> Option<Vec<u8>> {
    let negotiated = session.negotiated()?;
    let opened = Opened {
        version: negotiated.version.as_str().to_owned(),
        client_info: (*negotiated.client_info).clone(),
        client_capabilities: (*negotiated.client_capabilities).clone(),
        principal: session.principal().map(StoredPrincipal::of),
    };
    serde_json::to_vec(&opened).ok()
}

/// Settles a fresh session as `initialize` settled it elsewhere, and gives the principal that
/// opened it. None when the stored text is not one Wharf wrote.
pub(crate) fn adopt(session: &Session, stored: &StoredSession) -> Option<Option<Principal>> {
    let opened: OpenedText<'_> = serde_json::from_slice(&stored.opened).ok()?;
    let version = ProtocolVersion::parse(&opened.version)?;
    let principal = opened.principal.map(StoredPrincipal::principal);
    let negotiated = Negotiated {
        version,
        at: std::time::Instant::now(),
        client_capabilities: Arc::new(ClientCapabilities::from_json(opened.client_capabilities.get()).ok()?),
        client_info: Arc::new(Implementation::from_json(opened.client_info.get()).ok()?),
    };
    session.negotiate(negotiated, principal.as_ref());
    refresh(session, stored);
    Some(principal)
}

/// Brings what changes in a session (initialized, log level, subscriptions) up to the store.
pub(crate) fn refresh(session: &Session, stored: &StoredSession) {
    if stored.initialized && !session.is_initialized() {
        session.mark_initialized();
    }
    if let Some(level) = stored.log_level.as_deref().and_then(level_named) {
        session.set_log_level(level);
    }
    session.replace_subscriptions(stored.subscriptions.iter().cloned());
}

fn level_named(name: &str) -> Option<LoggingLevel> {
    LoggingLevel::from_json_value(serde_json::Value::String(name.to_owned())).ok()
}

/// The change `logging/setLevel` to `level` makes.
pub(crate) fn change_of_level(level: LoggingLevel) -> SessionChange {
    let name = serde_json::to_value(level).ok().and_then(|value| value.as_str().map(str::to_owned));
    SessionChange::LogLevel(name.unwrap_or_default())
}

/// True when `session` now is as `change` says: the request that makes it succeeded.
pub(crate) fn shows(session: &Session, change: &SessionChange) -> bool {
    match change {
        SessionChange::Initialized => session.is_initialized(),
        SessionChange::LogLevel(name) => session.log_level().is_some_and(|level| Some(level) == level_named(name)),
        SessionChange::Subscribed(uri) => session.is_subscribed(uri),
        SessionChange::Unsubscribed(uri) => !session.is_subscribed(uri),
    }
}
