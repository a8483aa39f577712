//! Attribute macros for Wharf, re-exported by the `wharf` crate.
//!
//! - [`macro@prompt`], [`macro@resource`] and [`macro@resource_template`] do the same for the
//!   other components.
//! - [`macro@tool`] turns an async function into a tool: `name_tool()` returns its
//!   `wharf::ToolDef`, with the doc comment as description, the parameters as typed arguments
//!   (constraints from `#[arg(...)]` land in the JSON Schema and are enforced at run time) and
//!   `RequestContext`/`State<T>` parameters passed through as extractors.
//!
//! The pipeline is the same for every macro: parse everything (`tool/parse.rs`), check
//! everything and report every error at its span (`tool/check.rs`), then generate code with
//! absolute `::wharf` paths (`tool/expand.rs`), so that a user's imports never change what an
//! expansion means. Misuses are trybuild cases in `crates/wharf/tests/ui/`, each with its
//! expected message.
//!
//! # Floors, from the bottom up
//! A file imports only from floors below its own.
//!
//! 1. `errors.rs` (errors collected to report together, each at its span), `names.rs`
//!    (snake_case tool names, and the pattern names must match), `scopes.rs` (`scopes = [..]`,
//!    each an RFC 6749 scope token, checked where it is written).
//! 2. `tool/parse.rs` (the attribute, the doc comment, and the parameters with their `#[arg]`
//!    constraints), `component/mod.rs` (the options `#[prompt]` and `#[resource]` share).
//! 3. `tool/check.rs` (every mistake, each at its span), `component/params.rs` (the parameter
//!    reading the other components share).
//! 4. `tool/expand.rs` (the `ToolDef` with absolute paths: an arguments struct deriving
//!    `Deserialize` and `JsonSchema`, a closure passing extractors through),
//!    `component/prompt.rs` (`#[prompt]`: functions and `const` templates),
//!    `component/resource.rs` (`#[resource]` and `#[resource_template]`).
//! 5. `tool/mod.rs` (`#[tool]` on async functions and on impl blocks), `view.rs`
//!    (`include_view!`: a directory of assets inlined into one HTML document at build time).

mod component;
mod errors;
mod names;
mod scopes;
mod tool;
mod view;

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
/// `idempotent`, `open_world`, `icon = "https://..."`, `task = "optional" | "required"`,
/// `idempotency = "client" | "derived"` (each call takes effect once per key: the one the
/// client sends in `_meta["wharf/idempotencyKey"]`, or with `"derived"` one made from the
/// caller and the arguments when it sends none), `scopes = ["..."]`; with the `apps` feature, `ui = "ui://..."` (the MCP Apps view that
/// renders its results) and `visibility = ["model", "app"]` (who may call it).
/// A `Json<T>` (or `Result<Json<T>, E>`) return type declares `T` as the output schema.
///
/// Argument constraints: `description`, `min`, `max`, `exclusive_min`, `exclusive_max`,
/// `multiple_of`, `min_length`, `max_length`, `pattern`, `format` (`email`, `uri`, `uuid`,
/// `date-time`, `date`, `time`, `ipv4`, `ipv6`, `hostname`), `one_of = [..]`, `min_items`,
/// `max_items`, `unique_items`, `items(...)` (any of the above for each item of a list),
/// `default = <expr>`, `rename = "..."`.
#[proc_macro_attribute]
pub fn tool(attr: TokenStream, item: TokenStream) -> TokenStream {
    tool::expand(attr.into(), item.into()).unwrap_or_else(syn::Error::into_compile_error).into()
}

/// Makes a prompt of an async function (its `String`/`Option<String>` parameters are the
/// arguments) or of a `const` template string (its `{placeholders}` are).
///
/// ```ignore
/// /// Review code for quality.
/// #[wharf::prompt(describe(code = "The code", style = "How thorough"), optional(style), complete(style = ["detailed", "brief"]))]
/// const CODE_REVIEW: &str = "Review this code ({style}):\n{code}";
///
/// /// A greeting for the time of day.
/// #[wharf::prompt]
/// async fn time_based_greeting(#[arg(description = "Who")] name: String) -> String { format!("Hello {name}") }
///
/// // code_review_prompt() and time_based_greeting_prompt() return `wharf::PromptDef`s.
/// ```
///
/// Options: `name`, `title`, `description` (default: the doc comment); for templates also
/// `describe(..)`, `optional(..)` and `complete(..)`. Function parameters take
/// `#[arg(description = "...", complete = [...], complete_with = path)]`.
#[proc_macro_attribute]
pub fn prompt(attr: TokenStream, item: TokenStream) -> TokenStream {
    component::prompt::expand(attr.into(), item.into()).unwrap_or_else(syn::Error::into_compile_error).into()
}

/// Makes a resource of an async function: `#[resource("config://app", mime_type = "application/json")]`
/// gives `<name>_resource()`, a `wharf::ResourceDef`. Options: `name`, `title`, `description`
/// (default: the doc comment), `mime_type`. A `RequestContext` parameter is passed through.
#[proc_macro_attribute]
pub fn resource(attr: TokenStream, item: TokenStream) -> TokenStream {
    component::resource::expand(component::resource::Kind::Resource, attr.into(), item.into())
        .unwrap_or_else(syn::Error::into_compile_error)
        .into()
}

/// Makes a resource template of an async function whose parameters are the template's
/// variables, parsed into their types: `#[resource_template("users://{id}/profile")] async fn
/// profile(id: u32)` gives `profile_template()`, a `wharf::TemplateDef`. Variables complete with
/// `#[arg(complete = [...])]` or `#[arg(complete_with = path)]`.
#[proc_macro_attribute]
pub fn resource_template(attr: TokenStream, item: TokenStream) -> TokenStream {
    component::resource::expand(component::resource::Kind::Template, attr.into(), item.into())
        .unwrap_or_else(syn::Error::into_compile_error)
        .into()
}

/// An MCP Apps view written as a directory of assets, inlined into one HTML document when the
/// crate is built: `include_view!("views/dashboard")` reads `views/dashboard/index.html` (from
/// the crate's directory) and puts each `<script src>` and `<link rel="stylesheet" href>` that
/// names a file of that directory inside it, giving a `&'static str` for
/// `ResourceDef::view`. Links to other origins stay as they are (declare them in the view's
/// CSP). Editing a file rebuilds the crate.
#[proc_macro]
pub fn include_view(input: TokenStream) -> TokenStream {
    view::expand(input.into()).unwrap_or_else(syn::Error::into_compile_error).into()
}
