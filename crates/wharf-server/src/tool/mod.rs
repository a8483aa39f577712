//! Tools: [`ToolDef`] describes one tool and its handler; the submodules hold the handler
//! trait, the extractors and the output conversions.

pub(crate) mod extract;
pub(crate) mod handler;
pub(crate) mod output;

use std::sync::Arc;

use schemars::JsonSchema;
use serde_json::Value;
use wharf_protocol::{Era, Icon, JsonObject, ProtocolVersion, Tool, ToolAnnotations, ToolExecution};

use crate::error::Error;
use crate::idempotency::{IDEMPOTENCY_TOOL_META, Idempotency};
use crate::large_result::ResultBudget;
use crate::schema::{ArgumentReader, ArgumentSchema, schema_for};
use crate::scopes::Scopes;
use crate::task::TaskSupport;
use extract::sealed::Token;
use handler::{Erased, ErasedToolHandler, ToolHandler};
use wharf_protocol::{HeaderParam, X_MCP_HEADER, header_params};

/// A tool: its name, description, schemas, hints and handler.
///
/// ```
/// use wharf_server::{Args, ToolDef};
///
/// #[derive(serde::Deserialize, schemars::JsonSchema)]
/// struct Echo {
///     /// The text to send back.
///     message: String,
/// }
///
/// let tool = ToolDef::new("echo", |Args(echo): Args<Echo>| async move { echo.message })
///     .description("Echo a message back");
/// ```
#[derive(Clone)]
pub struct ToolDef {
    pub(crate) definition: Tool,
    pub(crate) schema: Result<Arc<ArgumentSchema>, String>,
    pub(crate) handler: Arc<dyn ErasedToolHandler>,
    pub(crate) enabled: bool,
    /// What a principal must be granted to see and use it.
    pub(crate) scopes: Scopes,
    /// Arguments mirrored into `Mcp-Param-*` headers; filled in at registration.
    pub(crate) header_params: Vec<HeaderParam>,
    pub(crate) task_support: TaskSupport,
    /// False when the handler cannot see the request context, and so never asks for input:
    /// a 2026-07-28 call then needs no record of its parameters for a later round.
    pub(crate) reaches_context: bool,
    /// Whether the handler reads the arguments (it takes `Args`), so that checking them can be
    /// left to that read: a handler that never reads them still has them checked.
    pub(crate) reads_arguments: ArgumentReader,
    /// How its calls take effect once, when it says.
    pub(crate) idempotency: Option<Idempotency>,
    /// The most of a result a client is handed at once, when it says.
    pub(crate) max_result: Option<ResultBudget>,
}

impl ToolDef {
    /// A tool named `name` served by `handler`. The handler's `Args<T>` gives the input schema;
    /// a handler without `Args` takes no arguments.
    pub fn new<H, M>(name: impl Into<String>, handler: H) -> ToolDef
    where
        H: ToolHandler<M>,
        M: 'static,
    {
        let name = name.into();
        let reach = H::reach(Token(()));
        let schema = H::input_schema().unwrap_or_else(empty_object_schema);
        let compiled =
            ArgumentSchema::compile(&format!("tool `{name}`"), schema).map(Arc::new).map_err(|err| err.to_string());
        let input_schema = compiled.as_ref().map(|schema| schema.schema().clone()).unwrap_or_default();
        ToolDef {
            reaches_context: reach.context,
            reads_arguments: if reach.arguments { ArgumentReader::Handler } else { ArgumentReader::Nobody },
            definition: Tool { name, input_schema, ..Tool::default() },
            schema: compiled,
            handler: Arc::new(Erased { handler, marker: std::marker::PhantomData }),
            enabled: true,
            scopes: Scopes::default(),
            header_params: Vec::new(),
            task_support: TaskSupport::Forbidden,
            idempotency: None,
            max_result: None,
        }
    }

    /// Replaces the input schema the handler's types give with `schema`, published as it is
    /// and used to validate arguments. For tools whose arguments are described elsewhere (a
    /// configuration file, another service); the handler then takes `Args<JsonObject>` or
    /// its own type that accepts what the schema allows.
    pub fn input_schema(mut self, schema: JsonObject) -> ToolDef {
        let owner = format!("tool `{}`", self.definition.name);
        self.schema = ArgumentSchema::compile(&owner, schema).map(Arc::new).map_err(|err| err.to_string());
        self.definition.input_schema = self.schema.as_ref().map(|schema| schema.schema().clone()).unwrap_or_default();
        self
    }

