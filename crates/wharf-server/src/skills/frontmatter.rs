//! A `SKILL.md`'s frontmatter, read by the reader the client and folders share
//! (`wharf-frontmatter`) into the JSON object a skill's entry carries verbatim, and checked to
//! have what the Agent Skills rules require.

use serde_json::{Map, Value};
pub use wharf_frontmatter::yaml_frontmatter;

/// The longest description the Agent Skills rules allow.
const MAX_DESCRIPTION: usize = 1024;

/// The frontmatter of a `SKILL.md` as JSON, checked to have a non-empty `name` and a
/// `description` of 1 to 1024 characters.
pub(crate) fn read_frontmatter(text: &str) -> Result<Map<String, Value>, String> {
    let (frontmatter, _) = yaml_frontmatter(text).map_err(|err| err.to_string())?;
    match frontmatter.get("name") {
        Some(Value::String(name)) if !name.trim().is_empty() => {}
        _ => return Err("its frontmatter has no `name` (a non-empty string)".to_owned()),
    }
    match frontmatter.get("description") {
        Some(Value::String(description)) if description.trim().is_empty() => {
            return Err("its frontmatter's `description` is empty".to_owned());
        }
        Some(Value::String(description)) if description.chars().count() > MAX_DESCRIPTION => {
            return Err(format!("its frontmatter's `description` is longer than {MAX_DESCRIPTION} characters"));
        }
        Some(Value::String(_)) => {}
        _ => return Err("its frontmatter has no `description` (a string)".to_owned()),
    }
    Ok(frontmatter)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_frontmatter_without_what_a_skill_needs_is_refused() {
        for (text, why) in [
            ("# no frontmatter\n", "does not start"),
            ("---\nname: a\ndescription: b\n", "no closing"),
            ("---\ndescription: b\n---\n", "no `name`"),
            ("---\nname: a\n---\n", "no `description`"),
            ("---\nname: a\ndescription: ''\n---\n", "is empty"),
            ("---\n- a\n- b\n---\n", "not a mapping"),
            ("---\n---\n", "no `name`"),
            ("---\nname: a\nname: b\ndescription: c\n---\n", "duplicated key"),
            ("---\nname: a\ndescription: c\n1: x\n'1': y\n---\n", "twice"),
            ("---\nname: [unclosed\n---\n", "not YAML"),
            ("---\nname: &a x\ndescription: *a\n---\n", "alias"),
            (&*format!("---\nname: a\ndescription: b\nx: {}1{}\n---\n", "[".repeat(40), "]".repeat(40)), "levels deep"),
        ] {
            let refused = read_frontmatter(text).unwrap_err();
            assert!(refused.contains(why), "{text:?}: {refused}");
        }
        let long = format!("---\nname: a\ndescription: {}\n---\n", "x".repeat(1025));
        assert!(read_frontmatter(&long).unwrap_err().contains("longer than 1024"));
    }
}
