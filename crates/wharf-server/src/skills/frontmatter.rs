//! A Markdown file's YAML frontmatter (a `SKILL.md`'s, a prompt file's), read with a YAML 1.2
//! parser into the JSON object a skill's entry carries verbatim: `yes` stays a string, `1.0`
//! is a number, dates are strings.

use serde_json::{Map, Number, Value};
use yaml_rust2::parser::{Event, Parser};
use yaml_rust2::{Yaml, YamlLoader};

/// The longest frontmatter read.
const MAX_FRONTMATTER: usize = 64 * 1024;

/// The deepest nesting of lists and mappings in a frontmatter.
const MAX_DEPTH: usize = 32;

/// The longest description the Agent Skills rules allow.
const MAX_DESCRIPTION: usize = 1024;

/// The frontmatter of a `SKILL.md` as JSON, checked to have a non-empty `name` and a
/// `description` of 1 to 1024 characters.
pub(crate) fn read_frontmatter(text: &str) -> Result<Map<String, Value>, String> {
    let (frontmatter, _) = yaml_frontmatter(text)?;
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

/// The YAML frontmatter at the top of `text` (between `---` lines) as a JSON object, and the
/// body after it.
pub fn yaml_frontmatter(text: &str) -> Result<(Map<String, Value>, &str), String> {
    let (yaml, body) = wharf_protocol::frontmatter_block(text)?;
    check_shape(yaml)?;
    let documents = YamlLoader::load_from_str(yaml).map_err(|err| format!("its frontmatter is not YAML: {err}"))?;
    let frontmatter = match documents.as_slice() {
        [document] => to_json(document)?,
        [] => Value::Object(Map::new()),
        _ => return Err("its frontmatter holds more than one YAML document".to_owned()),
    };
    let Value::Object(frontmatter) = frontmatter else {
        return Err("its frontmatter is not a mapping of keys to values".to_owned());
    };
    Ok((frontmatter, body))
}

/// Refuses what could make reading the frontmatter costly: more than 64 KiB, aliases (each
/// would be expanded in full, a few lines could make gigabytes), nesting deeper than 32.
fn check_shape(yaml: &str) -> Result<(), String> {
    if yaml.len() > MAX_FRONTMATTER {
        return Err("its frontmatter is longer than 64 KiB".to_owned());
    }
    let mut parser = Parser::new_from_str(yaml);
    let mut depth = 0usize;
    loop {
        let (event, _) = parser.next_token().map_err(|err| format!("its frontmatter is not YAML: {err}"))?;
        match event {
            Event::StreamEnd => return Ok(()),
            Event::Alias(_) => return Err("its frontmatter uses a YAML alias (`*name`), which is not read".to_owned()),
            Event::SequenceStart(..) | Event::MappingStart(..) => {
                depth += 1;
                if depth > MAX_DEPTH {
                    return Err(format!("its frontmatter nests more than {MAX_DEPTH} levels deep"));
                }
            }
            Event::SequenceEnd | Event::MappingEnd => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
}

fn to_json(yaml: &Yaml) -> Result<Value, String> {
    Ok(match yaml {
        Yaml::Null => Value::Null,
        Yaml::Boolean(flag) => Value::Bool(*flag),
        Yaml::Integer(number) => Value::Number((*number).into()),
        Yaml::Real(text) => {
            let number = text.parse::<f64>().ok().and_then(Number::from_f64);
            Value::Number(number.ok_or_else(|| format!("`{text}` is a number JSON cannot carry"))?)
        }
        Yaml::String(text) => Value::String(text.clone()),
        Yaml::Array(items) => Value::Array(items.iter().map(to_json).collect::<Result<_, _>>()?),
        Yaml::Hash(entries) => {
            let mut object = Map::new();
            for (key, value) in entries {
                let key = match key {
                    Yaml::String(text) | Yaml::Real(text) => text.clone(),
                    Yaml::Integer(number) => number.to_string(),
                    Yaml::Boolean(flag) => flag.to_string(),
                    Yaml::Null => "null".to_owned(),
                    _ => return Err("a frontmatter key is not a scalar".to_owned()),
                };
                if object.insert(key.clone(), to_json(value)?).is_some() {
                    return Err(format!("the frontmatter key `{key}` appears twice"));
                }
            }
            Value::Object(object)
        }
        Yaml::Alias(_) | Yaml::BadValue => {
            return Err("the frontmatter uses an alias or a value YAML cannot read".to_owned());
        }
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn frontmatter_is_read_as_yaml_1_2() {
        let text = "---\nname: pdf-processing\ndescription: \"Fill: forms\"\nlicense: Apache-2.0\nenabled: yes\n\
                    version: 1.0\ncount: 3\ndate: 2026-09-13\nmetadata:\n  author: ann\ntags: [a, b]\n\
                    long: >\n  folded\n  text\n---  \n# Body\n";
        let frontmatter = read_frontmatter(text).unwrap();
        assert_eq!(
            Value::Object(frontmatter),
            json!({"name": "pdf-processing", "description": "Fill: forms", "license": "Apache-2.0", "enabled": "yes",
                   "version": 1.0, "count": 3, "date": "2026-09-13", "metadata": {"author": "ann"}, "tags": ["a", "b"],
                   "long": "folded text\n"})
        );
    }

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
