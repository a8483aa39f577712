//! Request dispatch for both protocol eras: classifies each request as a 2025 session request
//! or a 2026-07-28 stateless request, checks what that era requires, runs the method, and
//! encodes the result the way the request's revision expects.
//!
//! - this file: eras, `_meta` checks, `initialize`, capability gating, the method table;
//! - [`methods`]: the methods both eras share;
//! - [`tasks`]: `tools/call` as a task, and the `tasks/*` methods;
//! - [`idempotent`]: `tools/call` of a tool whose calls take effect once, and [`settle`] the
//!   key such a call holds, on every route;
//! - [`finish`]: encoding results per revision;
//! - [`outcome`]: the one response every request gets, a panic's included;
//! - [`batch`]: JSON-RPC batches (2025-03-26);
//! - [`client_messages`]: notifications, and answers to the server's requests;
//! - [`mirrored`]: the `Mcp-Param-*` check, for transports with headers;
//! - `skills`: the Skills extension's methods (the `skills` feature).

pub(crate) mod batch;
pub(crate) mod client_messages;
mod finish;
mod idempotent;
mod methods;
pub(crate) mod mirrored;
pub(crate) mod outcome;
mod settle;
#[cfg(feature = "skills")]
mod skills;
mod tasks;

use std::sync::Arc;
use std::time::Duration;

use wharf_protocol::{
    ClientRequest, DiscoverResult, EmptyResult, Era, ErrorCode, InitializeParams, InitializeResult, ProtocolVersion,
    RequestId, RequestMeta,
};

use crate::context::{Client, ContextParts, RequestContext};
use crate::delivery::Delivery;
use crate::error::RpcError;
use crate::input::InputRound;
use crate::layer::{McpRequest, McpResponse, RequestCell, RequestParts, run_chain};
use crate::listen::listen;
use crate::principal::Principal;
use crate::prompt::PromptDef;
use crate::registry::Registry;
use crate::resource::{ResourceDef, TemplateDef};
use crate::server::Server;
use crate::session::{Negotiated, Session};
use crate::tool::ToolDef;
use crate::wire::respond;
use finish::Finisher;
use methods::{check_scopes, complete, find_tool, get_prompt, list, read_resource, require, start_call};
use tasks::CallRoute;

/// Handles one request: the encoded response, or the error to answer with, so that a transport
/// can choose a status code from it.
///
/// This is the only async layer that owns the request: whatever can be answered without
/// waiting is answered by `prepare`, and only the method itself is awaited.
#[allow(
    clippy::manual_async_fn,
    reason = "as an `async fn` the future keeps its arguments apart from the locals they become, a copy per request"
)]
pub fn request_outcome(
    server: Server,
    session: Arc<Session>,
    id: RequestId,
    mut request: ClientRequest,
    delivery: Delivery,
) -> impl Future<Output = Result<Vec<u8>, RpcError>> + Send + 'static {
    // The request is held in the future, not boxed: the stdio read loop reuses the future's box
    // from one request to the next, so the future's size costs little there, while a box for
    // the request would cost an allocation and a free per request.
    async move {
        let method = request.method();
        if server.layers().is_empty() {
            let outcome = match prepare(&server, session, &id, &mut request, delivery, None, None) {
                Ok(Prepared::Answered(response)) => Ok(response),
                Ok(Prepared::Serve(context, tool)) => serve(&server, &context, &id, request, tool).await,
                Err(error) => Err(error),
            };
            log_outcome(&id, method, outcome.as_ref().err());
            return outcome;
        }
        let (facts, tool) = tasks::tool_facts(&server, &request);
        let known_prompt = prompt_named(&request).is_some_and(|name| server.registry().prompt(name).is_some());
        let mut parts = RequestParts::new(id.clone(), request, session, delivery, facts);
        parts.known_prompt = known_prompt;
        let mut slot = Some(parts);
        let wrapped = {
            // The server's work for layers that wrap what comes back, made before they run and
            // held here rather than boxed; it waits for the request the last layer passes on.
            // A chain that only passed the request on leaves it in `slot`, and it is served
            // below as a request without layers is (the same steps, kept apart from the branch
            // above so that servers without layers pay nothing for this one).
            let cell = RequestCell::default();
            let work = std::pin::pin!(Some(serve_layered(&server, &cell, &tool)));
            let chain = run_chain(server.layers(), McpRequest::new(&mut slot), &cell, work);
            match chain.passed_on() {
                Ok(()) => None,
                Err(chain) => Some(chain.await),
            }
        };
        if let Some(answer) = wrapped {
            log_outcome(&id, method, answer.error_object());
            return answer.into_outcome();
        }
        let Some(mut parts) = slot else {
            return Err(RpcError::internal("Internal error: the layers lost the request"));
        };
        let tool = still_called(&parts, tool);
        let outcome =
            match prepare(&server, parts.session, &id, &mut parts.request, parts.delivery, parts.task_after, tool) {
                Ok(Prepared::Answered(response)) => Ok(response),
                Ok(Prepared::Serve(context, tool)) => serve(&server, &context, &id, parts.request, tool).await,
                Err(error) => Err(error),
            };
        log_outcome(&id, method, outcome.as_ref().err());
        outcome
    }
}

