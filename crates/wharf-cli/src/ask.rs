//! Asking the person at the terminal what a server's elicitation asks: each field of a form in
//! turn, read by its schema and asked again when the answer does not fit, then whether to send
//! the answers; or whether to open a page. End of input (Ctrl-D) dismisses the question.

use std::collections::BTreeSet;
use std::io::{BufRead, Write};

use serde_json::{Map, Number, Value};
use wharf::protocol::{ElicitAction, ElicitParams, ElicitResult, PrimitiveSchema};

use crate::terminal_text::escaped;

/// How many answers that do not fit a field are taken before the question is dismissed.
const MAX_TRIES: usize = 5;

/// Where the questions go and the answers come from: the terminal, or a script in tests.
pub(crate) trait Terminal {
    /// Shows a line.
    fn say(&mut self, text: &str);
    /// Shows `prompt` and reads the line typed, without its line end; `None` at end of input.
    fn line(&mut self, prompt: &str) -> Option<String>;
}

/// The process's own terminal: prompts on stderr (stdout is the result's), answers from stdin.
pub(crate) struct StdTerminal;

impl Terminal for StdTerminal {
    fn say(&mut self, text: &str) {
        eprintln!("{text}");
    }

    fn line(&mut self, prompt: &str) -> Option<String> {
        // stderr is locked only to write: the command's other output (log lines, the end of
        // a call that timed out) must not wait for the person.
        {
            let mut stderr = std::io::stderr().lock();
            let _ = write!(stderr, "{prompt}");
            let _ = stderr.flush();
        }
        let mut line = String::new();
        match std::io::stdin().lock().read_line(&mut line) {
            Ok(0) | Err(_) => {
                eprintln!();
                None
            }
            Ok(_) => Some(line.trim_end_matches(['\n', '\r']).to_owned()),
        }
    }
}

/// Asks the person at `terminal` what `params` asks. A URL elicitation that is accepted is
/// the caller's to open.
pub(crate) fn ask(params: &ElicitParams, terminal: &mut impl Terminal) -> ElicitResult {
    match params.mode.as_deref() {
        Some("url") => ask_to_open(params, terminal),
        _ => ask_form(params, terminal),
    }
}

fn answer(action: ElicitAction, content: Option<Map<String, Value>>) -> ElicitResult {
    ElicitResult { action, content, meta: None }
}

/// The answer of a question dismissed without an answer.
pub(crate) fn dismissed() -> ElicitResult {
    answer(ElicitAction::Cancel, None)
}

/// The server's `text` as it may be shown: control characters (which could move the cursor
/// and overwrite what the person reads, the address of a page among it) escaped.
fn shown_text(text: &str) -> String {
    escaped(text).into_owned()
}

fn ask_to_open(params: &ElicitParams, terminal: &mut impl Terminal) -> ElicitResult {
    let url = params.url.as_deref().unwrap_or_default();
    terminal.say(&format!("wharf: the server asks you to open a page: {}", shown_text(&params.message)));
    terminal.say(&format!("  {}", shown_text(url)));
    let web_address = url.starts_with("https://") || url.starts_with("http://");
    if !web_address || url.chars().any(|c| c.is_control() || c.is_whitespace()) {
        terminal.say("  That is not a web address; declined.");
        return answer(ElicitAction::Decline, None);
    }
    match terminal.line("  Open it in the browser? [y/N] ") {
        None => dismissed(),
        Some(typed) if is_yes(&typed) => answer(ElicitAction::Accept, None),
        Some(_) => answer(ElicitAction::Decline, None),
    }
}

