//! `wharf serve --openapi SPEC` (and a gateway's `openapi` mount): an HTTP API's operations as
//! the tools served, its document read from a file or fetched once, its calls sent where
//! `--base-url` says, with credentials read from the environment by name (never from the
//! command line, which other users of the machine can read, and never printed).

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use clap::Args;
use wharf::openapi::{Credential, OpenApi};
use wharf::{Server, ServerBuilder};

/// The options of `wharf serve` for an API.
#[derive(Debug, Args)]
pub(crate) struct OpenApiArgs {
    /// Serve an HTTP API instead of the demo: each operation of its OpenAPI 3.0 or 3.1 document
    /// (a file, or an http(s) URL read once; JSON or YAML) becomes a tool.
    #[arg(long = "openapi", value_name = "SPEC", conflicts_with = "folder")]
    pub(crate) spec: Option<String>,
    /// Where the API's calls go: http(s)://HOST[:PORT][/PREFIX]. Never taken from a tool's
    /// arguments; required with --openapi unless --openapi-server chooses one of the document's.
    #[arg(long, value_name = "URL", requires = "spec")]
    base_url: Option<String>,
    /// Send the calls to the document's `servers` entry N (0 is the first).
    #[arg(long, value_name = "N", requires = "spec", conflicts_with = "base_url")]
    openapi_server: Option<usize>,
    /// Offer only operations with this tag (repeatable).
    #[arg(long = "include-tag", value_name = "TAG", requires = "spec")]
    include_tags: Vec<String>,
    /// Leave out operations with this tag (repeatable).
    #[arg(long = "exclude-tag", value_name = "TAG", requires = "spec")]
    exclude_tags: Vec<String>,
    /// Offer only this operation, by operationId or tool name (repeatable).
    #[arg(long = "include-operation", value_name = "ID", requires = "spec")]
    include_operations: Vec<String>,
    /// Leave out this operation, by operationId or tool name (repeatable).
    #[arg(long = "exclude-operation", value_name = "ID", requires = "spec")]
    exclude_operations: Vec<String>,
    /// Offer only operations whose path matches this pattern (`/pets/*`; repeatable).
    #[arg(long = "include-path", value_name = "GLOB", requires = "spec")]
    include_paths: Vec<String>,
    /// Leave out operations whose path matches this pattern (repeatable).
    #[arg(long = "exclude-path", value_name = "GLOB", requires = "spec")]
    exclude_paths: Vec<String>,
    /// Offer only operations of this method (GET, POST, ...; repeatable).
    #[arg(long = "method", value_name = "METHOD", requires = "spec")]
    methods: Vec<String>,
    /// Follow the document's references to other documents (files beside it, or URLs), which
    /// are refused otherwise.
    #[arg(long, requires = "spec")]
    allow_external_refs: bool,
    /// Offer the operations the document marks deprecated too.
    #[arg(long, requires = "spec")]
    include_deprecated: bool,
    /// A header sent with every call (an API key, say), its value read from the environment
    /// variable ENVVAR: NAME=ENVVAR (repeatable).
    #[arg(long = "header", value_name = "NAME=ENVVAR", requires = "spec")]
    headers: Vec<String>,
    /// Send what the document's security scheme SCHEME says (an API key in its header, query or
    /// cookie; a bearer token; `user:password` for basic), its value read from the environment
    /// variable ENVVAR: SCHEME=ENVVAR (repeatable).
    #[arg(long = "credential", value_name = "SCHEME=ENVVAR", requires = "spec")]
    credentials: Vec<String>,
    /// Send `Authorization: Bearer` with the token in the environment variable ENVVAR.
    #[arg(long, value_name = "ENVVAR", requires = "spec")]
    bearer_env: Option<String>,
    /// Seconds each call of the API may take.
    #[arg(long, value_name = "SECONDS", default_value_t = DEFAULT_API_TIMEOUT_SECONDS, requires = "spec")]
    api_timeout: u64,
}

/// How long a call to the API may take, unless `--api-timeout` says.
const DEFAULT_API_TIMEOUT_SECONDS: u64 = 30;

impl OpenApiArgs {
    /// The options as clap makes them when none is given: no API served.
    pub(crate) fn unset() -> OpenApiArgs {
        OpenApiArgs {
            spec: None,
            base_url: None,
            openapi_server: None,
            include_tags: Vec::new(),
            exclude_tags: Vec::new(),
            include_operations: Vec::new(),
            exclude_operations: Vec::new(),
            include_paths: Vec::new(),
            exclude_paths: Vec::new(),
            methods: Vec::new(),
            allow_external_refs: false,
            include_deprecated: false,
            headers: Vec::new(),
            credentials: Vec::new(),
            bearer_env: None,
            api_timeout: DEFAULT_API_TIMEOUT_SECONDS,
        }
    }
}

