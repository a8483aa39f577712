//! The methods both eras share: the lists, tools/call, prompts/get, resources/read and
//! completion/complete, each returning its result type for the finisher to encode.

use std::sync::Arc;

use wharf_protocol::{
    CallToolParams, CallToolResult, CompleteParams, CompleteResult, CompletionReference, Era, ErrorCode,
    GetPromptParams, GetPromptResult, ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult,
    ListToolsResult, PaginatedParams, Prompt, ProtocolVersion, ReadResourceParams, ReadResourceResult, Resource,
    ResourceTemplate, Tool,
};

use crate::completion::{CompletionCall, MAX_COMPLETION_VALUES};
use crate::context::RequestContext;
use crate::error::RpcError;
use crate::large_result::{ResultBudget, Spill, fits, owner_of};
use crate::principal::Principal;
use crate::prompt::{PromptDef, prompt_for};
use crate::registry::{Component, Registry, page};
use crate::resource::{ResourceDef, TemplateDef, resource_for, template_for};
use crate::schema::Refusal;
use crate::server::Server;
use crate::tool::extract::{Rejection, ToolCall};
use crate::tool::handler::ToolFuture;
use crate::tool::{ToolDef, tool_for};

/// A component that `*/list` lists: how it looks to a client of a revision, and the result
/// a page of them makes.
pub(super) trait Listed: Component {
    /// The wire form of the component.
    type Wire;
    /// The result of one page of its list.
    type Page;
    /// The component as a client of `version` may see it.
    fn for_version(&self, version: ProtocolVersion) -> Self::Wire;
    /// One page, and the cursor of the next.
    fn page(items: Vec<Self::Wire>, next_cursor: Option<String>) -> Self::Page;
}

/// Implements [`Listed`] for a component: its wire type, how a revision sees it, and the
/// result a page of them makes (the list's member named by `$items`).
macro_rules! listed {
    ($component:ty, $wire:ty, $page:ident, $items:ident, $for_version:path) => {
        impl Listed for $component {
            type Wire = $wire;
            type Page = $page;

            fn for_version(&self, version: ProtocolVersion) -> $wire {
                $for_version(version, &self.definition)
            }

            fn page($items: Vec<$wire>, next_cursor: Option<String>) -> $page {
                $page { $items, next_cursor, ..$page::default() }
            }
        }
    };
}

listed!(ToolDef, Tool, ListToolsResult, tools, tool_for);
listed!(PromptDef, Prompt, ListPromptsResult, prompts, prompt_for);
listed!(ResourceDef, Resource, ListResourcesResult, resources, resource_for);
listed!(TemplateDef, ResourceTemplate, ListResourceTemplatesResult, resource_templates, template_for);

/// One page of the enabled components of a kind that `principal` may use, each as a client of
/// `version` may see it.
pub(super) fn list<C: Listed>(
    server: &Server,
    version: ProtocolVersion,
    params: &PaginatedParams,
    principal: Option<&Principal>,
) -> Result<C::Page, RpcError> {
    let registry = server.registry();
    let size = server.options().page_size;
    let shown = |component: &C| component.enabled() && component.scopes().allow(principal);
    let (items, next_cursor) = page(C::entries(&registry), params.cursor.as_deref(), size, shown)?;
    Ok(C::page(items.into_iter().map(|item| item.for_version(version)).collect(), next_cursor))
}

/// Refuses `principal` the use of `component` unless it was granted every scope the component
/// requires: `insufficient_scope`, naming them all.
pub(super) fn check_scopes<C: Component>(component: &C, principal: Option<&Principal>) -> Result<(), RpcError> {
    let scopes = component.scopes();
    if scopes.allow(principal) {
        return Ok(());
    }
    Err(RpcError::insufficient_scope(&format!("the {} `{}`", C::WHAT, component.key()), scopes.names()))
}

/// `-32601` for a method whose capability the server does not offer.
pub(super) fn require(present: bool, capability: &str, method: &str) -> Result<(), RpcError> {
    if present {
        Ok(())
    } else {
        Err(RpcError::method_not_found(format!(
            "Method not found: `{method}` needs the `{capability}` capability, which this server does not offer"
        )))
    }
}

/// The registered, enabled tool a call names: `-32601` when the server offers no tools at all,
/// `-32602` when it has no such tool. One look at the registry answers both.
pub(super) fn find_tool<'r>(registry: &'r Registry, name: &str) -> Result<&'r Arc<ToolDef>, RpcError> {
    require(registry.has_tools(), "tools", "tools/call")?;
    registry.tool(name).ok_or_else(|| RpcError::invalid_params(format!("Unknown tool: {name}")))
}

