//! The message unions of MCP, each decoded by its `method` string: what a client asks of a
//! server ([`ClientRequest`]), what it tells it ([`ClientNotification`]), and the server's
//! counterparts ([`ServerRequest`], [`ServerNotification`]).

use std::fmt;

use serde::de::DeserializeOwned;
use serde::{Serialize, Serializer};
use serde_json::value::RawValue;

use crate::error::{ErrorCode, ErrorObject};
use crate::types::client_features::ElicitationCompleteParams;
use crate::types::client_features::{CreateMessageParams, ElicitParams};
use crate::types::common::JsonObject;
use crate::types::completion::CompleteParams;
use crate::types::lifecycle::InitializeParams;
use crate::types::logging::{LoggingMessageParams, SetLevelParams};
use crate::types::notifications::{
    AcknowledgedParams, CancelledParams, ListenParams, NotificationMeta, ProgressParams,
};
use crate::types::params::{EmptyParams, PaginatedParams};
use crate::types::prompts::GetPromptParams;
use crate::types::request_meta::RequestMeta;
use crate::types::resources::{ReadResourceParams, ResourceUriParams, SubscribeParams};
use crate::types::skills::{GetSkillParams, ReadDirectoryParams};
use crate::types::tasks::{TaskIdParams, UpdateTaskParams};
use crate::types::tools::CallToolParams;
use crate::version::Era;

/// Why a request's params could not be decoded.
#[derive(Debug, Clone, PartialEq)]
pub enum ParamsError {
    /// No such method (`-32601`).
    UnknownMethod(String),
    /// The params do not match the method (`-32602`).
    Invalid(String),
}

impl ParamsError {
    /// The JSON-RPC error to answer with.
    pub fn to_error_object(&self) -> ErrorObject {
        match self {
            ParamsError::UnknownMethod(method) => {
                ErrorObject::new(ErrorCode::METHOD_NOT_FOUND, format!("Method not found: {method}"))
            }
            ParamsError::Invalid(message) => {
                ErrorObject::new(ErrorCode::INVALID_PARAMS, format!("Invalid params: {message}"))
            }
        }
    }
}

impl fmt::Display for ParamsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_error_object().message)
    }
}

fn required<T: DeserializeOwned>(params: Option<&RawValue>) -> Result<T, ParamsError> {
    let raw = params.ok_or_else(|| ParamsError::Invalid("this method needs params".to_owned()))?;
    serde_json::from_str(raw.get()).map_err(|err| ParamsError::Invalid(err.to_string()))
}

pub(crate) fn leading<T: DeserializeOwned>(text: &str) -> Option<(T, usize)> {
    let mut values = serde_json::Deserializer::from_str(text).into_iter::<T>();
    let value = values.next()?.ok()?;
    Some((value, values.byte_offset()))
}

fn optional<T: DeserializeOwned + Default>(params: Option<&RawValue>) -> Result<T, ParamsError> {
    match params {
        None => Ok(T::default()),
        Some(raw) => serde_json::from_str(raw.get()).map_err(|err| ParamsError::Invalid(err.to_string())),
    }
}

/// Generates a message union whose variants are chosen by method name, with a decoder that
/// matches on the method string and an encoder for the params.
macro_rules! method_union {
    (
        $(#[$doc:meta])*
        $name:ident {
            $( $(#[$vdoc:meta])* $method:literal => $variant:ident($params:ty, $how:ident), )*
        }
    ) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq)]
        #[non_exhaustive]
        #[allow(
            clippy::large_enum_variant,
            reason = "a message is decoded once and moved into its handler; boxing would cost an allocation per message"
        )]
        pub enum $name {
            $( $(#[$vdoc])* $variant($params), )*
        }

        impl $name {
            /// Decodes params for `method`, choosing the params type by the method string.
            pub fn decode(method: &str, params: Option<&RawValue>) -> Result<$name, ParamsError> {
                match method {
                    $( $method => $how(params).map($name::$variant), )*
                    other => Err(ParamsError::UnknownMethod(other.to_owned())),
                }
            }

            /// Decodes the params for `method` at the start of `text` (leading whitespace
            /// allowed), returning them with the number of bytes they took; `None` for a method
            /// this union does not have or params that do not decode. Params are read once,
            /// where they stand in a message, instead of being cut out first.
            pub fn decode_leading(method: &str, text: &str) -> Option<($name, usize)> {
                match method {
                    $( $method => leading::<$params>(text).map(|(params, used)| ($name::$variant(params), used)), )*
                    _ => None,
                }
            }

            /// The method name.
            pub fn method(&self) -> &'static str {
                match self {
                    $( $name::$variant(_) => $method, )*
                }
            }

            /// True if `method` names one of this union's messages.
            pub fn is_known_method(method: &str) -> bool {
                matches!(method, $( $method )|*)
            }
        }

        impl Serialize for $name {
            /// Serializes the params object only.
            fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                match self {
                    $( $name::$variant(params) => params.serialize(serializer), )*
                }
            }
        }
    };
}

