//! Hooks for the differential fuzzer (`crates/wharf-fuzz`): the argument checks, which are
//! otherwise private, held to the full validator (`wharf-schema`) on generated input. Only with
//! `--cfg fuzzing` (`scripts/fuzz` builds so); not part of Wharf's API.

use serde::de::DeserializeOwned;
use serde_json::Value;
use wharf_protocol::{JsonObject, ToolArguments};

use super::shape::Shape;
use super::{ArgumentReader, ArgumentSchema, Refusal};

/// The argument schema Wharf derives for `T`, as a tool taking `Args<T>` advertises it.
pub fn schema_of<T: schemars::JsonSchema>() -> JsonObject {
    super::schema_for::<T>()
}

/// A plain schema's one-pass checker.
#[derive(Debug)]
pub struct PlainShape(Shape);

impl PlainShape {
    /// The checker of `schema`, when the schema is plain.
    pub fn of(schema: &JsonObject) -> Option<PlainShape> {
        Shape::of(schema).map(PlainShape)
    }

    /// True when the checker vouches for `text` without building values.
    pub fn accepts(&self, text: &str) -> bool {
        self.0.accepts(text)
    }

    /// True when the checker vouches for a value already read.
    pub fn accepts_value(&self, value: &Value) -> bool {
        self.0.accepts_value(value)
    }

    /// Reads a `T` while checking, in one pass; `None` when it cannot vouch or `T` refuses.
    pub fn read<T: DeserializeOwned>(&self, text: &str) -> Option<T> {
        self.0.read(text)
    }
}

/// What a tool's argument check made of a call's arguments.
#[derive(Debug, PartialEq)]
pub enum Verdict {
    /// Accepted, and read as this value.
    Accepted(Value),
    /// Refused as not fitting the schema, or unreadable.
    Invalid,
    /// Refused for giving this member twice in one object.
    DuplicateKey(String),
}

/// A tool's compiled argument schema, as registration compiles it.
#[derive(Debug)]
pub struct ToolArgumentCheck(ArgumentSchema);

impl ToolArgumentCheck {
    /// Compiles `schema`; `None` when registration would refuse it.
    pub fn compile(schema: JsonObject) -> Option<ToolArgumentCheck> {
        ArgumentSchema::compile("fuzzing", schema).ok().map(ToolArgumentCheck)
    }

    /// The schema as compiled (with `type: object` added when it was missing).
    pub fn schema(&self) -> &JsonObject {
        self.0.schema()
    }

    /// Accepts and reads `arguments` as a call does; `handler_reads` is true for a handler that
    /// takes `Args` (which lets the check happen while reading).
    pub fn check(&self, arguments: Option<ToolArguments>, handler_reads: bool) -> Verdict {
        let reader = if handler_reads { ArgumentReader::Handler } else { ArgumentReader::Nobody };
        let read = self.0.accept(arguments, reader).and_then(|accepted| self.0.read::<Value>(accepted));
        match read {
            Ok(value) => Verdict::Accepted(value),
            Err(Refusal::Invalid(_)) => Verdict::Invalid,
            Err(Refusal::DuplicateKey(key)) => Verdict::DuplicateKey(key),
        }
    }
}
