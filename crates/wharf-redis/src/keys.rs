//! Key names: everything under one configurable prefix, and each session's keys with the
//! session id as their Redis Cluster hash tag, so that one session's keys share a slot and a
//! pipeline over them reaches one node.

/// Names the keys of one deployment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Keys {
    prefix: String,
}

impl Keys {
    pub(crate) fn new(prefix: &str) -> Keys {
        Keys { prefix: prefix.to_owned() }
    }

    /// The channel on which instances relay clients' messages to each other.
    pub(crate) fn relay(&self) -> String {
        format!("{}:relay", self.prefix)
    }

    /// The channel on which instances signal the tasks other instances run.
    pub(crate) fn task_signals(&self) -> String {
        format!("{}:task-signals", self.prefix)
    }

    /// The channel of one instance's [`Bus`](wharf_server::Bus) channel named `name`.
    pub(crate) fn bus(&self, name: &str) -> String {
        format!("{}:bus:{name}", self.prefix)
    }

    /// A task's record. The task id is its hash tag.
    pub(crate) fn task(&self, id: &str) -> String {
        self.tagged(id, "task")
    }

    /// The record of an idempotency key (its fingerprint, then its outcome). The key is its
    /// hash tag, shared with its lease, so that one script reaches both.
    pub(crate) fn idempotency(&self, key: &str) -> String {
        self.tagged(key, "idempotency")
    }

    /// The lease of an idempotency key's running call.
    pub(crate) fn idempotency_lease(&self, key: &str) -> String {
        self.tagged(key, "idempotency-lease")
    }

    /// What is known of a large result (who may read it, its size, its pages). The result's id
    /// is its hash tag, shared with its pages.
    pub(crate) fn result(&self, id: &str) -> String {
        self.tagged(id, "result")
    }

    /// The pages of a large result, a list.
    pub(crate) fn result_pages(&self, id: &str) -> String {
        self.tagged(id, "result-pages")
    }

    /// A DPoP proof accepted (its key's thumbprint and its `jti`), kept so that it is used
    /// once.
    #[cfg(feature = "dpop")]
    pub(crate) fn dpop_proof(&self, key: &str) -> String {
        format!("{}:dpop:{key}", self.prefix)
    }

    /// The ids of one owner's tasks, for `tasks/list`.
    pub(crate) fn tasks_of(&self, owner: &str) -> String {
        format!("{}:tasks-of:{owner}", self.prefix)
    }

    /// The key that says an instance sending response streams still runs (it writes it again
    /// and again, each time expiring soon).
    pub(crate) fn instance_alive(&self, instance: &str) -> String {
        format!("{}:instance:{instance}", self.prefix)
    }

    /// The Redis stream of a 2025 session's kept SSE events.
    pub(crate) fn events(&self, id: &str) -> String {
        self.tagged(id, "events")
    }

    /// The index of a deployment's 2025 sessions, scored by when each was last heard from:
    /// the cap on sessions holds across instances through it.
    pub(crate) fn sessions(&self) -> String {
        format!("{}:sessions", self.prefix)
    }

    /// The ids of one client's 2025 sessions (a set), for the quota per client. Ids of
    /// sessions that ended stay until the client opens another: the index says which live.
    pub(crate) fn sessions_of(&self, client: &str) -> String {
        format!("{}:sessions-of:{client}", self.prefix)
    }

    /// `{prefix}:{tag}:{what}`, written without `format!`: a session's key is made on every
    /// request.
    fn tagged(&self, tag: &str, what: &str) -> String {
        let mut key = String::with_capacity(self.prefix.len() + tag.len() + what.len() + 4);
        key.push_str(&self.prefix);
        key.push_str(":{");
        key.push_str(tag);
        key.push_str("}:");
        key.push_str(what);
        key
    }

    /// The key that seals `requestState`, which every instance shares.
    pub(crate) fn request_state_key(&self) -> String {
        format!("{}:request-state-key", self.prefix)
    }

    /// The hash that holds what is kept of a 2025 session.
    pub(crate) fn session(&self, id: &str) -> String {
        self.tagged(id, "session")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_session_key_is_under_the_prefix_and_tagged_by_the_session_id() {
        let key = Keys::new("fleet").session("0123abcd");
        assert_eq!(key, "fleet:{0123abcd}:session");
        // Redis Cluster hashes only what is between the first `{` and the next `}`.
        let tag = &key[key.find('{').unwrap() + 1..key.find('}').unwrap()];
        assert_eq!(tag, "0123abcd");
        let keys = Keys::new("p");
        assert_eq!(keys.events("s1"), "p:{s1}:events");
        assert_eq!([keys.result("r"), keys.result_pages("r")], ["p:{r}:result", "p:{r}:result-pages"]);
        assert_eq!(
            [keys.idempotency("k"), keys.idempotency_lease("k"), keys.task("t")],
            ["p:{k}:idempotency", "p:{k}:idempotency-lease", "p:{t}:task"]
        );
    }
}
