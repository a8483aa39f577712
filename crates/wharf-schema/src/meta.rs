//! A schema checked against the meta-schema of its draft.

use serde_json::Value;

use crate::draft::Draft;
use crate::error::ValidationError;

/// Checks that `schema` is a schema of the draft its `$schema` names (else of `default`): the
/// first error when it is not.
pub fn validate(schema: &Value, default: Draft) -> Result<(), ValidationError> {
    crate::validator::check_against_meta_schema(schema, default)
}
