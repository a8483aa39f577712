//! The `_meta` object of a request's params, with the keys Wharf acts on typed.

use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::types::capabilities::ClientCapabilities;
use crate::types::common::{Implementation, JsonObject, ProgressToken};
use crate::types::logging_level::LoggingLevel;
use crate::types::meta_keys::{META_CLIENT_CAPABILITIES, META_CLIENT_INFO, META_LOG_LEVEL, META_PROTOCOL_VERSION};
use crate::version::Era;

/// The `_meta` object of a request's params.
///
/// The keys Wharf acts on are typed; every other key is kept in [`RequestMeta::other`].
///
/// Deserialization is written by hand: serde's `flatten` would buffer the whole object into an
/// intermediate tree before reading it a second time, on every request of the 2026-07-28 era.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RequestMeta {
    /// Asks for `notifications/progress` about this request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub progress_token: Option<ProgressToken>,
    /// The revision of a 2026-07-28-style request.
    #[serde(rename = "io.modelcontextprotocol/protocolVersion", default, skip_serializing_if = "Option::is_none")]
    pub protocol_version: Option<String>,
    /// The client's capabilities, declared on every 2026-07-28 request; shared, as they move
    /// from the request into its context unchanged.
    #[serde(rename = "io.modelcontextprotocol/clientCapabilities", default, skip_serializing_if = "Option::is_none")]
    pub client_capabilities: Option<Arc<ClientCapabilities>>,
    /// The client's name and version, for display and logging only.
    #[serde(rename = "io.modelcontextprotocol/clientInfo", default, skip_serializing_if = "Option::is_none")]
    pub client_info: Option<Arc<Implementation>>,
    /// The least severe log level the client wants for this request (2026-07-28).
    #[serde(rename = "io.modelcontextprotocol/logLevel", default, skip_serializing_if = "Option::is_none")]
    pub log_level: Option<LoggingLevel>,
    /// Every other `_meta` member.
    #[serde(flatten)]
    pub other: JsonObject,
}

/// A `_meta` member name: one of the typed keys, or another to keep as it is.
enum MetaKey {
    ProgressToken,
    ProtocolVersion,
    ClientCapabilities,
    ClientInfo,
    LogLevel,
    Other(String),
}

impl<'de> Deserialize<'de> for MetaKey {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl serde::de::Visitor<'_> for KeyVisitor {
            type Value = MetaKey;
            fn expecting(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                formatter.write_str("a `_meta` member name")
            }
            fn visit_str<E: serde::de::Error>(self, key: &str) -> Result<MetaKey, E> {
                Ok(match key {
                    "progressToken" => MetaKey::ProgressToken,
                    META_PROTOCOL_VERSION => MetaKey::ProtocolVersion,
                    META_CLIENT_CAPABILITIES => MetaKey::ClientCapabilities,
                    META_CLIENT_INFO => MetaKey::ClientInfo,
                    META_LOG_LEVEL => MetaKey::LogLevel,
                    other => MetaKey::Other(other.to_owned()),
                })
            }
        }
        deserializer.deserialize_identifier(KeyVisitor)
    }
}

impl<'de> Deserialize<'de> for RequestMeta {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct MetaVisitor;
        impl<'de> serde::de::Visitor<'de> for MetaVisitor {
            type Value = RequestMeta;
            fn expecting(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                formatter.write_str("a `_meta` object")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<RequestMeta, A::Error> {
                fn once<T, E: serde::de::Error>(slot: &mut Option<T>, value: T, key: &'static str) -> Result<(), E> {
                    match slot.replace(value) {
                        None => Ok(()),
                        Some(_) => Err(E::duplicate_field(key)),
                    }
                }
                let mut meta = RequestMeta::default();
                while let Some(key) = map.next_key::<MetaKey>()? {
                    match key {
                        MetaKey::ProgressToken => {
                            once(&mut meta.progress_token, map.next_value()?, "progressToken")?;
                        }
                        MetaKey::ProtocolVersion => {
                            once(&mut meta.protocol_version, map.next_value()?, META_PROTOCOL_VERSION)?;
                        }
                        MetaKey::ClientCapabilities => {
                            let capabilities = Arc::new(map.next_value::<ClientCapabilities>()?);
                            once(&mut meta.client_capabilities, capabilities, META_CLIENT_CAPABILITIES)?;
                        }
                        MetaKey::ClientInfo => {
                            let info = Arc::new(map.next_value::<Implementation>()?);
                            once(&mut meta.client_info, info, META_CLIENT_INFO)?;
                        }
                        MetaKey::LogLevel => once(&mut meta.log_level, map.next_value()?, META_LOG_LEVEL)?,
                        MetaKey::Other(key) => {
                            let value = map.next_value()?;
                            if meta.other.insert(key, value).is_some() {
                                return Err(serde::de::Error::custom("duplicate `_meta` member"));
                            }
                        }
                    }
                }
                Ok(meta)
            }
        }
        deserializer.deserialize_map(MetaVisitor)
    }
}

impl RequestMeta {
    /// The era of the request this `_meta` came with: stateless when it names a protocol
    /// version or the client's capabilities, as only 2026-07-28 requests do.
    pub fn era(&self) -> Era {
        if self.protocol_version.is_some() || self.client_capabilities.is_some() {
            Era::Stateless
        } else {
            Era::Session
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::jsonrpc::RequestId;

    #[test]
    fn request_meta_types_known_keys_and_keeps_the_others() {
        let meta: RequestMeta = serde_json::from_str(
            r#"{"progressToken":7,"io.modelcontextprotocol/protocolVersion":"2026-07-28",
                "io.modelcontextprotocol/logLevel":"debug","vendor/trace":{"id":"x"}}"#,
        )
        .unwrap();
        assert_eq!(meta.progress_token, Some(RequestId::from(7)));
        assert_eq!(meta.protocol_version.as_deref(), Some("2026-07-28"));
        assert_eq!(meta.log_level, Some(LoggingLevel::Debug));
        assert_eq!(meta.other["vendor/trace"]["id"], "x");
        assert_eq!(meta.era(), Era::Stateless);
        let again: RequestMeta = serde_json::from_value(serde_json::to_value(&meta).unwrap()).unwrap();
        assert_eq!(again, meta);
    }

    #[test]
    fn request_meta_refuses_duplicate_members_and_wrong_types() {
        for text in [
            r#"{"progressToken":1,"progressToken":2}"#,
            r#"{"vendor/a":1,"vendor/a":2}"#,
            r#"{"io.modelcontextprotocol/protocolVersion":5}"#,
            r#"[]"#,
        ] {
            assert!(serde_json::from_str::<RequestMeta>(text).is_err(), "{text}");
        }
    }
}