/// A tool call whose arguments were read: its handler's future, or the answer it already has.
pub(super) enum StartedCall {
    /// The handler's future, and the budget its result must fit when one is set.
    Running(ToolFuture, Option<Fitting>),
    /// Arguments the tool refused, as a tool error result (2025-11-25 and later).
    Refused(CallToolResult),
}

/// What fitting a call's result to its client's budget needs of the call.
pub(super) struct Fitting {
    budget: ResultBudget,
    tool: Arc<ToolDef>,
}

impl Fitting {
    /// The budget of a call of `tool` from `context`'s client; `None` when none is set, which
    /// is all a call without budgets pays for them.
    pub(super) fn of(context: &RequestContext, tool: &Arc<ToolDef>) -> Option<Fitting> {
        let client = || context.client_info().map(|info| info.name.as_str());
        let budget = context.server_core().large_results().budget_for(tool.max_result, client)?;
        Some(Fitting { budget, tool: tool.clone() })
    }

    /// `result` as it fits the budget: large blocks kept to be read in pages. A result that
    /// fits is measured without copying it, and returned as it is.
    pub(super) async fn fit(&self, context: &RequestContext, result: CallToolResult) -> CallToolResult {
        let has_output_schema = self.tool.definition.output_schema.is_some();
        if fits(&result, self.budget, has_output_schema) {
            return result;
        }
        let settings = context.server_core().large_results();
        let spill = Spill {
            store: &settings.store,
            ttl: settings.ttl,
            owner: owner_of(context),
            tool: &self.tool.definition.name,
            version: context.protocol_version(),
            has_output_schema,
        };
        Box::pin(spill.fit(result, self.budget)).await
    }
}

impl StartedCall {
    /// The call's result, adapted to the request's revision and fitted to its client's budget;
    /// a tool error is marked on the context, for middleware to see.
    pub(super) async fn finish(self, context: &RequestContext) -> Result<CallToolResult, RpcError> {
        let result = match self {
            StartedCall::Running(future, None) => tool_result_for(context.protocol_version(), future.await?),
            StartedCall::Running(future, Some(fitting)) => {
                let result = tool_result_for(context.protocol_version(), future.await?);
                fitting.fit(context, result).await
            }
            StartedCall::Refused(result) => result,
        };
        if result.is_error == Some(true) {
            context.mark_tool_error();
        }
        Ok(result)
    }
}

/// Starts a call of `tool` with the call's arguments: they are checked, the handler's
/// extractors run, and the handler's future is made. Nothing here waits, and the future holds
/// neither the tool nor the context unless the handler takes them.
#[allow(clippy::boxed_local, reason = "the params stay boxed to keep the request small; only members move out")]
pub(super) fn start_call(
    context: &RequestContext,
    tool: &Arc<ToolDef>,
    params: Box<CallToolParams>,
) -> Result<StartedCall, RpcError> {
    let invalid_arguments = |message: String| {
        let message = format!("Invalid arguments for tool `{}`: {message}", params.name);
        if context.protocol_version().tool_input_errors_are_results() {
            Ok(StartedCall::Refused(CallToolResult::error(message)))
        } else {
            Err(RpcError::invalid_params(message))
        }
    };
    let schema = match &tool.schema {
        Ok(schema) => schema,
        Err(message) => return Err(RpcError::internal(message.clone())),
    };
    let arguments = match schema.accept(params.arguments, tool.reads_arguments) {
        Ok(arguments) => arguments,
        Err(Refusal::Invalid(message)) => return invalid_arguments(message),
        Err(Refusal::DuplicateKey(key)) => return Err(Refusal::duplicate_key_error(&key)),
    };
    let call = ToolCall { name: &tool.definition.name, schema, arguments: Some(arguments), context };
    match tool.handler.call(call) {
        Ok(future) => Ok(StartedCall::Running(future, Fitting::of(context, tool))),
        Err(Rejection::InvalidArguments(message)) => invalid_arguments(message),
        Err(Rejection::Rpc(error)) => Err(error),
    }
}

/// Calls `tool` with the call's arguments, for callers that own the tool.
pub(super) async fn call_tool(
    context: &RequestContext,
    tool: &Arc<ToolDef>,
    params: Box<CallToolParams>,
) -> Result<CallToolResult, RpcError> {
    start_call(context, tool, params)?.finish(context).await
}

/// Adapts a tool result to the revision: structured content that a revision cannot carry is
/// dropped, keeping (or adding) its text mirror.
pub(super) fn tool_result_for(version: ProtocolVersion, mut result: CallToolResult) -> CallToolResult {
    let Some(structured) = &result.structured_content else { return result };
    let keep = version.era() == Era::Stateless || (version.has_structured_output() && structured.is_object());
    let mirrored = result.content.iter().any(|block| matches!(block, wharf_protocol::ContentBlock::Text(_)));
    if !mirrored {
        result.content.push(wharf_protocol::ContentBlock::text(structured.to_string()));
    }
    if !keep {
        result.structured_content = None;
    }
    result
}

