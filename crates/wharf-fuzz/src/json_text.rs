//! JSON text written with the awkward parts on purpose: strings full of escapes, surrogates
//! (paired, lone and reversed) and raw control characters, numbers at the edges of every
//! integer and float type, odd white space, member names that repeat (also when spelled with
//! escapes), nesting past serde_json's depth limit, and now and then a token that is not JSON.

use crate::rng::Rng;

/// The member names of generated objects: few, so that they repeat; some are the same name
/// spelled with an escape, so that only a reader that decodes names sees the repeat.
pub const KEYS: &[&str] = &[
    "a",
    "b",
    "message",
    "name",
    "n\\u0061me",
    "arguments",
    "_meta",
    "",
    "\u{e9}",
    "\\u00e9",
    "\\ud83d\\ude00",
    "\u{1f600}",
    "a\\u0000",
    "\\\"",
    "progressToken",
];

/// The pieces strings are made of.
const STRING_PIECES: &[&str] = &[
    "a",
    "hello",
    " ",
    "\\\"",
    "\\\\",
    "\\/",
    "\\b",
    "\\f",
    "\\n",
    "\\r",
    "\\t",
    "\\u0000",
    "\\u001f",
    "\\u001F",
    "\\u0041",
    "\\u00e9",
    "\\u2028",
    "\\ud83d\\ude00",
    "\\uD83D\\uDE00",
    "\\ud800",
    "\\udc00",
    "\\udc00\\ud800",
    "\\ud800\\u0041",
    "\\ud800\\ud800",
    "\u{e9}",
    "\u{1f600}",
    "\u{2028}",
    "\u{7f}",
    "\u{ffff}",
    "<script>",
    "%00",
    "{}",
    "[",
];

/// Pieces that make a string invalid JSON.
const BAD_STRING_PIECES: &[&str] = &["\u{1}", "\n", "\t", "\\x41", "\\u12", "\\u12g4", "\\", "\\U0041", "\u{0}"];

/// Numbers at the edges, valid JSON all.
pub const NUMBERS: &[&str] = &[
    "0",
    "-0",
    "1",
    "-1",
    "7",
    "1.0",
    "-0.0",
    "0.5",
    "1e2",
    "1E+2",
    "1e-7",
    "2.5e-3",
    "255",
    "256",
    "65535",
    "2147483647",
    "2147483648",
    "-2147483649",
    "4294967296",
    "9007199254740993",
    "9223372036854775807",
    "9223372036854775808",
    "-9223372036854775808",
    "-9223372036854775809",
    "18446744073709551615",
    "18446744073709551616",
    "123456789012345678901234567890",
    "1e308",
    "1.7976931348623157e308",
    "1e309",
    "-1e400",
    "5e-324",
    "1e-400",
    "0.1",
    "3.0000000000000004",
    "100000000000000000000000000000000000000e-38",
];

/// Number-like tokens that are not JSON.
const BAD_NUMBERS: &[&str] = &["01", ".5", "1.", "-", "+1", "NaN", "Infinity", "-Infinity", "0x10", "1e", "1_000"];

/// JSON white space; none most often.
const SPACES: &[&str] = &["", "", "", "", " ", "  ", "\n", "\t", "\r\n"];

/// White space JSON does not allow: form feed and no-break space.
const LOOKALIKE_SPACES: &[&str] = &["\u{c}", "\u{a0}"];

/// Writes JSON text (and now and then something that is not) into a `String`.
#[derive(Debug)]
pub struct JsonText<'r> {
    /// The randomness behind every choice.
    pub rng: &'r mut Rng,
    /// The text written so far.
    pub out: String,
    /// One in this many choices goes invalid; 0 never does.
    pub invalid_one_in: usize,
}

