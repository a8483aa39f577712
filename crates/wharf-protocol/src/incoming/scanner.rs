//! A cursor over one message, reading JSON by hand where that is cheaper than serde: it accepts
//! only what it is sure of, and says `None` to everything else, which the caller then leaves to
//! `serde_json`.

use serde::de::DeserializeOwned;

use crate::jsonrpc::RequestId;

/// The deepest nesting [`Scanner::skip_value`] follows; deeper values are left to serde.
const MAX_DEPTH: u32 = 64;

/// A cursor over one message, known to be UTF-8.
pub(super) struct Scanner<'a> {
    pub(super) text: &'a str,
    pub(super) at: usize,
}

impl<'a> Scanner<'a> {
    pub(super) fn new(text: &'a str) -> Scanner<'a> {
        Scanner { text, at: 0 }
    }

    fn bytes(&self) -> &'a [u8] {
        self.text.as_bytes()
    }

    pub(super) fn peek(&self) -> Option<u8> {
        self.bytes().get(self.at).copied()
    }

    pub(super) fn next(&mut self) -> Option<u8> {
        let byte = self.peek()?;
        self.at += 1;
        Some(byte)
    }

    pub(super) fn expect(&mut self, byte: u8) -> Option<()> {
        (self.next()? == byte).then_some(())
    }

