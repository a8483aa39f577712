//! Attribute macros for Wharf, re-exported by the `wharf` crate.
//!
//! - [`macro@tool`] turns an async function into a tool: `name_tool()` returns its
//!   `wharf::ToolDef`, with the doc comment as description, the parameters as typed arguments
//!   (constraints from `#[arg(...)]` land in the JSON Schema and are enforced at run time) and
//!   `RequestContext`/`State<T>` parameters passed through as extractors.
//!
//! The pipeline is the same for every macro: parse everything (`tool/parse.rs`), check
//! everything and report every error at its span (`tool/check.rs`), then generate code with
//! absolute paths (`tool/expand.rs`).

mod names;
mod tool;

use proc_macro::TokenStream;

/// Makes an async function a Wharf tool.
///
/// ```ignore
/// /// Greets a user by name.
/// #[wharf::tool(read_only)]
/// async fn greet_user(
///     #[arg(description = "Who to greet", min_length = 1, max_length = 100)] name: String,
///     #[arg(min = 0, max = 150)] age: Option<u32>,
/// ) -> String {
///     format!("Hello, {name}!")
/// }
///
/// let server = wharf::Server::builder("demo", "1.0").tool(greet_user_tool()).build()?;
/// ```
///
/// Options: `name = "..."` (default: the function's name in snake_case), `title = "..."`,
/// `description = "..."` (default: the doc comment), `read_only`, `destructive`,
/// `idempotent`, `open_world`, `icon = "https://..."`, `task = "optional" | "required"`.
/// A `Json<T>` (or `Result<Json<T>, E>`) return type declares `T` as the output schema.
///
/// Argument constraints: `description`, `min`, `max`, `exclusive_min`, `exclusive_max`,
/// `multiple_of`, `min_length`, `max_length`, `pattern`, `format` (`email`, `uri`, `uuid`,
/// `date-time`, `date`, `time`, `ipv4`, `ipv6`, `hostname`), `one_of = [..]`, `min_items`,
/// `max_items`, `unique_items`, `default = <expr>`, `rename = "..."`.
#[proc_macro_attribute]
pub fn tool(attr: TokenStream, item: TokenStream) -> TokenStream {
    tool::expand(attr.into(), item.into()).unwrap_or_else(syn::Error::into_compile_error).into()
}
