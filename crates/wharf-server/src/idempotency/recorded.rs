//! What a store keeps of a call that held a key ([`Recorded`]): its result, its error, or the
//! task it became; as JSON text, so that any store can keep it and any instance replay it.

use serde::{Deserialize, Serialize};
use wharf_protocol::{CallToolResult, ErrorObject};

/// The outcome recorded under a key.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) enum Recorded {
    /// The handler's result.
    #[serde(deserialize_with = "wharf_protocol::through_value")]
    Result(CallToolResult),
    /// The error the call answered with.
    Error(ErrorObject),
    /// The call became a task: duplicates are answered with it.
    Task(RecordedTask),
}

/// A task a keyed call became, and whom it belongs to.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct RecordedTask {
    pub(crate) id: String,
    /// True for a 2025-11-25 task, which its session (or principal) owns; false for a
    /// 2026-07-28 task, which its principal owns.
    pub(crate) session_owned: bool,
}

impl Recorded {
    /// The JSON text a store keeps.
    pub(crate) fn to_text(&self) -> String {
        // Every member is a string-keyed map or a plain value: encoding cannot fail.
        serde_json::to_string(self).unwrap_or_else(|err| unreachable!("a recorded outcome did not encode: {err}"))
    }

    /// The outcome in `text`, when it is one this server records.
    pub(crate) fn from_text(text: &str) -> Option<Recorded> {
        serde_json::from_str(text).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outcomes_survive_the_text_a_store_keeps() {
        let outcomes = [
            Recorded::Result(CallToolResult::text("added")),
            Recorded::Error(ErrorObject::new(wharf_protocol::ErrorCode::INTERNAL_ERROR, "down")),
            Recorded::Task(RecordedTask { id: "t1".to_owned(), session_owned: true }),
        ];
        for outcome in outcomes {
            assert_eq!(Recorded::from_text(&outcome.to_text()), Some(outcome));
        }
        assert_eq!(Recorded::from_text("{\"other\": 1}"), None);
    }
}