fn ask_form(params: &ElicitParams, terminal: &mut impl Terminal) -> ElicitResult {
    terminal.say(&format!("wharf: the server asks: {}", shown_text(&params.message)));
    let mut content = Map::new();
    if let Some(schema) = &params.requested_schema
        && !schema.properties.is_empty()
    {
        terminal.say("  (Enter skips a field that is not required; Ctrl-D dismisses the question.)");
        let required: BTreeSet<&str> = schema.required.iter().flatten().map(String::as_str).collect();
        for (name, field) in &schema.properties {
            let needed = required.contains(name.as_str());
            if let Some(description) = &field.description {
                terminal.say(&format!("  {}", shown_text(description)));
            }
            let label = shown_text(field.title.as_deref().unwrap_or(name));
            let prompt = format!("  {label} ({}): ", shown_text(&hint(field, needed)));
            let mut tries = 0;
            loop {
                let Some(typed) = terminal.line(&prompt) else { return dismissed() };
                match read_value(field, typed.trim(), needed) {
                    Ok(Some(value)) => {
                        content.insert(name.clone(), value);
                        break;
                    }
                    Ok(None) => break,
                    Err(why) => {
                        tries += 1;
                        if tries == MAX_TRIES {
                            terminal.say("  Too many answers that do not fit; the question is dismissed.");
                            return dismissed();
                        }
                        terminal.say(&format!("    {why}"));
                    }
                }
            }
        }
    }
    match terminal.line("  Send these answers? [Y/n] ") {
        None => dismissed(),
        Some(typed) if is_no(&typed) => answer(ElicitAction::Decline, None),
        Some(_) => answer(ElicitAction::Accept, Some(content)),
    }
}

fn is_yes(typed: &str) -> bool {
    matches!(typed.trim().to_ascii_lowercase().as_str(), "y" | "yes" | "true")
}

fn is_no(typed: &str) -> bool {
    matches!(typed.trim().to_ascii_lowercase().as_str(), "n" | "no" | "false")
}

/// The choices of a single- or multi-select field, as (value, title).
fn choices(field: &PrimitiveSchema) -> Option<Vec<(String, String)>> {
    let titled = |values: &[wharf::protocol::TitledValue]| {
        values.iter().map(|choice| (choice.value.clone(), choice.title.clone())).collect()
    };
    let untitled = |values: &[String], titles: Option<&Vec<String>>| {
        values
            .iter()
            .enumerate()
            .map(|(index, value)| {
                let title = titles.and_then(|titles| titles.get(index)).unwrap_or(value);
                (value.clone(), title.clone())
            })
            .collect()
    };
    if field.kind == "array" {
        let items = field.items.as_ref()?;
        return match (&items.any_of, &items.enum_values) {
            (Some(values), _) => Some(titled(values)),
            (None, Some(values)) => Some(untitled(values, None)),
            (None, None) => None,
        };
    }
    match (&field.one_of, &field.enum_values) {
        (Some(values), _) => Some(titled(values)),
        (None, Some(values)) => Some(untitled(values, field.enum_names.as_ref())),
        (None, None) => None,
    }
}

/// What a field takes, in words, for its prompt.
fn hint(field: &PrimitiveSchema, needed: bool) -> String {
    let mut hint = match choices(field) {
        Some(choices) => {
            let listed: Vec<String> =
                choices.iter().enumerate().map(|(index, (_, title))| format!("{} {title}", index + 1)).collect();
            let how = if field.kind == "array" { "any of, with commas" } else { "one of" };
            format!("{how}: {}", listed.join(", "))
        }
        None => match field.kind.as_str() {
            "boolean" => "yes or no".to_owned(),
            "integer" => "a whole number".to_owned(),
            "number" => "a number".to_owned(),
            _ => field.format.as_deref().map_or("text".to_owned(), |format| format!("text, {format}")),
        },
    };
    if let Some(default) = &field.default {
        hint.push_str(&format!(", Enter for {}", shown(default)));
    } else if needed {
        hint.push_str(", required");
    }
    hint
}