/// The prompt a `prompts/get` or a completion of a prompt's argument names.
fn prompt_named(request: &ClientRequest) -> Option<&str> {
    match request {
        ClientRequest::GetPrompt(params) => Some(&params.name),
        ClientRequest::Complete(params) => match &params.reference {
            wharf_protocol::CompletionReference::Prompt { name, .. } => Some(name),
            wharf_protocol::CompletionReference::ResourceTemplate { .. } => None,
        },
        _ => None,
    }
}

/// Logs a request's outcome at debug. No clock is read: a start time held in every request's
/// future cost more than the log is worth when it is off (the HTTP transport logs durations).
#[inline(always)]
fn log_outcome(id: &RequestId, method: &str, error: Option<&RpcError>) {
    match error {
        None => tracing::debug!(%id, method, "request answered"),
        Some(error) => tracing::debug!(%id, method, code = error.code(), message = error.message(), "request failed"),
    }
}

/// The end of a chain of layers that wraps what comes back: the server's own dispatch of the
/// request the last layer passes on.
async fn serve_layered(server: &Server, cell: &RequestCell, tool: &Option<Arc<ToolDef>>) -> McpResponse {
    // Only `Next::run` makes what polls this, and it fills the cell first.
    let Some(mut parts) = cell.take() else {
        return McpResponse::error(RpcError::internal("Internal error: no request reached the server"));
    };
    let tool = still_called(&parts, tool.clone());
    let id = parts.id;
    match prepare(server, parts.session, &id, &mut parts.request, parts.delivery, parts.task_after, tool) {
        Ok(Prepared::Answered(response)) => McpResponse::from_outcome(Ok(response), false),
        Ok(Prepared::Serve(context, tool)) => {
            let outcome = serve(server, &context, &id, parts.request, tool).await;
            McpResponse::from_outcome(outcome, context.is_tool_error())
        }
        Err(error) => McpResponse::error(error),
    }
}

/// The tool a `tools/call` named when it entered the layers, unless a layer renamed it.
fn still_called(parts: &RequestParts, tool: Option<Arc<ToolDef>>) -> Option<Arc<ToolDef>> {
    let tool = tool?;
    if !parts.params_changed {
        return Some(tool);
    }
    match &parts.request {
        ClientRequest::CallTool(params) if tool.name() == params.name => Some(tool),
        _ => None,
    }
}

/// What [`prepare`] made of a request.
enum Prepared {
    /// Answered already: the session methods of 2025.
    Answered(Vec<u8>),
    /// To be served by [`serve`] in this context, with the tool a `tools/call` names when
    /// it was already looked up.
    Serve(RequestContext, Option<Arc<ToolDef>>),
}

