//! One request as middleware sees it: [`McpRequest`] and what it is about, its [`Subject`].

use std::sync::Arc;
use std::time::Duration;

use wharf_protocol::{ClientRequest, CompletionReference, Era, ProtocolVersion, RequestId};

use crate::cancel::Cancellation;
use crate::delivery::Delivery;
use crate::extensions::Extensions;
use crate::principal::Principal;
use crate::session::{Session, Transport};

/// What a request is about, for the methods that name one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Subject<'a> {
    /// `tools/call`: the tool's name.
    Tool(&'a str),
    /// `prompts/get`, or a completion of a prompt's argument: the prompt's name.
    Prompt(&'a str),
    /// `resources/read`, `resources/subscribe` and `resources/unsubscribe`, or a completion of a
    /// template's variable: the URI (or URI template).
    Resource(&'a str),
}

impl<'a> Subject<'a> {
    /// The name or URI.
    pub fn as_str(&self) -> &'a str {
        match self {
            Subject::Tool(name) | Subject::Prompt(name) | Subject::Resource(name) => name,
        }
    }
}

/// One request on its way through the layers: everything a layer may look at or change. It
/// refers to the request where dispatch keeps it, so passing it on copies little.
pub struct McpRequest<'a> {
    /// Always `Some` while an `McpRequest` exists: only [`McpRequest::into_parts`] empties it.
    slot: &'a mut Option<RequestParts>,
}

/// What dispatch knows of a `tools/call`'s tool when the request enters the layers.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct ToolFacts {
    /// The server has the tool (it may still be removed before the call runs).
    pub(crate) known: bool,
    /// The call may become a task.
    pub(crate) may_become_task: bool,
}

/// A request as dispatch keeps it while it passes through the layers.
pub(crate) struct RequestParts {
    pub(crate) id: RequestId,
    pub(crate) request: ClientRequest,
    pub(crate) session: Arc<Session>,
    pub(crate) delivery: Delivery,
    pub(crate) task_after: Option<Duration>,
    tool: ToolFacts,
    /// A layer had the params to change: the tool dispatch looked up may not be the one called.
    pub(crate) params_changed: bool,
    /// The request names a prompt the server has (`prompts/get`, or a completion of its
    /// argument).
    pub(crate) known_prompt: bool,
}

impl RequestParts {
    pub(crate) fn new(
        id: RequestId,
        request: ClientRequest,
        session: Arc<Session>,
        delivery: Delivery,
        tool: ToolFacts,
    ) -> RequestParts {
        RequestParts {
            id,
            request,
            session,
            delivery,
            task_after: None,
            tool,
            params_changed: false,
            known_prompt: false,
        }
    }
}

impl<'a> McpRequest<'a> {
    pub(crate) fn new(slot: &'a mut Option<RequestParts>) -> McpRequest<'a> {
        McpRequest { slot }
    }

    /// The request, for the server to serve.
    pub(crate) fn into_parts(self) -> Option<RequestParts> {
        self.slot.take()
    }

    fn parts(&self) -> &RequestParts {
        self.slot.as_ref().expect("a request's parts stay until it is served")
    }

    fn parts_mut(&mut self) -> &mut RequestParts {
        self.slot.as_mut().expect("a request's parts stay until it is served")
    }

    /// The JSON-RPC id.
    pub fn id(&self) -> &RequestId {
        &self.parts().id
    }

    /// The method, such as `tools/call`.
    pub fn method(&self) -> &'static str {
        self.parts().request.method()
    }

    /// The decoded params, by method.
    pub fn params(&self) -> &ClientRequest {
        &self.parts().request
    }

    /// The params, to change before passing the request on. What a layer changes is checked
    /// as the client's own params are (a tool's arguments still meet its schema), except for
    /// what was checked before the layers ran: the HTTP `Mcp-Param-*` headers against the
    /// client's params, and [`McpRequest::may_become_task`] and
    /// [`McpRequest::is_known_tool`], which describe the tool the client named.
    pub fn params_mut(&mut self) -> &mut ClientRequest {
        let parts = self.parts_mut();
        parts.params_changed = true;
        &mut parts.request
    }

