//! Compacts the official JSON Schemas `wharf check` validates against before they are compiled
//! into the binary: whitespace and the prose of `description`s go, what validates stays. And,
//! for the shipped binary only, packs its relative relocations.

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

/// The `dist` profile (the shipped binary, this crate at `opt-level = "z"`) on Linux with
/// glibc: relative relocations packed (DT_RELR, `-z pack-relative-relocs`), which makes the
/// stripped binary about 0.47 MB smaller (benches/NOTES.md). It needs binutils 2.38 to link and
/// glibc 2.36 to run; other profiles and targets are linked as usual.
fn pack_relocations_of_the_shipped_binary() {
    let shipped = std::env::var("OPT_LEVEL").as_deref() == Ok("z");
    let linux_gnu = std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux")
        && std::env::var("CARGO_CFG_TARGET_ENV").as_deref() == Ok("gnu");
    if shipped && linux_gnu {
        println!("cargo::rustc-link-arg-bins=-Wl,-z,pack-relative-relocs");
    }
}

fn main() {
    pack_relocations_of_the_shipped_binary();
    let out = std::env::var("OUT_DIR").expect("cargo sets OUT_DIR");
    // The repository's one copy of the schemas, at its root (mcp-spec/README.md): each
    // revision's, and the Server Card draft's.
    let sources = REVISIONS
        .iter()
        .map(|revision| (format!("../../mcp-spec/{revision}/schema.json"), format!("{revision}.json")))
        .chain([("../../mcp-spec/ext-server-card/schema.json".to_owned(), "server-card.json".to_owned())]);
    for (source, compacted) in sources {
        println!("cargo::rerun-if-changed={source}");
        let text = std::fs::read_to_string(&source).unwrap_or_else(|err| panic!("{source}: {err}"));
        let mut schema: Value = serde_json::from_str(&text).unwrap_or_else(|err| panic!("{source}: {err}"));
        without_prose(&mut schema);
        let compact = serde_json::to_string(&schema).expect("a JSON value serializes");
        std::fs::write(Path::new(&out).join(compacted), compact).expect("OUT_DIR is writable");
    }
}
