//! Prompts: static `{placeholder}` templates and dynamic prompt handlers.

use std::collections::{BTreeMap, HashMap};
use std::fmt::Display;
use std::future::Future;
use std::sync::Arc;

use wharf_protocol::{
    Completion, ContentBlock, GetPromptResult, Icon, Prompt, PromptArgument, PromptMessage, ProtocolVersion, Role,
};

use crate::completion::{CompletionCall, CompletionFn, completion_fn, fixed_completion};
use crate::context::RequestContext;
use crate::error::{Error, RpcError};
use crate::future::BoxFuture;
use crate::scopes::Scopes;

/// One `prompts/get` call, as a dynamic prompt handler sees it.
#[derive(Debug)]
pub struct PromptCall {
    /// The prompt's name.
    pub name: String,
    /// The argument values. Every required argument is present.
    pub arguments: BTreeMap<String, String>,
    /// The request context.
    pub context: RequestContext,
}

impl PromptCall {
    /// The value of an argument, if given.
    pub fn argument(&self, name: &str) -> Option<&str> {
        self.arguments.get(name).map(String::as_str)
    }
}

/// A value a prompt handler can return.
pub trait IntoPromptResult {
    /// Converts the value.
    fn into_prompt_result(self) -> Result<GetPromptResult, RpcError>;
}

impl IntoPromptResult for GetPromptResult {
    fn into_prompt_result(self) -> Result<GetPromptResult, RpcError> {
        Ok(self)
    }
}

impl IntoPromptResult for Vec<PromptMessage> {
    fn into_prompt_result(self) -> Result<GetPromptResult, RpcError> {
        Ok(GetPromptResult { messages: self, ..GetPromptResult::default() })
    }
}

impl IntoPromptResult for String {
    /// One user message with this text.
    fn into_prompt_result(self) -> Result<GetPromptResult, RpcError> {
        Ok(GetPromptResult {
            messages: vec![PromptMessage { role: Role::User, content: ContentBlock::text(self) }],
            ..GetPromptResult::default()
        })
    }
}

impl<T: IntoPromptResult> IntoPromptResult for Result<T, RpcError> {
    fn into_prompt_result(self) -> Result<GetPromptResult, RpcError> {
        self.and_then(IntoPromptResult::into_prompt_result)
    }
}

impl<T: IntoPromptResult, E: Display> IntoPromptResult for Result<T, E> {
    fn into_prompt_result(self) -> Result<GetPromptResult, RpcError> {
        self.map_err(|err| RpcError::internal(err.to_string())).and_then(IntoPromptResult::into_prompt_result)
    }
}

pub(crate) type PromptFn = Arc<dyn Fn(PromptCall) -> BoxFuture<Result<GetPromptResult, RpcError>> + Send + Sync>;

#[derive(Clone)]
enum Body {
    Template(Arc<Template>),
    Handler(PromptFn),
}

/// A prompt: its name, arguments, and either a static template or a handler.
///
/// ```
/// use wharf_server::PromptDef;
///
/// let review = PromptDef::template("code_review", "Review this {language} code:\n\n{code}")
///     .description("Ask for a code review")
///     .argument("language", "The programming language", true)
///     .argument("code", "The code to review", true);
/// ```
#[derive(Clone)]
pub struct PromptDef {
    pub(crate) definition: Prompt,
    body: Body,
    pub(crate) completions: HashMap<String, CompletionFn>,
    pub(crate) enabled: bool,
    /// What a principal must be granted to see and use it.
    pub(crate) scopes: Scopes,
    problems: Vec<String>,
}

impl PromptDef {
    /// A static prompt: one user message made from `template`, where each `{name}` is replaced
    /// by the argument of that name (`{{` and `}}` stand for literal braces). Every placeholder
    /// must be declared with [`PromptDef::argument`].
    pub fn template(name: impl Into<String>, template: impl Into<String>) -> PromptDef {
        let template = template.into();
        let (parsed, problems) = match Template::parse(&template) {
            Ok(parsed) => (parsed, Vec::new()),
            Err(problem) => (Template { pieces: Vec::new() }, vec![problem]),
        };
        PromptDef::with_body(name.into(), Body::Template(Arc::new(parsed)), problems)
    }

    /// A dynamic prompt rendered by `handler`.
    pub fn new<F, Fut, Out>(name: impl Into<String>, handler: F) -> PromptDef
    where
        F: Fn(PromptCall) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Out> + Send + 'static,
        Out: IntoPromptResult + 'static,
    {
        let handler: PromptFn = Arc::new(move |call| {
            let future = handler(call);
            Box::pin(async move { future.await.into_prompt_result() })
        });
        PromptDef::with_body(name.into(), Body::Handler(handler), Vec::new())
    }

