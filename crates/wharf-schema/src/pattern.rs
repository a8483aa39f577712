//! `pattern` and `patternProperties`: ECMA-262 regular expressions, as JSON Schema writes them,
//! compiled for `fancy-regex` (look-around, back-references).

use fancy_regex::Regex;

/// The classes that ECMA-262 defines over ASCII but the Rust engines over Unicode, written as
/// ASCII classes; inside `[...]`, `\d` and `\w` become their ranges.
fn ecma_to_rust(pattern: &str) -> String {
    let mut out = String::with_capacity(pattern.len() + 8);
    let mut chars = pattern.chars();
    let mut in_class = false;
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                let Some(next) = chars.next() else {
                    out.push('\\');
                    break;
                };
                match (next, in_class) {
                    ('d', false) => out.push_str("[0-9]"),
                    ('D', false) => out.push_str("[^0-9]"),
                    ('w', false) => out.push_str("[a-zA-Z0-9_]"),
                    ('W', false) => out.push_str("[^a-zA-Z0-9_]"),
                    ('d', true) => out.push_str("0-9"),
                    ('w', true) => out.push_str("a-zA-Z0-9_"),
                    _ => {
                        out.push('\\');
                        out.push(next);
                    }
                }
            }
            '[' if !in_class => {
                in_class = true;
                out.push(c);
            }
            ']' if in_class => {
                in_class = false;
                out.push(c);
            }
            _ => out.push(c),
        }
    }
    out
}

/// `pattern` compiled, or why it cannot be.
pub(crate) fn compile(pattern: &str) -> Result<Regex, String> {
    Regex::new(&ecma_to_rust(pattern)).map_err(|err| err.to_string())
}

/// True when `regex` matches somewhere in `text`; a search that gives up (a pattern that
/// backtracks without end) counts as no match.
pub(crate) fn matches(regex: &Regex, text: &str) -> bool {
    regex.is_match(text).unwrap_or(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ecma_classes_are_ascii_and_look_around_works() {
        let digits = compile(r"^\d+$").unwrap();
        assert!(matches(&digits, "123") && !matches(&digits, "১২৩"));
        assert!(matches(&compile(r"^[\w-]+$").unwrap(), "a_b-c"));
        assert!(matches(&compile(r"^(?!foo)").unwrap(), "bar"));
        assert!(!matches(&compile(r"^(?!foo)").unwrap(), "food"));
        assert!(compile("(unclosed").is_err());
        assert!(matches(&compile("a+").unwrap(), "xxaxx"), "a search, not a whole match");
    }
}
