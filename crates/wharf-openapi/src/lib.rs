//! An HTTP API's OpenAPI 3.0 or 3.1 document made into MCP tools: one per operation, named from
//! its `operationId` (or its method and path), its arguments' schema from its parameters and
//! request body, converted to JSON Schema 2020-12 with the document's `$ref`s resolved.
//!
//! ```
//! let document = serde_json::json!({
//!     "openapi": "3.1.0",
//!     "info": {"title": "Pets", "version": "1"},
//!     "paths": {"/pets/{id}": {"get": {
//!         "operationId": "getPet",
//!         "parameters": [{"name": "id", "in": "path", "required": true, "schema": {"type": "integer"}}],
//!         "responses": {"200": {"description": "the pet"}}
//!     }}}
//! });
//! let read = wharf_openapi::operations(&document).unwrap();
//! assert_eq!(read.tools[0].name, "getPet");
//! assert_eq!(read.tools[0].input_schema["required"], serde_json::json!(["id"]));
//! ```
//!
//! # Floors, from the bottom up
//! 1. `error.rs` ([`OpenApiError`], [`OpenApiErrorKind`]), `names.rs` (tool names within the
//!    rules, made unique).
//! 2. `schema.rs` (a schema of the document as JSON Schema 2020-12).
//! 3. `operation.rs` ([`operations`]: each operation as an [`OperationTool`]).
//! 4. `credentials.rs` ([`Credential`], never written out), `encode.rs` (arguments written
//!    into a path segment, a query, a header, a cookie, a form body, so that none can change
//!    the path or the host).
//! 5. `request.rs` ([`BaseUrl`]; one call as its request).
//! 6. `http.rs` (sending a request, bounded in time and size).
//! 7. `answer.rs` (an answer as a tool's result), `bundle.rs` (the documents references name,
//!    read when allowed and made part of the root).
//! 8. `openapi.rs` ([`OpenApi`]: the document, where calls go, what they carry, which operations
//!    are offered, as a server's tools).

mod error;
mod names;

mod schema;

mod operation;

mod credentials;
mod encode;

mod request;

mod answer;
mod http;

mod bundle;

mod openapi;

pub use credentials::Credential;
pub use error::{OpenApiError, OpenApiErrorKind};
pub use openapi::OpenApi;
pub use operation::{Body, BodyKind, OperationTool, Operations, Parameter, Place, operations};
pub use request::BaseUrl;