fn shown(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

/// The value `typed` gives `field`: `None` for a field left out, an error saying what fits.
fn read_value(field: &PrimitiveSchema, typed: &str, needed: bool) -> Result<Option<Value>, String> {
    if typed.is_empty() {
        return match (&field.default, needed) {
            (Some(default), _) => Ok(Some(default.clone())),
            (None, true) => Err("This one is required.".to_owned()),
            (None, false) => Ok(None),
        };
    }
    if let Some(choices) = choices(field) {
        return read_choice(field, &choices, typed).map(Some);
    }
    let value = match field.kind.as_str() {
        "boolean" if is_yes(typed) => Value::Bool(true),
        "boolean" if is_no(typed) => Value::Bool(false),
        "boolean" => return Err("Answer yes or no.".to_owned()),
        "integer" => {
            let number: i64 = typed.parse().map_err(|_| "A whole number, please.".to_owned())?;
            within(field, number as f64)?;
            Value::from(number)
        }
        "number" => {
            let number = typed.parse::<f64>().ok().and_then(Number::from_f64).ok_or("A number, please.")?;
            within(field, number.as_f64().unwrap_or_default())?;
            Value::Number(number)
        }
        _ => {
            let length = typed.chars().count() as u64;
            if let Some(least) = field.min_length.filter(|least| length < *least) {
                return Err(format!("At least {least} characters."));
            }
            if let Some(most) = field.max_length.filter(|most| length > *most) {
                return Err(format!("At most {most} characters."));
            }
            if field.format.as_deref() == Some("email") && !typed.contains('@') {
                return Err("An email address, please.".to_owned());
            }
            Value::String(typed.to_owned())
        }
    };
    Ok(Some(value))
}

/// Checks a number against the field's bounds.
fn within(field: &PrimitiveSchema, number: f64) -> Result<(), String> {
    let bound = |limit: &Option<Number>| limit.as_ref().and_then(Number::as_f64);
    if let Some(least) = bound(&field.minimum).filter(|least| number < *least) {
        return Err(format!("At least {least}."));
    }
    if let Some(most) = bound(&field.maximum).filter(|most| number > *most) {
        return Err(format!("At most {most}."));
    }
    Ok(())
}

/// One choice (by value, title or number) or, for a multi-select field, several separated by
/// commas.
fn read_choice(field: &PrimitiveSchema, choices: &[(String, String)], typed: &str) -> Result<Value, String> {
    let pick = |one: &str| {
        let one = one.trim();
        // A value or title as typed first: a value may itself be a number.
        let by_number =
            || one.parse::<usize>().ok().and_then(|number| number.checked_sub(1)).and_then(|at| choices.get(at));
        choices
            .iter()
            .find(|(value, title)| value == one || title.eq_ignore_ascii_case(one))
            .or_else(by_number)
            .map(|(value, _)| Value::String(value.clone()))
            .ok_or_else(|| format!("`{one}` is not one of the choices."))
    };
    if field.kind != "array" {
        return pick(typed);
    }
    let picked = typed.split(',').filter(|one| !one.trim().is_empty()).map(pick).collect::<Result<Vec<_>, _>>()?;
    let count = picked.len() as u64;
    if let Some(least) = field.min_items.filter(|least| count < *least) {
        return Err(format!("Choose at least {least}."));
    }
    if let Some(most) = field.max_items.filter(|most| count > *most) {
        return Err(format!("Choose at most {most}."));
    }
    Ok(Value::Array(picked))
}

#[cfg(test)]
mod tests {
    use std::collections::{BTreeMap, VecDeque};

    use serde_json::json;
    use wharf::protocol::ElicitSchema;

    use super::*;

    /// Answers from a script, and what was shown.
    struct Scripted {
        answers: VecDeque<&'static str>,
        shown: Vec<String>,
    }

    impl Terminal for Scripted {
        fn say(&mut self, text: &str) {
            self.shown.push(text.to_owned());
        }

        fn line(&mut self, prompt: &str) -> Option<String> {
            self.shown.push(prompt.to_owned());
            self.answers.pop_front().map(str::to_owned)
        }
    }

    fn run(params: &ElicitParams, answers: &[&'static str]) -> (ElicitResult, Vec<String>) {
        let mut terminal = Scripted { answers: answers.iter().copied().collect(), shown: Vec::new() };
        let result = ask(params, &mut terminal);
        (result, terminal.shown)
    }

    fn form() -> ElicitParams {
        let field = |value: Value| serde_json::from_value::<PrimitiveSchema>(value).unwrap();
        let properties = BTreeMap::from([
            ("age".to_owned(), field(json!({"type": "integer", "minimum": 0, "maximum": 150}))),
            (
                "color".to_owned(),
                field(json!({"type": "string", "oneOf": [
                {"const": "r", "title": "Red"}, {"const": "g", "title": "Green"}]})),
            ),
            ("name".to_owned(), field(json!({"type": "string", "title": "Your name", "minLength": 2}))),
            ("news".to_owned(), field(json!({"type": "boolean", "default": false}))),
            ("tags".to_owned(), field(json!({"type": "array", "items": {"enum": ["a", "b", "c"]}, "maxItems": 2}))),
        ]);
        ElicitParams {
            message: "Who are you?".to_owned(),
            requested_schema: Some(ElicitSchema {
                kind: "object".to_owned(),
                properties,
                required: Some(vec!["name".to_owned(), "age".to_owned()]),
                schema: None,
            }),
            ..ElicitParams::default()
        }
    }

    #[test]
    fn a_form_is_filled_field_by_field_and_wrong_answers_are_asked_again() {
        let answers = ["", "two hundred", "200", "42", "green", "A", "Ann", "", "a, 3, b", "c,a", ""];
        let (result, shown) = run(&form(), &answers);
        assert_eq!(result.action, ElicitAction::Accept, "{shown:#?}");
        assert_eq!(
            Value::Object(result.content.unwrap()),
            json!({"age": 42, "color": "g", "name": "Ann", "news": false, "tags": ["c", "a"]})
        );
        let shown = shown.join("\n");
        for expected in [
            "wharf: the server asks: Who are you?",
            "  age (a whole number, required): ",
            "    This one is required.",
            "    A whole number, please.",
            "    At most 150.",
            "  color (one of: 1 Red, 2 Green): ",
            "  Your name (text, required): ",
            "    At least 2 characters.",
            "  news (yes or no, Enter for false): ",
            "  tags (any of, with commas: 1 a, 2 b, 3 c): ",
            "    Choose at most 2.",
        ] {
            assert!(shown.contains(expected), "{expected:?} not in:\n{shown}");
        }
    }

    #[test]
    fn no_declines_end_of_input_dismisses_and_endless_wrong_answers_dismiss() {
        let (declined, _) = run(&form(), &["1", "1", "Al", "", "", "n"]);
        assert_eq!((declined.action, declined.content), (ElicitAction::Decline, None));
        let (dismissed, _) = run(&form(), &["1"]);
        assert_eq!(dismissed.action, ElicitAction::Cancel);
        let (worn_out, shown) = run(&form(), &["x", "x", "x", "x", "x", "x"]);
        assert_eq!(worn_out.action, ElicitAction::Cancel);
        assert!(shown.iter().any(|line| line.contains("dismissed")));
    }

    #[test]
    fn a_choice_is_a_value_or_title_before_a_number_and_server_text_cannot_move_the_cursor() {
        let field: PrimitiveSchema = serde_json::from_value(json!({"type": "string", "enum": ["10", "1"]})).unwrap();
        assert_eq!(read_value(&field, "1", true), Ok(Some(json!("1"))), "the value, not the first choice");
        assert_eq!(read_value(&field, "2", true), Ok(Some(json!("1"))), "the second choice");
        assert!(read_value(&field, "3", true).is_err());
        let sly = ElicitParams {
            message: "Name?\r\u{1b}[2Kall is well".to_owned(),
            requested_schema: Some(ElicitSchema {
                kind: "object".to_owned(),
                properties: BTreeMap::from([(
                    "name".to_owned(),
                    serde_json::from_value(json!({"type": "string", "title": "\u{1b}[1Aname"})).unwrap(),
                )]),
                required: None,
                schema: None,
            }),
            ..ElicitParams::default()
        };
        let (_, shown) = run(&sly, &[]);
        assert!(shown.iter().all(|line| !line.contains('\u{1b}') && !line.contains('\r')), "{shown:?}");
        assert!(shown[0].contains("Name?\\r\\u{1b}[2Kall is well"), "{shown:?}");
    }

    #[test]
    fn a_page_is_opened_only_when_the_person_says_yes_and_only_a_web_address() {
        let page = |url: &str| ElicitParams {
            mode: Some("url".to_owned()),
            message: "Sign in to the bank".to_owned(),
            url: Some(url.to_owned()),
            ..ElicitParams::default()
        };
        let (yes, shown) = run(&page("https://bank.test/connect"), &["y"]);
        assert_eq!(yes.action, ElicitAction::Accept);
        assert!(shown.contains(&"  https://bank.test/connect".to_owned()), "{shown:?}");
        assert_eq!(run(&page("https://bank.test/connect"), &[""]).0.action, ElicitAction::Decline);
        assert_eq!(run(&page("https://bank.test/connect"), &[]).0.action, ElicitAction::Cancel);
        let (file, _) = run(&page("file:///etc/passwd"), &["y"]);
        assert_eq!(file.action, ElicitAction::Decline, "never asked, never opened");
        let (hidden, shown) = run(&page("https://bank.test/\rhttps://evil.test/"), &["y"]);
        assert_eq!(hidden.action, ElicitAction::Decline, "{shown:?}");
    }
}
