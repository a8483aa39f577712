//! A Markdown file's YAML frontmatter (a `SKILL.md`'s, a prompt file's), read with a YAML 1.2
//! parser into a JSON object: `yes` stays a string, `1.0` is a number, dates are strings. What
//! could make reading costly is refused first: more than 64 KiB, aliases, nesting deeper than
//! 32. A whole YAML document (an OpenAPI description) is read the same way, with room for one. The one reader the server (skills), the client (checking a skill it loads against its
//! listing) and folders (prompt files) share, so that all three read the same values.
//!
//! # Floors, from the bottom up
//! One file, this one, on `yaml-rust2` and `serde_json` alone.

use serde_json::{Map, Number, Value};
use yaml_rust2::parser::{Event, Parser};
use yaml_rust2::{Yaml, YamlLoader};

/// What a reading may cost, and what the messages call the text read.
#[derive(Clone, Copy)]
struct Limits {
    max_bytes: usize,
    max_depth: usize,
    what: &'static str,
}

/// A frontmatter: at most 64 KiB, nested at most 32 deep.
const FRONTMATTER: Limits = Limits { max_bytes: 64 * 1024, max_depth: 32, what: "its frontmatter" };

/// A whole document (an OpenAPI description, say): at most 64 MiB, nested at most 128 deep.
const DOCUMENT: Limits = Limits { max_bytes: 64 * 1024 * 1024, max_depth: 128, what: "the document" };

/// What kind of thing is wrong with a frontmatter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum FrontmatterErrorKind {
    /// The text does not start with a `---` line, or the frontmatter is never closed.
    Missing,
    /// It is not YAML, or holds more than one document, or a number JSON cannot carry.
    NotYaml,
    /// It is not a mapping of scalar keys to values, or a key appears twice.
    NotAMapping,
    /// It could cost too much to read: longer than 64 KiB, nested deeper than 32, or aliased.
    TooCostly,
}

/// Why a frontmatter could not be read: its kind, and a sentence a person can act on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FrontmatterError {
    kind: FrontmatterErrorKind,
    reason: String,
}

impl FrontmatterError {
    fn new(kind: FrontmatterErrorKind, reason: impl Into<String>) -> FrontmatterError {
        FrontmatterError { kind, reason: reason.into() }
    }

    /// What kind of thing is wrong.
    pub fn kind(&self) -> FrontmatterErrorKind {
        self.kind
    }
}

impl std::fmt::Display for FrontmatterError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.reason)
    }
}

impl std::error::Error for FrontmatterError {}

/// The frontmatter's text, between the `---` line that opens `text` (after a byte order mark,
/// if any) and the `---` (or `...`) line that closes it, trailing blanks allowed; and the body
/// after it.
pub fn frontmatter_block(text: &str) -> Result<(&str, &str), FrontmatterError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let rest = text.strip_prefix("---\n").or_else(|| text.strip_prefix("---\r\n")).ok_or_else(|| {
        FrontmatterError::new(
            FrontmatterErrorKind::Missing,
            "the file does not start with a `---` line opening its frontmatter",
        )
    })?;
    let mut offset = 0;
    for line in rest.split_inclusive('\n') {
        let bare = line.trim_end_matches(['\n', '\r']).trim_end_matches([' ', '\t']);
        if bare == "---" || bare == "..." {
            return Ok((&rest[..offset], &rest[offset + line.len()..]));
        }
        offset += line.len();
    }
    Err(FrontmatterError::new(FrontmatterErrorKind::Missing, "the frontmatter has no closing `---` line"))
}

/// The YAML frontmatter at the top of `text` (between `---` lines) as a JSON object, and the
/// body after it.
pub fn yaml_frontmatter(text: &str) -> Result<(Map<String, Value>, &str), FrontmatterError> {
    let (yaml, body) = frontmatter_block(text)?;
    let frontmatter = match read_yaml(yaml, &FRONTMATTER)? {
        Some(value) => value,
        None => Value::Object(Map::new()),
    };
    let Value::Object(frontmatter) = frontmatter else {
        return Err(FrontmatterError::new(
            FrontmatterErrorKind::NotAMapping,
            "its frontmatter is not a mapping of keys to values",
        ));
    };
    Ok((frontmatter, body))
}

/// A whole YAML document (an OpenAPI description, say) as JSON, read as a frontmatter is, with
/// room for a document: at most 64 MiB, nested at most 128 deep, without aliases.
pub fn yaml_document(text: &str) -> Result<Value, FrontmatterError> {
    read_yaml(text, &DOCUMENT)?
        .ok_or_else(|| FrontmatterError::new(FrontmatterErrorKind::NotYaml, "the document is empty"))
}

/// The one YAML document of `yaml` as JSON (`None` for none), within `limits`.
fn read_yaml(yaml: &str, limits: &Limits) -> Result<Option<Value>, FrontmatterError> {
    check_shape(yaml, limits)?;
    let what = limits.what;
    let documents = YamlLoader::load_from_str(yaml)
        .map_err(|err| FrontmatterError::new(FrontmatterErrorKind::NotYaml, format!("{what} is not YAML: {err}")))?;
    match documents.as_slice() {
        [document] => to_json(document).map(Some),
        [] => Ok(None),
        _ => Err(FrontmatterError::new(
            FrontmatterErrorKind::NotYaml,
            format!("{what} holds more than one YAML document"),
        )),
    }
}

