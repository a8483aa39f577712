//! [`OpenApi`]: a document, where its calls go, what they carry and which operations are
//! offered, made into the tools of a [`ServerBuilder`].

use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use wharf_protocol::{CallToolResult, JsonObject};
use wharf_server::{Args, RpcError, ServerBuilder, ToolDef, glob_matches};

use crate::answer::tool_result;
use crate::bundle::{Location, bundle};
use crate::credentials::Credential;
use crate::error::{OpenApiError, OpenApiErrorKind};
use crate::http::Http;
use crate::operation::{OperationTool, operations};
use crate::request::{BaseUrl, prepare};

/// How long a call may take unless said.
const TIMEOUT: Duration = Duration::from_secs(30);

/// The largest answer read unless said.
const MAX_RESPONSE_BYTES: usize = 4 * 1024 * 1024;

/// The largest document read from a URL.
const MAX_DOCUMENT_BYTES: usize = 64 * 1024 * 1024;

/// An OpenAPI document made into tools: `OpenApi::from_json(text)?.base_url("https://...")?`,
/// then [`OpenApi::register`] on a server's builder (or [`OpenApi::tools`]).
#[derive(Debug, Clone)]
pub struct OpenApi {
    document: Value,
    /// Where the document was read from, when known.
    location: Option<Location>,
    base_url: Option<BaseUrl>,
    credentials: Vec<Credential>,
    timeout: Duration,
    max_response_bytes: usize,
    include_tags: Vec<String>,
    exclude_tags: Vec<String>,
    include_operations: Vec<String>,
    exclude_operations: Vec<String>,
    include_paths: Vec<String>,
    exclude_paths: Vec<String>,
    methods: Vec<String>,
    include_deprecated: bool,
}

impl OpenApi {
    /// A document as JSON text.
    pub fn from_json(text: &str) -> Result<OpenApi, OpenApiError> {
        let document = serde_json::from_str(text).map_err(|err| {
            OpenApiError::new(OpenApiErrorKind::NotOpenApi, format!("the document is not JSON: {err}"))
        })?;
        Ok(OpenApi::from_value(document))
    }

    /// A document as JSON or YAML text: JSON when it starts with `{`.
    pub fn from_text(text: &str) -> Result<OpenApi, OpenApiError> {
        if text.trim_start().starts_with('{') {
            return OpenApi::from_json(text);
        }
        let document = wharf_frontmatter::yaml_document(text).map_err(|err| {
            OpenApiError::new(OpenApiErrorKind::NotOpenApi, format!("the document is neither JSON nor YAML: {err}"))
        })?;
        Ok(OpenApi::from_value(document))
    }

    /// The document at `url` (JSON or YAML), fetched once. Its base URL is not taken from it:
    /// say it with [`OpenApi::base_url`] or choose one of its `servers`.
    pub async fn fetch(url: &str) -> Result<OpenApi, OpenApiError> {
        let unreachable = |why: String| OpenApiError::new(OpenApiErrorKind::Unreachable, why);
        let text = Http::new().map_err(unreachable)?.fetch(url, MAX_DOCUMENT_BYTES).await.map_err(unreachable)?;
        let mut openapi = OpenApi::from_text(&text)?;
        openapi.location = Some(Location::Url(url.to_owned()));
        Ok(openapi)
    }

