//! JSON Schema checked by Wharf itself: drafts 4, 6, 7, 2019-09 and 2020-12 (the default of
//! MCP's schemas since 2025-11-25), with `$ref` across resources and anchors, `$dynamicRef`
//! and `$recursiveRef`, `unevaluatedProperties` and `unevaluatedItems`, ECMA-262 patterns, and
//! `format` asserted when asked. Nothing is fetched: a schema reaches the drafts' meta-schemas
//! and the documents it is given.
//!
//! Floors, from the bottom: `draft` (what sets the drafts apart), `uri` (references resolved),
//! `value` (equality and numbers as JSON Schema means them), `pattern` and `format`, `error`,
//! `path` (where a value is), `keywords` (a schema's, found at once), `meta_schemas` (the
//! drafts' own), `registry` (every resource, indexed once), `evaluate` (the keywords),
//! `validator` (the public face), `meta` (a schema checked against its meta-schema).
//!
//! ```
//! use serde_json::json;
//! use wharf_schema::Validator;
//!
//! let validator = Validator::new(&json!({"type": "object", "required": ["name"]})).unwrap();
//! assert!(validator.is_valid(&json!({"name": "wharf"})));
//! let errors = validator.errors(&json!({}));
//! assert_eq!(errors[0].to_string(), "\"name\" is a required property");
//! ```

mod draft;
mod error;
mod evaluate;
mod format;
mod keywords;
pub mod meta;
mod meta_schemas;
mod path;
mod pattern;
mod registry;
mod uri;
mod validator;
mod value;

pub use draft::Draft;
pub use error::{SchemaError, ValidationError};
pub use validator::{Options, Validator};
