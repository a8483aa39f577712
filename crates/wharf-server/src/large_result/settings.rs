//! A server's settings for large results ([`LargeResults`]): its default budget, the budgets
//! of the clients it knows by name, and where results over them are kept, for how long.

use std::sync::Arc;
use std::time::Duration;

use super::budget::ResultBudget;
use super::store::{MemoryResultStore, ResultStore};
use crate::glob::glob_matches;

/// The budgets of a server's tool results, and where results over them are kept.
#[derive(Clone)]
pub(crate) struct LargeResults {
    pub(crate) default: Option<ResultBudget>,
    /// `clientInfo.name` patterns (`*` and `?`) and their budgets, first match first.
    pub(crate) per_client: Vec<(String, ResultBudget)>,
    pub(crate) store: Arc<dyn ResultStore>,
    pub(crate) ttl: Duration,
}

impl Default for LargeResults {
    fn default() -> LargeResults {
        LargeResults {
            default: None,
            per_client: Vec::new(),
            store: Arc::new(MemoryResultStore::default()),
            ttl: Duration::from_secs(60 * 60),
        }
    }
}

impl LargeResults {
    /// True when some budget is set on the server.
    pub(crate) fn configured(&self) -> bool {
        self.default.is_some() || !self.per_client.is_empty()
    }

    /// The budget of a call of a tool with `tool_budget` from the client `client` names: the
    /// tool's, else the server's, capped by the client's where it is known; `None` when none
    /// is set.
    pub(crate) fn budget_for<'a>(
        &self,
        tool_budget: Option<ResultBudget>,
        client: impl FnOnce() -> Option<&'a str>,
    ) -> Option<ResultBudget> {
        let general = tool_budget.or(self.default);
        if self.per_client.is_empty() {
            return general;
        }
        let name = client().unwrap_or_default();
        let known = self.per_client.iter().find(|(pattern, _)| glob_matches(pattern, name)).map(|(_, budget)| *budget);
        match (general, known) {
            (Some(general), Some(known)) => Some(general.min(known)),
            (general, known) => general.or(known),
        }
    }
}