/// Classifies a request by era, checks what the era requires, and answers what needs no
/// waiting; everything else gets its context, which takes over `session`.
fn prepare(
    server: &Server,
    session: Arc<Session>,
    id: &RequestId,
    request: &mut ClientRequest,
    delivery: Delivery,
    task_after: Option<Duration>,
    tool: Option<Arc<ToolDef>>,
) -> Result<Prepared, RpcError> {
    if request.era() == Era::Stateless {
        // The request's `_meta` moves into the context; nothing reads it from the params later.
        let meta = std::mem::take(request.meta_mut());
        let version = check_stateless_meta(&meta)?;
        // Whether the tool can ask for input decides whether the call needs an input round.
        let tool = match &*request {
            ClientRequest::CallTool(params) => tool.or_else(|| server.registry().tool(&params.name).cloned()),
            _ => None,
        };
        let tool_may_ask = tool.as_ref().is_none_or(|tool| tool.reaches_context);
        let input =
            InputRound::for_request(server.sealer(), delivery.principal.as_ref(), request, tool_may_ask)?.map(Box::new);
        // Checked above: the capabilities are there, and move out of the request.
        let capabilities = meta.client_capabilities.unwrap_or_default();
        if removed_in_stateless(request.method()) {
            return Err(removed_method(request.method(), version));
        }
        let context = RequestContext::new(ContextParts {
            id: id.clone(),
            server: server.core(),
            session,
            version,
            client: Client::Stated { capabilities, info: meta.client_info },
            progress_token: meta.progress_token,
            meta: (!meta.other.is_empty()).then(|| Box::new(meta.other)),
            log_level: meta.log_level,
            delivery,
            input,
            task_after,
        });
        return Ok(Prepared::Serve(context, tool));
    }

    match request {
        ClientRequest::Initialize(params) => {
            let principal = delivery.principal.as_ref();
            initialize(server, &session, id, std::mem::take(&mut **params), principal).map(Prepared::Answered)
        }
        ClientRequest::Ping(_) => Ok(Prepared::Answered(respond(id, &EmptyResult::default()))),
        request => {
            let version = session.negotiated().map(|negotiated| negotiated.version).ok_or_else(|| {
                RpcError::invalid_request(
                    "Server not initialized: send `initialize` first, or send a stateless request that names \
                     `io.modelcontextprotocol/protocolVersion` in `_meta`",
                )
            })?;
            match &*request {
                ClientRequest::SetLevel(params) => {
                    session.set_log_level(params.level);
                    return Ok(Prepared::Answered(respond(id, &EmptyResult::default())));
                }
                ClientRequest::Subscribe(params) | ClientRequest::Unsubscribe(params) => {
                    require(server.registry().has_resources(), "resources", request.method())?;
                    if matches!(request, ClientRequest::Subscribe(_)) {
                        check_subscription(server, &params.uri, delivery.principal.as_ref())?;
                        session.subscribe(&params.uri);
                    } else {
                        session.unsubscribe(&params.uri);
                    }
                    return Ok(Prepared::Answered(respond(id, &EmptyResult::default())));
                }
                _ => {}
            }
            let (progress_token, meta) = match request.meta() {
                Some(meta) => {
                    (meta.progress_token.clone(), (!meta.other.is_empty()).then(|| Box::new(meta.other.clone())))
                }
                None => (None, None),
            };
            let context = RequestContext::new(ContextParts {
                id: id.clone(),
                server: server.core(),
                session,
                version,
                client: Client::Session,
                progress_token,
                meta,
                log_level: None,
                delivery,
                input: None,
                task_after: None,
            });
            Ok(Prepared::Serve(context, tool))
        }
    }
}

/// Refuses a subscription to a resource (or a URI of a template) whose scopes the principal
/// lacks: its updates are for those who may read it.
fn check_subscription(server: &Server, uri: &str, principal: Option<&Principal>) -> Result<(), RpcError> {
    let registry = server.registry();
    if let Some(resource) = registry.resource(uri) {
        return check_scopes(&*resource, principal);
    }
    match registry.match_template(uri) {
        Some((template, _)) => check_scopes(&*template, principal),
        None => Ok(()),
    }
}

/// True for the session methods that 2026-07-28 removed: a stateless request for one of them
/// is answered -32601 before its params are even read.
pub fn removed_in_stateless(method: &str) -> bool {
    matches!(method, "initialize" | "ping" | "logging/setLevel" | "resources/subscribe" | "resources/unsubscribe")
}

/// The error for `method`, which protocol revision `version` does not have.
pub fn removed_method(method: &str, version: ProtocolVersion) -> RpcError {
    RpcError::method_not_found(format!("Method not found: `{method}` does not exist in protocol revision {version}"))
}

