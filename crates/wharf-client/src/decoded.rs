//! The results the client reads from a server's answers, each read by a function of this crate
//! that is not generic.
//!
//! The client's `async` methods are compiled in every crate that awaits them, as generic
//! functions are; a `serde_json::from_str::<T>` inside them would compile `T`'s decoder (all of
//! `CallToolResult`'s content types, say) there again. Called through [`Decoded`], the decoder
//! is compiled once, in `wharf-protocol` ([`FromJson`]).

use serde_json::Value;
use serde_json::value::RawValue;
use wharf_protocol::{
    CallToolResult, CompleteResult, DiscoverResult, FromJson, GetPromptResult, InitializeResult, ListPromptsResult,
    ListResourceTemplatesResult, ListResourcesResult, ListSkillsResult, ListToolsResult, ReadResourceResult,
};

use crate::error::ClientError;
use crate::router;

/// A result type the client reads from a server's answer.
pub(crate) trait Decoded: Sized {
    /// The result in `raw`, or why it is not one.
    fn from_answer(raw: &RawValue) -> Result<Self, ClientError>;
}

macro_rules! decoded {
    ($($result:ty),* $(,)?) => {
        $(
            impl Decoded for $result {
                // Never inlined into the awaiting crate's copy of a method: that is the point.
                #[inline(never)]
                fn from_answer(raw: &RawValue) -> Result<$result, ClientError> {
                    decode(raw)
                }
            }
        )*
    };
}

decoded!(
    Value,
    CallToolResult,
    CompleteResult,
    DiscoverResult,
    GetPromptResult,
    InitializeResult,
    ListPromptsResult,
    ListResourceTemplatesResult,
    ListResourcesResult,
    ListSkillsResult,
    ListToolsResult,
    ReadResourceResult,
);

fn decode<T: FromJson>(raw: &RawValue) -> Result<T, ClientError> {
    T::from_json(raw.get()).map_err(|err| mismatched(&err, raw))
}

fn mismatched(err: &serde_json::Error, raw: &RawValue) -> ClientError {
    ClientError::invalid(format!(
        "the result does not match the request: {err}: {}",
        router::excerpt(raw.get().as_bytes())
    ))
}
