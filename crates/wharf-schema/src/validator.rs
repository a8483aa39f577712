//! A schema made ready to check values against: [`Validator`], built by [`Options`].

use std::sync::OnceLock;

use serde_json::Value;

use crate::draft::Draft;
use crate::error::{SchemaError, ValidationError};
use crate::evaluate::Evaluator;
use crate::meta_schemas;
use crate::registry::{Location, Registry, Scope};
use crate::uri::DEFAULT_BASE;

/// How many errors [`Validator::errors`] gives at most.
const MAX_ERRORS: usize = 100;

/// A schema, with every resource it refers to, ready to check values against.
#[derive(Debug)]
pub struct Validator {
    registry: Registry,
    root: Location,
    scope: Scope,
    formats: bool,
}

impl Validator {
    /// A validator of `schema` in the draft its `$schema` names (2020-12 when it names none),
    /// `format` an annotation only, the schema checked against its meta-schema first.
    pub fn new(schema: &Value) -> Result<Validator, SchemaError> {
        Validator::options().build(schema)
    }

    /// How a validator is built: [`Options::build`].
    pub fn options() -> Options {
        Options { draft: Draft::Draft202012, formats: false, check_schema: true, documents: Vec::new() }
    }

    /// True when `instance` matches the schema.
    pub fn is_valid(&self, instance: &Value) -> bool {
        Evaluator::new(&self.registry, self.formats, 0).root(&self.root, self.scope.clone(), instance)
    }

    /// The first way in which `instance` does not match the schema.
    pub fn validate(&self, instance: &Value) -> Result<(), ValidationError> {
        self.errors_up_to(instance, 1).into_iter().next().map_or(Ok(()), Err)
    }

    /// Every way in which `instance` does not match the schema (at most a hundred), in the
    /// order of the schema's keywords; empty when it matches.
    pub fn errors(&self, instance: &Value) -> Vec<ValidationError> {
        self.errors_up_to(instance, MAX_ERRORS)
    }

    fn errors_up_to(&self, instance: &Value, limit: usize) -> Vec<ValidationError> {
        let mut evaluator = Evaluator::new(&self.registry, self.formats, limit);
        evaluator.root(&self.root, self.scope.clone(), instance);
        evaluator.errors
    }
}

/// What a [`Validator`] is built with.
#[derive(Debug, Clone)]
pub struct Options {
    draft: Draft,
    formats: bool,
    check_schema: bool,
    documents: Vec<(String, Value)>,
}

impl Options {
    /// The draft of a schema that names none by `$schema` (2020-12 unless said).
    pub fn draft(mut self, draft: Draft) -> Options {
        self.draft = draft;
        self
    }

    /// Whether `format` is asserted (a string that is not a valid `date-time` is refused) or
    /// only an annotation, as the drafts make it by default.
    pub fn assert_formats(mut self, asserted: bool) -> Options {
        self.formats = asserted;
        self
    }

    /// Whether the schema is checked against its draft's meta-schema before it is used (yes
    /// unless said): a schema its meta-schema refuses is a [`SchemaError`].
    pub fn check_schema(mut self, checked: bool) -> Options {
        self.check_schema = checked;
        self
    }

    /// Another document that the schema's `$ref`s may reach, by its URI (nothing is fetched:
    /// a reference to anything but these and the drafts' meta-schemas is a [`SchemaError`]).
    pub fn document(mut self, uri: impl Into<String>, document: Value) -> Options {
        self.documents.push((uri.into(), document));
        self
    }

    /// The validator of `schema` (a copy of it).
    pub fn build(self, schema: &Value) -> Result<Validator, SchemaError> {
        self.build_owned(schema.clone())
    }

    /// The validator of `schema`, which it keeps.
    pub fn build_owned(self, schema: Value) -> Result<Validator, SchemaError> {
        if self.check_schema
            && let Err(error) = check_against_meta_schema(&schema, self.draft)
        {
            let at = error.instance_path();
            let place = if at.is_empty() { String::new() } else { format!(" (at {at})") };
            return Err(SchemaError::new(format!("not a valid schema: {error}{place}")));
        }
        let mut registry = Registry::default();
        let index = registry.add(DEFAULT_BASE, schema, self.draft)?;
        for (uri, document) in self.documents {
            let draft = Draft::named_by(&document).unwrap_or(self.draft);
            registry.add(&uri, document, draft)?;
        }
        registry.complete(index)?;
        let root = Location { document: index, pointer: String::new() };
        let scope = registry.scope(&root, DEFAULT_BASE, self.draft);
        Ok(Validator { registry, root, scope, formats: self.formats })
    }
}

/// The validator of `draft`'s meta-schema, built once.
fn meta_validator(draft: Draft) -> &'static Validator {
    static BUILT: [OnceLock<Validator>; 5] = [const { OnceLock::new() }; 5];
    BUILT[draft as usize].get_or_init(|| {
        let (document, _) =
            meta_schemas::document(meta_schemas::meta_schema_uri(draft)).expect("the crate's meta-schemas are JSON");
        Validator::options()
            .draft(draft)
            .check_schema(false)
            .build(&document)
            .expect("the crate's meta-schemas compile")
    })
}

/// Checks that `schema` is a schema of the draft its `$schema` names (else of `default`): the
/// first error when it is not.
pub(crate) fn check_against_meta_schema(schema: &Value, default: Draft) -> Result<(), ValidationError> {
    let draft = Draft::named_by(schema).unwrap_or(default);
    meta_validator(draft).errors(schema).into_iter().next().map_or(Ok(()), Err)
}
