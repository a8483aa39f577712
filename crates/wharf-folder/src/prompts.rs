//! Prompts from Markdown: `prompts/NAME.md` is the prompt `NAME`, its YAML frontmatter gives
//! the description, title and arguments (name, description, required, completion values),
//! and its body is the template, each `{argument}` replaced.

use serde::Deserialize;
use serde_json::Value;
use wharf_server::{PromptDef, yaml_frontmatter};

/// The frontmatter of a prompt file.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct Frontmatter {
    title: Option<String>,
    description: Option<String>,
    #[serde(default)]
    arguments: Vec<Argument>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Argument {
    name: String,
    #[serde(default)]
    description: String,
    #[serde(default)]
    required: bool,
    /// Values offered when a client asks to complete the argument.
    #[serde(default)]
    completion: Vec<String>,
}

/// The prompt named `name` that `text` (a prompt file) describes.
pub(crate) fn prompt(name: &str, text: &str) -> Result<PromptDef, String> {
    let (frontmatter, body) = if text.starts_with("---") {
        let (frontmatter, body) = yaml_frontmatter(text).map_err(|err| err.to_string())?;
        let frontmatter: Frontmatter =
            serde_json::from_value(Value::Object(frontmatter)).map_err(|err| format!("its frontmatter: {err}"))?;
        (frontmatter, body)
    } else {
        (Frontmatter::default(), text)
    };
    let mut prompt = PromptDef::template(name, body.trim_start_matches(['\n', '\r']));
    if let Some(title) = frontmatter.title {
        prompt = prompt.title(title);
    }
    if let Some(description) = frontmatter.description {
        prompt = prompt.description(description);
    }
    for argument in frontmatter.arguments {
        prompt = prompt.argument(argument.name.clone(), argument.description, argument.required);
        if !argument.completion.is_empty() {
            prompt = prompt.complete_from(argument.name, argument.completion);
        }
    }
    Ok(prompt)
}
