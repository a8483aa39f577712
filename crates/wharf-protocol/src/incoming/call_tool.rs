//! `tools/call` params read by hand: member names compared as bytes, the tool's name taken as
//! it stands, and the arguments' syntax checked and their text kept without serde.
//!
//! Through serde's derive the arguments were read once to find their end (`RawValue`) and then
//! copied, and each member name went through serde's string machinery: a large share of a
//! small call's work (`benches/NOTES.md`). `_meta` has a reader of its own
//! ([`super::meta`]); the rarer members (`task`, `inputResponses`, `requestState`) still go
//! through serde, one value each.

use super::scanner::Scanner;
use crate::types::arguments::ToolArguments;
use crate::types::tools::CallToolParams;

/// The params object where `scan` stands, or `None` when it holds anything this reader does
/// not take (an escape in a member name or the tool's name, a duplicate member, `null` or a
/// non-object for `arguments`, a missing `name`, malformed JSON): serde then reads it again,
/// and words the error if there is one.
pub(super) fn read(scan: &mut Scanner<'_>) -> Option<CallToolParams> {
    scan.expect(b'{')?;
    let mut params = CallToolParams::default();
    let mut seen = Members::default();
    loop {
        match member(scan)? {
            Member::Name => {
                seen.first(Members::NAME)?;
                params.name = scan.plain_string()?.to_owned();
            }
            Member::Arguments => {
                seen.first(Members::ARGUMENTS)?;
                if scan.peek()? != b'{' {
                    return None;
                }
                let start = scan.at;
                scan.skip_value()?;
                params.arguments = Some(ToolArguments::from_checked_object(scan.text.get(start..scan.at)?));
            }
            Member::Meta => {
                seen.first(Members::META)?;
                params.meta = match scan.peek()? {
                    b'{' => Some(super::meta::read(scan)?),
                    _ => scan.decode()?,
                };
            }
            Member::Task => {
                seen.first(Members::TASK)?;
                params.task = scan.decode()?;
            }
            Member::InputResponses => {
                seen.first(Members::INPUT_RESPONSES)?;
                params.input_responses = scan.decode::<UniqueInputResponses>()?.0;
            }
            Member::RequestState => {
                seen.first(Members::REQUEST_STATE)?;
                params.request_state = scan.decode()?;
            }
            // serde ignores members it does not know.
            Member::Other => scan.skip_value()?,
        }
        if !scan.more_members()? {
            break;
        }
    }
    seen.has(Members::NAME).then_some(params)
}

/// A member of the params, by its name.
enum Member {
    Name,
    Arguments,
    Meta,
    Task,
    InputResponses,
    RequestState,
    /// Any other name, whose value is skipped.
    Other,
}

/// Reads the name of the member where `scan` stands, and its colon. The names clients write,
/// in the order they most often write them, are tried whole first.
fn member(scan: &mut Scanner<'_>) -> Option<Member> {
    if scan.member_named(b"\"name\"")? {
        return Some(Member::Name);
    }
    if scan.member_named(b"\"arguments\"")? {
        return Some(Member::Arguments);
    }
    if scan.member_named(b"\"_meta\"")? {
        return Some(Member::Meta);
    }
    // `{}` ends here too: it has no name, which serde reports. The three names were tried
    // whole above, so the name read here is none of them.
    Some(match scan.plain_member()? {
        b"task" => Member::Task,
        b"inputResponses" => Member::InputResponses,
        b"requestState" => Member::RequestState,
        _ => Member::Other,
    })
}

/// The members read so far, one bit each.
/// `inputResponses` read as the strict path reads it: a member given twice anywhere in it is
/// refused (and the message goes to the strict path, which words the error).
#[derive(serde::Deserialize)]
struct UniqueInputResponses(
    #[serde(deserialize_with = "crate::types::unique::optional_object")] Option<crate::types::common::JsonObject>,
);

#[derive(Default)]
struct Members(u8);

impl Members {
    const NAME: u8 = 1;
    const ARGUMENTS: u8 = 2;
    const META: u8 = 4;
    const TASK: u8 = 8;
    const INPUT_RESPONSES: u8 = 16;
    const REQUEST_STATE: u8 = 32;

    /// Marks `member` as read; `None` if it was read before (serde calls that a duplicate).
    fn first(&mut self, member: u8) -> Option<()> {
        if self.has(member) {
            return None;
        }
        self.0 |= member;
        Some(())
    }

