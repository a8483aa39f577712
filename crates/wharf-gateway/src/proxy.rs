//! The gateway's own components for an upstream's: a tool or prompt under its namespaced name
//! whose handler forwards the call, as it came, to the upstream (see `forward.rs` for what
//! travels with it), a resource or template behind the mount's URI prefix, and completions of
//! prompt arguments and template variables asked of the upstream.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use serde_json::{Map, Value};
use wharf_client::Client;
use wharf_protocol::{
    CallToolResult, Completion, CompletionArgument, CompletionReference, Era, FromJson, GetPromptResult, JsonObject,
    META_PROTOCOL_PREFIX, Prompt, ReadResourceResult, Resource, ResourceContents, ResourceTemplate, ResultType,
    TASKS_EXTENSION, Tool,
};
use wharf_server::{
    Args, CompletionCall, PromptDef, RequestContext, ResourceDef, RpcError, TaskSupport, TemplateDef, ToolDef,
};

use crate::forward::{Answer, forward};
use crate::link::Link;
use crate::names::UriPrefix;
use crate::task::ListedTasks;

/// `tool` of the mount, listed as `name` by `client`, its calls forwarded upstream.
pub(crate) fn tool(link: &Link, client: &Client, tool: Tool, name: String) -> ToolDef {
    let upstream_name: Arc<str> = tool.name.as_str().into();
    let support = tool.execution.as_ref().and_then(|execution| execution.task_support.clone());
    let listed = match support.as_deref() {
        Some("optional") => ListedTasks::Optional,
        Some("required") => ListedTasks::Required,
        _ => ListedTasks::Unlisted,
    };
    let for_call = link.clone();
    let mut proxy = ToolDef::new(name, move |context: RequestContext, Args(arguments): Args<JsonObject>| {
        let (link, upstream_name) = (for_call.clone(), upstream_name.clone());
        async move {
            let params = serde_json::json!({ "name": &*upstream_name, "arguments": arguments });
            let mut result: CallToolResult =
                decode(&link, forward(&context, &link, "tools/call", params, listed).await?)?;
            as_ours(&mut result.result_type, &mut result.meta);
            Ok::<_, RpcError>(result)
        }
    })
    .input_schema(tool.input_schema);
    if let Some(description) = tool.description {
        proxy = proxy.description(description);
    }
    if let Some(title) = tool.title {
        proxy = proxy.title(title);
    }
    if let Some(annotations) = tool.annotations {
        proxy = proxy.annotations(annotations);
    }
    if let Some(schema) = tool.output_schema {
        proxy = proxy.output_schema(schema);
    }
    // A tool that may take long may run as a task on the gateway, which calls it upstream as a
    // plain call meanwhile; clients that have tasks see it as the upstream declared it.
    // A 2026-07-28 upstream does not list which tools may become tasks: any may, when it
    // offers tasks.
    let upstream_tasks = client.era() == Era::Stateless
        && client.capabilities().extensions.as_ref().is_some_and(|extensions| extensions.contains_key(TASKS_EXTENSION));
    match listed {
        ListedTasks::Optional => proxy.task_support(TaskSupport::Optional),
        ListedTasks::Required => proxy.task_support(TaskSupport::Required),
        ListedTasks::Unlisted if upstream_tasks => proxy.task_support(TaskSupport::Optional),
        ListedTasks::Unlisted => proxy,
    }
}

/// `prompt` of the mount, listed as `name` by `client`, rendered upstream.
pub(crate) fn prompt(link: &Link, client: &Client, prompt: Prompt, name: String) -> PromptDef {
    let upstream_name: Arc<str> = prompt.name.as_str().into();
    let for_prompt = link.clone();
    let completed = upstream_name.clone();
    let mut proxy = PromptDef::new(name, move |call| {
        let (link, upstream_name) = (for_prompt.clone(), upstream_name.clone());
        async move {
            let arguments: Map<String, Value> =
                call.arguments.into_iter().map(|(key, value)| (key, Value::String(value))).collect();
            let params = serde_json::json!({ "name": &*upstream_name, "arguments": arguments });
            let mut got: GetPromptResult =
                decode(&link, forward(&call.context, &link, "prompts/get", params, ListedTasks::Unlisted).await?)?;
            as_ours(&mut got.result_type, &mut got.meta);
            Ok::<_, RpcError>(got)
        }
    });
    if let Some(description) = prompt.description {
        proxy = proxy.description(description);
    }
    if let Some(title) = prompt.title {
        proxy = proxy.title(title);
    }
    let completes = client.capabilities().completions.is_some();
    for argument in prompt.arguments.unwrap_or_default() {
        let required = argument.required.unwrap_or(false);
        if completes {
            let reference = CompletionReference::Prompt { name: completed.to_string(), title: None };
            proxy = proxy.complete_counted(argument.name.clone(), completer(link, reference));
        }
        proxy = proxy.argument(argument.name, argument.description.unwrap_or_default(), required);
    }
    proxy
}

