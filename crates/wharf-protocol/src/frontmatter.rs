//! The YAML frontmatter of a `SKILL.md` (between `---` lines at its top), read into JSON: the
//! subset of YAML skills use (scalars, quoted and block strings, lists, one level of nested
//! mapping). What falls outside it is an error, never a guess.

use serde_json::{Map, Number, Value};

/// The frontmatter of `text` and the body after it.
pub fn split_frontmatter(text: &str) -> Result<(Map<String, Value>, &str), String> {
    let (block, body) = frontmatter_block(text)?;
    let lines: Vec<&str> = block.lines().collect();
    Ok((mapping(&lines)?, body))
}

/// The frontmatter's text, between the `---` line that opens `text` (after a byte order mark,
/// if any) and the `---` (or `...`) line that closes it, trailing blanks allowed; and the body
/// after it. For a reader of the whole YAML language to parse.
pub fn frontmatter_block(text: &str) -> Result<(&str, &str), String> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let rest = text
        .strip_prefix("---\n")
        .or_else(|| text.strip_prefix("---\r\n"))
        .ok_or("the file does not start with a `---` line opening its frontmatter")?;
    let mut offset = 0;
    for line in rest.split_inclusive('\n') {
        let bare = line.trim_end_matches(['\n', '\r']).trim_end_matches([' ', '\t']);
        if bare == "---" || bare == "..." {
            return Ok((&rest[..offset], &rest[offset + line.len()..]));
        }
        offset += line.len();
    }
    Err("the frontmatter has no closing `---` line".to_owned())
}

fn indentation(line: &str) -> usize {
    line.len() - line.trim_start_matches(' ').len()
}

fn is_blank_or_comment(line: &str) -> bool {
    let trimmed = line.trim();
    trimmed.is_empty() || trimmed.starts_with('#')
}

/// A mapping of lines all indented the same.
fn mapping(lines: &[&str]) -> Result<Map<String, Value>, String> {
    let mut map = Map::new();
    let mut at = 0;
    let base = lines.iter().find(|line| !is_blank_or_comment(line)).map_or(0, |line| indentation(line));
    while at < lines.len() {
        let line = lines[at];
        at += 1;
        if is_blank_or_comment(line) {
            continue;
        }
        if indentation(line) != base {
            return Err(format!("unexpected indentation: `{}`", line.trim()));
        }
        let (key, value) =
            line.trim().split_once(':').ok_or_else(|| format!("`{}` is not `key: value`", line.trim()))?;
        let key = unquote_key(key.trim())?;
        let value = value.trim();
        let mut nested_end =
            at + lines[at..].iter().take_while(|next| is_blank_or_comment(next) || indentation(next) > base).count();
        // Blank lines and comments after the last indented line belong to this mapping.
        while nested_end > at
            && is_blank_or_comment(lines[nested_end - 1])
            && indentation(lines[nested_end - 1]) <= base
        {
            nested_end -= 1;
        }
        let nested = &lines[at..nested_end];
        let parsed = if value.is_empty() {
            at = nested_end;
            nested_value(nested)?
        } else if let Some(style) = value.strip_prefix(['|', '>']) {
            at = nested_end;
            block_scalar(value.starts_with('|'), style, nested)
        } else {
            scalar(value)?
        };
        if map.insert(key.clone(), parsed).is_some() {
            return Err(format!("`{key}` is given twice"));
        }
    }
    Ok(map)
}

fn unquote_key(key: &str) -> Result<String, String> {
    if key.starts_with(['"', '\'']) {
        return match scalar(key)? {
            Value::String(text) => Ok(text),
            _ => Err(format!("`{key}` is not a key")),
        };
    }
    if key.is_empty() { Err("an empty key".to_owned()) } else { Ok(key.to_owned()) }
}

/// What an empty `key:` holds: a list, a mapping, or null.
fn nested_value(lines: &[&str]) -> Result<Value, String> {
    let content: Vec<&str> = lines.iter().copied().filter(|line| !is_blank_or_comment(line)).collect();
    let Some(first) = content.first() else { return Ok(Value::Null) };
    if first.trim_start().starts_with("- ") || first.trim() == "-" {
        let indent = indentation(first);
        return content
            .iter()
            .map(|line| {
                if indentation(line) != indent {
                    return Err(format!("unexpected indentation in a list: `{}`", line.trim()));
                }
                let item =
                    line.trim().strip_prefix('-').ok_or_else(|| format!("`{}` is not a list item", line.trim()))?;
                scalar(item.trim())
            })
            .collect::<Result<Vec<_>, _>>()
            .map(Value::Array);
    }
    mapping(lines).map(Value::Object)
}

