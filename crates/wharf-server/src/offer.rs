//! [`Offer`]: a kind of component declared in the capabilities even while none is registered,
//! for a server whose components come and go.

/// A kind of component a server can declare before it has any. Clients decide at
/// `initialize` what to ask a server for, so a server that will gain prompts later (a folder
/// that is watched, a plugin host) offers them from the start; while there are none, their
/// lists are empty instead of `-32601`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Offer {
    /// `tools`, with `listChanged`.
    Tools,
    /// `prompts`, with `listChanged`.
    Prompts,
    /// `resources`, with `subscribe` and `listChanged`.
    Resources,
    /// `completions`.
    Completions,
}

/// The kinds offered whether or not any is registered.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Offered {
    pub(crate) tools: bool,
    pub(crate) prompts: bool,
    pub(crate) resources: bool,
    pub(crate) completions: bool,
}

impl Offered {
    /// Adds `offer` to the kinds offered.
    pub(crate) fn add(&mut self, offer: Offer) {
        match offer {
            Offer::Tools => self.tools = true,
            Offer::Prompts => self.prompts = true,
            Offer::Resources => self.resources = true,
            Offer::Completions => self.completions = true,
        }
    }
}