    /// Marks the argument `property` to be mirrored by 2026-07-28 clients into the HTTP header
    /// `Mcp-Param-{header}` (`x-mcp-header` in the input schema), so that gateways can route on
    /// it. The argument must be a top-level string, integer or boolean; Wharf's HTTP transport
    /// refuses requests whose header and body disagree. Do not mark secrets: headers are
    /// logged more often than bodies. The same mark can come from the argument type itself,
    /// with `#[schemars(extend("x-mcp-header" = "Region"))]`.
    pub fn mirror_to_header(mut self, property: &str, header: &str) -> ToolDef {
        let mut schema = self.definition.input_schema.clone();
        let marked = schema
            .get_mut("properties")
            .and_then(Value::as_object_mut)
            .and_then(|properties| properties.get_mut(property))
            .and_then(Value::as_object_mut)
            .map(|definition| definition.insert(X_MCP_HEADER.to_owned(), Value::from(header)))
            .is_some();
        if !marked {
            self.schema = Err(format!(
                "tool `{}`: `mirror_to_header` names `{property}`, which is not an argument of the tool",
                self.definition.name
            ));
            return self;
        }
        self.input_schema(schema)
    }

    /// Lets calls run as tasks (the 2026-07-28 tasks extension) for clients that support
    /// them: with [`TaskSupport::Optional`] a call whose handler has to wait becomes a task,
    /// with [`TaskSupport::Required`] clients without tasks are refused (-32021).
    pub fn task_support(mut self, support: TaskSupport) -> ToolDef {
        self.task_support = support;
        // 2025-11-25 clients read it from the tool (experimental tasks).
        self.definition.execution = match support {
            TaskSupport::Forbidden => None,
            TaskSupport::Optional => Some(ToolExecution { task_support: Some("optional".to_owned()) }),
            TaskSupport::Required => Some(ToolExecution { task_support: Some("required".to_owned()) }),
        };
        self
    }

    /// Makes each call take effect once per idempotency key (see [`Idempotency`]): the key is
    /// claimed before the handler runs, and a repeated call is answered with the first one's
    /// result. The tool's `_meta["wharf/idempotency"]` tells clients. A tool whose calls are
    /// harmless to repeat needs none: mark it `idempotentHint` instead.
    pub fn idempotency(mut self, idempotency: Idempotency) -> ToolDef {
        self.idempotency = Some(idempotency);
        self
    }

    /// The most of this tool's result a client is handed at once, in place of the server's
    /// ([`ServerBuilder::max_result`](crate::ServerBuilder::max_result)): a result over it is
    /// answered with a preview (its first part, or the summary the result puts in
    /// `_meta["wharf/summary"]`) and a link to the whole, read in pages.
    pub fn max_result(mut self, budget: ResultBudget) -> ToolDef {
        self.max_result = Some(budget);
        self
    }

    /// What the tool does, for the model.
    pub fn description(mut self, description: impl Into<String>) -> ToolDef {
        self.definition.description = Some(description.into());
        self
    }

    /// A human-readable name.
    pub fn title(mut self, title: impl Into<String>) -> ToolDef {
        self.definition.title = Some(title.into());
        self
    }

    /// Behaviour hints (read-only, destructive, idempotent, open-world).
    pub fn annotations(mut self, annotations: ToolAnnotations) -> ToolDef {
        self.definition.annotations = Some(annotations);
        self
    }

    /// Marks the tool as read-only (and so not destructive).
    pub fn read_only(mut self) -> ToolDef {
        let annotations = self.definition.annotations.get_or_insert_with(ToolAnnotations::default);
        annotations.read_only_hint = Some(true);
        annotations.destructive_hint = Some(false);
        self
    }

    /// Adds an icon.
    pub fn icon(mut self, icon: Icon) -> ToolDef {
        self.definition.icons.get_or_insert_with(Vec::new).push(icon);
        self
    }

    /// Declares the `outputSchema` from `T`, the type the handler returns in `Json<T>`.
    pub fn output<T: JsonSchema>(mut self) -> ToolDef {
        self.definition.output_schema = Some(schema_for::<T>());
        self
    }

