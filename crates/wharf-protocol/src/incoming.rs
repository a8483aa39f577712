//! One-pass decoding of what a client sends a server: a request is read, envelope and typed
//! params together, in a single pass over its bytes.
//!
//! [`Envelope::parse`] followed by [`ClientRequest::decode`] reads a request's params twice:
//! once to find where they end, once to decode them. Here, when `method` comes before
//! `params` (as every client writes it), the params are decoded by the method's type as soon
//! as the parser reaches them. Anything this pass does not accept (a notification, a response,
//! params before the method, or any error at all) is decoded again by the two-step path, which
//! therefore alone decides every error message: the fast pass never has to agree with it on
//! anything but the requests it accepts.

use serde::de::IgnoredAny;

use crate::jsonrpc::{DecodeError, Envelope, RequestId};
use crate::messages::ClientRequest;

/// One message from a client, decoded.
#[derive(Debug)]
pub enum Incoming<'a> {
    /// A request whose params decoded into their method's type.
    Request {
        /// The request id.
        id: RequestId,
        /// The request.
        request: ClientRequest,
    },
    /// Every other message, as the two-step decoder reads it: notifications, responses, and
    /// requests whose params did not decode ([`ClientRequest::decode`] tells why).
    Envelope(Envelope<'a>),
}

impl<'a> Incoming<'a> {
    /// Decodes one message. Errors are those of [`Envelope::parse`].
    pub fn parse(bytes: &'a [u8]) -> Result<Incoming<'a>, DecodeError> {
        if let Some((id, request)) = one_pass(bytes) {
            return Ok(Incoming::Request { id, request });
        }
        Envelope::parse(bytes).map(Incoming::Envelope)
    }
}

/// The request in `bytes`, when it is a plain request whose method comes before its params;
/// `None` for anything else.
///
/// The envelope is read by hand: its member names and the method are compared as bytes, and
/// only the params go through serde, by their method's type. Anything unusual (an escape in a
/// name or the method, a duplicate member, `result` or `error`, malformed JSON) gives `None`,
/// so everything accepted here is plain and everything else is judged by the strict decoder.
fn one_pass(bytes: &[u8]) -> Option<(RequestId, ClientRequest)> {
    // UTF-8 is checked once for the whole message, which is cheaper than string by string;
    // serde then reads the params as text it need not check again.
    let text = std::str::from_utf8(bytes).ok()?;
    let mut scan = Scanner { text, at: 0 };
    scan.skip_space();
    scan.expect(b'{')?;
    let (mut version, mut id, mut method, mut request) = (false, None, None, None);
    loop {
        // `{}` ends here too: it has no name, and is no request.
        scan.skip_space();
        let name = scan.plain_bytes()?;
        scan.skip_space();
        scan.expect(b':')?;
        scan.skip_space();
        match name {
            b"jsonrpc" if !version => {
                version = true;
                if scan.plain_bytes()? != b"2.0" {
                    return None;
                }
            }
            b"id" if id.is_none() => id = Some(scan.id()?),
            b"method" if method.is_none() => method = Some(scan.plain_string()?),
            b"params" if request.is_none() => {
                let method = method?;
                if !matches!(scan.peek()?, b'{' | b'[') {
                    return None;
                }
                let (decoded, used) = ClientRequest::decode_leading(method, text.get(scan.at..)?)?;
                scan.at += used;
                request = Some(decoded);
            }
            b"jsonrpc" | b"id" | b"method" | b"params" | b"result" | b"error" => return None,
            _ => scan.skip_value()?,
        }
        scan.skip_space();
        match scan.next()? {
            b',' => continue,
            b'}' => break,
            _ => return None,
        }
    }
    scan.skip_space();
    if scan.at != text.len() || !version {
        return None;
    }
    let id = id?;
    let request = match request {
        Some(request) => request,
        None => ClientRequest::decode(method?, None).ok()?,
    };
    Some((id, request))
}

/// A cursor over one message, known to be UTF-8.
struct Scanner<'a> {
    text: &'a str,
    at: usize,
}