impl<'r> JsonText<'r> {
    /// A writer that goes invalid once in `invalid_one_in` choices (0: never).
    pub fn new(rng: &'r mut Rng, invalid_one_in: usize) -> JsonText<'r> {
        JsonText { rng, out: String::new(), invalid_one_in }
    }

    /// True when this choice should go invalid.
    pub fn go_invalid(&mut self) -> bool {
        self.invalid_one_in != 0 && self.rng.one_in(self.invalid_one_in)
    }

    /// Writes white space, now and then some that JSON does not allow.
    pub fn space(&mut self) {
        let space = if self.go_invalid() { *self.rng.pick(LOOKALIKE_SPACES) } else { *self.rng.pick(SPACES) };
        self.out.push_str(space);
    }

    /// Writes any value, nested at most `depth` deep (and now and then much deeper).
    pub fn value(&mut self, depth: usize) {
        match self.rng.below(if depth == 0 { 4 } else { 7 }) {
            0 => self.literal(),
            1 => self.number(),
            2 | 3 => self.string(),
            4 => self.array(depth - 1),
            5 => {
                if self.rng.one_in(40) {
                    self.deep();
                } else {
                    self.array(depth - 1)
                }
            }
            _ => self.object(depth - 1, KEYS),
        }
    }

    /// Writes `null`, `true` or `false` (or a near miss).
    pub fn literal(&mut self) {
        let word = if self.go_invalid() {
            self.rng.pick(&["nul", "True", "undefined", "'a'", "nulll"])
        } else {
            self.rng.pick(&["null", "true", "false"])
        };
        self.out.push_str(word);
    }

    /// Writes a number.
    pub fn number(&mut self) {
        if self.go_invalid() {
            let bad = *self.rng.pick(BAD_NUMBERS);
            self.out.push_str(bad);
            return;
        }
        match self.rng.below(3) {
            0 => {
                let edge = *self.rng.pick(NUMBERS);
                self.out.push_str(edge);
            }
            1 => {
                let small = self.rng.below(2000) as i64 - 1000;
                self.out.push_str(&small.to_string());
            }
            _ => {
                let bits = f64::from_bits(self.rng.next_u64());
                let number = if bits.is_finite() { bits } else { 0.25 };
                self.out.push_str(&serde_json::Number::from_f64(number).map_or("0".to_owned(), |n| n.to_string()));
            }
        }
    }

    /// Writes a string of escapes, surrogates and other awkward pieces.
    pub fn string(&mut self) {
        self.out.push('"');
        for _ in 0..self.rng.below(6) {
            let piece =
                if self.go_invalid() { *self.rng.pick(BAD_STRING_PIECES) } else { *self.rng.pick(STRING_PIECES) };
            self.out.push_str(piece);
        }
        if self.rng.one_in(50) {
            let long = "x".repeat(self.rng.below(5000));
            self.out.push_str(&long);
        }
        if !(self.go_invalid() && self.rng.one_in(3)) {
            self.out.push('"');
        }
    }

    /// Writes `text` as a string, escaping what JSON requires.
    pub fn plain_string(&mut self, text: &str) {
        self.out.push_str(&serde_json::Value::from(text).to_string());
    }

    /// Writes an array.
    pub fn array(&mut self, depth: usize) {
        self.out.push('[');
        let len = self.rng.below(4);
        for index in 0..len {
            self.separator(index);
            self.space();
            self.value(depth);
            self.space();
        }
        self.close(len, ']');
    }

    /// Writes an object whose member names come from `keys` (raw JSON string contents).
    pub fn object(&mut self, depth: usize, keys: &[&str]) {
        self.object_with(keys, |json, _| json.value(depth));
    }

    /// Writes an object of up to four members named from `keys`, each value written by
    /// `value` for its name.
    pub fn object_with(&mut self, keys: &[&str], mut value: impl FnMut(&mut JsonText<'r>, &str)) {
        self.out.push('{');
        let len = self.rng.below(5);
        for index in 0..len {
            self.separator(index);
            let key = *self.rng.pick(keys);
            self.member_name(key);
            value(self, key);
        }
        self.close(len, '}');
    }

    /// Writes `"key":` with white space around, or a near miss.
    pub fn member_name(&mut self, key: &str) {
        self.space();
        if self.go_invalid() && self.rng.one_in(2) {
            self.out.push_str(&format!("'{key}'"));
        } else {
            self.out.push('"');
            self.out.push_str(key);
            self.out.push('"');
        }
        self.space();
        if !(self.go_invalid() && self.rng.one_in(2)) {
            self.out.push(':');
        }
        self.space();
    }

    /// Writes the comma before the member or item at `index`.
    pub fn separator(&mut self, index: usize) {
        if index > 0 && !(self.go_invalid() && self.rng.one_in(2)) {
            self.out.push(',');
        }
    }

    /// Closes an array or object of `len` members, now and then with a trailing comma.
    pub fn close(&mut self, len: usize, bracket: char) {
        if len > 0 && self.go_invalid() && self.rng.one_in(3) {
            self.out.push(',');
        }
        self.space();
        if !(self.go_invalid() && self.rng.one_in(4)) {
            self.out.push(bracket);
        }
    }

    /// Writes arrays and objects nested around the depth serde_json refuses (128).
    pub fn deep(&mut self) {
        let depth = 110 + self.rng.below(40);
        let mut closers = Vec::with_capacity(depth);
        for _ in 0..depth {
            if self.rng.one_in(2) {
                self.out.push('[');
                closers.push(']');
            } else {
                self.out.push_str("{\"a\":");
                closers.push('}');
            }
        }
        self.out.push('1');
        while let Some(closer) = closers.pop() {
            self.out.push(closer);
        }
    }
}