    /// The document in the file at `path` (JSON or YAML).
    pub fn from_file(path: impl AsRef<std::path::Path>) -> Result<OpenApi, OpenApiError> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path).map_err(|err| {
            OpenApiError::new(
                OpenApiErrorKind::Unreachable,
                format!("the document {} could not be read: {err}", path.display()),
            )
        })?;
        let mut openapi = OpenApi::from_text(&text)?;
        openapi.location = Some(Location::File(path.to_path_buf()));
        Ok(openapi)
    }

    /// Follows the references to other documents (files beside a document read from a file, or
    /// URLs), which are refused otherwise: each is read once and made part of this one (at
    /// most 64; a document read from a URL never reaches a file). Needs the document's place:
    /// [`OpenApi::from_file`] or [`OpenApi::fetch`].
    pub async fn follow_external_refs(mut self) -> Result<OpenApi, OpenApiError> {
        let location = self.location.clone().ok_or_else(|| {
            OpenApiError::new(
                OpenApiErrorKind::Reference,
                "references to other documents are followed only for a document read from a file or a URL",
            )
        })?;
        self.document = bundle(std::mem::take(&mut self.document), &location).await?;
        Ok(self)
    }

    /// A document already read.
    pub fn from_value(document: Value) -> OpenApi {
        OpenApi {
            document,
            location: None,
            base_url: None,
            credentials: Vec::new(),
            timeout: TIMEOUT,
            max_response_bytes: MAX_RESPONSE_BYTES,
            include_tags: Vec::new(),
            exclude_tags: Vec::new(),
            include_operations: Vec::new(),
            exclude_operations: Vec::new(),
            include_paths: Vec::new(),
            exclude_paths: Vec::new(),
            methods: Vec::new(),
            include_deprecated: false,
        }
    }

    /// The API's name and version, from the document's `info` (for the server's own).
    pub fn title_and_version(&self) -> (String, String) {
        let info = self.document.get("info");
        let field = |key: &str| info.and_then(|info| info.get(key)).and_then(Value::as_str).map(str::to_owned);
        (field("title").unwrap_or_else(|| "openapi".to_owned()), field("version").unwrap_or_else(|| "0".to_owned()))
    }

    /// Where every call goes: `http(s)://host[:port][/prefix]`. Required: a model never says
    /// where a call goes, and neither does the document unless [`OpenApi::server`] chooses.
    pub fn base_url(mut self, url: &str) -> Result<OpenApi, OpenApiError> {
        self.base_url = Some(BaseUrl::parse(url)?);
        Ok(self)
    }

    /// Calls go to the document's `servers` entry `index` (its variables' defaults filled in);
    /// a relative one is resolved against `document_url`, where the document was read.
    pub fn server(mut self, index: usize, document_url: Option<&str>) -> Result<OpenApi, OpenApiError> {
        let server = self.document.get("servers").and_then(|servers| servers.get(index)).ok_or_else(|| {
            OpenApiError::new(OpenApiErrorKind::BaseUrl, format!("the document has no `servers` entry {index}"))
        })?;
        let mut url = server.get("url").and_then(Value::as_str).unwrap_or_default().to_owned();
        if let Some(variables) = server.get("variables").and_then(Value::as_object) {
            for (name, variable) in variables {
                let default = variable.get("default").and_then(Value::as_str).unwrap_or_default();
                url = url.replace(&format!("{{{name}}}"), default);
            }
        }
        if url.starts_with('/')
            && let Some(origin) = document_url.and_then(|document| BaseUrl::parse(document).ok())
        {
            url = format!("{}{url}", origin.origin_only());
        }
        self.base_url = Some(BaseUrl::parse(&url)?);
        Ok(self)
    }

    /// Sends `credential` with every call.
    pub fn credential(mut self, credential: Credential) -> Result<OpenApi, OpenApiError> {
        if let Some(problem) = credential.problem() {
            return Err(OpenApiError::new(OpenApiErrorKind::Credential, problem));
        }
        self.credentials.push(credential);
        Ok(self)
    }

    /// Sends `value` as the document's security scheme `scheme` (of `components.securitySchemes`)
    /// says: an `apiKey` in its header, query parameter or cookie; `http` `bearer` (and OAuth 2 or
    /// OpenID Connect: a token got elsewhere) as a bearer token; `http` `basic` from `user:password`.
    pub fn scheme_credential(self, scheme: &str, value: String) -> Result<OpenApi, OpenApiError> {
        let wrong = |why: String| OpenApiError::new(OpenApiErrorKind::Credential, why);
        let defined = self
            .document
            .pointer(&format!("/components/securitySchemes/{}", scheme.replace('~', "~0").replace('/', "~1")))
            .ok_or_else(|| wrong(format!("the document has no security scheme `{scheme}`")))?;
        let field = |key: &str| defined.get(key).and_then(Value::as_str).unwrap_or_default();
        let credential = match (field("type"), field("in")) {
            ("apiKey", place) => {
                let name = field("name").to_owned();
                match place {
                    "header" => Credential::Header { name, value },
                    "query" => Credential::Query { name, value },
                    "cookie" => Credential::Cookie { name, value },
                    other => {
                        return Err(wrong(format!(
                            "the scheme `{scheme}` puts its key in `{other}`, which is no place"
                        )));
                    }
                }
            }
            ("http", _) if field("scheme").eq_ignore_ascii_case("basic") => {
                let (user, password) = value.split_once(':').ok_or_else(|| {
                    wrong(format!("the scheme `{scheme}` is basic: its value must be `user:password`"))
                })?;
                Credential::Basic { user: user.to_owned(), password: password.to_owned() }
            }
            ("http", _) if field("scheme").eq_ignore_ascii_case("bearer") => Credential::Bearer(value),
            ("oauth2" | "openIdConnect", _) => Credential::Bearer(value),
            (kind, _) => {
                return Err(wrong(format!("the scheme `{scheme}` is of a kind Wharf does not send (`{kind}`)")));
            }
        };
        self.credential(credential)
    }

    /// How long each call may take (30 s unless said).
    pub fn timeout(mut self, timeout: Duration) -> OpenApi {
        self.timeout = timeout;
        self
    }

    /// The largest answer read (4 MiB unless said); a larger one is an error result.
    pub fn max_response_bytes(mut self, bytes: usize) -> OpenApi {
        self.max_response_bytes = bytes;
        self
    }

    /// Offers only operations with one of `tags`.
    pub fn include_tags<S: Into<String>>(mut self, tags: impl IntoIterator<Item = S>) -> OpenApi {
        self.include_tags.extend(tags.into_iter().map(Into::into));
        self
    }

    /// Leaves out operations with one of `tags`.
    pub fn exclude_tags<S: Into<String>>(mut self, tags: impl IntoIterator<Item = S>) -> OpenApi {
        self.exclude_tags.extend(tags.into_iter().map(Into::into));
        self
    }

    /// Offers only the operations whose `operationId` (or tool name) is one of `ids`.
    pub fn include_operations<S: Into<String>>(mut self, ids: impl IntoIterator<Item = S>) -> OpenApi {
        self.include_operations.extend(ids.into_iter().map(Into::into));
        self
    }

    /// Leaves out the operations whose `operationId` (or tool name) is one of `ids`.
    pub fn exclude_operations<S: Into<String>>(mut self, ids: impl IntoIterator<Item = S>) -> OpenApi {
        self.exclude_operations.extend(ids.into_iter().map(Into::into));
        self
    }

    /// Offers only operations whose path template matches one of `patterns` (`/pets/*`; `*` for
    /// any characters, `?` for one).
    pub fn include_paths<S: Into<String>>(mut self, patterns: impl IntoIterator<Item = S>) -> OpenApi {
        self.include_paths.extend(patterns.into_iter().map(Into::into));
        self
    }

    /// Leaves out operations whose path template matches one of `patterns`.
    pub fn exclude_paths<S: Into<String>>(mut self, patterns: impl IntoIterator<Item = S>) -> OpenApi {
        self.exclude_paths.extend(patterns.into_iter().map(Into::into));
        self
    }

    /// Offers only operations of these methods (`GET`, `post`, ...).
    pub fn methods<S: Into<String>>(mut self, methods: impl IntoIterator<Item = S>) -> OpenApi {
        self.methods.extend(methods.into_iter().map(|method| method.into().to_ascii_uppercase()));
        self
    }

    /// Offers the operations the document marks deprecated too (left out unless said).
    pub fn include_deprecated(mut self, include: bool) -> OpenApi {
        self.include_deprecated = include;
        self
    }

    fn offers(&self, tool: &OperationTool) -> bool {
        let names = |list: &[String]| list.iter().any(|id| Some(id) == tool.operation_id.as_ref() || *id == tool.name);
        let tagged = |list: &[String]| tool.tags.iter().any(|tag| list.contains(tag));
        let matched = |patterns: &[String]| patterns.iter().any(|pattern| glob_matches(pattern, &tool.path));
        (self.include_deprecated || !tool.deprecated)
            && (self.include_tags.is_empty() || tagged(&self.include_tags))
            && !tagged(&self.exclude_tags)
            && (self.include_operations.is_empty() || names(&self.include_operations))
            && !names(&self.exclude_operations)
            && (self.methods.is_empty() || self.methods.contains(&tool.method))
            && (self.include_paths.is_empty() || matched(&self.include_paths))
            && !matched(&self.exclude_paths)
    }

    /// The tools, and what was left out or renamed (each said in a sentence).
    pub fn tools(&self) -> Result<(Vec<ToolDef>, Vec<String>), OpenApiError> {
        let base = self.base_url.clone().ok_or_else(|| {
            OpenApiError::new(
                OpenApiErrorKind::BaseUrl,
                "no base URL: say where calls go (`base_url`, or `server` to choose one of the document's)",
            )
        })?;
        if base.is_https() && !cfg!(feature = "tls") {
            return Err(OpenApiError::new(
                OpenApiErrorKind::BaseUrl,
                format!("the base URL `{base}` is https, which needs the `tls` feature of wharf-openapi"),
            ));
        }
        let read = operations(&self.document)?;
        let http = Http::new().map_err(|why| OpenApiError::new(OpenApiErrorKind::Unreachable, why))?;
        let shared = Arc::new(Shared {
            base,
            credentials: self.credentials.clone(),
            http,
            timeout: self.timeout,
            max_response_bytes: self.max_response_bytes,
        });
        let tools =
            read.tools.into_iter().filter(|tool| self.offers(tool)).map(|tool| tool_def(&shared, tool)).collect();
        Ok((tools, read.notes))
    }

    /// Adds the tools to `builder`, logging what was left out or renamed.
    pub fn register(&self, builder: ServerBuilder) -> Result<ServerBuilder, OpenApiError> {
        let (tools, notes) = self.tools()?;
        for note in notes {
            tracing::warn!("OpenAPI: {note}");
        }
        Ok(builder.tools(tools))
    }
}

