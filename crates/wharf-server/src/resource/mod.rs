//! Resources: static contents, dynamic handlers, and families of resources behind an RFC 6570
//! URI template.

pub(crate) mod mime;
pub(crate) mod uri_template;

use std::collections::{BTreeMap, HashMap};
use std::fmt::Display;
use std::future::Future;
use std::str::FromStr;
use std::sync::Arc;

use serde_json::Value;
use wharf_protocol::{
    Completion, Icon, JsonObject, ProtocolVersion, ReadResourceResult, Resource, ResourceContents, ResourceTemplate,
};

use crate::completion::{CompletionCall, CompletionFn, completion_fn, fixed_completion};
use crate::content::{blob_contents, text_contents};
use crate::context::RequestContext;
use crate::error::{Error, RpcError};
use crate::future::BoxFuture;
use crate::scopes::Scopes;
use uri_template::UriTemplate;

/// One `resources/read` call, as a resource handler sees it.
#[derive(Debug)]
pub struct ResourceCall {
    /// The URI being read.
    pub uri: String,
    /// The template variables, for a resource template; empty otherwise.
    pub variables: BTreeMap<String, String>,
    /// The request context.
    pub context: RequestContext,
}

impl ResourceCall {
    /// A template variable as text.
    pub fn variable(&self, name: &str) -> Option<&str> {
        self.variables.get(name).map(String::as_str)
    }

    /// A template variable parsed into `T`; a value that does not parse is `-32602`.
    pub fn parse<T: FromStr>(&self, name: &str) -> Result<T, RpcError>
    where
        T::Err: Display,
    {
        let text = self
            .variable(name)
            .ok_or_else(|| RpcError::invalid_params(format!("The URI `{}` has no variable `{name}`", self.uri)))?;
        text.parse().map_err(|err| {
            RpcError::invalid_params(format!("The variable `{name}` of `{}` is not valid: {err}", self.uri))
        })
    }
}

/// A value a resource handler can return. Text and JSON values become contents at the URI
/// that was read, with the resource's MIME type.
pub trait IntoResourceContents {
    /// Converts the value.
    fn into_contents(self, uri: &str, mime_type: Option<&str>) -> Result<Vec<ResourceContents>, RpcError>;
}

impl IntoResourceContents for ReadResourceResult {
    fn into_contents(self, _: &str, _: Option<&str>) -> Result<Vec<ResourceContents>, RpcError> {
        Ok(self.contents)
    }
}

impl IntoResourceContents for Vec<ResourceContents> {
    fn into_contents(self, _: &str, _: Option<&str>) -> Result<Vec<ResourceContents>, RpcError> {
        Ok(self)
    }
}

impl IntoResourceContents for ResourceContents {
    fn into_contents(self, _: &str, _: Option<&str>) -> Result<Vec<ResourceContents>, RpcError> {
        Ok(vec![self])
    }
}

impl IntoResourceContents for String {
    fn into_contents(self, uri: &str, mime_type: Option<&str>) -> Result<Vec<ResourceContents>, RpcError> {
        Ok(vec![text_contents(uri, mime_type, self)])
    }
}

impl IntoResourceContents for Vec<u8> {
    fn into_contents(self, uri: &str, mime_type: Option<&str>) -> Result<Vec<ResourceContents>, RpcError> {
        Ok(vec![blob_contents(uri, mime_type, &self)])
    }
}

impl IntoResourceContents for Value {
    /// JSON text, with `application/json` unless the resource says otherwise.
    fn into_contents(self, uri: &str, mime_type: Option<&str>) -> Result<Vec<ResourceContents>, RpcError> {
        let text = serde_json::to_string_pretty(&self).map_err(|err| RpcError::internal(err.to_string()))?;
        Ok(vec![text_contents(uri, Some(mime_type.unwrap_or("application/json")), text)])
    }
}

impl<T: IntoResourceContents> IntoResourceContents for Result<T, RpcError> {
    fn into_contents(self, uri: &str, mime_type: Option<&str>) -> Result<Vec<ResourceContents>, RpcError> {
        self.and_then(|value| value.into_contents(uri, mime_type))
    }
}

impl<T: IntoResourceContents, E: Display> IntoResourceContents for Result<T, E> {
    fn into_contents(self, uri: &str, mime_type: Option<&str>) -> Result<Vec<ResourceContents>, RpcError> {
        self.map_err(|err| RpcError::internal(err.to_string())).and_then(|value| value.into_contents(uri, mime_type))
    }
}