    fn has(&self, member: u8) -> bool {
        self.0 & member != 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The hand-written reader's answer, checked against serde's wherever it gives one.
    fn by_hand(params: &str) -> Option<CallToolParams> {
        let mut scan = Scanner::new(params);
        let read = read(&mut scan);
        if let Some(read) = &read {
            // Params stand inside a message, so what follows them is not theirs to judge.
            let (serde, used) = crate::messages::leading::<CallToolParams>(params)
                .unwrap_or_else(|| panic!("read by hand what serde refuses: {params}"));
            assert_eq!(read, &serde, "{params}");
            let text =
                |params: &CallToolParams| params.arguments.as_ref().map(|arguments| arguments.as_str().to_owned());
            assert_eq!(text(read), text(&serde), "{params}");
            assert_eq!(scan.at, used, "{params}");
        }
        read
    }

    #[test]
    fn plain_params_are_read_by_hand_as_serde_reads_them() {
        for params in [
            r#"{"name":"echo","arguments":{"message":"hello, wharf"}}"#,
            r#"{ "arguments" : { "a" : [ 1 , -0 , 2.5E+3 , 1e-7 , true , false , null ] , "b" : { } , "c" : [ ] } , "name" : "x" }"#,
            r#"{"name":"calc","arguments":{"code":"fn main() {\n\t\"quoted\" \\ \/ \b\f\r \u00e9\ud83e\udd80 \ud800\"}"}}"#,
            r#"{"name":"t","arguments":{"nested":[[[[{"deep":[{}]}]]]]},"unknown":{"x":[1,"y"]},"more":-1.5}"#,
            r#"{"_meta":{"progressToken":"p","io.modelcontextprotocol/protocolVersion":"2026-07-28"},"name":"a.b-c_d"}"#,
            r#"{"name":"t","task":{"ttl":1000},"requestState":"s","inputResponses":{"k":{"action":"cancel"}},"_meta":null}"#,
            r#"{"name":"é"}"#,
        ] {
            assert!(by_hand(params).is_some(), "{params}");
        }
    }

    #[test]
    fn what_the_reader_is_unsure_of_is_left_to_serde() {
        let deep = format!(r#"{{"name":"t","arguments":{{"a":{}1{}}}}}"#, "[".repeat(70), "]".repeat(70));
        for params in [
            // Valid, but not plain.
            r#"{"name":"\u0065cho"}"#,
            r#"{"n\u0061me":"echo"}"#,
            r#"{"name":"echo","arguments":null}"#,
            deep.as_str(),
            // Refused by serde too.
            r#"{"arguments":{}}"#,
            r#"{}"#,
            r#"{"name":"a","name":"b"}"#,
            r#"{"name":"a","arguments":{},"arguments":{}}"#,
            r#"{"name":"a","_meta":{},"_meta":{}}"#,
            r#"{"name":"a","arguments":[]}"#,
            r#"{"name":"a","arguments":"{}"}"#,
            r#"{"name":7}"#,
            r#"{"name":"a","arguments":{"x":01}}"#,
            r#"{"name":"a","arguments":{"x":1.}}"#,
            r#"{"name":"a","arguments":{"x":.5}}"#,
            r#"{"name":"a","arguments":{"x":-}}"#,
            r#"{"name":"a","arguments":{"x":1e}}"#,
            r#"{"name":"a","arguments":{"x":tru}}"#,
            r#"{"name":"a","arguments":{"x":"\q"}}"#,
            r#"{"name":"a","arguments":{"x":"\u00g0"}}"#,
            "{\"name\":\"a\",\"arguments\":{\"x\":\"tab\there\"}}",
            r#"{"name":"a","arguments":{"x":[1,]}}"#,
            r#"{"name":"a","arguments":{"x":1,}}"#,
            r#"{"name":"a","arguments":{"x" 1}}"#,
            r#"{"name":"a","arguments":{"x":[1}]}}"#,
            r#"{"name":"a","arguments":{"x":{"y":1]}}"#,
            r#"{"name":"a","arguments":{x:1}}"#,
            r#"{"name":"a","arguments":{"x":1}"#,
            r#"{"name":"a","_meta":{"progressToken":[]}}"#,
            r#"{"name":"a" "arguments":{}}"#,
        ] {
            assert!(by_hand(params).is_none(), "{params}");
        }
    }

    /// Every byte of a rich params object removed, replaced or doubled: whatever the reader
    /// still takes, serde takes too, and reads the same (`by_hand` checks).
    #[test]
    fn mangled_params_are_never_read_where_serde_refuses_them() {
        let sample =
            r#"{"name":"n","arguments":{"a":[1,-2.5e3,true,null,{"b":"c\"\\\u0041"}],"d":{},"e":[0.5]},"x":{"y":[]}}"#;
        let replacements = [b'"', b'\\', b',', b':', b'{', b'}', b'[', b']', b'0', b'-', b'.', b'e', b' ', 0x01];
        let mut taken = 0;
        for variant in super::super::mangled(sample, &replacements) {
            if let Ok(text) = std::str::from_utf8(&variant) {
                taken += usize::from(by_hand(text).is_some());
            }
        }
        assert!(taken > 100, "only {taken} variants were read at all");
    }
}