method_union! {
    /// A request a client sends to a server, in any revision.
    ///
    /// Params larger than about a hundred bytes are boxed, so that the request stays small: it
    /// is moved from the decoder through the transport into the handler's future, and a
    /// pipelined `tools/call` paid more for a dozen copies of unboxed params than for one
    /// allocation.
    ClientRequest {
        /// Opens a 2025 session.
        "initialize" => Initialize(Box<InitializeParams>, required),
        /// Checks that the peer is alive (2025 revisions).
        "ping" => Ping(EmptyParams, optional),
        /// Describes the server (2026-07-28).
        "server/discover" => Discover(EmptyParams, optional),
        /// Lists tools.
        "tools/list" => ListTools(PaginatedParams, optional),
        /// Calls a tool.
        "tools/call" => CallTool(Box<CallToolParams>, required),
        /// Lists prompts.
        "prompts/list" => ListPrompts(PaginatedParams, optional),
        /// Renders a prompt.
        "prompts/get" => GetPrompt(Box<GetPromptParams>, required),
        /// Lists resources.
        "resources/list" => ListResources(PaginatedParams, optional),
        /// Lists resource templates.
        "resources/templates/list" => ListResourceTemplates(PaginatedParams, optional),
        /// Reads a resource.
        "resources/read" => ReadResource(ReadResourceParams, required),
        /// Subscribes to a resource's updates (2025 revisions).
        "resources/subscribe" => Subscribe(SubscribeParams, required),
        /// Ends a subscription (2025 revisions).
        "resources/unsubscribe" => Unsubscribe(SubscribeParams, required),
        /// Completes a prompt argument or template variable.
        "completion/complete" => Complete(Box<CompleteParams>, required),
        /// Sets the session's log level (2025 revisions).
        "logging/setLevel" => SetLevel(SetLevelParams, required),
        /// Opens a notification stream (2026-07-28).
        "subscriptions/listen" => Listen(Box<ListenParams>, required),
        /// A task's status, and its result once done (tasks).
        "tasks/get" => GetTask(TaskIdParams, required),
        /// Answers a task's input requests (2026-07-28 tasks).
        "tasks/update" => UpdateTask(UpdateTaskParams, required),
        /// Asks a task to stop (tasks).
        "tasks/cancel" => CancelTask(TaskIdParams, required),
        /// Waits for a task's result (2025-11-25 tasks only).
        "tasks/result" => TaskResult(TaskIdParams, required),
        /// Lists tasks (2025-11-25 tasks only).
        "tasks/list" => ListTasks(PaginatedParams, optional),
        /// Lists skills (the Skills extension).
        "skills/list" => ListSkills(PaginatedParams, optional),
        /// One skill's entry (the Skills extension).
        "skills/get" => GetSkill(GetSkillParams, required),
        /// A directory resource's children (the Skills extension's `directoryRead`).
        "resources/directory/read" => ReadDirectory(ReadDirectoryParams, required),
    }
}