    /// Declares `schema` as the `outputSchema`, for tools whose structured content is
    /// described elsewhere (a configuration file); its `structuredContent` must match it.
    pub fn output_schema(mut self, schema: JsonObject) -> ToolDef {
        self.definition.output_schema = Some(schema);
        self
    }

    /// Sets `_meta` on the tool definition.
    pub fn meta(mut self, meta: JsonObject) -> ToolDef {
        self.definition.meta = Some(meta);
        self
    }

    /// Requires OAuth scopes of whoever lists or uses it: a principal whose credentials lack
    /// one does not see it, and is refused with `insufficient_scope` (over HTTP, 403 naming
    /// the scopes) if it names it anyway. Requests without a principal never see it.
    pub fn scopes<S: Into<String>>(mut self, scopes: impl IntoIterator<Item = S>) -> ToolDef {
        self.scopes = Scopes::new(scopes);
        self
    }

    /// Registers the tool disabled: it is neither listed nor callable until enabled.
    pub fn disabled(mut self) -> ToolDef {
        self.enabled = false;
        self
    }

    /// The tool's name.
    pub fn name(&self) -> &str {
        &self.definition.name
    }

    /// Checks everything that can be wrong with the definition, and finds the arguments it
    /// mirrors into headers.
    pub(crate) fn validate(&mut self) -> Result<(), Error> {
        let name = &self.definition.name;
        if !valid_tool_name(name) {
            return Err(Error::registration(format!(
                "tool `{name}`: a tool name must be 1 to 128 characters from A-Z, a-z, 0-9, `_`, `-` and `.`"
            )));
        }
        if let Err(message) = &self.schema {
            return Err(Error::registration(message.clone()));
        }
        self.header_params = header_params(&self.definition.input_schema)
            .map_err(|message| Error::registration(format!("tool `{name}`: {message}")))?;
        if let Some(idempotency) = &self.idempotency {
            // Set here rather than by `idempotency()`, so that a later `meta()` keeps it.
            let meta = self.definition.meta.get_or_insert_with(JsonObject::new);
            meta.insert(IDEMPOTENCY_TOOL_META.to_owned(), idempotency.advertised());
        }
        Ok(())
    }
}

impl std::fmt::Debug for ToolDef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolDef").field("definition", &self.definition).field("enabled", &self.enabled).finish()
    }
}

fn empty_object_schema() -> JsonObject {
    let mut schema = JsonObject::new();
    schema.insert("type".to_owned(), Value::String("object".to_owned()));
    schema.insert("additionalProperties".to_owned(), Value::Bool(false));
    schema
}

/// `^[A-Za-z0-9_.-]{1,128}$`
pub(crate) fn valid_tool_name(name: &str) -> bool {
    (1..=128).contains(&name.len())
        && name.bytes().all(|byte| byte.is_ascii_alphanumeric() || matches!(byte, b'_' | b'-' | b'.'))
}

/// The tool definition as a client of `version` may see it: fields that did not exist yet are
/// left out, and an output schema that is not an object is dropped before 2026-07-28.
pub(crate) fn tool_for(version: ProtocolVersion, tool: &Tool) -> Tool {
    let mut tool = tool.clone();
    if !version.has_titles() {
        tool.title = None;
    }
    if !version.has_structured_output() {
        tool.output_schema = None;
    }
    if version.era() == Era::Session {
        let object =
            tool.output_schema.as_ref().is_some_and(|schema| schema.get("type") == Some(&Value::from("object")));
        if !object {
            tool.output_schema = None;
        }
    }
    if !version.has_icons() {
        tool.icons = None;
    }
    if version != ProtocolVersion::V2025_11_25 {
        tool.execution = None;
    }
    if !version.has_tool_annotations() {
        tool.annotations = None;
    }
    tool
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_names_follow_the_spec_pattern() {
        assert!(valid_tool_name("get_weather.v2-beta"));
        assert!(!valid_tool_name(""));
        assert!(!valid_tool_name("has space"));
        assert!(!valid_tool_name("comma,separated"));
        assert!(!valid_tool_name(&"x".repeat(129)));
        assert!(valid_tool_name(&"x".repeat(128)));
    }
}
