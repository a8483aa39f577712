//! A command tool's argv template: `{name}` in an argument (a name of letters, digits, `_` and
//! `-`) stands for the tool argument of that name, which must be declared; `{{` and `}}` stand
//! for braces, and any other brace is itself (`{'a': 1}` in a script stays as it is). An
//! argument that is only a placeholder becomes one argv element per value (none when the
//! argument is absent, one per item of an array); inside other text a placeholder is the
//! value's text. The program itself is never a placeholder.

use serde_json::{Map, Value};

/// One piece of an argv element.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Piece {
    Text(String),
    Placeholder(String),
}

/// A parsed argv template.
#[derive(Debug, Clone)]
pub(crate) struct CommandTemplate {
    program: String,
    arguments: Vec<Vec<Piece>>,
}

impl CommandTemplate {
    /// Parses `command`, whose placeholders must all be among `known` arguments.
    pub(crate) fn parse(command: &[String], known: &[&str]) -> Result<CommandTemplate, String> {
        let (program, arguments) = command.split_first().ok_or("`command` is empty; it names the program first")?;
        if program.contains('{') || program.contains('}') {
            return Err(format!("the program `{program}` must be written out, not made from arguments"));
        }
        let arguments: Vec<Vec<Piece>> = arguments.iter().map(|argument| pieces(argument)).collect();
        for piece in arguments.iter().flatten() {
            if let Piece::Placeholder(name) = piece
                && !known.contains(&name.as_str())
            {
                return Err(format!("`{{{name}}}` in `command` is not one of the tool's arguments"));
            }
        }
        Ok(CommandTemplate { program: program.clone(), arguments })
    }

    /// The program to run.
    pub(crate) fn program(&self) -> &str {
        &self.program
    }

    /// The argv after the program, for these tool arguments.
    pub(crate) fn expand(&self, values: &Map<String, Value>) -> Vec<String> {
        let mut argv = Vec::new();
        for pieces in &self.arguments {
            if let [Piece::Placeholder(name)] = pieces.as_slice() {
                match values.get(name) {
                    None | Some(Value::Null) => {}
                    Some(Value::Array(items)) => argv.extend(items.iter().map(text)),
                    Some(value) => argv.push(text(value)),
                }
                continue;
            }
            let mut element = String::new();
            for piece in pieces {
                match piece {
                    Piece::Text(literal) => element.push_str(literal),
                    Piece::Placeholder(name) => match values.get(name) {
                        None | Some(Value::Null) => {}
                        Some(Value::Array(items)) => {
                            element.push_str(&items.iter().map(text).collect::<Vec<_>>().join(" "));
                        }
                        Some(value) => element.push_str(&text(value)),
                    },
                }
            }
            argv.push(element);
        }
        argv
    }
}

/// A value as an argument: a string as it is, anything else as its JSON.
fn text(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

/// The name of the placeholder whose `{` was just read: what comes before the next `}`, when
/// it is a name.
fn placeholder_after(rest: &std::iter::Peekable<std::str::Chars<'_>>) -> Option<String> {
    let mut name = String::new();
    for next in rest.clone() {
        match next {
            '}' => break,
            next if next.is_ascii_alphanumeric() || next == '_' || next == '-' => name.push(next),
            _ => return None,
        }
    }
    let closed = rest.clone().nth(name.len()) == Some('}');
    let starts_well = name.chars().next().is_some_and(|first| first.is_ascii_alphabetic() || first == '_');
    (closed && starts_well).then_some(name)
}

fn pieces(argument: &str) -> Vec<Piece> {
    let mut pieces = Vec::new();
    let mut literal = String::new();
    let mut chars = argument.chars().peekable();
    while let Some(character) = chars.next() {
        match character {
            '{' if chars.peek() == Some(&'{') => {
                chars.next();
                literal.push('{');
            }
            '}' if chars.peek() == Some(&'}') => {
                chars.next();
                literal.push('}');
            }
            '{' => match placeholder_after(&chars) {
                Some(name) => {
                    for _ in 0..=name.len() {
                        chars.next();
                    }
                    if !literal.is_empty() {
                        pieces.push(Piece::Text(std::mem::take(&mut literal)));
                    }
                    pieces.push(Piece::Placeholder(name));
                }
                None => literal.push('{'),
            },
            other => literal.push(other),
        }
    }
    if !literal.is_empty() || pieces.is_empty() {
        pieces.push(Piece::Text(literal));
    }
    pieces
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn expand(command: &[&str], values: Value) -> Vec<String> {
        let command: Vec<String> = command.iter().map(|part| (*part).to_owned()).collect();
        let template = CommandTemplate::parse(&command, &["path", "lines", "flags", "name"]).unwrap();
        template.expand(values.as_object().unwrap())
    }

    #[test]
    fn placeholders_become_argv_elements_never_shell_words() {
        assert_eq!(
            expand(&["wc", "-l", "{path}"], json!({"path": "a b; rm -rf /"})),
            ["-l", "a b; rm -rf /"],
            "one element, whatever it contains"
        );
        assert_eq!(expand(&["head", "-n", "{lines}", "{path}"], json!({"path": "x"})), ["-n", "x"]);
        assert_eq!(expand(&["ls", "{flags}", "."], json!({"flags": ["-l", "-a"]})), ["-l", "-a", "."]);
        assert_eq!(expand(&["echo", "--name={name}", "{{literal}}"], json!({"name": 3})), ["--name=3", "{literal}"]);
        assert_eq!(expand(&["echo", "--name={name}"], json!({})), ["--name="]);
        assert_eq!(
            expand(&["python3", "-c", "print({'n': 1}, '{name}')"], json!({"name": "x"})),
            ["-c", "print({'n': 1}, 'x')"]
        );
        assert_eq!(expand(&["echo", "{unclosed", "stray}", "{1x}"], json!({})), ["{unclosed", "stray}", "{1x}"]);
    }

    #[test]
    fn templates_that_could_go_wrong_are_refused() {
        let parse = |command: &[&str]| {
            let command: Vec<String> = command.iter().map(|part| (*part).to_owned()).collect();
            CommandTemplate::parse(&command, &["path"]).map(|_| ())
        };
        assert!(parse(&[]).unwrap_err().contains("empty"));
        assert!(parse(&["{path}"]).unwrap_err().contains("written out"));
        assert!(parse(&["cat", "{other}"]).unwrap_err().contains("not one of the tool's arguments"));
        assert!(parse(&["python3", "-c", "print({'a': {path}})"]).is_ok(), "braces around other text are text");
        assert!(parse(&["cat", "{path}"]).is_ok());
    }
}
