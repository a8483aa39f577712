//! Results of any size: a budget per server, per tool and per client (by `clientInfo.name`),
//! and a result over its budget answered with a preview and a link to the whole, read in
//! pages. From the bottom up: `tokens.rs` (the counter `wharf tokens` uses; the `token-count`
//! feature), `budget.rs` ([`ResultBudget`]), `store.rs` ([`ResultStore`],
//! [`MemoryResultStore`]), `spill.rs` (fitting a result to a budget),
//! `settings.rs` (a server's budgets and store), `owner.rs` (whose a call's pages are),
//! `pages.rs` (the template `wharf-result://{id}{?page}` the pages are read through).

mod budget;
mod owner;
mod pages;
pub(crate) mod settings;
mod spill;
mod store;
#[cfg(feature = "token-count")]
mod tokens;

pub use budget::ResultBudget;
pub(crate) use owner::owner_of;
pub(crate) use pages::pages_template;
pub(crate) use settings::LargeResults;
pub use spill::RESULT_SUMMARY_META;
pub(crate) use spill::{Spill, fits};
pub use store::{MemoryResultStore, ResultStore, ResultStoreError, SpilledPage, SpilledResult};
#[cfg(feature = "token-count")]
pub use tokens::{TOKEN_ENCODING, count_tokens};
