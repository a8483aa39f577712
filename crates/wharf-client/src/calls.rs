//! Typed calls for everything a server offers: tools, prompts, resources and templates,
//! completion, logging, subscriptions, tasks and ping, with list pages followed to the end.

use serde_json::{Value, json};
use wharf_protocol::{
    CallToolResult, CompleteResult, CompletionArgument, CompletionReference, FromJson, GetPromptResult,
    ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult, ListToolsResult, LoggingLevel, Prompt,
    ReadResourceResult, Resource, ResourceTemplate, SubscriptionFilter, Tool,
};

use crate::client::Client;
use crate::decoded::decoded;
use crate::error::ClientError;
use crate::options::RequestOptions;

/// How many pages one listing follows before it stops, so that a server whose cursors never
/// end cannot keep a client for ever.
const MAX_PAGES: usize = 1000;

/// One page of a listing.
trait Page: FromJson {
    type Item;
    fn split(self) -> (Vec<Self::Item>, Option<String>);
}

macro_rules! page {
    ($result:ty, $item:ty, $field:ident) => {
        impl Page for $result {
            type Item = $item;
            fn split(self) -> (Vec<$item>, Option<String>) {
                (self.$field, self.next_cursor)
            }
        }
    };
}

page!(ListToolsResult, Tool, tools);
page!(ListPromptsResult, Prompt, prompts);
page!(ListResourcesResult, Resource, resources);
page!(ListResourceTemplatesResult, ResourceTemplate, resource_templates);

impl Client {
    async fn page<P: Page>(&self, method: &str, cursor: Option<&str>) -> Result<P, ClientError> {
        let params = match cursor {
            Some(cursor) => json!({ "cursor": cursor }),
            None => json!({}),
        };
        let raw = self.request_raw(method, &params, &RequestOptions::default()).await?;
        decoded::<P>(&raw)
    }

    async fn all<P: Page>(&self, method: &str) -> Result<Vec<P::Item>, ClientError> {
        let mut items = Vec::new();
        let mut cursor: Option<String> = None;
        for _ in 0..MAX_PAGES {
            let page: P = self.page(method, cursor.as_deref()).await?;
            let (mut page_items, next) = page.split();
            items.append(&mut page_items);
            match next {
                Some(next) if Some(&next) == cursor.as_ref() => {
                    return Err(ClientError::invalid(format!("`{method}` gave the same cursor twice: `{next}`")));
                }
                Some(next) => cursor = Some(next),
                None => return Ok(items),
            }
        }
        Err(ClientError::invalid(format!("`{method}` had more than {MAX_PAGES} pages")))
    }

    /// Every tool, all pages followed, less those whose `x-mcp-header` marks are invalid (each
    /// recorded in [`Client::anomalies`]).
    pub async fn list_tools(&self) -> Result<Vec<Tool>, ClientError> {
        let mut tools = self.all::<ListToolsResult>("tools/list").await?;
        self.keep_valid_tools(&mut tools);
        Ok(tools)
    }

    /// One page of tools, from `cursor`.
    pub async fn list_tools_page(&self, cursor: Option<&str>) -> Result<ListToolsResult, ClientError> {
        let mut page: ListToolsResult = self.page("tools/list", cursor).await?;
        self.keep_valid_tools(&mut page.tools);
        Ok(page)
    }

    /// Calls a tool with `arguments` (a JSON object). A tool that fails answers with a result
    /// whose `is_error` is true; an `Err` is a protocol failure.
    pub async fn call_tool(&self, name: &str, arguments: Value) -> Result<CallToolResult, ClientError> {
        self.call_tool_with(name, arguments, &RequestOptions::default()).await
    }

    /// Calls a tool, with options (progress, timeout, `_meta`).
    pub async fn call_tool_with(
        &self,
        name: &str,
        arguments: Value,
        options: &RequestOptions,
    ) -> Result<CallToolResult, ClientError> {
        let raw =
            self.request_resolving("tools/call", &json!({ "name": name, "arguments": arguments }), options).await?;
        decoded::<CallToolResult>(&raw)
    }

    /// Every prompt, all pages followed.
    pub async fn list_prompts(&self) -> Result<Vec<Prompt>, ClientError> {
        self.all::<ListPromptsResult>("prompts/list").await
    }

    /// Renders a prompt with its arguments (a JSON object of strings).
    pub async fn get_prompt(&self, name: &str, arguments: Value) -> Result<GetPromptResult, ClientError> {
        self.get_prompt_with(name, arguments, &RequestOptions::default()).await
    }

