//! The kinds of component an upstream lists: tools, prompts, resources, resource templates.

/// A kind of component an upstream lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Kind {
    Tool,
    Prompt,
    Resource,
    Template,
}

impl Kind {
    pub(crate) const ALL: [Kind; 4] = [Kind::Tool, Kind::Prompt, Kind::Resource, Kind::Template];

    /// The kind as errors and logs name it.
    pub(crate) fn label(self) -> &'static str {
        match self {
            Kind::Tool => "tool",
            Kind::Prompt => "prompt",
            Kind::Resource => "resource",
            Kind::Template => "resource template",
        }
    }
}
