//! Completion handlers for prompt arguments and resource-template variables.

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::Arc;

use wharf_protocol::Completion;

use crate::context::RequestContext;
use crate::error::RpcError;
use crate::future::BoxFuture;

/// The most values one completion answer may carry.
pub const MAX_COMPLETION_VALUES: usize = 100;

/// One completion request, as a completion handler sees it.
#[derive(Debug)]
pub struct CompletionCall {
    /// The argument or template variable being completed.
    pub argument: String,
    /// What the user has typed so far.
    pub value: String,
    /// Values of other arguments already chosen.
    pub arguments: BTreeMap<String, String>,
    /// The request context.
    pub context: RequestContext,
}

pub(crate) type CompletionFn = Arc<dyn Fn(CompletionCall) -> BoxFuture<Result<Completion, RpcError>> + Send + Sync>;

/// What a completion function returns: its values, which Wharf counts (`total`) and cuts to
/// the first [`MAX_COMPLETION_VALUES`] (`hasMore`), or a [`Completion`] whose `total` and
/// `hasMore` the function knows better.
pub(crate) trait IntoCompletion {
    /// The completion to answer with, before Wharf cuts its values to the maximum.
    fn into_completion(self) -> Completion;
}

impl IntoCompletion for Vec<String> {
    fn into_completion(self) -> Completion {
        let total = Some(self.len() as u64);
        Completion { values: self, total, has_more: Some(false) }
    }
}

impl IntoCompletion for Completion {
    fn into_completion(self) -> Completion {
        self
    }
}

/// Wraps an async completion function.
pub(crate) fn completion_fn<F, Fut>(handler: F) -> CompletionFn
where
    F: Fn(CompletionCall) -> Fut + Send + Sync + 'static,
    Fut: Future + Send + 'static,
    Fut::Output: IntoCompletion,
{
    Arc::new(move |call| {
        let future = handler(call);
        Box::pin(async move { Ok(future.await.into_completion()) })
    })
}

/// A completion function over a fixed list: the values that start with what was typed,
/// compared without regard to case.
pub(crate) fn fixed_completion(values: Vec<String>) -> CompletionFn {
    let values = Arc::new(values);
    Arc::new(move |call| {
        let typed = call.value.to_lowercase();
        let matches: Vec<String> =
            values.iter().filter(|value| value.to_lowercase().starts_with(&typed)).cloned().collect();
        Box::pin(async move { Ok(matches.into_completion()) })
    })
}