/// Refuses what could make reading costly: more than the limit's bytes, aliases (each would
/// be expanded in full, a few lines could make gigabytes), nesting deeper than the limit.
fn check_shape(yaml: &str, limits: &Limits) -> Result<(), FrontmatterError> {
    let Limits { max_bytes, max_depth, what } = *limits;
    if yaml.len() > max_bytes {
        let size = if max_bytes >= 1024 * 1024 {
            format!("{} MiB", max_bytes >> 20)
        } else {
            format!("{} KiB", max_bytes >> 10)
        };
        return Err(FrontmatterError::new(FrontmatterErrorKind::TooCostly, format!("{what} is longer than {size}")));
    }
    let mut parser = Parser::new_from_str(yaml);
    let mut depth = 0usize;
    loop {
        let (event, _) = parser.next_token().map_err(|err| {
            FrontmatterError::new(FrontmatterErrorKind::NotYaml, format!("{what} is not YAML: {err}"))
        })?;
        match event {
            Event::StreamEnd => return Ok(()),
            Event::Alias(_) => {
                return Err(FrontmatterError::new(
                    FrontmatterErrorKind::TooCostly,
                    format!("{what} uses a YAML alias (`*name`), which is not read"),
                ));
            }
            Event::SequenceStart(..) | Event::MappingStart(..) => {
                depth += 1;
                if depth > max_depth {
                    return Err(FrontmatterError::new(
                        FrontmatterErrorKind::TooCostly,
                        format!("{what} nests more than {max_depth} levels deep"),
                    ));
                }
            }
            Event::SequenceEnd | Event::MappingEnd => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
}

fn to_json(yaml: &Yaml) -> Result<Value, FrontmatterError> {
    Ok(match yaml {
        Yaml::Null => Value::Null,
        Yaml::Boolean(flag) => Value::Bool(*flag),
        Yaml::Integer(number) => Value::Number((*number).into()),
        Yaml::Real(text) => {
            let number = text.parse::<f64>().ok().and_then(Number::from_f64);
            Value::Number(number.ok_or_else(|| {
                FrontmatterError::new(FrontmatterErrorKind::NotYaml, format!("`{text}` is a number JSON cannot carry"))
            })?)
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
                    _ => {
                        return Err(FrontmatterError::new(
                            FrontmatterErrorKind::NotAMapping,
                            "a mapping's key is not a scalar",
                        ));
                    }
                };
                if object.insert(key.clone(), to_json(value)?).is_some() {
                    return Err(FrontmatterError::new(
                        FrontmatterErrorKind::NotAMapping,
                        format!("the key `{key}` appears twice in one mapping"),
                    ));
                }
            }
            Value::Object(object)
        }
        Yaml::Alias(_) | Yaml::BadValue => {
            return Err(FrontmatterError::new(FrontmatterErrorKind::NotYaml, "an alias, or a value YAML cannot read"));
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
                    long: >\n  folded\n  text\nnotes: |\n  line one\n  line two\n---  \n# Body\n";
        let (frontmatter, body) = yaml_frontmatter(text).unwrap();
        assert_eq!(
            Value::Object(frontmatter),
            json!({"name": "pdf-processing", "description": "Fill: forms", "license": "Apache-2.0", "enabled": "yes",
                   "version": 1.0, "count": 3, "date": "2026-09-13", "metadata": {"author": "ann"}, "tags": ["a", "b"],
                   "long": "folded text\n", "notes": "line one\nline two\n"})
        );
        assert_eq!(body, "# Body\n");
    }

    #[test]
    fn a_whole_document_is_read_with_room_for_one() {
        let text = format!(
            "openapi: 3.1.0\npaths:\n  /pets:\n    get:\n      operationId: listPets\ndeep: {}1{}\n",
            "[".repeat(60),
            "]".repeat(60)
        );
        let document = yaml_document(&text).unwrap();
        assert_eq!(document["paths"]["/pets"]["get"]["operationId"], "listPets");
        assert_eq!(document["openapi"], "3.1.0");
        let alias = yaml_document("a: &x 1\nb: *x\n").unwrap_err();
        assert!(alias.to_string().starts_with("the document uses a YAML alias"), "{alias}");
        assert_eq!(yaml_document("").unwrap_err().kind(), FrontmatterErrorKind::NotYaml);
        let deep = format!("x: {}1{}", "[".repeat(130), "]".repeat(130));
        assert!(yaml_document(&deep).unwrap_err().to_string().contains("128 levels"));
    }

    #[test]
    fn the_block_is_found_after_a_byte_order_mark_and_closed_by_dashes_or_dots() {
        assert_eq!(frontmatter_block("\u{feff}---\r\na: 1\r\n--- \r\nbody"), Ok(("a: 1\r\n", "body")));
        assert_eq!(frontmatter_block("---\n...\n"), Ok(("", "")));
    }

    #[test]
    fn what_is_not_a_frontmatter_or_could_cost_too_much_is_refused() {
        for (text, why) in [
            ("# no frontmatter\n", "does not start"),
            ("---\nname: a\n", "no closing"),
            ("---\n- a\n- b\n---\n", "not a mapping"),
            ("---\nname: a\nname: b\n---\n", "duplicated key"),
            ("---\n1: x\n'1': y\n---\n", "twice"),
            ("---\nname: [unclosed\n---\n", "not YAML"),
            ("---\nname: &a x\ndescription: *a\n---\n", "alias"),
            (&*format!("---\nx: {}1{}\n---\n", "[".repeat(40), "]".repeat(40)), "levels deep"),
            (&*format!("---\nx: {}\n---\n", "y".repeat(70 * 1024)), "64 KiB"),
        ] {
            let refused = yaml_frontmatter(text).unwrap_err().to_string();
            assert!(refused.contains(why), "{text:.40?}: {refused}");
        }
        assert_eq!(yaml_frontmatter("---\n---\nbody").unwrap(), (Map::new(), "body"));
    }
}