    fn with_body(name: String, body: Body, problems: Vec<String>) -> PromptDef {
        PromptDef {
            definition: Prompt { name, ..Prompt::default() },
            body,
            completions: HashMap::new(),
            enabled: true,
            scopes: Scopes::default(),
            problems,
        }
    }

    /// What the prompt is for.
    pub fn description(mut self, description: impl Into<String>) -> PromptDef {
        self.definition.description = Some(description.into());
        self
    }

    /// A human-readable name.
    pub fn title(mut self, title: impl Into<String>) -> PromptDef {
        self.definition.title = Some(title.into());
        self
    }

    /// Adds an icon.
    pub fn icon(mut self, icon: Icon) -> PromptDef {
        self.definition.icons.get_or_insert_with(Vec::new).push(icon);
        self
    }

    /// Declares an argument.
    pub fn argument(mut self, name: impl Into<String>, description: impl Into<String>, required: bool) -> PromptDef {
        self.definition.arguments.get_or_insert_with(Vec::new).push(PromptArgument {
            name: name.into(),
            title: None,
            description: Some(description.into()),
            required: Some(required),
        });
        self
    }

    /// Completes `argument` with an async function.
    pub fn complete<F, Fut>(mut self, argument: impl Into<String>, handler: F) -> PromptDef
    where
        F: Fn(CompletionCall) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Vec<String>> + Send + 'static,
    {
        self.completions.insert(argument.into(), completion_fn(handler));
        self
    }

    /// Completes `argument` with an async function that counts for itself: its [`Completion`]'s
    /// `total` and `hasMore` are answered as it gives them (a page of a list it did not fetch
    /// whole, another server's answer passed on). More than
    /// [`MAX_COMPLETION_VALUES`](crate::MAX_COMPLETION_VALUES) values are cut, with `hasMore`.
    pub fn complete_counted<F, Fut>(mut self, argument: impl Into<String>, handler: F) -> PromptDef
    where
        F: Fn(CompletionCall) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Completion> + Send + 'static,
    {
        self.completions.insert(argument.into(), completion_fn(handler));
        self
    }

    /// Completes `argument` from a fixed list of values, matching what was typed as a prefix.
    pub fn complete_from<I, S>(mut self, argument: impl Into<String>, values: I) -> PromptDef
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.completions.insert(argument.into(), fixed_completion(values.into_iter().map(Into::into).collect()));
        self
    }

    /// Requires OAuth scopes of whoever lists or uses it: a principal whose credentials lack
    /// one does not see it, and is refused with `insufficient_scope` (over HTTP, 403 naming
    /// the scopes) if it names it anyway. Requests without a principal never see it.
    pub fn scopes<S: Into<String>>(mut self, scopes: impl IntoIterator<Item = S>) -> PromptDef {
        self.scopes = Scopes::new(scopes);
        self
    }

    /// Registers the prompt disabled.
    pub fn disabled(mut self) -> PromptDef {
        self.enabled = false;
        self
    }

    /// The prompt's name.
    pub fn name(&self) -> &str {
        &self.definition.name
    }

    fn arguments(&self) -> &[PromptArgument] {
        self.definition.arguments.as_deref().unwrap_or(&[])
    }

    pub(crate) fn validate(&self) -> Result<(), Error> {
        let name = &self.definition.name;
        let fail = |message: String| Err(Error::registration(format!("prompt `{name}`: {message}")));
        if let Some(problem) = self.problems.first() {
            return fail(problem.clone());
        }
        if name.is_empty() {
            return fail("the name must not be empty".to_owned());
        }
        let arguments = self.arguments();
        for (index, argument) in arguments.iter().enumerate() {
            if arguments[..index].iter().any(|earlier| earlier.name == argument.name) {
                return fail(format!("the argument `{}` is declared twice", argument.name));
            }
        }
        if let Body::Template(template) = &self.body {
            for placeholder in template.placeholders() {
                if !arguments.iter().any(|argument| argument.name == placeholder) {
                    return fail(format!(
                        "the template uses `{{{placeholder}}}`, which is not a declared argument; add `.argument(\"{placeholder}\", ..)`"
                    ));
                }
            }
        }
        for completed in self.completions.keys() {
            if !arguments.iter().any(|argument| &argument.name == completed) {
                return fail(format!("a completion is registered for `{completed}`, which is not an argument"));
            }
        }
        Ok(())
    }

    /// Renders the prompt after checking that every required argument is present.
    pub(crate) async fn render(
        &self,
        arguments: BTreeMap<String, String>,
        context: RequestContext,
    ) -> Result<GetPromptResult, RpcError> {
        let missing: Vec<&str> = self
            .arguments()
            .iter()
            .filter(|argument| argument.required == Some(true) && !arguments.contains_key(&argument.name))
            .map(|argument| argument.name.as_str())
            .collect();
        if !missing.is_empty() {
            return Err(RpcError::invalid_params(format!(
                "Prompt `{}` is missing required arguments: {}",
                self.definition.name,
                missing.join(", ")
            )));
        }
        match &self.body {
            Body::Template(template) => Ok(GetPromptResult {
                description: self.definition.description.clone(),
                messages: vec![PromptMessage {
                    role: Role::User,
                    content: ContentBlock::text(template.render(&arguments)),
                }],
                ..GetPromptResult::default()
            }),
            Body::Handler(handler) => {
                handler(PromptCall { name: self.definition.name.clone(), arguments, context }).await
            }
        }
    }
}