impl<'a> Scanner<'a> {
    fn bytes(&self) -> &'a [u8] {
        self.text.as_bytes()
    }

    fn peek(&self) -> Option<u8> {
        self.bytes().get(self.at).copied()
    }

    fn next(&mut self) -> Option<u8> {
        let byte = self.peek()?;
        self.at += 1;
        Some(byte)
    }

    fn expect(&mut self, byte: u8) -> Option<()> {
        (self.next()? == byte).then_some(())
    }

    fn skip_space(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.at += 1;
        }
    }

    /// Where the text of a string without escapes or control characters lies.
    fn plain_range(&mut self) -> Option<std::ops::Range<usize>> {
        self.expect(b'"')?;
        let start = self.at;
        let rest = &self.bytes()[start..];
        let end = rest.iter().position(|&byte| byte == b'"' || byte == b'\\' || byte < 0x20)?;
        if rest[end] != b'"' {
            return None;
        }
        self.at += end + 1;
        Some(start..start + end)
    }

    /// The bytes of a string without escapes or control characters, which are then its text.
    fn plain_bytes(&mut self) -> Option<&'a [u8]> {
        let range = self.plain_range()?;
        Some(&self.bytes()[range])
    }

    /// A string without escapes or control characters, which is then its own text.
    fn plain_string(&mut self) -> Option<&'a str> {
        let range = self.plain_range()?;
        // Quotes are ASCII, so the range lies on character boundaries.
        self.text.get(range)
    }

    /// A request id: a plain string, or an integer in JSON's syntax that fits in an `i64`.
    fn id(&mut self) -> Option<RequestId> {
        if self.peek()? == b'"' {
            return Some(RequestId::string(self.plain_string()?));
        }
        let start = self.at;
        if self.peek()? == b'-' {
            self.at += 1;
        }
        let digits = self.at;
        while self.peek().is_some_and(|byte| byte.is_ascii_digit()) {
            self.at += 1;
        }
        let count = self.at - digits;
        if count == 0 || (count > 1 && self.bytes()[digits] == b'0') {
            return None;
        }
        // A fraction or exponent is not an integer id: the strict decoder says so.
        if matches!(self.peek(), Some(b'.' | b'e' | b'E')) {
            return None;
        }
        self.text.get(start..self.at)?.parse::<i64>().ok().map(RequestId::number)
    }

    /// Skips a member's value of any kind.
    fn skip_value(&mut self) -> Option<()> {
        let mut values = serde_json::Deserializer::from_str(self.text.get(self.at..)?).into_iter::<IgnoredAny>();
        values.next()?.ok()?;
        self.at += values.byte_offset();
        Some(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn two_step(bytes: &[u8]) -> Result<Option<(RequestId, ClientRequest)>, String> {
        match Envelope::parse(bytes) {
            Ok(Envelope::Request { id, method, params }) => {
                ClientRequest::decode(&method, params).map(|request| Some((id, request))).map_err(|err| err.to_string())
            }
            Ok(_) => Ok(None),
            Err(err) => Err(err.error.message),
        }
    }

    fn one_pass_agrees(input: &str) -> Option<(RequestId, ClientRequest)> {
        let fast = one_pass(input.as_bytes());
        let slow = two_step(input.as_bytes());
        match (&fast, &slow) {
            (Some(fast), Ok(Some(slow))) => assert_eq!(fast, slow, "{input}"),
            (None, _) => {}
            (Some(_), other) => {
                panic!("the one-pass decoder accepted what the two-step one did not: {input}: {other:?}")
            }
        }
        fast
    }

    #[test]
    fn requests_decode_in_one_pass_to_what_two_steps_give() {
        for input in [
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hi"}}}"#,
            r#"{"method":"tools/call","params":{"name":"echo","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}},"id":"a","jsonrpc":"2.0"}"#,
            r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#,
            r#"{"jsonrpc":"2.0","id":-4,"method":"ping","extra":[1,{"a":"\u0000"}],"more":1.5e3}"#,
            " {\"jsonrpc\" : \"2.0\" , \"id\" : 0 , \"method\" : \"ping\" } ",
        ] {
            assert!(one_pass_agrees(input).is_some(), "{input}");
        }
    }

    #[test]
    fn everything_else_is_left_to_the_two_step_decoder() {
        for input in [
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            r#"{"jsonrpc":"2.0","id":3,"params":{"cursor":"x"},"method":"tools/list"}"#,
            r#"{"jsonrpc":"2.0","id":4,"meth\u006fd":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":"\u0041","method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":01,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":1e3,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":99999999999999999999,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"ping",}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"ping""#,
            r#"{"jsonrpc":"2.0","id":1,"Method":"ping"}"#,
            "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"pi\tng\"}",
            r#"{"jsonrpc":"2.0","id":1,"result":{}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/explode","params":{}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"arguments":{}}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":null}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":3}"#,
            r#"{"jsonrpc":"2.0","id":1,"params":3,"method":"tools/list"}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"ping","method":"tools/list"}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{},"params":{}}"#,
            r#"{"jsonrpc":"2.0","jsonrpc":"2.0","id":1,"method":"ping"}"#,
            r#"{"jsonrpc":"1.0","id":1,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"ping","result":{}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"ping"} trailing"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/logLevel":"loud"}}}"#,
        ] {
            assert!(one_pass_agrees(input).is_none(), "{input}");
            let incoming = Incoming::parse(input.as_bytes());
            let envelope = Envelope::parse(input.as_bytes());
            match (incoming, envelope) {
                (Ok(Incoming::Envelope(left)), Ok(right)) => assert_eq!(format!("{left:?}"), format!("{right:?}")),
                (Err(left), Err(right)) => assert_eq!(left, right),
                (left, right) => panic!("{input}: {left:?} against {right:?}"),
            }
        }
    }

    #[test]
    fn mangled_requests_are_never_accepted_where_the_strict_decoder_refuses_them() {
        let samples = [
            r#"{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hi"}}}"#,
            r#"{"jsonrpc":"2.0","id":"x","method":"tools/list","params":{"cursor":"c"},"z":[null,true]}"#,
        ];
        let replacements = [b'"', b'\\', b',', b':', b'{', b'}', b'[', b']', b'0', b'-', b'.', b' ', 0x01, 0xff];
        for sample in samples {
            let bytes = sample.as_bytes();
            for at in 0..bytes.len() {
                let mut removed = bytes.to_vec();
                removed.remove(at);
                check(&removed);
                for byte in replacements {
                    let mut replaced = bytes.to_vec();
                    replaced[at] = byte;
                    check(&replaced);
                    let mut inserted = bytes.to_vec();
                    inserted.insert(at, byte);
                    check(&inserted);
                }
            }
        }

        fn check(bytes: &[u8]) {
            if let Some(fast) = one_pass(bytes) {
                match two_step(bytes) {
                    Ok(Some(slow)) => assert_eq!(fast, slow, "{}", String::from_utf8_lossy(bytes)),
                    other => panic!("accepted {}: the strict decoder says {other:?}", String::from_utf8_lossy(bytes)),
                }
            }
        }
    }
}