impl ClientRequest {
    /// The request's era: stateless for `server/discover` and `subscriptions/listen`, which
    /// exist only in 2026-07-28, and for any other request whose `_meta` names a protocol
    /// version or client capabilities; a request of a session otherwise.
    pub fn era(&self) -> Era {
        match self {
            ClientRequest::Discover(_) | ClientRequest::Listen(_) => Era::Stateless,
            _ => self.meta().map_or(Era::Session, RequestMeta::era),
        }
    }

    /// The request's `_meta`, if it has one.
    pub fn meta(&self) -> Option<&RequestMeta> {
        match self {
            ClientRequest::Initialize(p) => p.meta.as_deref(),
            ClientRequest::Ping(p) | ClientRequest::Discover(p) => p.meta.as_deref(),
            ClientRequest::ListTools(p)
            | ClientRequest::ListPrompts(p)
            | ClientRequest::ListResources(p)
            | ClientRequest::ListResourceTemplates(p) => p.meta.as_deref(),
            ClientRequest::CallTool(p) => p.meta.as_deref(),
            ClientRequest::GetPrompt(p) => p.meta.as_deref(),
            ClientRequest::ReadResource(p) => p.meta.as_deref(),
            ClientRequest::Subscribe(p) | ClientRequest::Unsubscribe(p) => p.meta.as_deref(),
            ClientRequest::Complete(p) => p.meta.as_deref(),
            ClientRequest::SetLevel(p) => p.meta.as_deref(),
            ClientRequest::Listen(p) => p.meta.as_deref(),
            ClientRequest::GetTask(p) | ClientRequest::CancelTask(p) | ClientRequest::TaskResult(p) => {
                p.meta.as_deref()
            }
            ClientRequest::UpdateTask(p) => p.meta.as_deref(),
            ClientRequest::ListTasks(p) | ClientRequest::ListSkills(p) => p.meta.as_deref(),
            ClientRequest::GetSkill(p) => p.meta.as_deref(),
            ClientRequest::ReadDirectory(p) => p.meta.as_deref(),
        }
    }

    /// A mutable handle on the request's `_meta`, created empty if absent.
    pub fn meta_mut(&mut self) -> &mut RequestMeta {
        let slot = match self {
            ClientRequest::Initialize(p) => &mut p.meta,
            ClientRequest::Ping(p) | ClientRequest::Discover(p) => &mut p.meta,
            ClientRequest::ListTools(p)
            | ClientRequest::ListPrompts(p)
            | ClientRequest::ListResources(p)
            | ClientRequest::ListResourceTemplates(p) => &mut p.meta,
            ClientRequest::CallTool(p) => &mut p.meta,
            ClientRequest::GetPrompt(p) => &mut p.meta,
            ClientRequest::ReadResource(p) => &mut p.meta,
            ClientRequest::Subscribe(p) | ClientRequest::Unsubscribe(p) => &mut p.meta,
            ClientRequest::Complete(p) => &mut p.meta,
            ClientRequest::SetLevel(p) => &mut p.meta,
            ClientRequest::Listen(p) => &mut p.meta,
            ClientRequest::GetTask(p) | ClientRequest::CancelTask(p) | ClientRequest::TaskResult(p) => &mut p.meta,
            ClientRequest::UpdateTask(p) => &mut p.meta,
            ClientRequest::ListTasks(p) | ClientRequest::ListSkills(p) => &mut p.meta,
            ClientRequest::GetSkill(p) => &mut p.meta,
            ClientRequest::ReadDirectory(p) => &mut p.meta,
        };
        slot.get_or_insert_with(Box::default)
    }
}

method_union! {
    /// A notification a client sends to a server.
    ClientNotification {
        /// The client finished initialization (2025 revisions).
        "notifications/initialized" => Initialized(NotificationMeta, optional),
        /// The client gives up on a request.
        "notifications/cancelled" => Cancelled(CancelledParams, optional),
        /// Progress on a request the server sent (2025 revisions).
        "notifications/progress" => Progress(ProgressParams, required),
        /// The client's roots changed (2025 revisions).
        "notifications/roots/list_changed" => RootsListChanged(NotificationMeta, optional),
    }
}