    /// Renders a prompt, with options (progress, timeout, `_meta`, a handler of its own).
    pub async fn get_prompt_with(
        &self,
        name: &str,
        arguments: Value,
        options: &RequestOptions,
    ) -> Result<GetPromptResult, ClientError> {
        let params = json!({ "name": name, "arguments": arguments });
        let raw = self.request_resolving("prompts/get", &params, options).await?;
        decoded::<GetPromptResult>(&raw)
    }

    /// Every resource, all pages followed.
    pub async fn list_resources(&self) -> Result<Vec<Resource>, ClientError> {
        self.all::<ListResourcesResult>("resources/list").await
    }

    /// Every resource template, all pages followed.
    pub async fn list_resource_templates(&self) -> Result<Vec<ResourceTemplate>, ClientError> {
        self.all::<ListResourceTemplatesResult>("resources/templates/list").await
    }

    /// Reads a resource.
    pub async fn read_resource(&self, uri: &str) -> Result<ReadResourceResult, ClientError> {
        self.read_resource_with(uri, &RequestOptions::default()).await
    }

    /// Reads a resource, with options (progress, timeout, `_meta`, a handler of its own).
    pub async fn read_resource_with(
        &self,
        uri: &str,
        options: &RequestOptions,
    ) -> Result<ReadResourceResult, ClientError> {
        let raw = self.request_resolving("resources/read", &json!({ "uri": uri }), options).await?;
        decoded::<ReadResourceResult>(&raw)
    }

    /// Completes an argument of a prompt or resource template, given the values of the
    /// arguments already chosen.
    pub async fn complete(
        &self,
        reference: CompletionReference,
        argument: CompletionArgument,
        chosen: Option<serde_json::Map<String, Value>>,
    ) -> Result<CompleteResult, ClientError> {
        let mut params = json!({ "ref": reference, "argument": argument });
        if let Some(chosen) = chosen {
            params["context"] = json!({ "arguments": chosen });
        }
        let raw = self.request_raw("completion/complete", &params, &RequestOptions::default()).await?;
        decoded::<CompleteResult>(&raw)
    }

    /// Sets the session's log level (2025 sessions; on 2026-07-28 the level goes with every
    /// request, see [`ClientOptions::log_level`](crate::ClientOptions::log_level)).
    pub async fn set_log_level(&self, level: LoggingLevel) -> Result<(), ClientError> {
        self.request_raw("logging/setLevel", &json!({ "level": level }), &RequestOptions::default()).await?;
        Ok(())
    }

    /// Subscribes to a resource's updates (2025 sessions).
    pub async fn subscribe(&self, uri: &str) -> Result<(), ClientError> {
        self.request_raw("resources/subscribe", &json!({ "uri": uri }), &RequestOptions::default()).await?;
        Ok(())
    }

    /// Ends a subscription to a resource's updates (2025 sessions).
    pub async fn unsubscribe(&self, uri: &str) -> Result<(), ClientError> {
        self.request_raw("resources/unsubscribe", &json!({ "uri": uri }), &RequestOptions::default()).await?;
        Ok(())
    }

    /// Listens for list changes and resource updates (2026-07-28): the notifications arrive on
    /// [`Client::notifications`] while this future runs; it ends when the server closes the
    /// stream, and dropping it ends the subscription.
    pub async fn listen(&self, filter: SubscriptionFilter) -> Result<(), ClientError> {
        let options = RequestOptions::default().timeout(std::time::Duration::from_secs(u64::from(u32::MAX)));
        self.request_raw("subscriptions/listen", &json!({ "notifications": filter }), &options).await?;
        Ok(())
    }

    /// Checks that the server is alive (2025 sessions).
    pub async fn ping(&self) -> Result<(), ClientError> {
        self.request_raw("ping", &json!({}), &RequestOptions::default()).await?;
        Ok(())
    }

    /// A task's status, and its result once done.
    pub async fn get_task(&self, task_id: &str) -> Result<Value, ClientError> {
        self.request("tasks/get", json!({ "taskId": task_id })).await
    }

    /// Asks a task to stop.
    pub async fn cancel_task(&self, task_id: &str) -> Result<Value, ClientError> {
        self.request("tasks/cancel", json!({ "taskId": task_id })).await
    }

    /// Waits for a task's result (2025-11-25 tasks).
    pub async fn task_result(&self, task_id: &str) -> Result<Value, ClientError> {
        self.request("tasks/result", json!({ "taskId": task_id })).await
    }

    /// The session's tasks (2025-11-25 tasks).
    pub async fn list_tasks(&self) -> Result<Value, ClientError> {
        self.request("tasks/list", json!({})).await
    }

    /// Answers a task's input requests (2026-07-28 tasks extension).
    pub async fn update_task(&self, task_id: &str, input_responses: Value) -> Result<Value, ClientError> {
        self.request("tasks/update", json!({ "taskId": task_id, "inputResponses": input_responses })).await
    }
}
