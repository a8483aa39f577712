//! What a call carries to prove who the gateway is to the API: an API key in a header, the
//! query or a cookie, a bearer token, or a user and password. Set by configuration (a value
//! read from the environment by name), never by a tool's arguments, and never written out:
//! `Debug` says which kind, not the value.

use std::fmt;

/// One credential sent with every call.
#[derive(Clone, PartialEq, Eq)]
pub enum Credential {
    /// An API key in the header `name`.
    Header {
        /// The header.
        name: String,
        /// The key.
        value: String,
    },
    /// An API key in the query parameter `name`.
    Query {
        /// The parameter.
        name: String,
        /// The key.
        value: String,
    },
    /// An API key in the cookie `name`.
    Cookie {
        /// The cookie.
        name: String,
        /// The key.
        value: String,
    },
    /// `Authorization: Bearer TOKEN`.
    Bearer(String),
    /// `Authorization: Basic ...` for a user and password.
    Basic {
        /// The user.
        user: String,
        /// The password.
        password: String,
    },
}

impl fmt::Debug for Credential {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Credential::Header { name, .. } => write!(f, "Credential::Header({name}: <redacted>)"),
            Credential::Query { name, .. } => write!(f, "Credential::Query({name}=<redacted>)"),
            Credential::Cookie { name, .. } => write!(f, "Credential::Cookie({name}=<redacted>)"),
            Credential::Bearer(_) => f.write_str("Credential::Bearer(<redacted>)"),
            Credential::Basic { user, .. } => write!(f, "Credential::Basic({user}:<redacted>)"),
        }
    }
}

impl Credential {
    /// An error when a value could break the request it goes into (a line break in a header).
    pub(crate) fn problem(&self) -> Option<String> {
        let (what, value) = match self {
            Credential::Header { name, value } => (format!("the header `{name}`"), value.as_str()),
            Credential::Bearer(token) => ("the bearer token".to_owned(), token.as_str()),
            Credential::Basic { user, .. } if user.contains(':') => {
                return Some(format!("the user `{user}` holds `:`, which basic authentication cannot carry"));
            }
            _ => return None,
        };
        value.chars().any(char::is_control).then(|| format!("{what} holds a control character"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_secret_is_written_out() {
        let all = [
            Credential::Header { name: "X-Api-Key".into(), value: "s3cret".into() },
            Credential::Query { name: "key".into(), value: "s3cret".into() },
            Credential::Cookie { name: "sid".into(), value: "s3cret".into() },
            Credential::Bearer("s3cret".into()),
            Credential::Basic { user: "ada".into(), password: "s3cret".into() },
        ];
        for credential in all {
            let written = format!("{credential:?}");
            assert!(!written.contains("s3cret") && written.contains("redacted"), "{written}");
            assert_eq!(credential.problem(), None);
        }
        let broken = Credential::Bearer("a\r\nX-Admin: 1".into());
        assert!(broken.problem().unwrap().contains("control character"));
        let user = Credential::Basic { user: "a:b".into(), password: String::new() };
        assert!(user.problem().unwrap().contains("`:`"));
    }
}