/// A type-erased read handler. The MIME type is passed at read time, because `.mime_type(..)`
/// is usually called after the handler is given.
type ReadFn =
    Arc<dyn Fn(ResourceCall, Option<String>) -> BoxFuture<Result<Vec<ResourceContents>, RpcError>> + Send + Sync>;

fn read_fn<F, Fut, Out>(handler: F) -> ReadFn
where
    F: Fn(ResourceCall) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Out> + Send + 'static,
    Out: IntoResourceContents + 'static,
{
    Arc::new(move |call, mime_type| {
        let uri = call.uri.clone();
        let future = handler(call);
        Box::pin(async move { future.await.into_contents(&uri, mime_type.as_deref()) })
    })
}

#[derive(Clone)]
enum Contents {
    Text(Arc<str>),
    Bytes(Arc<[u8]>),
    Handler(ReadFn),
}

/// A resource with a fixed URI: static text, static bytes, or a handler that reads it.
///
/// ```
/// use wharf_server::ResourceDef;
///
/// let config = ResourceDef::text("config://app", "config", r#"{"theme":"dark"}"#)
///     .mime_type("application/json");
/// ```
#[derive(Clone)]
pub struct ResourceDef {
    pub(crate) definition: Resource,
    contents: Contents,
    pub(crate) enabled: bool,
    /// What a principal must be granted to see and use it.
    pub(crate) scopes: Scopes,
}

impl ResourceDef {
    /// A resource whose contents are this text.
    pub fn text(uri: impl Into<String>, name: impl Into<String>, text: impl Into<String>) -> ResourceDef {
        let text: String = text.into();
        let size = text.len() as u64;
        ResourceDef::with(uri.into(), name.into(), Contents::Text(text.into()), Some(size))
    }

    /// A resource whose contents are these bytes, sent base64-encoded.
    pub fn bytes(uri: impl Into<String>, name: impl Into<String>, bytes: impl Into<Vec<u8>>) -> ResourceDef {
        let bytes: Vec<u8> = bytes.into();
        let size = bytes.len() as u64;
        ResourceDef::with(uri.into(), name.into(), Contents::Bytes(bytes.into()), Some(size))
    }

    /// A resource read by `handler` each time.
    pub fn dynamic<F, Fut, Out>(uri: impl Into<String>, name: impl Into<String>, handler: F) -> ResourceDef
    where
        F: Fn(ResourceCall) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Out> + Send + 'static,
        Out: IntoResourceContents + 'static,
    {
        ResourceDef::with(uri.into(), name.into(), Contents::Handler(read_fn(handler)), None)
    }

    fn with(uri: String, name: String, contents: Contents, size: Option<u64>) -> ResourceDef {
        ResourceDef {
            definition: Resource { uri, name, size, ..Resource::default() },
            contents,
            enabled: true,
            scopes: Scopes::default(),
        }
    }

    /// The MIME type.
    pub fn mime_type(mut self, mime_type: impl Into<String>) -> ResourceDef {
        self.definition.mime_type = Some(mime_type.into());
        self
    }

    /// Sets `_meta` on the resource's listing (a view's `_meta.ui` among it, checked by
    /// `build`); a view's is also sent with its contents.
    pub fn meta(mut self, meta: JsonObject) -> ResourceDef {
        self.definition.meta = Some(meta);
        self
    }

    /// What the resource is.
    pub fn description(mut self, description: impl Into<String>) -> ResourceDef {
        self.definition.description = Some(description.into());
        self
    }

    /// A human-readable name.
    pub fn title(mut self, title: impl Into<String>) -> ResourceDef {
        self.definition.title = Some(title.into());
        self
    }

    /// Adds an icon.
    pub fn icon(mut self, icon: Icon) -> ResourceDef {
        self.definition.icons.get_or_insert_with(Vec::new).push(icon);
        self
    }

    /// Requires OAuth scopes of whoever lists or uses it: a principal whose credentials lack
    /// one does not see it, and is refused with `insufficient_scope` (over HTTP, 403 naming
    /// the scopes) if it names it anyway. Requests without a principal never see it.
    pub fn scopes<S: Into<String>>(mut self, scopes: impl IntoIterator<Item = S>) -> ResourceDef {
        self.scopes = Scopes::new(scopes);
        self
    }

    /// Registers the resource disabled.
    pub fn disabled(mut self) -> ResourceDef {
        self.enabled = false;
        self
    }