/// A `|` (literal) or `>` (folded) block, with `-` (strip) or `+` (keep) chomping.
fn block_scalar(literal: bool, style: &str, lines: &[&str]) -> Value {
    let indent = lines.iter().filter(|line| !line.trim().is_empty()).map(|line| indentation(line)).min().unwrap_or(0);
    let texts: Vec<&str> = lines.iter().map(|line| line.get(indent..).unwrap_or("")).collect();
    let mut text = if literal {
        texts.join("\n")
    } else {
        let mut folded = String::new();
        for (at, line) in texts.iter().enumerate() {
            if at > 0 {
                folded.push(if line.is_empty() || texts[at - 1].is_empty() { '\n' } else { ' ' });
            }
            folded.push_str(line);
        }
        folded
    };
    let trimmed_len = text.trim_end_matches('\n').len();
    text.truncate(trimmed_len);
    match style.trim() {
        "-" => {}
        "+" => text.push('\n'),
        _ => text.push('\n'),
    }
    Value::String(text)
}

/// One scalar: quoted, a flow list, or plain (booleans, null and numbers recognized).
fn scalar(text: &str) -> Result<Value, String> {
    if let Some(inner) = text.strip_prefix('"') {
        let mut value = String::new();
        let mut chars = inner.chars();
        while let Some(c) = chars.next() {
            match c {
                '"' => return Ok(Value::String(value)),
                '\\' => match chars.next() {
                    Some('n') => value.push('\n'),
                    Some('t') => value.push('\t'),
                    Some('"') => value.push('"'),
                    Some('\\') => value.push('\\'),
                    Some('/') => value.push('/'),
                    Some(other) => return Err(format!("the escape `\\{other}` is not supported")),
                    None => break,
                },
                c => value.push(c),
            }
        }
        return Err(format!("`{text}` has no closing quote"));
    }
    if let Some(inner) = text.strip_prefix('\'') {
        let inner = inner.strip_suffix('\'').ok_or_else(|| format!("`{text}` has no closing quote"))?;
        return Ok(Value::String(inner.replace("''", "'")));
    }
    if let Some(inner) = text.strip_prefix('[') {
        let inner = inner.strip_suffix(']').ok_or_else(|| format!("`{text}` has no closing bracket"))?;
        if inner.trim().is_empty() {
            return Ok(Value::Array(Vec::new()));
        }
        return inner.split(',').map(|item| scalar(item.trim())).collect::<Result<Vec<_>, _>>().map(Value::Array);
    }
    if text.starts_with(['{', '&', '*', '!', '|', '>', '%', '@', '`']) {
        return Err(format!("`{text}` uses YAML this reader does not support"));
    }
    let plain = match text.find(" #") {
        Some(comment) => text[..comment].trim_end(),
        None => text,
    };
    Ok(match plain {
        "true" | "True" | "TRUE" => Value::Bool(true),
        "false" | "False" | "FALSE" => Value::Bool(false),
        "null" | "Null" | "NULL" | "~" | "" => Value::Null,
        _ => {
            if let Ok(integer) = plain.parse::<i64>() {
                Value::Number(integer.into())
            } else if let Some(number) =
                plain.parse::<f64>().ok().filter(|number| number.is_finite()).and_then(Number::from_f64)
            {
                Value::Number(number)
            } else {
                Value::String(plain.to_owned())
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn the_frontmatter_skills_use_is_read() {
        let text = "---\nname: pdf-processing\ndescription: \"Extract, fill: and assemble\"\nversion: 2\n\
                    license: 'MIT'\nallowed-tools: [Read, Write]\ntags:\n  - pdf\n  - forms\nmetadata:\n  author: Ada\n  \
                    level: 3\nnotes: |\n  line one\n  line two\nsummary: >-\n  folded\n  text\n# a comment\n---\n# Body\n";
        let (frontmatter, body) = split_frontmatter(text).unwrap();
        assert_eq!(
            Value::Object(frontmatter),
            json!({
                "name": "pdf-processing", "description": "Extract, fill: and assemble", "version": 2, "license": "MIT",
                "allowed-tools": ["Read", "Write"], "tags": ["pdf", "forms"], "metadata": {"author": "Ada", "level": 3},
                "notes": "line one\nline two\n", "summary": "folded text"
            })
        );
        assert_eq!(body, "# Body\n");
    }

    #[test]
    fn what_is_not_frontmatter_is_an_error() {
        assert!(split_frontmatter("# No frontmatter\n").is_err());
        assert!(split_frontmatter("---\nname: x\n").unwrap_err().contains("closing"));
        assert_eq!(frontmatter_block("\u{feff}---\r\na: 1\r\n--- \r\nbody"), Ok(("a: 1\r\n", "body")));
        assert_eq!(frontmatter_block("---\n...\n"), Ok(("", "")));
        assert!(split_frontmatter("---\nname: x\nname: y\n---\n").unwrap_err().contains("twice"));
        assert!(split_frontmatter("---\nname: &anchor x\n---\n").is_err());
        assert!(split_frontmatter("---\njust text\n---\n").is_err());
    }
}