impl std::fmt::Debug for PromptDef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PromptDef").field("definition", &self.definition).finish_non_exhaustive()
    }
}

/// The prompt as a client of `version` may see it.
pub(crate) fn prompt_for(version: ProtocolVersion, prompt: &Prompt) -> Prompt {
    let mut prompt = prompt.clone();
    if !version.has_titles() {
        prompt.title = None;
        for argument in prompt.arguments.iter_mut().flatten() {
            argument.title = None;
        }
    }
    if !version.has_icons() {
        prompt.icons = None;
    }
    prompt
}

/// A parsed `{placeholder}` template.
#[derive(Debug)]
struct Template {
    pieces: Vec<Piece>,
}

#[derive(Debug)]
enum Piece {
    Text(String),
    Placeholder(String),
}

impl Template {
    fn parse(source: &str) -> Result<Template, String> {
        let mut pieces = Vec::new();
        let mut text = String::new();
        let mut chars = source.chars().peekable();
        while let Some(c) = chars.next() {
            match c {
                '{' if chars.peek() == Some(&'{') => {
                    chars.next();
                    text.push('{');
                }
                '}' if chars.peek() == Some(&'}') => {
                    chars.next();
                    text.push('}');
                }
                '{' => {
                    let mut name = String::new();
                    loop {
                        match chars.next() {
                            Some('}') => break,
                            Some(c) if c.is_alphanumeric() || c == '_' || c == '-' => name.push(c),
                            Some(c) => {
                                return Err(format!(
                                    "the placeholder `{{{name}{c}` has a character that is not allowed; write `{{{{` for a literal brace"
                                ));
                            }
                            None => return Err(format!("the placeholder `{{{name}` is not closed")),
                        }
                    }
                    if name.is_empty() {
                        return Err("the template has an empty placeholder `{}`".to_owned());
                    }
                    pieces.push(Piece::Text(std::mem::take(&mut text)));
                    pieces.push(Piece::Placeholder(name));
                }
                '}' => return Err("the template has a `}` without a `{`; write `}}` for a literal brace".to_owned()),
                c => text.push(c),
            }
        }
        pieces.push(Piece::Text(text));
        Ok(Template { pieces })
    }

    fn placeholders(&self) -> impl Iterator<Item = &str> {
        self.pieces.iter().filter_map(|piece| match piece {
            Piece::Placeholder(name) => Some(name.as_str()),
            Piece::Text(_) => None,
        })
    }

    /// Substitutes arguments; an absent optional argument becomes the empty string.
    fn render(&self, arguments: &BTreeMap<String, String>) -> String {
        let mut out = String::new();
        for piece in &self.pieces {
            match piece {
                Piece::Text(text) => out.push_str(text),
                Piece::Placeholder(name) => out.push_str(arguments.get(name).map_or("", String::as_str)),
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn templates_substitute_and_escape_braces() {
        let template = Template::parse("Review {language} code {{literally}}:\n{code}").unwrap();
        let arguments = BTreeMap::from([
            ("language".to_owned(), "Rust".to_owned()),
            ("code".to_owned(), "fn main() {}".to_owned()),
        ]);
        assert_eq!(template.render(&arguments), "Review Rust code {literally}:\nfn main() {}");
        assert_eq!(template.placeholders().collect::<Vec<_>>(), vec!["language", "code"]);
    }

    #[test]
    fn undeclared_placeholders_are_registration_errors() {
        let prompt = PromptDef::template("p", "Hello {name}").argument("other", "x", false);
        let err = prompt.validate().unwrap_err();
        assert!(err.to_string().contains("`{name}`, which is not a declared argument"), "{err}");
    }

    #[test]
    fn malformed_templates_are_registration_errors() {
        assert!(PromptDef::template("p", "Hello {name").validate().is_err());
        assert!(PromptDef::template("p", "Hello }").validate().is_err());
        let duplicate = PromptDef::template("p", "x").argument("a", "", true).argument("a", "", false);
        assert!(duplicate.validate().unwrap_err().to_string().contains("declared twice"));
        let stray = PromptDef::template("p", "x").complete_from("nope", ["a"]);
        assert!(stray.validate().unwrap_err().to_string().contains("not an argument"));
    }
}
