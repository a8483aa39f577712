//! The `ToolHandler` trait, implemented for every async function whose arguments are
//! extractors and whose output converts into a tool result.

use std::future::Future;

use wharf_protocol::{CallToolResult, JsonObject};

use crate::error::RpcError;
use crate::future::BoxFuture;
use crate::tool::extract::sealed::{Reach, Token};
use crate::tool::extract::{FromToolCall, Rejection, ToolCall};
use crate::tool::output::IntoToolResult;

/// A tool handler's future, made once its extractors succeeded.
pub(crate) type ToolFuture = BoxFuture<Result<CallToolResult, RpcError>>;

/// An async function that can serve as a tool.
///
/// Implemented for `async fn`s and closures returning futures, taking up to six extractors
/// ([`Args`](crate::Args), [`RequestContext`](crate::RequestContext), [`State`](crate::State),
/// [`SessionData`](crate::SessionData), or any [`FromToolCall`] of one's own) in any order and
/// returning anything that implements [`IntoToolResult`].
// No `{Self}` in the wording: a closure's type names its file by absolute path, and rustc
// words the diagnostic differently once that name is long.
#[diagnostic::on_unimplemented(
    message = "this function cannot be a tool handler",
    label = "not a tool handler: check its arguments and its output",
    note = "each argument must be an extractor: `Args<T>` with `T: serde::Deserialize + schemars::JsonSchema` (derive both), `RequestContext`, `State<S>` or `SessionData<T>`",
    note = "it must return a future (`async move {{ ... }}` in a closure) whose output implements `IntoToolResult`: a `String`, `Json<T>` with `T: serde::Serialize + schemars::JsonSchema`, a `ContentBlock`, a `CallToolResult`, or a `Result` of one of these",
    note = "with `#[tool]`, an error above this one names the argument or the return type at fault"
)]
pub trait ToolHandler<Marker>: Clone + Send + Sync + 'static {
    /// Runs the extractors on `call` and, when they all succeed, makes the handler's future.
    #[doc(hidden)]
    fn call(self, call: ToolCall<'_>) -> Result<ToolFuture, Rejection>;

    /// The JSON Schema of the arguments, from the first extractor that reads them.
    #[doc(hidden)]
    fn input_schema() -> Option<JsonObject>;

    /// What the extractors give the handler, together.
    #[doc(hidden)]
    fn reach(_: Token) -> Reach;
}

macro_rules! impl_tool_handler {
    ($($extractor:ident),*) => {
        #[allow(non_snake_case, unused_variables, unused_mut)]
        impl<F, Fut, Out, $($extractor,)*> ToolHandler<($($extractor,)*)> for F
        where
            F: FnOnce($($extractor),*) -> Fut + Clone + Send + Sync + 'static,
            Fut: Future<Output = Out> + Send + 'static,
            Out: IntoToolResult,
            $($extractor: FromToolCall,)*
        {
            fn call(self, mut call: ToolCall<'_>) -> Result<ToolFuture, Rejection> {
                $(let $extractor = $extractor::from_tool_call(&mut call)?;)*
                Ok(Box::pin(async move { self($($extractor),*).await.into_tool_result() }))
            }

            fn input_schema() -> Option<JsonObject> {
                None$(.or_else($extractor::input_schema))*
            }

            fn reach(token: Token) -> Reach {
                let reach = Reach::NOTHING;
                $(let reach = {
                    let one = $extractor::reach(token);
                    Reach { context: reach.context || one.context, arguments: reach.arguments || one.arguments }
                };)*
                reach
            }
        }
    };
}

impl_tool_handler!();
impl_tool_handler!(T1);
impl_tool_handler!(T1, T2);
impl_tool_handler!(T1, T2, T3);
impl_tool_handler!(T1, T2, T3, T4);
impl_tool_handler!(T1, T2, T3, T4, T5);
impl_tool_handler!(T1, T2, T3, T4, T5, T6);

/// A handler with its type erased, as the registry stores it.
pub(crate) trait ErasedToolHandler: Send + Sync {
    fn call(&self, call: ToolCall<'_>) -> Result<ToolFuture, Rejection>;
}

pub(crate) struct Erased<H, M> {
    pub(crate) handler: H,
    pub(crate) marker: std::marker::PhantomData<fn() -> M>,
}

impl<H: ToolHandler<M>, M: 'static> ErasedToolHandler for Erased<H, M> {
    fn call(&self, call: ToolCall<'_>) -> Result<ToolFuture, Rejection> {
        self.handler.clone().call(call)
    }
}