/// The value of the environment variable `name`, or an error naming it (not a value).
fn from_environment(name: &str, what: &str) -> Result<String, String> {
    std::env::var(name).map_err(|_| format!("{what} is read from the environment variable {name}, which is not set"))
}

/// True when `spec` names a document by URL rather than a file.
fn is_url(spec: &str) -> bool {
    spec.starts_with("http://") || spec.starts_with("https://")
}

/// The document `spec` names: a file (relative to `directory`), or a URL fetched once; the
/// documents its references name too when `follow` says (read on a thread of its own, so that
/// a caller on a runtime can wait for it too).
fn open(spec: &str, directory: &Path, follow: bool) -> Result<OpenApi, String> {
    let (spec_owned, path) = (spec.to_owned(), directory.join(spec));
    let opened = std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|err| format!("could not start the async runtime: {err}"))?;
        runtime.block_on(async {
            let openapi =
                if is_url(&spec_owned) { OpenApi::fetch(&spec_owned).await } else { OpenApi::from_file(&path) };
            match openapi {
                Ok(openapi) if follow => openapi.follow_external_refs().await.map_err(|err| err.to_string()),
                other => other.map_err(|err| err.to_string()),
            }
        })
    })
    .join()
    .map_err(|_| "reading the document failed".to_owned())?;
    opened.map_err(|err| format!("{spec}: {err}"))
}

/// `openapi` sending each of `credentials` (security scheme, environment variable) as its
/// scheme says.
fn with_credentials<'a>(
    mut openapi: OpenApi,
    credentials: impl IntoIterator<Item = (&'a str, &'a str)>,
) -> Result<OpenApi, String> {
    for (scheme, variable) in credentials {
        let value = from_environment(variable, &format!("the credential of the scheme {scheme}"))?;
        openapi = openapi.scheme_credential(scheme, value).map_err(|err| err.to_string())?;
    }
    Ok(openapi)
}

/// A gateway mount's server: the document `spec` (relative to the file's `directory`), its
/// calls to `base_url`, with `credentials` by security scheme.
pub(crate) fn server_for_mount(
    spec: &str,
    directory: &Path,
    base_url: &str,
    credentials: &BTreeMap<String, String>,
) -> Result<Server, String> {
    let openapi = open(spec, directory, false)?.base_url(base_url).map_err(|err| err.to_string())?;
    let pairs = credentials.iter().map(|(scheme, variable)| (scheme.as_str(), variable.as_str()));
    let openapi = with_credentials(openapi, pairs)?;
    let (name, version) = openapi.title_and_version();
    let builder = openapi.register(wharf::Server::builder(name, version)).map_err(|err| err.to_string())?;
    builder.build().map_err(|err| err.to_string())
}

/// A server builder whose tools are the API's operations.
pub(crate) fn builder(args: &OpenApiArgs) -> Result<ServerBuilder, String> {
    let Some(spec) = &args.spec else { return Err("no --openapi document".to_owned()) };
    let fetched = is_url(spec);
    let mut openapi = open(spec, Path::new("."), args.allow_external_refs)?;
    openapi = match (&args.base_url, args.openapi_server) {
        (Some(url), _) => openapi.base_url(url),
        (None, Some(index)) => openapi.server(index, fetched.then_some(spec.as_str())),
        (None, None) => {
            return Err("--openapi needs --base-url URL (or --openapi-server N): where the API's calls go".to_owned());
        }
    }
    .map_err(|err| err.to_string())?;
    for header in &args.headers {
        let (name, variable) =
            header.split_once('=').ok_or_else(|| format!("--header `{header}` is not NAME=ENVVAR"))?;
        let value = from_environment(variable, &format!("the header {name}"))?;
        openapi =
            openapi.credential(Credential::Header { name: name.to_owned(), value }).map_err(|err| err.to_string())?;
    }
    let mut credentials = Vec::new();
    for credential in &args.credentials {
        let pair =
            credential.split_once('=').ok_or_else(|| format!("--credential `{credential}` is not SCHEME=ENVVAR"))?;
        credentials.push(pair);
    }
    openapi = with_credentials(openapi, credentials)?;
    if let Some(variable) = &args.bearer_env {
        let token = from_environment(variable, "the bearer token")?;
        openapi = openapi.credential(Credential::Bearer(token)).map_err(|err| err.to_string())?;
    }
    let openapi = openapi
        .include_tags(args.include_tags.iter().cloned())
        .exclude_tags(args.exclude_tags.iter().cloned())
        .include_operations(args.include_operations.iter().cloned())
        .exclude_operations(args.exclude_operations.iter().cloned())
        .include_paths(args.include_paths.iter().cloned())
        .exclude_paths(args.exclude_paths.iter().cloned())
        .methods(args.methods.iter().cloned())
        .include_deprecated(args.include_deprecated)
        .timeout(Duration::from_secs(args.api_timeout));
    let (name, version) = openapi.title_and_version();
    let builder = wharf::Server::builder(name, version);
    openapi.register(builder).map_err(|err| err.to_string())
}
