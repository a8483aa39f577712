//! The drafts of JSON Schema, told from a schema's `$schema`, and what sets them apart.

/// A draft of JSON Schema.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Draft {
    /// Draft 4 (`id`, boolean `exclusiveMaximum`).
    Draft4,
    /// Draft 6.
    Draft6,
    /// Draft 7 (`if`/`then`/`else`; `$ref` hides its siblings).
    Draft7,
    /// Draft 2019-09 (`$recursiveRef`, `unevaluated*`).
    Draft201909,
    /// Draft 2020-12 (`prefixItems`, `$dynamicRef`), what MCP's schemas default to.
    Draft202012,
}

impl Draft {
    /// The draft a `$schema` URI names, with or without its empty fragment.
    pub fn from_uri(uri: &str) -> Option<Draft> {
        let uri = uri.strip_suffix('#').unwrap_or(uri);
        let uri = uri.strip_prefix("http://").or_else(|| uri.strip_prefix("https://"))?;
        match uri {
            "json-schema.org/draft-04/schema" => Some(Draft::Draft4),
            "json-schema.org/draft-06/schema" => Some(Draft::Draft6),
            "json-schema.org/draft-07/schema" => Some(Draft::Draft7),
            "json-schema.org/draft/2019-09/schema" => Some(Draft::Draft201909),
            "json-schema.org/draft/2020-12/schema" => Some(Draft::Draft202012),
            _ => None,
        }
    }

    /// The draft `schema` names by its `$schema`, if it names one this crate knows.
    pub fn named_by(schema: &serde_json::Value) -> Option<Draft> {
        schema.get("$schema").and_then(serde_json::Value::as_str).and_then(Draft::from_uri)
    }

    /// The keyword that gives a schema its URI.
    pub(crate) fn id_keyword(self) -> &'static str {
        if self == Draft::Draft4 { "id" } else { "$id" }
    }

    /// True when `$ref` makes the other keywords of its schema ignored (up to draft 7).
    pub(crate) fn ref_hides_siblings(self) -> bool {
        self <= Draft::Draft7
    }

    /// True when `items` may be an array of schemas, one per position (up to 2019-09).
    pub(crate) fn has_item_arrays(self) -> bool {
        self <= Draft::Draft201909
    }

    pub(crate) fn has_unevaluated(self) -> bool {
        self >= Draft::Draft201909
    }
}