pub(super) async fn get_prompt(
    server: &Server,
    context: &RequestContext,
    params: GetPromptParams,
) -> Result<GetPromptResult, RpcError> {
    let prompt = server
        .registry()
        .prompt(&params.name)
        .ok_or_else(|| RpcError::invalid_params(format!("Unknown prompt: {}", params.name)))?;
    check_scopes(&*prompt, context.principal())?;
    prompt.render(params.arguments.unwrap_or_default(), context.clone()).await
}

pub(super) async fn read_resource(
    server: &Server,
    context: &RequestContext,
    params: ReadResourceParams,
) -> Result<ReadResourceResult, RpcError> {
    let version = context.protocol_version();
    let not_found = || resource_not_found(version, &params.uri);
    #[cfg(feature = "skills")]
    let mut skills = None;
    let (resource, template) = {
        let registry = server.registry();
        match registry.resource(&params.uri) {
            Some(resource) => (Some(resource), None),
            None => {
                #[cfg(feature = "skills")]
                {
                    skills = registry.skills.clone();
                }
                (None, registry.match_template(&params.uri))
            }
        }
    };
    // A skill's files are what its entry digests: no template may answer for them.
    #[cfg(feature = "skills")]
    if let Some(contents) = skills.and_then(|catalog| super::skills::skill_file_contents(&catalog, &params.uri)) {
        return Ok(ReadResourceResult { contents, ..ReadResourceResult::default() });
    }
    let contents = match (resource, template) {
        (Some(resource), _) => {
            check_scopes(&*resource, context.principal())?;
            resource.read(context.clone()).await
        }
        (None, Some((template, variables))) => {
            check_scopes(&*template, context.principal())?;
            template.read(&params.uri, variables, context.clone()).await
        }
        (None, None) => return Err(not_found()),
    };
    let contents =
        contents.map_err(|error| if error.code() == ErrorCode::RESOURCE_NOT_FOUND.0 { not_found() } else { error })?;
    if contents.is_empty() {
        // An empty answer must not stand for a missing resource (SEP-2164).
        return Err(not_found());
    }
    Ok(ReadResourceResult { contents, ..ReadResourceResult::default() })
}

/// "Resource not found": `-32002` before 2026-07-28, `-32602` on it; both carry the URI.
fn resource_not_found(version: ProtocolVersion, uri: &str) -> RpcError {
    let code = if version.era() == Era::Stateless { ErrorCode::INVALID_PARAMS } else { ErrorCode::RESOURCE_NOT_FOUND };
    RpcError::new(code.0, format!("Resource not found: {uri}")).with_data(wharf_protocol::not_found_data(uri))
}

pub(super) async fn complete(
    server: &Server,
    context: &RequestContext,
    params: CompleteParams,
) -> Result<CompleteResult, RpcError> {
    let argument = params.argument.name.clone();
    let handler = {
        let registry = server.registry();
        match &params.reference {
            CompletionReference::Prompt { name, .. } => {
                let prompt =
                    registry.prompt(name).ok_or_else(|| RpcError::invalid_params(format!("Unknown prompt: {name}")))?;
                check_scopes(&*prompt, context.principal())?;
                let declared = prompt.definition.arguments.iter().flatten().any(|known| known.name == argument);
                if !declared {
                    return Err(RpcError::invalid_params(format!("Prompt `{name}` has no argument `{argument}`")));
                }
                prompt.completions.get(&argument).cloned()
            }
            CompletionReference::ResourceTemplate { uri } => {
                let template = registry
                    .template(uri)
                    .ok_or_else(|| RpcError::invalid_params(format!("Unknown resource template: {uri}")))?;
                check_scopes(&*template, context.principal())?;
                let declared =
                    template.template.as_ref().is_ok_and(|parsed| parsed.variables().contains(&argument.as_str()));
                if !declared {
                    return Err(RpcError::invalid_params(format!("Template `{uri}` has no variable `{argument}`")));
                }
                template.completions.get(&argument).cloned()
            }
        }
    };
    let Some(handler) = handler else { return Ok(CompleteResult::default()) };
    let call = CompletionCall {
        argument,
        value: params.argument.value,
        arguments: params.context.and_then(|context| context.arguments).unwrap_or_default(),
        context: context.clone(),
    };
    let mut completion = handler(call).await?;
    if completion.values.len() > MAX_COMPLETION_VALUES {
        completion.values.truncate(MAX_COMPLETION_VALUES);
        completion.has_more = Some(true);
    }
    Ok(CompleteResult { completion, ..CompleteResult::default() })
}
