//! A request's `_meta` read by hand: the keys a 2026-07-28 request carries every time (its
//! revision and the client's capabilities, most often `{}`) without serde.
//!
//! Through serde, the `_meta` of a stateless `tools/call` cost about a third of its decoding:
//! each key went through serde's string and identifier machinery, and the client's empty
//! capabilities took an allocation of their own. The rarer keys (`progressToken`,
//! `clientInfo`, `logLevel`, and keys Wharf does not act on) still go through serde, one value
//! each.

use std::sync::{Arc, LazyLock};

use serde_json::Value;

use super::scanner::Scanner;
use crate::types::capabilities::ClientCapabilities;
use crate::types::meta_keys::{META_CLIENT_INFO, META_LOG_LEVEL};
use crate::types::request_meta::RequestMeta;

/// The two keys every stateless request carries, with their quotes, to be compared whole.
const QUOTED_PROTOCOL_VERSION: &[u8; 41] = b"\"io.modelcontextprotocol/protocolVersion\"";
const QUOTED_CLIENT_CAPABILITIES: &[u8; 44] = b"\"io.modelcontextprotocol/clientCapabilities\"";

/// The capabilities of every client that declares none, shared: most stateless requests carry
/// `{}`, and a shared value costs no allocation.
static NO_CAPABILITIES: LazyLock<Arc<ClientCapabilities>> = LazyLock::new(Arc::default);

/// The `_meta` object where `scan` stands, or `None` when it holds anything this reader does
/// not take (an escape in a key, a duplicate key, `null`, malformed JSON): serde then reads the
/// params again, and words the error if there is one.
pub(super) fn read(scan: &mut Scanner<'_>) -> Option<Box<RequestMeta>> {
    scan.expect(b'{')?;
    let mut meta = Box::<RequestMeta>::default();
    scan.skip_space();
    if scan.peek()? == b'}' {
        scan.at += 1;
        return Some(meta);
    }
    loop {
        match key(scan)? {
            Key::ProtocolVersion => {
                first(&meta.protocol_version)?;
                meta.protocol_version = Some(scan.plain_string()?.to_owned());
            }
            Key::ClientCapabilities => {
                first(&meta.client_capabilities)?;
                meta.client_capabilities = Some(capabilities(scan)?);
            }
            Key::ProgressToken => {
                first(&meta.progress_token)?;
                meta.progress_token = Some(scan.decode()?);
            }
            Key::ClientInfo => {
                first(&meta.client_info)?;
                meta.client_info = Some(Arc::new(scan.decode()?));
            }
            Key::LogLevel => {
                first(&meta.log_level)?;
                meta.log_level = Some(scan.decode()?);
            }
            Key::Other(other) => {
                // Plain bytes between quotes are the key's text; the message is UTF-8.
                let other = std::str::from_utf8(other).ok()?.to_owned();
                let value: Value = scan.decode()?;
                if meta.other.insert(other, value).is_some() {
                    return None;
                }
            }
        }
        if !scan.more_members()? {
            return Some(meta);
        }
    }
}

/// A `_meta` key.
enum Key<'a> {
    ProtocolVersion,
    ClientCapabilities,
    ProgressToken,
    ClientInfo,
    LogLevel,
    Other(&'a [u8]),
}

/// Reads the key where `scan` stands, and its colon. The two keys every stateless request
/// carries are tried whole first: they are long, and scanning each for its closing quote costs
/// more than comparing it whole.
fn key<'a>(scan: &mut Scanner<'a>) -> Option<Key<'a>> {
    if scan.member_named(QUOTED_PROTOCOL_VERSION)? {
        return Some(Key::ProtocolVersion);
    }
    if scan.member_named(QUOTED_CLIENT_CAPABILITIES)? {
        return Some(Key::ClientCapabilities);
    }
    // The two keys were tried whole above, so the key read here is neither of them.
    Some(match scan.plain_member()? {
        b"progressToken" => Key::ProgressToken,
        key if key == META_CLIENT_INFO.as_bytes() => Key::ClientInfo,
        key if key == META_LOG_LEVEL.as_bytes() => Key::LogLevel,
        other => Key::Other(other),
    })
}

/// `None` when `slot` was filled by an earlier key of the same name (serde calls that a
/// duplicate).
fn first<T>(slot: &Option<T>) -> Option<()> {
    slot.is_none().then_some(())
}

