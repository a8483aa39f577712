//! Compacts the official JSON Schemas `wharf check` validates against before they are compiled
//! into the binary: whitespace and the prose of `description`s go, what validates stays.

use std::path::Path;

use serde_json::Value;

const REVISIONS: [&str; 5] = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"];

/// Drops string-valued `description` and `$comment` members: prose, not constraints. (A
/// property named `description` has a schema, an object, as its value, and stays.)
fn without_prose(value: &mut Value) {
    match value {
        Value::Object(object) => {
            object.retain(|key, member| !(matches!(key.as_str(), "description" | "$comment") && member.is_string()));
            object.values_mut().for_each(without_prose);
        }
        Value::Array(items) => items.iter_mut().for_each(without_prose),
        _ => {}
    }
}

fn main() {
    let out = std::env::var("OUT_DIR").expect("cargo sets OUT_DIR");
    for revision in REVISIONS {
        let source = format!("schemas/{revision}.json");
        println!("cargo::rerun-if-changed={source}");
        let text = std::fs::read_to_string(&source).unwrap_or_else(|err| panic!("{source}: {err}"));
        let mut schema: Value = serde_json::from_str(&text).unwrap_or_else(|err| panic!("{source}: {err}"));
        without_prose(&mut schema);
        let compact = serde_json::to_string(&schema).expect("a JSON value serializes");
        std::fs::write(Path::new(&out).join(format!("{revision}.json")), compact).expect("OUT_DIR is writable");
    }
}