/// What every tool of one document shares.
#[derive(Debug)]
struct Shared {
    base: BaseUrl,
    credentials: Vec<Credential>,
    http: Http,
    timeout: Duration,
    max_response_bytes: usize,
}

/// `operation` as a tool whose call is the operation's request.
fn tool_def(shared: &Arc<Shared>, operation: OperationTool) -> ToolDef {
    // An answer is checked against the schema it is documented with: a client that reads
    // `structuredContent` checks it too, and would fail on an answer that does not match.
    let output = operation.output_schema.as_ref().and_then(|schema| {
        let validator = wharf_schema::Validator::options().build_owned(Value::Object(schema.clone()));
        match validator {
            Ok(validator) => Some((schema.clone(), validator)),
            Err(err) => {
                tracing::warn!(tool = %operation.name, %err, "OpenAPI: an answer's schema is left out");
                None
            }
        }
    });
    let (output_schema, validator) = output.map_or((None, None), |(schema, validator)| (Some(schema), Some(validator)));
    let called = Arc::new(Called { operation, validator });
    let (for_call, shared) = (called.clone(), shared.clone());
    let mut tool = ToolDef::new(called.operation.name.clone(), move |Args(arguments): Args<JsonObject>| {
        let (called, shared) = (for_call.clone(), shared.clone());
        async move { call(&shared, &called, &arguments).await }
    })
    .input_schema(called.operation.input_schema.clone())
    .annotations(called.operation.annotations.clone());
    if let Some(description) = &called.operation.description {
        tool = tool.description(description.clone());
    }
    if let Some(schema) = output_schema {
        tool = tool.output_schema(schema);
    }
    tool
}