    pub(super) fn skip_space(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.at += 1;
        }
    }

    /// Where the text of a string without escapes or control characters lies.
    fn plain_range(&mut self) -> Option<std::ops::Range<usize>> {
        self.expect(b'"')?;
        let start = self.at;
        let rest = &self.bytes()[start..];
        let end = crate::escape::plain_len(rest);
        if *rest.get(end)? != b'"' {
            return None;
        }
        self.at += end + 1;
        Some(start..start + end)
    }

    /// The bytes of a string without escapes or control characters, which are then its text.
    pub(super) fn plain_bytes(&mut self) -> Option<&'a [u8]> {
        let range = self.plain_range()?;
        Some(&self.bytes()[range])
    }

    /// A string without escapes or control characters, which is then its own text.
    pub(super) fn plain_string(&mut self) -> Option<&'a str> {
        let range = self.plain_range()?;
        // Quotes are ASCII, so the range lies on character boundaries.
        self.text.get(range)
    }

    /// A request id: a plain string, or an integer in JSON's syntax that fits in an `i64`.
    pub(super) fn id(&mut self) -> Option<RequestId> {
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
        // serde_json reads `-0` as a float, which the strict decoder refuses as an id.
        if digits > start && count == 1 && self.bytes()[digits] == b'0' {
            return None;
        }
        // A fraction or exponent is not an integer id: the strict decoder says so.
        if matches!(self.peek(), Some(b'.' | b'e' | b'E')) {
            return None;
        }
        self.text.get(start..self.at)?.parse::<i64>().ok().map(RequestId::number)
    }

    /// The name of the member that starts here, when it has no escapes, with its colon; white
    /// space around both is skipped.
    pub(super) fn plain_member(&mut self) -> Option<&'a [u8]> {
        self.skip_space();
        let name = self.plain_bytes()?;
        self.colon()?;
        Some(name)
    }

    /// The colon after a member's name, with white space around it.
    fn colon(&mut self) -> Option<()> {
        self.skip_space();
        self.expect(b':')?;
        self.skip_space();
        Some(())
    }

    /// Reads the name of the member here and its colon when the name is `quoted` (given with
    /// its quotes, and holding no escapes): `Some(true)`. `Some(false)` when the member has
    /// another name, with nothing read but white space; `None` when no colon follows the name.
    /// A name this gave `Some(false)` for is never `quoted` read by [`Scanner::plain_member`]:
    /// both read the same bytes.
    ///
    /// A name compared whole, against a literal whose length the compiler knows, costs a few
    /// word compares, where finding its end first costs a scan: readers try the names clients
    /// write before reading a name they do not expect.
    #[inline]
    pub(super) fn member_named<const N: usize>(&mut self, quoted: &[u8; N]) -> Option<bool> {
        self.skip_space();
        if self.bytes().get(self.at..self.at + N) != Some(quoted.as_slice()) {
            return Some(false);
        }
        self.at += N;
        self.colon()?;
        Some(true)
    }

    /// Reads the value here when it is the string `quoted` (given with its quotes, and holding
    /// no escapes): true. False when it is anything else, with nothing read but white space.
    #[inline]
    pub(super) fn value_is<const N: usize>(&mut self, quoted: &[u8; N]) -> bool {
        self.skip_space();
        let found = self.bytes().get(self.at..self.at + N) == Some(quoted.as_slice());
        if found {
            self.at += N;
        }
        found
    }

    /// After a member's value: true when another member follows (its comma read), false when
    /// the object ended (its brace read).
    pub(super) fn more_members(&mut self) -> Option<bool> {
        self.skip_space();
        match self.next()? {
            b',' => Some(true),
            b'}' => Some(false),
            _ => None,
        }
    }

    /// Decodes the value here with serde as a `T`.
    ///
    /// serde_json counts its depth limit from where it starts, which is deeper here than where
    /// the strict path starts: a container nested more than [`MAX_DEPTH`] deep is left to the
    /// strict path, so that both refuse the same depths.
    pub(super) fn decode<T: DeserializeOwned>(&mut self) -> Option<T> {
        if matches!(self.peek()?, b'{' | b'[') {
            let mut probe = Scanner { text: self.text, at: self.at };
            probe.skip_value()?;
        }
        let (value, used) = crate::messages::leading::<T>(self.text.get(self.at..)?)?;
        self.at += used;
        Some(value)
    }

    /// Skips a value of any kind, checking its syntax by hand. Values nested deeper than
    /// [`MAX_DEPTH`] give `None`, like anything that is not JSON.
    ///
    /// Containers are followed without recursion: `objects` holds one bit per open container,
    /// the innermost lowest, set for an object and clear for an array.
    pub(super) fn skip_value(&mut self) -> Option<()> {
        let (mut depth, mut objects) = (0u32, 0u64);
        loop {
            // A value starts here.
            self.skip_space();
            match self.next()? {
                opening @ (b'{' | b'[') => {
                    self.skip_space();
                    let closing = if opening == b'{' { b'}' } else { b']' };
                    if self.peek()? == closing {
                        self.at += 1;
                    } else {
                        depth += 1;
                        if depth > MAX_DEPTH {
                            return None;
                        }
                        objects = objects << 1 | u64::from(opening == b'{');
                        if opening == b'{' {
                            self.member_name()?;
                        }
                        continue;
                    }
                }
                b'"' => self.skip_string_rest()?,
                b't' => self.literal(b"rue")?,
                b'f' => self.literal(b"alse")?,
                b'n' => self.literal(b"ull")?,
                b'-' => {
                    let first = self.next()?;
                    self.number_rest(first)?
                }
                first @ b'0'..=b'9' => self.number_rest(first)?,
                _ => return None,
            }
            // A value ended here: close the containers it ends, or go on to the next element.
            loop {
                if depth == 0 {
                    return Some(());
                }
                self.skip_space();
                let in_object = objects & 1 == 1;
                match self.next()? {
                    b',' => {
                        if in_object {
                            self.skip_space();
                            self.member_name()?;
                        }
                        break;
                    }
                    b'}' if in_object => {}
                    b']' if !in_object => {}
                    _ => return None,
                }
                depth -= 1;
                objects >>= 1;
            }
        }
    }

    /// A member's name and its colon.
    fn member_name(&mut self) -> Option<()> {
        self.expect(b'"')?;
        self.skip_string_rest()?;
        self.skip_space();
        self.expect(b':')
    }

    /// Skips the rest of a string whose opening quote was read, checking its escapes.
    fn skip_string_rest(&mut self) -> Option<()> {
        loop {
            self.at += crate::escape::plain_len(self.bytes().get(self.at..)?);
            // The scan stopped at the end of the text or at a quote, a backslash or a control
            // character.
            match self.next()? {
                b'"' => return Some(()),
                b'\\' => match self.next()? {
                    b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => {}
                    b'u' => {
                        for _ in 0..4 {
                            if !self.next()?.is_ascii_hexdigit() {
                                return None;
                            }
                        }
                    }
                    _ => return None,
                },
                _ => return None,
            }
        }
    }

    fn literal(&mut self, rest: &[u8]) -> Option<()> {
        if !self.bytes().get(self.at..)?.starts_with(rest) {
            return None;
        }
        self.at += rest.len();
        Some(())
    }

    /// The rest of a number in JSON's syntax whose first digit was `first`.
    fn number_rest(&mut self, first: u8) -> Option<()> {
        match first {
            b'0' => {}
            b'1'..=b'9' => {
                self.digits();
            }
            _ => return None,
        }
        if self.peek() == Some(b'.') {
            self.at += 1;
            if self.digits() == 0 {
                return None;
            }
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            self.at += 1;
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.at += 1;
            }
            if self.digits() == 0 {
                return None;
            }
        }
        Some(())
    }

    fn digits(&mut self) -> usize {
        let start = self.at;
        while self.peek().is_some_and(|byte| byte.is_ascii_digit()) {
            self.at += 1;
        }
        self.at - start
    }
}