/// Checks the `_meta` every 2026-07-28 request must carry; the revision it names.
pub fn check_stateless_meta(meta: &RequestMeta) -> Result<ProtocolVersion, RpcError> {
    let requested = match (&meta.protocol_version, &meta.client_capabilities) {
        (Some(requested), _) => requested.as_str(),
        // Both missing are named at once, so that a first request needs one correction.
        (None, None) => {
            return Err(RpcError::invalid_params(
                "Invalid params: `_meta` must carry `io.modelcontextprotocol/protocolVersion` (\"2026-07-28\") and \
                 `io.modelcontextprotocol/clientCapabilities` (an object, `{}` for none)",
            ));
        }
        (None, Some(_)) => {
            return Err(RpcError::invalid_params(
                "Invalid params: `_meta` must carry `io.modelcontextprotocol/protocolVersion` (\"2026-07-28\")",
            ));
        }
    };
    let version =
        ProtocolVersion::parse(requested).filter(|version| version.era() == Era::Stateless).ok_or_else(|| {
            let supported: Vec<&str> = ProtocolVersion::ALL.iter().map(|version| version.as_str()).collect();
            RpcError::from(
                wharf_protocol::ErrorObject::new(
                    ErrorCode::UNSUPPORTED_PROTOCOL_VERSION,
                    "Unsupported protocol version",
                )
                .with_data(serde_json::json!({ "supported": supported, "requested": requested })),
            )
        })?;
    if meta.client_capabilities.is_none() {
        return Err(RpcError::invalid_params(
            "Invalid params: `_meta` must carry `io.modelcontextprotocol/clientCapabilities` (an object, `{}` for none)",
        ));
    }
    Ok(version)
}