/// An operation as its tool calls it.
#[derive(Debug)]
struct Called {
    operation: OperationTool,
    /// What checks a successful answer, when the operation documents its JSON.
    validator: Option<wharf_schema::Validator>,
}

async fn call(shared: &Shared, called: &Called, arguments: &JsonObject) -> Result<CallToolResult, RpcError> {
    let operation = &called.operation;
    let prepared =
        prepare(operation, &shared.base, arguments, &shared.credentials).map_err(RpcError::invalid_params)?;
    tracing::debug!(method = %prepared.method, path = %prepared.path, "OpenAPI call");
    let answer = match shared.http.send(&prepared, shared.timeout, shared.max_response_bytes).await {
        Ok(answer) => answer,
        Err(why) => return Ok(CallToolResult::error(format!("{} {}: {why}", prepared.method, prepared.path))),
    };
    let result = tool_result(&prepared.method, &prepared.path, &prepared.url, answer);
    if result.is_error != Some(true)
        && let Some(validator) = &called.validator
    {
        let problem = match &result.structured_content {
            Some(structured) => validator.validate(structured).err().map(|err| err.to_string()),
            None => Some("it is not a JSON object".to_owned()),
        };
        if let Some(problem) = problem {
            return Ok(CallToolResult::error(format!(
                "{} {} answered what its document does not say it answers ({problem})",
                prepared.method, prepared.path
            )));
        }
    }
    Ok(result)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn with_schemes() -> OpenApi {
        OpenApi::from_value(json!({"openapi": "3.0.3", "paths": {}, "components": {"securitySchemes": {
            "key": {"type": "apiKey", "in": "query", "name": "api_key"},
            "session": {"type": "apiKey", "in": "cookie", "name": "sid"},
            "token": {"type": "http", "scheme": "Bearer"},
            "login": {"type": "http", "scheme": "basic"},
            "oauth": {"type": "oauth2", "flows": {}},
            "tls": {"type": "mutualTLS"}
        }}}))
    }

    #[test]
    fn a_security_scheme_says_where_its_credential_goes() {
        let openapi = with_schemes()
            .scheme_credential("key", "k".into())
            .and_then(|o| o.scheme_credential("session", "s".into()))
            .and_then(|o| o.scheme_credential("token", "t".into()))
            .and_then(|o| o.scheme_credential("login", "ada:pw".into()))
            .and_then(|o| o.scheme_credential("oauth", "o".into()))
            .unwrap();
        assert_eq!(
            openapi.credentials,
            [
                Credential::Query { name: "api_key".into(), value: "k".into() },
                Credential::Cookie { name: "sid".into(), value: "s".into() },
                Credential::Bearer("t".into()),
                Credential::Basic { user: "ada".into(), password: "pw".into() },
                Credential::Bearer("o".into()),
            ]
        );
        for (scheme, value, why) in [
            ("nope", "x", "no security scheme `nope`"),
            ("login", "no-colon", "user:password"),
            ("tls", "x", "mutualTLS"),
            ("token", "a\nb", "control character"),
        ] {
            let err = with_schemes().scheme_credential(scheme, value.into()).unwrap_err();
            assert_eq!(err.kind(), OpenApiErrorKind::Credential);
            assert!(err.to_string().contains(why), "{err}");
        }
    }

    #[test]
    fn operations_are_offered_by_tag_id_path_method_and_deprecation() {
        let document = json!({"openapi": "3.1.0", "paths": {
            "/pets": {"get": {"operationId": "listPets", "tags": ["pets"]}, "post": {"operationId": "addPet", "tags": ["pets", "write"]}},
            "/pets/{id}": {"delete": {"operationId": "deletePet", "tags": ["pets", "write"], "deprecated": true}},
            "/admin/users": {"get": {"operationId": "listUsers", "tags": ["admin"]}}
        }});
        let offered = |openapi: OpenApi| -> Vec<String> {
            let (tools, _) = openapi.base_url("http://127.0.0.1:9").unwrap().tools().unwrap();
            tools.iter().map(|tool| tool.name().to_owned()).collect()
        };
        let all = || OpenApi::from_value(document.clone());
        // In the order of the paths, sorted, and of the methods within each.
        assert_eq!(offered(all()), ["listUsers", "listPets", "addPet"]);
        assert_eq!(offered(all().include_deprecated(true)), ["listUsers", "listPets", "addPet", "deletePet"]);
        assert_eq!(offered(all().include_tags(["pets"]).exclude_tags(["write"])), ["listPets"]);
        assert_eq!(offered(all().exclude_paths(["/admin/*"])), ["listPets", "addPet"]);
        assert_eq!(offered(all().include_paths(["/pets*"]).methods(["get"])), ["listPets"]);
        assert_eq!(
            offered(all().include_operations(["addPet", "listUsers"]).exclude_operations(["listUsers"])),
            ["addPet"]
        );
    }

    #[test]
    fn tools_need_a_base_url_and_https_needs_tls() {
        let err = with_schemes().tools().unwrap_err();
        assert!(err.to_string().contains("no base URL"), "{err}");
        let servers = OpenApi::from_value(json!({"openapi": "3.1.0", "paths": {},
            "servers": [{"url": "/v{major}", "variables": {"major": {"default": "2"}}}]}));
        let chosen = servers.server(0, Some("http://127.0.0.1:8000/openapi.json")).unwrap();
        assert_eq!(chosen.base_url.as_ref().unwrap().to_string(), "http://127.0.0.1:8000/v2");
        if !cfg!(feature = "tls") {
            let https = with_schemes().base_url("https://api.example").unwrap().tools().unwrap_err();
            assert!(https.to_string().contains("`tls` feature"), "{https}");
        }
    }
}
