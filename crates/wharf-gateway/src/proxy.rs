//! The gateway's own components for an upstream's: a tool or prompt under its namespaced name
//! whose handler forwards the call, as it came, to the upstream, with the upstream's progress
//! passed back and the gateway's client's cancellation passed on.

use std::sync::Arc;

use serde_json::{Map, Value};
use tokio::sync::mpsc;
use wharf_client::{Client, ClientError, RequestOptions};
use wharf_protocol::{
    CallToolResult, JsonObject, Prompt, ReadResourceResult, Resource, ResourceContents, ResourceTemplate, ResultType,
    Tool,
};
use wharf_server::{Args, PromptDef, RequestContext, ResourceDef, TemplateDef, ToolDef};

use crate::upstream::answer_for;

/// `tool` of the mount `mount`, listed as `name`, its calls forwarded to `client`.
pub(crate) fn tool(mount: Arc<str>, client: Client, tool: Tool, name: String) -> ToolDef {
    let upstream_name: Arc<str> = tool.name.as_str().into();
    let mut proxy = ToolDef::new(name, move |context: RequestContext, Args(arguments): Args<JsonObject>| {
        let (mount, client, upstream_name) = (mount.clone(), client.clone(), upstream_name.clone());
        async move {
            let mut result = forward_call(&client, &upstream_name, Value::Object(arguments), &context)
                .await
                .map_err(|err| answer_for(&mount, &err))?;
            as_ours(&mut result.result_type, &mut result.meta);
            Ok::<_, wharf_server::RpcError>(result)
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
    proxy
}

/// Calls `name` upstream; the upstream's progress reaches the gateway's client when it asked
/// for progress. Dropping the future (the gateway's client cancelled, or a timeout) drops the
/// upstream request, which the client then cancels upstream.
async fn forward_call(
    client: &Client,
    name: &str,
    arguments: Value,
    context: &RequestContext,
) -> Result<CallToolResult, ClientError> {
    if context.progress_token().is_none() {
        return client.call_tool(name, arguments).await;
    }
    let (sender, mut updates) = mpsc::unbounded_channel();
    let options = RequestOptions::default().progress(sender);
    let call = client.call_tool_with(name, arguments, &options);
    tokio::pin!(call);
    let result = loop {
        tokio::select! {
            biased;
            Some(update) = updates.recv() => {
                context.progress(update.progress, update.total, update.message.as_deref()).await;
            }
            result = &mut call => break result,
        }
    };
    // What the upstream reported before it answered arrived before its answer: pass it on first.
    while let Ok(update) = updates.try_recv() {
        context.progress(update.progress, update.total, update.message.as_deref()).await;
    }
    result
}

/// `prompt` of the mount `mount`, listed as `name`, rendered by `client`'s upstream.
pub(crate) fn prompt(mount: Arc<str>, client: Client, prompt: Prompt, name: String) -> PromptDef {
    let upstream_name: Arc<str> = prompt.name.as_str().into();
    let mut proxy = PromptDef::new(name, move |call| {
        let (mount, client, upstream_name) = (mount.clone(), client.clone(), upstream_name.clone());
        async move {
            let arguments: Map<String, Value> =
                call.arguments.into_iter().map(|(key, value)| (key, Value::String(value))).collect();
            let mut got = client
                .get_prompt(&upstream_name, Value::Object(arguments))
                .await
                .map_err(|err| answer_for(&mount, &err))?;
            as_ours(&mut got.result_type, &mut got.meta);
            Ok::<_, wharf_server::RpcError>(got)
        }
    });
    if let Some(description) = prompt.description {
        proxy = proxy.description(description);
    }
    if let Some(title) = prompt.title {
        proxy = proxy.title(title);
    }
    for argument in prompt.arguments.unwrap_or_default() {
        let required = argument.required.unwrap_or(false);
        proxy = proxy.argument(argument.name, argument.description.unwrap_or_default(), required);
    }
    proxy
}

/// `resource` of the mount `mount`, listed as its URI behind `prefix`, read from `client`'s
/// upstream.
pub(crate) fn resource(mount: Arc<str>, client: Client, resource: Resource, prefix: Arc<str>) -> ResourceDef {
    let upstream_uri: Arc<str> = resource.uri.as_str().into();
    let listed = format!("{prefix}{}", resource.uri);
    let mut proxy = ResourceDef::dynamic(listed, resource.name, move |_| {
        let (mount, client, upstream_uri, prefix) =
            (mount.clone(), client.clone(), upstream_uri.clone(), prefix.clone());
        async move { read(&client, &upstream_uri, &prefix).await.map_err(|err| answer_for(&mount, &err)) }
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
    proxy
}

/// `template` of the mount `mount`, listed behind `prefix`; a URI it matches is read upstream
/// without the prefix.
pub(crate) fn template(mount: Arc<str>, client: Client, template: ResourceTemplate, prefix: Arc<str>) -> TemplateDef {
    let listed = format!("{prefix}{}", template.uri_template);
    let mut proxy = TemplateDef::new(listed, template.name, move |call| {
        let (mount, client, prefix) = (mount.clone(), client.clone(), prefix.clone());
        async move {
            let upstream_uri = call.uri.strip_prefix(&*prefix).unwrap_or(&call.uri).to_owned();
            read(&client, &upstream_uri, &prefix).await.map_err(|err| answer_for(&mount, &err))
        }
    });
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

/// Reads `uri` upstream; the contents come back under the URIs the gateway lists them by.
async fn read(client: &Client, uri: &str, prefix: &str) -> Result<ReadResourceResult, ClientError> {
    let mut read = client.read_resource(uri).await?;
    as_ours(&mut read.result_type, &mut read.meta);
    for contents in &mut read.contents {
        let uri = match contents {
            ResourceContents::Text(text) => &mut text.uri,
            ResourceContents::Blob(blob) => &mut blob.uri,
        };
        uri.insert_str(0, prefix);
    }
    Ok(read)
}

/// What an upstream's answer says of its own protocol envelope (`resultType`, and the
/// `io.modelcontextprotocol/` members of `_meta`, such as its `serverInfo` and cache hints) is
/// the upstream's, in the revision the gateway spoke to it: taken out, so that the gateway
/// answers each of its clients in the client's own revision. Other `_meta` members pass.
fn as_ours(result_type: &mut Option<ResultType>, meta: &mut Option<JsonObject>) {
    *result_type = None;
    if let Some(members) = meta {
        members.retain(|key, _| !key.starts_with("io.modelcontextprotocol/"));
        if members.is_empty() {
            *meta = None;
        }
    }
}