/// Completes an argument of `reference` upstream, its `total` and `hasMore` as the upstream
/// counted them; nothing when the upstream fails.
fn completer(
    link: &Link,
    reference: CompletionReference,
) -> impl Fn(CompletionCall) -> Pin<Box<dyn Future<Output = Completion> + Send>> + Send + Sync + 'static {
    let link = link.clone();
    move |call: CompletionCall| {
        let (link, reference) = (link.clone(), reference.clone());
        let completion: Pin<Box<dyn Future<Output = Completion> + Send>> = Box::pin(async move {
            let argument = CompletionArgument { name: call.argument, value: call.value };
            let chosen: Map<String, Value> =
                call.arguments.into_iter().map(|(key, value)| (key, Value::String(value))).collect();
            let chosen = (!chosen.is_empty()).then_some(chosen);
            let completed = match link.client() {
                Ok(client) => client.complete(reference, argument, chosen).await.map_err(|err| err.to_string()),
                Err(down) => Err(down.message().to_owned()),
            };
            match completed {
                Ok(completed) => completed.completion,
                Err(err) => {
                    tracing::debug!(mount = %link.mount, %err, "an upstream's completion failed");
                    Completion::default()
                }
            }
        });
        completion
    }
}

/// `resource` of the mount, listed as `listed` (its URI behind `prefix`) with `meta`, read
/// upstream.
pub(crate) fn resource(
    link: &Link,
    resource: Resource,
    listed: String,
    prefix: &UriPrefix,
    meta: Option<JsonObject>,
) -> ResourceDef {
    let upstream_uri: Arc<str> = resource.uri.as_str().into();
    let (link, prefix) = (link.clone(), prefix.clone());
    let mut proxy = ResourceDef::dynamic(listed, resource.name, move |call| {
        let (link, upstream_uri, prefix) = (link.clone(), upstream_uri.clone(), prefix.clone());
        async move { read(&call.context, &link, upstream_uri.to_string(), prefix).await }
    });
    if let Some(description) = resource.description {
        proxy = proxy.description(description);
    }
    if let Some(title) = resource.title {
        proxy = proxy.title(title);
    }
    if let Some(mime_type) = resource.mime_type {
        proxy = proxy.mime_type(mime_type);
    }
    if let Some(meta) = meta {
        proxy = proxy.meta(meta);
    }
    proxy
}

/// `template` of the mount, listed as `listed` (behind `prefix`) by `client`; a URI it matches
/// is read upstream as the upstream knows it.
pub(crate) fn template(
    link: &Link,
    client: &Client,
    template: ResourceTemplate,
    listed: String,
    prefix: &UriPrefix,
) -> TemplateDef {
    let (for_read, prefix) = (link.clone(), prefix.clone());
    let mut proxy = TemplateDef::new(listed, template.name, move |call| {
        let (link, prefix) = (for_read.clone(), prefix.clone());
        async move {
            let upstream_uri = prefix.inward(&call.uri).unwrap_or(call.uri);
            read(&call.context, &link, upstream_uri, prefix).await
        }
    });
    if client.capabilities().completions.is_some() {
        let reference = CompletionReference::ResourceTemplate { uri: template.uri_template.clone() };
        for variable in template_variables(&template.uri_template) {
            proxy = proxy.complete_counted(variable, completer(link, reference.clone()));
        }
    }
    if let Some(description) = template.description {
        proxy = proxy.description(description);
    }
    if let Some(title) = template.title {
        proxy = proxy.title(title);
    }
    if let Some(mime_type) = template.mime_type {
        proxy = proxy.mime_type(mime_type);
    }
    proxy
}

/// The variables of an RFC 6570 URI template: `a` and `b` of `x://{a}/{+b}{?c,d}`, and `c`, `d`.
fn template_variables(template: &str) -> Vec<String> {
    let mut variables = Vec::new();
    for expression in template.split('{').skip(1).filter_map(|part| part.split_once('}').map(|(inside, _)| inside)) {
        let expression = expression.trim_start_matches(['+', '#', '.', '/', ';', '?', '&']);
        for variable in expression.split(',') {
            let name = variable.trim_end_matches('*').split(':').next().unwrap_or_default();
            if !name.is_empty() && !variables.iter().any(|known| known == name) {
                variables.push(name.to_owned());
            }
        }
    }
    variables
}

/// Reads `uri` upstream for `context`'s request; the contents come back under the URIs the
/// gateway lists them by.
async fn read(
    context: &RequestContext,
    link: &Link,
    uri: String,
    prefix: UriPrefix,
) -> Result<ReadResourceResult, RpcError> {
    let params = serde_json::json!({ "uri": uri });
    let mut read: ReadResourceResult =
        decode(link, forward(context, link, "resources/read", params, ListedTasks::Unlisted).await?)?;
    as_ours(&mut read.result_type, &mut read.meta);
    for contents in &mut read.contents {
        let uri = match contents {
            ResourceContents::Text(text) => &mut text.uri,
            ResourceContents::Blob(blob) => &mut blob.uri,
        };
        *uri = prefix.outward(uri);
    }
    Ok(read)
}

/// The upstream's answer as the result it must be; an error naming the mount when it is not.
fn decode<T: FromJson>(link: &Link, answer: Answer) -> Result<T, RpcError> {
    answer.decode().map_err(|err| {
        RpcError::internal(format!("the mount `{}` answered with a malformed result: {err}", link.mount))
    })
}

/// What an upstream's answer says of its own protocol envelope (`resultType`, and the
/// `io.modelcontextprotocol/` members of `_meta`, such as its `serverInfo` and cache hints) is
/// the upstream's, in the revision the gateway spoke to it: taken out, so that the gateway
/// answers each of its clients in the client's own revision. Other `_meta` members pass.
fn as_ours(result_type: &mut Option<ResultType>, meta: &mut Option<JsonObject>) {
    *result_type = None;
    if let Some(members) = meta {
        members.retain(|key, _| !key.starts_with(META_PROTOCOL_PREFIX));
        if members.is_empty() {
            *meta = None;
        }
    }
}