method_union! {
    /// A request a server sends to a client (2025 revisions only).
    ServerRequest {
        /// Checks that the client is alive.
        "ping" => Ping(EmptyParams, optional),
        /// Asks the client's model for a completion.
        "sampling/createMessage" => CreateMessage(CreateMessageParams, required),
        /// Asks the user for input.
        "elicitation/create" => Elicit(ElicitParams, required),
        /// Asks for the client's roots.
        "roots/list" => ListRoots(EmptyParams, optional),
    }
}

method_union! {
    /// A notification a server sends to a client.
    ServerNotification {
        /// Progress on a request.
        "notifications/progress" => Progress(ProgressParams, required),
        /// A log message.
        "notifications/message" => Message(LoggingMessageParams, required),
        /// The server gives up on a request, or ends a listen stream on stdio (2026-07-28).
        "notifications/cancelled" => Cancelled(CancelledParams, optional),
        /// A subscribed resource changed.
        "notifications/resources/updated" => ResourceUpdated(ResourceUriParams, required),
        /// The list of resources changed.
        "notifications/resources/list_changed" => ResourceListChanged(NotificationMeta, optional),
        /// The list of tools changed.
        "notifications/tools/list_changed" => ToolListChanged(NotificationMeta, optional),
        /// The list of prompts changed.
        "notifications/prompts/list_changed" => PromptListChanged(NotificationMeta, optional),
        /// A listen stream is open (2026-07-28).
        "notifications/subscriptions/acknowledged" => SubscriptionsAcknowledged(AcknowledgedParams, required),
        /// An out-of-band URL elicitation finished (2025-11-25).
        "notifications/elicitation/complete" => ElicitationComplete(ElicitationCompleteParams, required),
        /// A task changed; the params are its `DetailedTask` (2026-07-28 tasks extension).
        "notifications/tasks" => Tasks(JsonObject, required),
        /// A task changed; the params are its `Task` (2025-11-25 experimental tasks).
        "notifications/tasks/status" => TaskStatus(JsonObject, required),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(text: &str) -> Box<RawValue> {
        RawValue::from_string(text.to_owned()).unwrap()
    }

    #[test]
    fn a_client_request_is_small_enough_to_move_cheaply() {
        // Copies of up to 128 bytes are made inline; larger ones call `memcpy`, once per move.
        let size = std::mem::size_of::<ClientRequest>();
        assert!(size <= 128, "ClientRequest is {size} bytes: box the params of the variant that grew");
    }

    #[test]
    fn the_method_string_chooses_the_params_type() {
        let params = raw(r#"{"name":"echo","arguments":{"message":"hi"}}"#);
        match ClientRequest::decode("tools/call", Some(&params)).unwrap() {
            ClientRequest::CallTool(call) => assert_eq!(call.name, "echo"),
            other => panic!("decoded as {other:?}"),
        }
    }

    #[test]
    fn unknown_methods_and_bad_params_get_their_own_codes() {
        let err = ClientRequest::decode("tools/explode", None).unwrap_err();
        assert_eq!(err.to_error_object().code, ErrorCode::METHOD_NOT_FOUND);
        let err = ClientRequest::decode("tools/call", Some(&raw(r#"{"arguments":{}}"#))).unwrap_err();
        assert_eq!(err.to_error_object().code, ErrorCode::INVALID_PARAMS);
        assert!(err.to_string().contains("missing field `name`"), "{err}");
        let err = ClientRequest::decode("tools/call", None).unwrap_err();
        assert_eq!(err.to_error_object().code, ErrorCode::INVALID_PARAMS);
    }

    #[test]
    fn list_requests_need_no_params() {
        assert!(matches!(ClientRequest::decode("tools/list", None), Ok(ClientRequest::ListTools(_))));
    }

    #[test]
    fn an_invalid_log_level_in_meta_is_invalid_params() {
        let params = raw(r#"{"_meta":{"io.modelcontextprotocol/logLevel":"loud"}}"#);
        let err = ClientRequest::decode("tools/list", Some(&params)).unwrap_err();
        assert_eq!(err.to_error_object().code, ErrorCode::INVALID_PARAMS);
    }
}