    /// The resource's URI.
    pub fn uri(&self) -> &str {
        &self.definition.uri
    }

    pub(crate) fn validate(&self) -> Result<(), Error> {
        let uri = &self.definition.uri;
        if uri.is_empty() || !uri.contains(':') {
            return Err(Error::registration(format!("resource `{uri}`: the URI needs a scheme, like `config://app`")));
        }
        if self.definition.name.is_empty() {
            return Err(Error::registration(format!("resource `{uri}`: the name must not be empty")));
        }
        Ok(())
    }

    /// True when the resource is an MCP Apps view (`text/html;profile=mcp-app`).
    #[cfg(feature = "apps")]
    pub(crate) fn is_view(&self) -> bool {
        self.definition.mime_type.as_deref() == Some(wharf_protocol::APP_MIME_TYPE)
    }

    /// A view's `_meta.ui`, listed with it and sent with its contents.
    #[cfg(feature = "apps")]
    pub(crate) fn ui_meta(&self) -> Option<&serde_json::Value> {
        self.definition.meta.as_ref()?.get(wharf_protocol::UI_META_KEY)
    }

    pub(crate) async fn read(&self, context: RequestContext) -> Result<Vec<ResourceContents>, RpcError> {
        #[cfg(feature = "apps")]
        if let Some(ui) = self.ui_meta() {
            let mut contents = self.read_contents(context).await?;
            for content in &mut contents {
                let meta = match content {
                    ResourceContents::Text(text) => &mut text.meta,
                    ResourceContents::Blob(blob) => &mut blob.meta,
                };
                meta.get_or_insert_with(Default::default).insert(wharf_protocol::UI_META_KEY.to_owned(), ui.clone());
            }
            return Ok(contents);
        }
        self.read_contents(context).await
    }

    async fn read_contents(&self, context: RequestContext) -> Result<Vec<ResourceContents>, RpcError> {
        let uri = self.definition.uri.as_str();
        let mime_type = self.definition.mime_type.as_deref();
        match &self.contents {
            Contents::Text(text) => Ok(vec![text_contents(uri, mime_type, text.as_ref())]),
            Contents::Bytes(bytes) => Ok(vec![blob_contents(uri, mime_type, bytes)]),
            Contents::Handler(handler) => {
                let call = ResourceCall { uri: uri.to_owned(), variables: BTreeMap::new(), context };
                handler(call, self.definition.mime_type.clone()).await
            }
        }
    }
}

impl std::fmt::Debug for ResourceDef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResourceDef").field("definition", &self.definition).finish_non_exhaustive()
    }
}

/// A family of resources behind a URI template, read by one handler that receives the
/// template's variables.
///
/// ```
/// use wharf_server::TemplateDef;
///
/// let profiles = TemplateDef::new("users://{id}/profile", "user-profile", |call| async move {
///     let id: u32 = call.parse("id")?;
///     Ok::<_, wharf_server::RpcError>(format!("{{\"id\":{id}}}"))
/// })
/// .mime_type("application/json")
/// .complete_from("id", ["1", "2", "3"]);
/// ```
#[derive(Clone)]
pub struct TemplateDef {
    pub(crate) definition: ResourceTemplate,
    pub(crate) template: Result<Arc<UriTemplate>, String>,
    handler: ReadFn,
    pub(crate) completions: HashMap<String, CompletionFn>,
    pub(crate) enabled: bool,
    /// What a principal must be granted to see and use it.
    pub(crate) scopes: Scopes,
}

impl TemplateDef {
    /// A template served by `handler`.
    pub fn new<F, Fut, Out>(uri_template: impl Into<String>, name: impl Into<String>, handler: F) -> TemplateDef
    where
        F: Fn(ResourceCall) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Out> + Send + 'static,
        Out: IntoResourceContents + 'static,
    {
        let uri_template = uri_template.into();
        let template = UriTemplate::parse(&uri_template).map(Arc::new).map_err(|err| err.to_string());
        let handler = read_fn(handler);
        TemplateDef {
            definition: ResourceTemplate { uri_template, name: name.into(), ..ResourceTemplate::default() },
            template,
            handler,
            completions: HashMap::new(),
            enabled: true,
            scopes: Scopes::default(),
        }
    }

    /// The MIME type of every resource in the family.
    pub fn mime_type(mut self, mime_type: impl Into<String>) -> TemplateDef {
        self.definition.mime_type = Some(mime_type.into());
        self
    }

