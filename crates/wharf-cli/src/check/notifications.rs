//! The server's notifications, as it sent them (progress of the check's calls, log messages,
//! list changes), each validated against the revision's schema.

use std::sync::{Arc, Mutex, PoisonError};

use serde_json::{Value, json};
use wharf::client::ClientOptions;
use wharf::protocol::ProtocolVersion;

use crate::check::report::{Outcome, Report};
use crate::check::schemas;

/// How many notifications of one connection are kept for validation; later ones are counted.
const KEPT: usize = 500;

/// The notifications one connection received, raw.
#[derive(Clone, Default)]
pub(crate) struct Observed {
    seen: Arc<Mutex<Seen>>,
}

#[derive(Default)]
struct Seen {
    /// Each notification's method and params, as text.
    kept: Vec<(String, Option<String>)>,
    total: usize,
}

impl Observed {
    /// `options` that record every notification here.
    pub(crate) fn attach(&self, options: ClientOptions) -> ClientOptions {
        let seen = self.seen.clone();
        options.observe_notifications(move |method, params| {
            let mut seen = seen.lock().unwrap_or_else(PoisonError::into_inner);
            seen.total += 1;
            if seen.kept.len() < KEPT {
                seen.kept.push((method.to_owned(), params.map(|params| params.get().to_owned())));
            }
        })
    }

    /// Validates what was received against `version`'s schema: one line per method, failing
    /// with the first invalid one's reason.
    pub(crate) fn report(&self, report: &mut Report, section: &str, version: ProtocolVersion) {
        let seen = std::mem::take(&mut *self.seen.lock().unwrap_or_else(PoisonError::into_inner));
        if seen.total == 0 {
            report.add(section, "notifications", Outcome::Skip, "the server sent none");
            return;
        }
        let mut methods: Vec<(String, usize, Option<String>)> = Vec::new();
        for (method, params) in seen.kept {
            let problem = problem(version, &method, params.as_deref());
            match methods.iter_mut().find(|(known, ..)| *known == method) {
                Some((_, count, first_problem)) => {
                    *count += 1;
                    if first_problem.is_none() {
                        *first_problem = problem;
                    }
                }
                None => methods.push((method, 1, problem)),
            }
        }
        for (method, count, problem) in methods {
            let name = format!("notification {method}");
            match problem {
                None => report.add(section, name, Outcome::Pass, format!("{count} valid")),
                Some(why) => report.add(section, name, Outcome::Fail, format!("{count} received; {why}")),
            }
        }
        if seen.total > KEPT {
            report.add(section, "notifications", Outcome::Pass, format!("{} more not validated", seen.total - KEPT));
        }
    }
}

/// Why a notification does not match its definition in the revision's schema; `None` when it
/// does, or when the revision does not define it (an extension's, or one of another revision).
fn problem(version: ProtocolVersion, method: &str, params: Option<&str>) -> Option<String> {
    let definition = wharf::protocol::notification_definition(method)?;
    let mut message = json!({"jsonrpc": "2.0", "method": method});
    if let Some(params) = params {
        match serde_json::from_str::<Value>(params) {
            Ok(params) => message["params"] = params,
            Err(err) => return Some(format!("its params are not JSON: {err}")),
        }
    }
    schemas::conforms(version, definition, &message).err()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notifications_are_held_to_their_revisions_schema() {
        let version = ProtocolVersion::parse("2025-06-18").unwrap();
        let progress = r#"{"progressToken":1,"progress":2,"total":4}"#;
        assert_eq!(problem(version, "notifications/progress", Some(progress)), None);
        let log = r#"{"level":"info","data":"hello"}"#;
        assert_eq!(problem(version, "notifications/message", Some(log)), None);
        assert!(problem(version, "notifications/message", Some(r#"{"level":"loud","data":"hello"}"#)).is_some());
        assert!(problem(version, "notifications/progress", Some(r#"{"progress":2}"#)).is_some(), "no token");
        assert_eq!(problem(version, "notifications/tools/list_changed", None), None);
        assert_eq!(problem(version, "notifications/an.extension/said", Some(r#"{"any":1}"#)), None);
    }
}
