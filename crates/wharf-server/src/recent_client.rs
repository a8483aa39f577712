//! The last client declaration a session received, shared by the sessions that declare the
//! same: the clients of one deployment are mostly of one kind, and each idle session then
//! holds a reference instead of its own copy of what its client said it is and can do.

use std::sync::{Arc, Mutex, PoisonError};

use wharf_protocol::{ClientCapabilities, Implementation};

/// What the last `initialize` declared, as sessions hold it.
#[derive(Debug, Default)]
pub(crate) struct RecentClient {
    last: Mutex<Option<(Arc<ClientCapabilities>, Arc<Implementation>)>>,
}

impl RecentClient {
    /// `capabilities` and `info` as a session holds them: the last declaration's copies when
    /// they are equal to it, new ones (remembered for the next session) otherwise.
    pub(crate) fn share(
        &self,
        capabilities: ClientCapabilities,
        info: Implementation,
    ) -> (Arc<ClientCapabilities>, Arc<Implementation>) {
        let mut last = self.last.lock().unwrap_or_else(PoisonError::into_inner);
        let capabilities = match &*last {
            Some((known, _)) if **known == capabilities => known.clone(),
            _ => Arc::new(capabilities),
        };
        let info = match &*last {
            Some((_, known)) if **known == info => known.clone(),
            _ => Arc::new(info),
        };
        *last = Some((capabilities.clone(), info.clone()));
        (capabilities, info)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn client(name: &str) -> Implementation {
        Implementation { name: name.to_owned(), version: "1".to_owned(), ..Implementation::default() }
    }

    #[test]
    fn equal_declarations_share_one_copy_and_a_different_one_gets_its_own() {
        let recent = RecentClient::default();
        let (first_capabilities, first_info) = recent.share(ClientCapabilities::default(), client("a"));
        let (capabilities, info) = recent.share(ClientCapabilities::default(), client("a"));
        assert!(Arc::ptr_eq(&first_capabilities, &capabilities) && Arc::ptr_eq(&first_info, &info));
        let (capabilities, info) = recent.share(ClientCapabilities::default(), client("b"));
        assert!(Arc::ptr_eq(&first_capabilities, &capabilities), "the capabilities are still equal");
        assert!(!Arc::ptr_eq(&first_info, &info));
        assert_eq!(info.name, "b");
    }
}