fn initialize(
    server: &Server,
    session: &Arc<Session>,
    id: &RequestId,
    params: InitializeParams,
    principal: Option<&Principal>,
) -> Result<Vec<u8>, RpcError> {
    // Echo the client's revision when it is a session revision we serve; otherwise offer the
    // newest session revision and let the client decide.
    let version = ProtocolVersion::parse(&params.protocol_version)
        .filter(|version| version.era() == Era::Session)
        .unwrap_or(ProtocolVersion::LATEST_SESSION);
    let (client_capabilities, client_info) = server.recent_client().share(params.capabilities, params.client_info);
    let negotiated = Negotiated { version, at: std::time::Instant::now(), client_capabilities, client_info };
    if !session.negotiate(negotiated, principal) {
        return Err(RpcError::invalid_request("Invalid request: this session is already initialized"));
    }
    let mut capabilities = server.capabilities();
    // The 2026-07-28 tasks extension is negotiated per request, not in sessions; 2025-11-25
    // has experimental tasks of its own instead, and `tasks/list` lists only the tasks of the
    // asking session (or principal). Other extensions (skills) are declared in sessions too.
    let tasks_extension =
        capabilities.extensions.as_mut().and_then(|extensions| extensions.remove(wharf_protocol::TASKS_EXTENSION));
    if tasks_extension.is_some() && version == ProtocolVersion::V2025_11_25 {
        let tasks = serde_json::json!({"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}});
        capabilities.tasks = tasks.as_object().cloned();
    }
    capabilities.extensions = capabilities.extensions.filter(|extensions| !extensions.is_empty());
    let result = InitializeResult {
        protocol_version: version.as_str().to_owned(),
        capabilities,
        server_info: server.info_for(version),
        instructions: server.instructions().map(str::to_owned),
        meta: None,
    };
    Ok(respond(id, &result))
}

/// Serves the methods both eras share.
async fn serve(
    server: &Server,
    context: &RequestContext,
    id: &RequestId,
    request: ClientRequest,
    found_tool: Option<Arc<ToolDef>>,
) -> Result<Vec<u8>, RpcError> {
    let version = context.protocol_version();
    // Each method checks only the capability it needs, under its own look at the registry:
    // working out all four on every request would walk every prompt and template for
    // completions.
    let request_method = request.method();
    let offers = |kind: fn(&Registry) -> bool, capability: &str| {
        let present = kind(&server.registry());
        require(present, capability, request_method)
    };
    let out = Finisher { server, id, version };
    match request {
        ClientRequest::Discover(_) => {
            let capabilities = server.registry().capabilities();
            let supported = ProtocolVersion::ALL.iter().map(|version| version.as_str().to_owned()).collect();
            Ok(out.cacheable(DiscoverResult {
                supported_versions: supported,
                capabilities,
                instructions: server.instructions().map(str::to_owned),
                ..DiscoverResult::default()
            }))
        }
        ClientRequest::ListTools(params) => {
            offers(Registry::has_tools, "tools")?;
            Ok(out.cacheable(list::<ToolDef>(server, version, &params, context.principal())?))
        }
        ClientRequest::CallTool(params) => {
            // The tool was found already for stateless calls and calls that passed layers;
            // otherwise `find_tool` checks the capability in the same look-up that finds it. A
            // direct call's arguments are read and its handler's future made before anything is
            // awaited; the future holds neither the tool nor the registry.
            let call = {
                let tool = match found_tool {
                    Some(tool) => tool,
                    None => find_tool(&server.registry(), &params.name)?.clone(),
                };
                check_scopes(&*tool, context.principal())?;
                match tasks::call_route(context, &tool, &params)? {
                    CallRoute::Direct if tool.idempotency.is_none() => Ok(start_call(context, &tool, params)?),
                    route => Err((route, tool, params)),
                }
            };
            match call {
                // Awaited right here rather than through a helper, so that the common case
                // adds no layer to the request's future.
                Ok(started) => {
                    let outcome = started.finish(context).await;
                    out.complete_or_input(context, outcome)
                }
                Err((route, tool, params)) if tool.idempotency.is_some() => {
                    Box::pin(idempotent::call(server, context, tool, params, route, &out)).await
                }
                Err((CallRoute::StatelessTask, tool, params)) => {
                    Box::pin(tasks::call_tool_or_task(server, context, tool, params, &out, None)).await
                }
                Err((_, tool, params)) => {
                    Box::pin(tasks::session_task(server, context, tool, params, &out, None)).await
                }
            }
        }
        // The task methods and listen streams are boxed: their futures are large and rare, and
        // would otherwise make every request's future as large as theirs.
        request if tasks::is_task_method(&request) => {
            Box::pin(tasks::serve_task_method(server, context, request, &out)).await
        }
        ClientRequest::ListPrompts(params) => {
            offers(Registry::has_prompts, "prompts")?;
            Ok(out.cacheable(list::<PromptDef>(server, version, &params, context.principal())?))
        }
        ClientRequest::GetPrompt(params) => {
            offers(Registry::has_prompts, "prompts")?;
            let outcome = get_prompt(server, context, *params).await;
            out.complete_or_input(context, outcome)
        }
        ClientRequest::ListResources(params) => {
            offers(Registry::has_resources, "resources")?;
            Ok(out.cacheable(list::<ResourceDef>(server, version, &params, context.principal())?))
        }
        ClientRequest::ListResourceTemplates(params) => {
            offers(Registry::has_resources, "resources")?;
            Ok(out.cacheable(list::<TemplateDef>(server, version, &params, context.principal())?))
        }
        ClientRequest::ReadResource(params) => {
            offers(Registry::has_resources, "resources")?;
            let outcome = read_resource(server, context, params).await;
            if let Some(required) = context.input_required()? {
                return Ok(out.input_required(&required));
            }
            Ok(out.cacheable(outcome?))
        }
        ClientRequest::Complete(params) => {
            offers(Registry::has_completions, "completions")?;
            Ok(out.complete(complete(server, context, *params).await?))
        }
        ClientRequest::Listen(params) => Ok(out.complete(Box::pin(listen(server, context, id, *params)).await)),
        #[cfg(feature = "skills")]
        ClientRequest::ListSkills(params) => Ok(out.cacheable(skills::list_skills(server, &params)?)),
        #[cfg(feature = "skills")]
        ClientRequest::GetSkill(params) => Ok(out.cacheable(skills::get_skill(server, &params)?)),
        #[cfg(feature = "skills")]
        ClientRequest::ReadDirectory(params) => Ok(out.complete(skills::read_directory(server, &params)?)),
        other => Err(RpcError::method_not_found(format!("Method not found: {}", other.method()))),
    }
}