    /// What the resources are.
    pub fn description(mut self, description: impl Into<String>) -> TemplateDef {
        self.definition.description = Some(description.into());
        self
    }

    /// A human-readable name.
    pub fn title(mut self, title: impl Into<String>) -> TemplateDef {
        self.definition.title = Some(title.into());
        self
    }

    /// Adds an icon.
    pub fn icon(mut self, icon: Icon) -> TemplateDef {
        self.definition.icons.get_or_insert_with(Vec::new).push(icon);
        self
    }

    /// Completes the template variable `variable` with an async function.
    pub fn complete<F, Fut>(mut self, variable: impl Into<String>, handler: F) -> TemplateDef
    where
        F: Fn(CompletionCall) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Vec<String>> + Send + 'static,
    {
        self.completions.insert(variable.into(), completion_fn(handler));
        self
    }

    /// Completes `variable` with an async function that counts for itself: its [`Completion`]'s
    /// `total` and `hasMore` are answered as it gives them (a page of a list it did not fetch
    /// whole, another server's answer passed on). More than
    /// [`MAX_COMPLETION_VALUES`](crate::MAX_COMPLETION_VALUES) values are cut, with `hasMore`.
    pub fn complete_counted<F, Fut>(mut self, variable: impl Into<String>, handler: F) -> TemplateDef
    where
        F: Fn(CompletionCall) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Completion> + Send + 'static,
    {
        self.completions.insert(variable.into(), completion_fn(handler));
        self
    }

    /// Completes `variable` from a fixed list of values.
    pub fn complete_from<I, S>(mut self, variable: impl Into<String>, values: I) -> TemplateDef
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.completions.insert(variable.into(), fixed_completion(values.into_iter().map(Into::into).collect()));
        self
    }

    /// Requires OAuth scopes of whoever lists or uses it: a principal whose credentials lack
    /// one does not see it, and is refused with `insufficient_scope` (over HTTP, 403 naming
    /// the scopes) if it names it anyway. Requests without a principal never see it.
    pub fn scopes<S: Into<String>>(mut self, scopes: impl IntoIterator<Item = S>) -> TemplateDef {
        self.scopes = Scopes::new(scopes);
        self
    }

    /// Registers the template disabled.
    pub fn disabled(mut self) -> TemplateDef {
        self.enabled = false;
        self
    }

    /// The template text.
    pub fn uri_template(&self) -> &str {
        &self.definition.uri_template
    }

    pub(crate) fn validate(&self) -> Result<(), Error> {
        let source = &self.definition.uri_template;
        let template = self
            .template
            .as_ref()
            .map_err(|err| Error::registration(format!("resource template `{source}`: {err}")))?;
        if template.variables().is_empty() {
            return Err(Error::registration(format!(
                "resource template `{source}` has no variables; register it with `ResourceDef` instead"
            )));
        }
        for variable in self.completions.keys() {
            if !template.variables().contains(&variable.as_str()) {
                return Err(Error::registration(format!(
                    "resource template `{source}`: a completion is registered for `{variable}`, which is not one of its variables ({})",
                    template.variables().join(", ")
                )));
            }
        }
        Ok(())
    }

    pub(crate) fn matches(&self, uri: &str) -> Option<BTreeMap<String, String>> {
        self.template.as_ref().ok()?.matches(uri)
    }

    pub(crate) async fn read(
        &self,
        uri: &str,
        variables: BTreeMap<String, String>,
        context: RequestContext,
    ) -> Result<Vec<ResourceContents>, RpcError> {
        let call = ResourceCall { uri: uri.to_owned(), variables, context };
        (self.handler)(call, self.definition.mime_type.clone()).await
    }
}

impl std::fmt::Debug for TemplateDef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TemplateDef").field("definition", &self.definition).finish_non_exhaustive()
    }
}

/// The resource as a client of `version` may see it.
pub(crate) fn resource_for(version: ProtocolVersion, resource: &Resource) -> Resource {
    let mut resource = resource.clone();
    if !version.has_titles() {
        resource.title = None;
    }
    if !version.has_icons() {
        resource.icons = None;
    }
    resource
}

/// The template as a client of `version` may see it.
pub(crate) fn template_for(version: ProtocolVersion, template: &ResourceTemplate) -> ResourceTemplate {
    let mut template = template.clone();
    if !version.has_titles() {
        template.title = None;
    }
    if !version.has_icons() {
        template.icons = None;
    }
    template
}
