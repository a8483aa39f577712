//! How messages quote values and list them, and the counts keywords hold.

use std::fmt::Write as _;

use serde_json::Value;

use crate::value::equal;

/// How much of a value a message quotes.
const QUOTED: usize = 120;

/// A non-negative whole number of a keyword (`maxLength: 2.0` counts as 2).
pub(super) fn as_count(value: &Value) -> Option<usize> {
    let number = value.as_number()?;
    match number.as_u64() {
        Some(count) => Some(usize::try_from(count).unwrap_or(usize::MAX)),
        None => number.as_f64().filter(|float| *float >= 0.0 && float.fract() == 0.0).map(|float| float as usize),
    }
}

/// The first two positions of equal items, if any.
pub(super) fn repeated(items: &[Value]) -> Option<(usize, usize)> {
    for (first, item) in items.iter().enumerate() {
        for (offset, other) in items[first + 1..].iter().enumerate() {
            if equal(item, other) {
                return Some((first, first + 1 + offset));
            }
        }
    }
    None
}

/// A value as a message quotes it: its JSON, cut short when long.
pub(super) fn quoted(value: &Value) -> String {
    let mut text = value.to_string();
    if text.len() > QUOTED {
        let mut end = QUOTED;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.truncate(end);
        text.push_str("...");
    }
    text
}

/// `"a"`, `"a" or "b"`, `"a", "b" or "c"`, and past eight, how many more.
pub(super) fn listed(values: &Value, conjunction: &str) -> String {
    let values: Vec<&Value> = match values {
        Value::Array(values) => values.iter().collect(),
        single => vec![single],
    };
    let shown: Vec<String> = values.iter().take(8).map(|value| quoted(value)).collect();
    let mut out = String::new();
    match shown.split_last() {
        None => out.push_str("nothing"),
        Some((only, [])) => out.push_str(only),
        Some((last, rest)) if values.len() <= 8 => {
            let _ = write!(out, "{} {conjunction} {last}", rest.join(", "));
        }
        Some(_) => {
            let _ = write!(out, "{}, {conjunction} {} more", shown.join(", "), values.len() - 8);
        }
    }
    out
}

/// Property names as a message lists them: `"a" was`, `"a", "b" were`.
pub(super) fn names(names: &[&str]) -> String {
    let quoted: Vec<String> = names.iter().map(|name| Value::from(*name).to_string()).collect();
    let verb = if names.len() == 1 { "was" } else { "were" };
    format!("{} {verb}", quoted.join(", "))
}
