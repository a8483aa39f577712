//! What can go wrong: a schema that cannot be used ([`SchemaError`]), and a value a schema
//! refuses ([`ValidationError`], which knows the keyword that refused it and where).

use std::fmt;

use serde_json::Value;

/// A schema that cannot be checked against: a `$ref` to nothing known, a `pattern` that is not
/// a regular expression, or (when asked) a schema its meta-schema refuses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchemaError {
    message: String,
}

impl SchemaError {
    pub(crate) fn new(message: impl Into<String>) -> SchemaError {
        SchemaError { message: message.into() }
    }
}

impl fmt::Display for SchemaError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for SchemaError {}

/// One way in which a value does not match a schema.
#[derive(Debug, Clone, PartialEq)]
pub struct ValidationError(Box<ErrorDetail>);

/// What a [`ValidationError`] holds, boxed so that a `Result` carrying one stays small.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ErrorDetail {
    pub(crate) keyword: &'static str,
    pub(crate) instance: Value,
    pub(crate) instance_path: String,
    pub(crate) schema_location: String,
    pub(crate) message: String,
    pub(crate) allowed: Option<Value>,
}

impl ValidationError {
    pub(crate) fn new(detail: ErrorDetail) -> ValidationError {
        ValidationError(Box::new(detail))
    }

    /// The keyword that refused the value: `type`, `required`, `enum`, `anyOf`, `oneOf`, `$ref`
    /// (one that leads nowhere), `false` (a schema that allows nothing), ...
    pub fn keyword(&self) -> &str {
        self.0.keyword
    }

    /// The refused value (a copy).
    pub fn instance(&self) -> &Value {
        &self.0.instance
    }

    /// Where the refused value is, as a JSON Pointer (`/items/0/name`; empty for the whole).
    pub fn instance_path(&self) -> &str {
        &self.0.instance_path
    }

    /// Where the keyword is, as a JSON Pointer into the document that holds it, `$ref`s
    /// followed (`/$defs/Level/oneOf`).
    pub fn schema_location(&self) -> &str {
        &self.0.schema_location
    }

    /// The values an `enum` allows, when that is what refused the value.
    pub fn allowed(&self) -> Option<&Value> {
        self.0.allowed.as_ref()
    }
}

impl fmt::Display for ValidationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0.message)
    }
}

impl std::error::Error for ValidationError {}
