//! Extractors: the values a tool handler can take as arguments, in any order.

use std::sync::Arc;

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use wharf_protocol::JsonObject;

use crate::context::RequestContext;
use crate::error::RpcError;
use crate::schema::{AcceptedArguments, ArgumentSchema, Refusal, read_object, schema_for};

/// One call of a tool, as extractors see it.
///
/// It borrows the tool's name and schema and the request context: extractors run before the
/// handler's future is made, and only those that keep something (the context, the state) take
/// a reference count of it.
pub struct ToolCall<'a> {
    pub(crate) name: &'a str,
    /// What the arguments were accepted by, and what reads them.
    pub(crate) schema: &'a ArgumentSchema,
    pub(crate) arguments: Option<AcceptedArguments>,
    pub(crate) context: &'a RequestContext,
}

impl std::fmt::Debug for ToolCall<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolCall")
            .field("name", &self.name())
            .field("arguments", &self.arguments)
            .field("context", &self.context)
            .finish()
    }
}

impl<'a> ToolCall<'a> {
    /// The tool's name.
    pub fn name(&self) -> &'a str {
        self.name
    }

    /// The request context.
    pub fn context(&self) -> &'a RequestContext {
        self.context
    }
}

/// Why an extractor could not produce its value.
#[derive(Debug)]
pub enum Rejection {
    /// The arguments did not fit the declared type. This becomes a tool error result on
    /// 2025-11-25 and later, and `-32602` before.
    InvalidArguments(String),
    /// Any other failure, answered as this JSON-RPC error.
    Rpc(RpcError),
}

/// Something a tool handler can take as an argument.
///
/// Implement it for extractors of your own: they see the call's name and its
/// [`RequestContext`]. The call's arguments are read only through [`Args`], which checks them
/// against the tool's schema; whatever extractors a handler takes, no handler sees arguments
/// that did not pass the schema.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be an argument of a tool handler",
    note = "tool handlers take `Args<T>` (with `T: Deserialize + JsonSchema`), `RequestContext`, `State<S>` or \
            `SessionData<T>`, in any order"
)]
pub trait FromToolCall: Sized + Send + 'static {
    /// Produces the value from the call. Extractors run in order before the handler is
    /// called, and do not wait.
    fn from_tool_call(call: &mut ToolCall<'_>) -> Result<Self, Rejection>;

    /// The JSON Schema of the tool's arguments, if this extractor reads them.
    fn input_schema() -> Option<JsonObject> {
        None
    }

    /// What this extractor gives the handler. Only Wharf's own extractors say anything but
    /// the default (it reaches the context, it does not read the arguments): the parameter's
    /// type cannot be named outside Wharf, so no other implementation can override it, and no
    /// extractor of one's own can have the arguments' check left to it.
    #[doc(hidden)]
    fn reach(_: sealed::Token) -> sealed::Reach {
        sealed::Reach::CONTEXT
    }
}

/// What only Wharf can name: the token that keeps [`FromToolCall::reach`] from being
/// overridden elsewhere, and what an extractor reaches.
pub(crate) mod sealed {
    /// A value only Wharf can make.
    #[allow(unreachable_pub, reason = "named in a public trait method, unnameable outside the crate")]
    #[derive(Debug, Clone, Copy)]
    pub struct Token(pub(crate) ());

    /// What an extractor gives the handler.
    #[allow(unreachable_pub, reason = "named in a public trait method, unnameable outside the crate")]
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub struct Reach {
        /// The handler can reach the request context, and so ask the client for input.
        pub(crate) context: bool,
        /// The extractor reads the arguments, checking them as it reads them ([`super::Args`]).
        pub(crate) arguments: bool,
    }

    impl Reach {
        /// An extractor of one's own: it sees the context, never the arguments.
        pub(crate) const CONTEXT: Reach = Reach { context: true, arguments: false };
        /// An extractor that reaches neither.
        pub(crate) const NOTHING: Reach = Reach { context: false, arguments: false };
    }
}

/// The tool's arguments, deserialized into `T`. `T`'s JSON Schema becomes the tool's
/// `inputSchema`, and the arguments are checked against it before `T` is made from them.
#[derive(Debug, Clone, Default)]
pub struct Args<T>(pub T);

impl<T: DeserializeOwned + JsonSchema + Send + 'static> FromToolCall for Args<T> {
    fn from_tool_call(call: &mut ToolCall<'_>) -> Result<Self, Rejection> {
        let read = match call.arguments.take() {
            Some(arguments) => call.schema.read(arguments),
            None => read_object(JsonObject::new()).map_err(Refusal::Invalid),
        };
        read.map(Args).map_err(|refusal| match refusal {
            Refusal::Invalid(message) => Rejection::InvalidArguments(message),
            Refusal::DuplicateKey(key) => Rejection::Rpc(Refusal::duplicate_key_error(&key)),
        })
    }

    fn input_schema() -> Option<JsonObject> {
        Some(schema_for::<T>())
    }

    fn reach(_: sealed::Token) -> sealed::Reach {
        sealed::Reach { context: false, arguments: true }
    }
}

impl FromToolCall for RequestContext {
    fn from_tool_call(call: &mut ToolCall<'_>) -> Result<Self, Rejection> {
        Ok(call.context.clone())
    }
}

/// Shared state given to the server builder with `ServerBuilder::state`; it derefs to `S`.
///
/// ```
/// use wharf_server::{Server, State, ToolDef};
///
/// struct Config {
///     greeting: String,
/// }
///
/// let server = Server::builder("greeter", "1.0.0")
///     .state(Config { greeting: "Hello".to_owned() })
///     .tool(ToolDef::new("greet", |config: State<Config>| async move { format!("{}!", config.greeting) }))
///     .build();
/// assert!(server.is_ok());
/// ```
#[derive(Debug)]
pub struct State<S>(pub Arc<S>);

impl<S> Clone for State<S> {
    fn clone(&self) -> Self {
        State(self.0.clone())
    }
}

impl<S> std::ops::Deref for State<S> {
    type Target = S;

    fn deref(&self) -> &S {
        &self.0
    }
}

impl<S: Send + Sync + 'static> FromToolCall for State<S> {
    fn reach(_: sealed::Token) -> sealed::Reach {
        sealed::Reach::NOTHING
    }

    fn from_tool_call(call: &mut ToolCall<'_>) -> Result<Self, Rejection> {
        call.context.state::<S>().map(State).ok_or_else(|| {
            Rejection::Rpc(RpcError::internal(format!(
                "no state of type `{}` was given to the server builder",
                std::any::type_name::<S>()
            )))
        })
    }
}

/// The user's own data for the client's session: a `T` made with `T::default()` the first time
/// a handler of the session asks, then shared by every request of that session (give `T`
/// interior mutability, such as a `Mutex`, to change it). On 2026-07-28 each request is a
/// session of its own, so the data lasts one request; state meant to span requests there is
/// named by an identifier the client passes.
#[derive(Debug)]
pub struct SessionData<T>(pub Arc<T>);

impl<T> Clone for SessionData<T> {
    fn clone(&self) -> Self {
        SessionData(self.0.clone())
    }
}

impl<T> std::ops::Deref for SessionData<T> {
    type Target = T;

    fn deref(&self) -> &T {
        &self.0
    }
}

impl<T: Default + Send + Sync + 'static> FromToolCall for SessionData<T> {
    fn reach(_: sealed::Token) -> sealed::Reach {
        sealed::Reach::NOTHING
    }

    fn from_tool_call(call: &mut ToolCall<'_>) -> Result<Self, Rejection> {
        Ok(SessionData(call.context.extensions().get_or_insert_with(T::default)))
    }
}