/// The client's capabilities where `scan` stands: `{}` is the shared empty set.
fn capabilities(scan: &mut Scanner<'_>) -> Option<Arc<ClientCapabilities>> {
    let start = scan.at;
    if scan.peek()? == b'{' {
        scan.at += 1;
        scan.skip_space();
        if scan.peek()? == b'}' {
            scan.at += 1;
            return Some(NO_CAPABILITIES.clone());
        }
        scan.at = start;
    }
    scan.decode().map(Arc::new)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The hand-written reader's answer, checked against serde's wherever it gives one.
    fn by_hand(meta: &str) -> Option<Box<RequestMeta>> {
        let mut scan = Scanner::new(meta);
        let read = read(&mut scan);
        if let Some(read) = &read {
            let (serde, used) = crate::messages::leading::<RequestMeta>(meta)
                .unwrap_or_else(|| panic!("read by hand what serde refuses: {meta}"));
            assert_eq!(**read, serde, "{meta}");
            assert_eq!(scan.at, used, "{meta}");
        }
        read
    }

    #[test]
    fn plain_meta_is_read_by_hand_as_serde_reads_it() {
        for meta in [
            r#"{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#,
            r#"{ "io.modelcontextprotocol/clientCapabilities" : { } , "io.modelcontextprotocol/protocolVersion" : "x" }"#,
            r#"{}"#,
            r#"{ }"#,
            r#"{"io.modelcontextprotocol/clientCapabilities":{"roots":{"listChanged":true},"elicitation":{}}}"#,
            r#"{"progressToken":7,"io.modelcontextprotocol/logLevel":"debug"}"#,
            r#"{"progressToken":"p","io.modelcontextprotocol/clientInfo":{"name":"c","version":"1"}}"#,
            // serde reads a struct from an array of its fields too.
            r#"{"io.modelcontextprotocol/clientCapabilities":[]}"#,
            r#"{"other":[1,{"a":null}],"another":"\u00e9","io.modelcontextprotocol/protocolVersion":"2025-11-25"}"#,
        ] {
            assert!(by_hand(meta).is_some(), "{meta}");
        }
    }

    #[test]
    fn the_keys_compared_whole_are_the_protocols_keys() {
        use crate::types::meta_keys::{META_CLIENT_CAPABILITIES, META_PROTOCOL_VERSION};
        assert_eq!(QUOTED_PROTOCOL_VERSION.as_slice(), format!("\"{META_PROTOCOL_VERSION}\"").as_bytes());
        assert_eq!(QUOTED_CLIENT_CAPABILITIES.as_slice(), format!("\"{META_CLIENT_CAPABILITIES}\"").as_bytes());
    }

    #[test]
    fn empty_capabilities_are_shared_and_others_are_not() {
        let empty = by_hand(r#"{"io.modelcontextprotocol/clientCapabilities":{}}"#).unwrap();
        let again = by_hand(r#"{"io.modelcontextprotocol/clientCapabilities":{ }}"#).unwrap();
        let (empty, again) = (empty.client_capabilities.unwrap(), again.client_capabilities.unwrap());
        assert!(Arc::ptr_eq(&empty, &again));
        let roots = by_hand(r#"{"io.modelcontextprotocol/clientCapabilities":{"roots":{}}}"#).unwrap();
        let roots = roots.client_capabilities.unwrap();
        assert!(!Arc::ptr_eq(&empty, &roots) && roots.roots.is_some());
    }

    #[test]
    fn what_the_reader_is_unsure_of_is_left_to_serde() {
        for meta in [
            // Valid, but not plain.
            r#"{"io.modelcontextprotocol\/protocolVersion":"2026-07-28"}"#,
            r#"{"io.modelcontextprotocol/protocolVersion":"2026\u002d07-28"}"#,
            r#"null"#,
            // Refused by serde too.
            r#"{"io.modelcontextprotocol/protocolVersion":null}"#,
            r#"{"io.modelcontextprotocol/protocolVersion":1}"#,
            r#"{"io.modelcontextprotocol/protocolVersion":"a","io.modelcontextprotocol/protocolVersion":"b"}"#,
            r#"{"io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientCapabilities":{}}"#,
            r#"{"io.modelcontextprotocol/clientCapabilities":{"roots":7}}"#,
            r#"{"io.modelcontextprotocol/clientCapabilities":{}"#,
            r#"{"io.modelcontextprotocol/logLevel":"loud"}"#,
            r#"{"progressToken":[]}"#,
            r#"{"progressToken":1,"progressToken":2}"#,
            r#"{"x":1,"x":2}"#,
            r#"{"x":1,}"#,
            r#"{"x" 1}"#,
            r#"{,}"#,
        ] {
            assert!(by_hand(meta).is_none(), "{meta}");
        }
    }

    /// Every byte of a stateless request's `_meta` removed, replaced or doubled: whatever the
    /// reader still takes, serde takes too, and reads the same (`by_hand` checks).
    #[test]
    fn mangled_meta_is_never_read_where_serde_refuses_it() {
        let sample = r#"{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{ },"k":[1,"v"]}"#;
        let replacements = [b'"', b'\\', b',', b':', b'{', b'}', b'[', b']', b'0', b' ', b'n', 0x01];
        let mut taken = 0;
        for variant in super::super::mangled(sample, &replacements) {
            if let Ok(text) = std::str::from_utf8(&variant) {
                taken += usize::from(by_hand(text).is_some());
            }
        }
        assert!(taken > 100, "only {taken} variants were read at all");
    }
}