    /// The tool, prompt or resource the request is about.
    pub fn subject(&self) -> Option<Subject<'_>> {
        match &self.parts().request {
            ClientRequest::CallTool(params) => Some(Subject::Tool(&params.name)),
            ClientRequest::GetPrompt(params) => Some(Subject::Prompt(&params.name)),
            ClientRequest::ReadResource(params) => Some(Subject::Resource(&params.uri)),
            ClientRequest::Subscribe(params) | ClientRequest::Unsubscribe(params) => {
                Some(Subject::Resource(&params.uri))
            }
            ClientRequest::Complete(params) => match &params.reference {
                CompletionReference::Prompt { name, .. } => Some(Subject::Prompt(name)),
                CompletionReference::ResourceTemplate { uri } => Some(Subject::Resource(uri)),
            },
            _ => None,
        }
    }

    /// The tool a `tools/call` calls.
    pub fn tool_name(&self) -> Option<&str> {
        match &self.parts().request {
            ClientRequest::CallTool(params) => Some(&params.name),
            _ => None,
        }
    }

    /// The arguments of a `tools/call`, as the client wrote them (JSON text; `{}` when the
    /// call has none). Not yet checked against the tool's schema.
    pub fn tool_arguments(&self) -> Option<&str> {
        match &self.parts().request {
            ClientRequest::CallTool(params) => {
                Some(params.arguments.as_ref().map_or("{}", |arguments| arguments.as_str()))
            }
            _ => None,
        }
    }

    /// The request's era: a 2026-07-28 stateless request, or a request of a 2025 session.
    pub fn era(&self) -> Era {
        self.parts().request.era()
    }

    /// The protocol revision: the one a stateless request names in `_meta`, or the one its
    /// session negotiated. `None` before `initialize` and for a revision Wharf does not serve
    /// (the request is then refused).
    pub fn protocol_version(&self) -> Option<ProtocolVersion> {
        if self.era() == Era::Stateless {
            let named = self.parts().request.meta()?.protocol_version.as_deref()?;
            return ProtocolVersion::parse(named).filter(|version| version.era() == Era::Stateless);
        }
        if let ClientRequest::Initialize(params) = &self.parts().request {
            return ProtocolVersion::parse(&params.protocol_version)
                .filter(|version| version.era() == Era::Session)
                .or(Some(ProtocolVersion::LATEST_SESSION));
        }
        self.parts().session.negotiated().map(|negotiated| negotiated.version)
    }

    /// Who the request acts for, as the authentication in front of the server established it.
    pub fn principal(&self) -> Option<&Principal> {
        self.parts().delivery.principal.as_ref()
    }

    /// Sets who the request acts for: a layer that authenticates requests itself. Handlers
    /// and the rest of the chain see it.
    pub fn set_principal(&mut self, principal: Principal) {
        self.parts_mut().delivery.principal = Some(principal);
    }

    /// The 2025 session the request belongs to: over HTTP its `Mcp-Session-Id`, over stdio and
    /// other streams the connection's id. `None` for a stateless request.
    pub fn session_id(&self) -> Option<&str> {
        if self.era() == Era::Stateless || self.parts().session.id().is_empty() {
            return None;
        }
        Some(self.parts().session.id())
    }

    /// The per-session values handlers keep (see
    /// [`RequestContext::extensions`](crate::RequestContext::extensions)); `None` for a
    /// stateless request, which has no session.
    pub fn session_extensions(&self) -> Option<&Extensions> {
        (self.era() == Era::Session).then(|| self.parts().session.extensions())
    }

    /// What carried the request.
    pub fn transport(&self) -> Transport {
        self.parts().session.transport()
    }

    /// The request's cancellation, which the handler sees ([`Cancellation::is_cancelled`]).
    /// Cancelling it only raises the flag: a layer that gives up on a request also drops the
    /// future `next.run` gave it, which stops the handler (as [`Timeout`](crate::middleware::Timeout)
    /// does).
    pub fn cancellation(&self) -> &Cancellation {
        &self.parts().delivery.cancel
    }

    /// What the transport that carried this request knows of it beyond the message, if it is
    /// of type `T`: the Streamable HTTP transport hands over the HTTP request's headers and
    /// extensions (`wharf_http::HttpParts`, also read with `wharf_http::HttpRequest`).
    pub fn transport_data<T: std::any::Any>(&self) -> Option<&T> {
        self.parts().delivery.transport_data.as_deref()?.downcast_ref::<T>()
    }

    /// True when this `tools/call` may become a task: a stateless call of a registered tool
    /// that runs as a task, from a client that declared the tasks extension on it.
    pub fn may_become_task(&self) -> bool {
        self.parts().tool.may_become_task
    }

    /// True for a `tools/call` of a tool the server has. Calls of unknown tools are answered
    /// with an error; middleware that keeps something per tool name should not keep it for
    /// names a client made up.
    pub fn is_known_tool(&self) -> bool {
        self.parts().tool.known
    }

    /// True for a `prompts/get`, or a completion of a prompt's argument, that names a prompt
    /// the server has. Like [`McpRequest::is_known_tool`], for middleware that keeps something
    /// per prompt name (a metric label, say) and should not keep it for names a client made up.
    pub fn is_known_prompt(&self) -> bool {
        self.parts().known_prompt
    }

    /// For a call that [may become a task](McpRequest::may_become_task): it stays a plain call
    /// for `wait`, and only if its handler is still running then does it go on as a task.
    /// Without this, such a call becomes a task as soon as its handler waits for anything.
    pub fn become_task_after(&mut self, wait: Duration) {
        self.parts_mut().task_after = Some(wait);
    }
}

impl std::fmt::Debug for McpRequest<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpRequest")
            .field("id", &self.parts().id)
            .field("method", &self.method())
            .field("target", &self.subject())
            .finish_non_exhaustive()
    }
}
