//! A result one server gave, as a proxy passes it on to its own client: without what the
//! answering server said of its own protocol envelope, read by hand so that the members left out
//! (its `serverInfo`, say, on every 2026-07-28 result) are never decoded.

use super::scanner::Scanner;
use crate::types::meta_keys::META_PROTOCOL_PREFIX;

/// `result` (a JSON object) without its `resultType` member and without the members of its
/// `_meta` whose names start with [`META_PROTOCOL_PREFIX`] (`_meta` itself left out when
/// nothing else is in it); every other member as it was written.
///
/// `None` when `result` is anything but a plain object: a member name with an escape,
/// `resultType` or `_meta` given twice, a `_meta` that is no object, malformed JSON. The caller
/// then decodes `result` whole and takes the same members out of what it decoded.
pub fn without_protocol_members(result: &str) -> Option<String> {
    let mut scan = Scanner::new(result);
    let mut kept = String::with_capacity(result.len());
    kept.push('{');
    let (mut typed, mut meta) = (false, false);
    members(&mut scan, |scan, name, start| match name {
        b"resultType" if !typed => {
            typed = true;
            scan.skip_value()
        }
        b"_meta" if !meta => {
            meta = true;
            keep_meta(scan, &mut kept)
        }
        b"resultType" | b"_meta" => None,
        _ => {
            scan.skip_value()?;
            separate(&mut kept, 1);
            kept.push_str(&result[start..scan.at]);
            Some(())
        }
    })?;
    scan.skip_space();
    if scan.at != result.len() {
        return None;
    }
    kept.push('}');
    Some(kept)
}

/// Reads the `_meta` object where `scan` stands, and writes to `kept` the members not the
/// protocol's, as a `_meta` member of their own; nothing when there are none.
fn keep_meta(scan: &mut Scanner<'_>, kept: &mut String) -> Option<()> {
    let before = kept.len();
    separate(kept, 1);
    kept.push_str("\"_meta\":{");
    let opened = kept.len();
    let text = scan.text;
    members(scan, |scan, name, start| {
        scan.skip_value()?;
        if !name.starts_with(META_PROTOCOL_PREFIX.as_bytes()) {
            separate(kept, opened);
            kept.push_str(&text[start..scan.at]);
        }
        Some(())
    })?;
    if kept.len() == opened {
        kept.truncate(before);
    } else {
        kept.push('}');
    }
    Some(())
}

/// Reads the object where `scan` stands: `member` is given each member's name (read with its
/// colon) and where the member starts, and reads its value.
fn members<'a>(
    scan: &mut Scanner<'a>,
    mut member: impl FnMut(&mut Scanner<'a>, &'a [u8], usize) -> Option<()>,
) -> Option<()> {
    scan.skip_space();
    scan.expect(b'{')?;
    scan.skip_space();
    if scan.peek()? == b'}' {
        scan.at += 1;
        return Some(());
    }
    loop {
        scan.skip_space();
        let start = scan.at;
        let name = scan.plain_member()?;
        member(scan, name, start)?;
        if !scan.more_members()? {
            return Some(());
        }
    }
}

/// A comma before the next member, unless it is the first after the opening at `opened`.
fn separate(kept: &mut String, opened: usize) {
    if kept.len() > opened {
        kept.push(',');
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Map, Value};

    use super::*;

    /// What the function must give, by way of `Value`: the object without `resultType`, and
    /// without the protocol's `_meta` members.
    fn expected(result: &str) -> Value {
        let mut object: Map<String, Value> = serde_json::from_str(result).unwrap();
        object.remove("resultType");
        if let Some(Value::Object(meta)) = object.get_mut("_meta") {
            meta.retain(|key, _| !key.starts_with(META_PROTOCOL_PREFIX));
            if meta.is_empty() {
                object.remove("_meta");
            }
        }
        Value::Object(object)
    }

    fn passed_on(result: &str) -> Value {
        let kept = without_protocol_members(result).unwrap_or_else(|| panic!("not read by hand: {result}"));
        serde_json::from_str(&kept).unwrap_or_else(|err| panic!("{kept}: {err}"))
    }

    #[test]
    fn the_answering_servers_own_members_are_left_out_and_the_rest_kept_as_written() {
        let echo = r#"{"content":[{"type":"text","text":"hello, wharf"}],"resultType":"complete","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"up","version":"1"}}}"#;
        assert_eq!(without_protocol_members(echo).unwrap(), r#"{"content":[{"type":"text","text":"hello, wharf"}]}"#);
        let mixed = r#" { "_meta" : { "trace" : "t1" , "io.modelcontextprotocol/serverInfo" : {} , "x": [1, 2.5e3] } , "isError": false, "resultType": "complete" } "#;
        assert_eq!(
            without_protocol_members(mixed).unwrap(),
            r#"{"_meta":{"trace" : "t1","x": [1, 2.5e3]},"isError": false}"#
        );
        for result in [
            "{}",
            r#"{"resultType":"complete"}"#,
            r#"{"_meta":{}}"#,
            r#"{"_meta":{"io.modelcontextprotocol/a":1},"content":[]}"#,
            r#"{"content":[],"_meta":{"a":{"io.modelcontextprotocol/inner":"kept: not a member of _meta"}}}"#,
            r#"{"structuredContent":{"resultType":"kept: not the result's own"},"content":[{"type":"text","text":"a\"b\\c\u0041"}]}"#,
            r#"{"content":[],"content":[1]}"#,
        ] {
            assert_eq!(passed_on(result), expected(result), "{result}");
        }
    }

    #[test]
    fn anything_but_a_plain_object_is_left_to_serde() {
        for result in [
            "",
            "[]",
            "null",
            r#"{"resultType":"complete","resultType":"complete"}"#,
            r#"{"_meta":{},"_meta":{}}"#,
            r#"{"_meta":[]}"#,
            r#"{"_met\u0061":{"io.modelcontextprotocol/serverInfo":{}}}"#,
            r#"{"_meta":{"io.modelcontextprotocol\/serverInfo":{}}}"#,
            r#"{"content":[]} x"#,
            r#"{"content":[],}"#,
        ] {
            assert_eq!(without_protocol_members(result), None, "{result}");
        }
    }

    /// Every byte of a rich result removed, replaced or doubled: whatever is read by hand is
    /// JSON, and gives what `Value` gives.
    #[test]
    fn a_mangled_result_read_by_hand_is_read_as_serde_reads_it() {
        let sample = r#"{"content":[{"type":"text","text":"a\"\u0041"}],"isError":false,"resultType":"complete","_meta":{"k":[1,-2.5e3,null],"io.modelcontextprotocol/serverInfo":{"name":"n"}}}"#;
        let replacements = [b'"', b'\\', b',', b':', b'{', b'}', b'[', b']', b'0', b'-', b'.', b'e', b' ', 0x01];
        let mut taken = 0;
        for variant in super::super::mangled(sample, &replacements) {
            let Ok(text) = std::str::from_utf8(&variant) else { continue };
            if let Some(kept) = without_protocol_members(text) {
                taken += 1;
                let kept: Value = serde_json::from_str(&kept).unwrap_or_else(|err| panic!("{text} gave {kept}: {err}"));
                assert_eq!(kept, expected(text), "{text}");
            }
        }
        assert!(taken > 100, "only {taken} variants were read at all");
    }
}
