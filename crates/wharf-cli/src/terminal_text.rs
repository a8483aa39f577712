//! Text a server sent, as it may be shown to a person: its control characters escaped (`\r`,
//! `\u{1b}`), so that the server cannot drive the terminal with it (write the clipboard with
//! OSC 52, change the title, move the cursor to forge or hide lines).

use std::borrow::Cow;
use std::fmt::Write;

/// `text` with every control character escaped, line ends and tabs too: for a name, a cell of
/// a table, a line of a message.
pub(crate) fn escaped(text: &str) -> Cow<'_, str> {
    escape(text, |_| false)
}

/// `text` with its control characters escaped but for line ends and tabs, which are the
/// text's own: for a tool's text.
pub(crate) fn escaped_lines(text: &str) -> Cow<'_, str> {
    escape(text, |c| c == '\n' || c == '\t')
}

fn escape(text: &str, kept: impl Fn(char) -> bool) -> Cow<'_, str> {
    if !text.chars().any(|c| acts_on_terminal(c) && !kept(c)) {
        return Cow::Borrowed(text);
    }
    let mut shown = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if acts_on_terminal(c) && !kept(c) {
            shown.extend(c.escape_default());
        } else {
            shown.push(c);
        }
    }
    Cow::Owned(shown)
}

/// Control characters (C0, DEL and C1, whose CSI and OSC a terminal acts on as it does on
/// `ESC [` and `ESC ]`), and the invisible marks that reorder text on screen (bidirectional
/// embeddings, overrides and isolates).
fn acts_on_terminal(c: char) -> bool {
    c.is_control() || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// JSON text with the characters escaped that a JSON encoder leaves as they are (it escapes
/// C0 in strings) but a terminal acts on. Outside strings there are only the line ends and
/// indents of its layout; inside, `\uXXXX` is the same character: the JSON means what it meant.
pub(crate) fn json_escaped(json: &str) -> Cow<'_, str> {
    let escapes = |c: char| acts_on_terminal(c) && !matches!(c, '\n' | '\r' | '\t');
    if !json.chars().any(escapes) {
        return Cow::Borrowed(json);
    }
    let mut shown = String::with_capacity(json.len() + 16);
    for c in json.chars() {
        if escapes(c) {
            let _ = write!(shown, "\\u{:04x}", u32::from(c));
        } else {
            shown.push(c);
        }
    }
    Cow::Owned(shown)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escape_sequences_are_shown_not_acted_on() {
        let osc52 = "evil\u{1b}]52;c;ZXZpbA==\u{7}";
        assert_eq!(escaped(osc52), "evil\\u{1b}]52;c;ZXZpbA==\\u{7}");
        assert_eq!(escaped("a\rb\nc\td\u{9b}2J\u{7f}"), "a\\rb\\nc\\td\\u{9b}2J\\u{7f}");
        assert_eq!(escaped_lines("a\rb\nc\td"), "a\\rb\nc\td", "line ends and tabs are the text's own");
        assert_eq!(escaped("left\u{202e}thgir"), "left\\u{202e}thgir");
        assert!(matches!(escaped("plain text, ünïcödé"), Cow::Borrowed(_)));
    }

    #[test]
    fn json_keeps_its_value_and_loses_what_a_terminal_acts_on() {
        let value = serde_json::json!({"d": "a\u{1b}[2J\u{9b}2J\u{7f}\u{202e}"});
        let text = serde_json::to_string_pretty(&value).unwrap();
        let shown = json_escaped(&text);
        assert_eq!(shown, "{\n  \"d\": \"a\\u001b[2J\\u009b2J\\u007f\\u202e\"\n}");
        assert_eq!(serde_json::from_str::<serde_json::Value>(&shown).unwrap(), value);
    }
}
