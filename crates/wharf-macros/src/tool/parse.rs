//! Reading `#[tool(...)]`, the function's doc comment and its parameters (with their
//! `#[arg(...)]` constraints) into a [`ToolSpec`]; `#[arg]` attributes are taken off the
//! function, which is otherwise left as written.

use proc_macro2::{Span, TokenStream};
use syn::spanned::Spanned;
use syn::{Expr, FnArg, Ident, LitStr, Pat, Type};

use crate::errors::Errors;

/// What `#[tool(...)]` says.
#[derive(Default)]
pub(crate) struct ToolOptions {
    pub(crate) name: Option<LitStr>,
    pub(crate) title: Option<LitStr>,
    pub(crate) description: Option<LitStr>,
    pub(crate) read_only: bool,
    pub(crate) destructive: bool,
    pub(crate) idempotent: bool,
    pub(crate) open_world: bool,
    pub(crate) icons: Vec<LitStr>,
    pub(crate) task: Option<LitStr>,
    /// `idempotency = "client" | "derived"`: where the key of a call that takes effect once
    /// comes from.
    pub(crate) idempotency: Option<LitStr>,
    pub(crate) scopes: Vec<LitStr>,
    /// `ui = "ui://..."`: the MCP Apps view that renders the tool's results.
    pub(crate) ui: Option<LitStr>,
    /// `visibility = ["model", "app"]`: who may call the tool, as written.
    pub(crate) visibility: Option<Vec<LitStr>>,
}

const TOOL_OPTIONS: &str = "name, title, description, read_only, destructive, idempotent, open_world, icon, task, idempotency, scopes, ui, visibility";

impl ToolOptions {
    pub(crate) fn parse(attr: TokenStream) -> syn::Result<ToolOptions> {
        let mut options = ToolOptions::default();
        let parser = syn::meta::parser(|meta| {
            let key = meta.path.get_ident().map(Ident::to_string).unwrap_or_default();
            match key.as_str() {
                "name" => options.name = Some(meta.value()?.parse()?),
                "title" => options.title = Some(meta.value()?.parse()?),
                "description" => options.description = Some(meta.value()?.parse()?),
                "icon" => options.icons.push(meta.value()?.parse()?),
                "task" => options.task = Some(meta.value()?.parse()?),
                "idempotency" => options.idempotency = Some(meta.value()?.parse()?),
                "scopes" => options.scopes = crate::scopes::parse(&meta.value()?.parse()?)?,
                "ui" => options.ui = Some(meta.value()?.parse()?),
                "visibility" => options.visibility = Some(string_list(&meta.value()?.parse()?, "visibility")?),
                "read_only" => options.read_only = true,
                "destructive" => options.destructive = true,
                "idempotent" => options.idempotent = true,
                "open_world" => options.open_world = true,
                _ => {
                    return Err(
                        meta.error(format!("unknown `#[tool]` option `{key}`; the options are: {TOOL_OPTIONS}"))
                    );
                }
            }
            Ok(())
        });
        syn::parse::Parser::parse2(parser, attr)?;
        Ok(options)
    }
}

/// The string literals of `key = ["...", ...]`.
fn string_list(value: &Expr, key: &str) -> syn::Result<Vec<LitStr>> {
    let Expr::Array(array) = value else {
        return Err(syn::Error::new(value.span(), format!("`{key}` takes a list of strings: `{key} = [\"app\"]`")));
    };
    let mut strings = Vec::new();
    for element in &array.elems {
        let Expr::Lit(syn::ExprLit { lit: syn::Lit::Str(string), .. }) = element else {
            return Err(syn::Error::new(element.span(), format!("each of `{key}` is a string literal")));
        };
        strings.push(string.clone());
    }
    Ok(strings)
}

/// A constraint from `#[arg(...)]`: its key and value, as written.
pub(crate) struct Constraint {
    pub(crate) key: Ident,
    pub(crate) value: Option<Expr>,
}

/// A parameter that is one of the tool's arguments.
pub(crate) struct Argument {
    pub(crate) ident: Ident,
    pub(crate) ty: Type,
    pub(crate) rename: Option<LitStr>,
    pub(crate) description: Option<LitStr>,
    pub(crate) default: Option<Expr>,
    pub(crate) constraints: Vec<Constraint>,
    /// Constraints on each item of a list, from `items(...)`.
    pub(crate) item_constraints: Vec<Constraint>,
}

/// How a parameter is filled when the tool is called.
pub(crate) enum Param {
    /// From the call's arguments.
    Argument(Box<Argument>),
    /// By an extractor (`RequestContext`, `State<T>`, `SessionData<T>`, `Args<T>`), passed through.
    Extractor { ty: Box<Type>, span: Span },
    /// `self`: `&self` in an impl block, where `Arc<Self>` provides it; nothing else.
    Receiver { span: Span, shared_ref: bool },
    /// A pattern other than a plain name.
    Pattern(Span),
}

/// Everything the macro knows about one tool.
pub(crate) struct ToolSpec {
    pub(crate) options: ToolOptions,
    pub(crate) docs: Option<String>,
    pub(crate) params: Vec<Param>,
}

pub(crate) const ARG_KEYS: &str = "description, min, max, exclusive_min, exclusive_max, multiple_of, min_length, \
     max_length, pattern, format, one_of, min_items, max_items, unique_items, items(...), default, rename";

