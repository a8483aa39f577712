//! Extractors: the values a tool handler can take as arguments, in any order.

use std::sync::Arc;

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use wharf_protocol::JsonObject;

use crate::context::RequestContext;
use crate::error::RpcError;
use crate::schema::{ArgumentSchema, CheckedArguments, schema_for};
use crate::tool::ToolDef;

/// One call of a tool, as extractors see it.
///
/// It borrows the tool and the request context: extractors run before the handler's future
/// is made, and only those that keep something (the context, the state) take a reference
/// count of it. Every clone and drop of an `Arc` is an atomic operation, and a pipelined call
/// made four of them here for handlers that never look at either.
pub struct ToolCall<'a> {
    pub(crate) tool: &'a ToolDef,
    pub(crate) arguments: Option<CheckedArguments>,
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
        self.tool.name()
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

    /// Whether the handler can reach the request context through this extractor, and so ask
    /// the client for input. Extractors of one's own may (they see [`ToolCall::context`]).
    #[doc(hidden)]
    const REACHES_CONTEXT: bool = true;

    /// Whether this extractor reads the call's arguments, and so can check them as it reads
    /// them. Only [`Args`] does: arguments are otherwise checked before the handler runs.
    #[doc(hidden)]
    const READS_ARGUMENTS: bool = false;
}

/// The tool's arguments, deserialized into `T`. `T`'s JSON Schema becomes the tool's
/// `inputSchema`, and arguments are checked against it before the handler runs.
#[derive(Debug, Clone, Default)]
pub struct Args<T>(pub T);

impl<T: DeserializeOwned + JsonSchema + Send + 'static> FromToolCall for Args<T> {
    const REACHES_CONTEXT: bool = false;
    const READS_ARGUMENTS: bool = true;

    fn from_tool_call(call: &mut ToolCall<'_>) -> Result<Self, Rejection> {
        let schema = call.tool.schema.as_deref().ok();
        match call.arguments.take() {
            Some(arguments) => read_arguments(arguments, schema).map(Args),
            None => read_object(JsonObject::new()).map(Args),
        }
    }

    fn input_schema() -> Option<JsonObject> {
        Some(schema_for::<T>())
    }
}

/// Reads a `T` from a call's arguments, in as few passes as they allow. `schema` is the
/// tool's, which deferred arguments are checked against.
fn read_arguments<T: DeserializeOwned>(
    arguments: CheckedArguments,
    schema: Option<&ArgumentSchema>,
) -> Result<T, Rejection> {
    match arguments {
        // Checked while read, in one pass. Anything the shape cannot vouch for (or `T` refuses)
        // takes the full check, whose result is read as any other; the two word the refusal.
        CheckedArguments::Deferred(text) => {
            // Only a tool whose schema compiled defers the check.
            let schema = schema.ok_or_else(|| Rejection::Rpc(RpcError::internal("the tool has no schema")))?;
            match schema.read_checked(&text) {
                Some(value) => Ok(value),
                None => read_arguments(schema.check(Some(text)).map_err(Rejection::InvalidArguments)?, None),
            }
        }
        // Read once, straight from the client's text. Should `T` refuse what the schema
        // accepted, the values path words the error as it would have anyway.
        CheckedArguments::Text(text) => match serde_json::from_str(text.as_str()) {
            Ok(value) => Ok(value),
            Err(err) => read_object(text.to_object().map_err(|_| Rejection::InvalidArguments(err.to_string()))?),
        },
        CheckedArguments::Object(object) => read_object(object),
    }
}

/// Reads a `T` from arguments already held as JSON values.
fn read_object<T: DeserializeOwned>(object: JsonObject) -> Result<T, Rejection> {
    serde_json::from_value(serde_json::Value::Object(object))
        .map_err(|err| Rejection::InvalidArguments(err.to_string()))
}

impl FromToolCall for RequestContext {
    fn from_tool_call(call: &mut ToolCall<'_>) -> Result<Self, Rejection> {
        Ok(call.context.clone())
    }
}

/// Shared state given to the server builder with `ServerBuilder::state`.
#[derive(Debug)]
pub struct State<S>(pub Arc<S>);

impl<S> Clone for State<S> {
    fn clone(&self) -> Self {
        State(self.0.clone())
    }
}

impl<S: Send + Sync + 'static> FromToolCall for State<S> {
    const REACHES_CONTEXT: bool = false;

    fn from_tool_call(call: &mut ToolCall<'_>) -> Result<Self, Rejection> {
        call.context.server().state::<S>().map(State).ok_or_else(|| {
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
    const REACHES_CONTEXT: bool = false;

    fn from_tool_call(call: &mut ToolCall<'_>) -> Result<Self, Rejection> {
        Ok(SessionData(call.context.extensions().get_or_insert_with(T::default)))
    }
}
