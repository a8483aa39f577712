//! `arguments`: the strict reader of the JSON a handler receives (`value_from_str`, and tool
//! arguments' `to_unique_object`), which refuses a member given twice at any depth, against
//! serde_json's decoder and a plain tree of every member as written.

use wharf_protocol::{ToolArguments, UniqueReadError, value_from_str};

use crate::json_text::{JsonText, KEYS};
use crate::mutate::mutate;
use crate::reference::{self, Reading};
use crate::rng::Rng;
use crate::target::Target;

/// The target.
pub(super) struct UniqueArguments;

impl Target for UniqueArguments {
    fn name(&self) -> &'static str {
        "arguments"
    }

    fn generate(&self, rng: &mut Rng) -> Vec<u8> {
        let invalid = if rng.one_in(4) { 30 } else { 0 };
        let depth = 1 + rng.below(4);
        let mut json = JsonText::new(rng, invalid);
        if json.rng.one_in(8) {
            json.value(depth)
        } else {
            json.object(depth, KEYS)
        }
        let mut bytes = json.out.into_bytes();
        if rng.one_in(6) {
            mutate(rng, &mut bytes);
        }
        bytes
    }

    fn check(&self, case: &[u8]) -> Result<&'static str, String> {
        let Ok(text) = std::str::from_utf8(case) else { return Ok("not UTF-8") };
        let reading = reference::read(text);
        let strict = value_from_str(text);
        let label = match (&reading, &strict) {
            (Reading::Unique(expected), Ok(value)) if value == expected => "unique",
            (Reading::Repeats(names), Err(err)) if names_one_of(&err.to_string(), names) => "repeated member",
            (Reading::Malformed, Err(_)) => "malformed",
            _ => {
                return Err(format!(
                    "value_from_str disagrees\ninput: {text}\nreference: {reading:?}\nstrict: {strict:?}"
                ));
            }
        };
        let Ok(arguments) = serde_json::from_str::<ToolArguments>(text) else { return Ok(label) };
        let object = arguments.to_unique_object();
        let agrees = match (&reading, &object) {
            (Reading::Unique(serde_json::Value::Object(expected)), Ok(object)) => object == expected,
            (Reading::Repeats(names), Err(UniqueReadError::DuplicateKey(key))) => names.contains(key),
            (Reading::Malformed, Err(_)) => true,
            _ => false,
        };
        if !agrees {
            return Err(format!(
                "to_unique_object disagrees\ninput: {text}\nreference: {reading:?}\nstrict: {object:?}"
            ));
        }
        Ok(label)
    }
}

/// True when `message` names one of `names` as the member given twice.
fn names_one_of(message: &str, names: &[String]) -> bool {
    names.iter().any(|name| message.contains(&format!("`{name}` is given twice")))
}