/// The last segment of a type path, such as `RequestContext` for `wharf::RequestContext`.
pub(crate) fn last_segment(ty: &Type) -> Option<&syn::PathSegment> {
    match ty {
        Type::Path(path) if path.qself.is_none() => path.path.segments.last(),
        _ => None,
    }
}

fn is_extractor(ty: &Type) -> bool {
    last_segment(ty).is_some_and(|segment| {
        matches!(segment.ident.to_string().as_str(), "RequestContext" | "State" | "SessionData" | "Args")
    })
}

/// The doc comment of `attrs`, one space after `///` removed from each line.
pub(crate) fn doc_comment(attrs: &[syn::Attribute]) -> Option<String> {
    let lines: Vec<String> = attrs
        .iter()
        .filter(|attr| attr.path().is_ident("doc"))
        .filter_map(|attr| match &attr.meta {
            syn::Meta::NameValue(syn::MetaNameValue {
                value: Expr::Lit(syn::ExprLit { lit: syn::Lit::Str(text), .. }),
                ..
            }) => Some(text.value()),
            _ => None,
        })
        .map(|line| line.strip_prefix(' ').unwrap_or(&line).trim_end().to_owned())
        .collect();
    let text = lines.join("\n").trim().to_owned();
    (!text.is_empty()).then_some(text)
}

impl ToolSpec {
    /// Reads a function's signature; `#[arg]` attributes are removed from its parameters.
    pub(crate) fn from_signature(
        options: ToolOptions,
        attrs: &[syn::Attribute],
        sig: &mut syn::Signature,
    ) -> syn::Result<ToolSpec> {
        let mut errors = Errors::default();
        let mut params = Vec::new();
        for input in &mut sig.inputs {
            match input {
                FnArg::Receiver(receiver) => params.push(Param::Receiver {
                    span: receiver.span(),
                    shared_ref: receiver.reference.is_some()
                        && receiver.mutability.is_none()
                        && receiver.colon_token.is_none(),
                }),
                FnArg::Typed(typed) => {
                    let arg_attrs: Vec<syn::Attribute> =
                        typed.attrs.iter().filter(|attr| attr.path().is_ident("arg")).cloned().collect();
                    typed.attrs.retain(|attr| !attr.path().is_ident("arg"));
                    let ty = (*typed.ty).clone();
                    if is_extractor(&ty) {
                        if let Some(attr) = arg_attrs.first() {
                            errors.add(attr.span(), "`#[arg]` describes tool arguments; extractors take no `#[arg]`");
                        }
                        params.push(Param::Extractor { span: ty.span(), ty: Box::new(ty) });
                        continue;
                    }
                    let Pat::Ident(pat) = &*typed.pat else {
                        params.push(Param::Pattern(typed.pat.span()));
                        continue;
                    };
                    let mut argument = Argument {
                        ident: pat.ident.clone(),
                        ty,
                        rename: None,
                        description: None,
                        default: None,
                        constraints: Vec::new(),
                        item_constraints: Vec::new(),
                    };
                    for attr in &arg_attrs {
                        if let Err(error) = parse_arg_attr(attr, &mut argument) {
                            errors.push(error);
                        }
                    }
                    params.push(Param::Argument(Box::new(argument)));
                }
            }
        }
        errors.finish()?;
        Ok(ToolSpec { options, docs: doc_comment(attrs), params })
    }
}

fn parse_arg_attr(attr: &syn::Attribute, argument: &mut Argument) -> syn::Result<()> {
    attr.parse_nested_meta(|meta| {
        let key = meta.path.get_ident().cloned().ok_or_else(|| meta.error("expected a constraint name"))?;
        match key.to_string().as_str() {
            "description" => argument.description = Some(meta.value()?.parse()?),
            "rename" => argument.rename = Some(meta.value()?.parse()?),
            "default" => argument.default = Some(meta.value()?.parse()?),
            "unique_items" => argument.constraints.push(Constraint { key, value: None }),
            "items" => meta.parse_nested_meta(|item| {
                let key = item.path.get_ident().cloned().ok_or_else(|| item.error("expected a constraint name"))?;
                match key.to_string().as_str() {
                    "min" | "max" | "exclusive_min" | "exclusive_max" | "multiple_of" | "min_length" | "max_length"
                    | "pattern" | "format" | "one_of" => {
                        let value: Expr = item.value()?.parse()?;
                        argument.item_constraints.push(Constraint { key, value: Some(value) });
                        Ok(())
                    }
                    other => Err(item.error(format!(
                        "unknown item constraint `{other}`; `items(...)` takes: min, max, exclusive_min, \
                         exclusive_max, multiple_of, min_length, max_length, pattern, format, one_of"
                    ))),
                }
            })?,
            "min" | "max" | "exclusive_min" | "exclusive_max" | "multiple_of" | "min_length" | "max_length"
            | "pattern" | "format" | "one_of" | "min_items" | "max_items" => {
                let value: Expr = meta.value()?.parse()?;
                argument.constraints.push(Constraint { key, value: Some(value) });
            }
            other => {
                return Err(
                    meta.error(format!("unknown argument constraint `{other}`; the constraints are: {ARG_KEYS}"))
                );
            }
        }
        Ok(())
    })
}
