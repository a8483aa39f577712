//! Parameters of prompt and resource functions: the request context, or a value (a prompt
//! argument, a template variable) with its `#[arg(description, complete, complete_with)]`.

use syn::spanned::Spanned;
use syn::{Expr, FnArg, Ident, LitStr, Pat, Type};

use crate::errors::Errors;
use crate::tool::parse::last_segment;

/// Where a completion's values come from.
pub(crate) enum Completion {
    /// `complete = ["a", "b"]`: these, filtered by what the user typed.
    Values(Expr),
    /// `complete_with = path`: an async function of a `CompletionCall`.
    Function(Expr),
}

/// One parameter.
#[allow(clippy::large_enum_variant, reason = "a handful per function, only while compiling")]
pub(crate) enum Param {
    /// `RequestContext`.
    Context,
    /// A value the client gives.
    Value { ident: Ident, ty: Box<Type>, description: Option<LitStr>, completion: Option<Completion> },
}

/// True for `Option<...>`.
pub(crate) fn is_option(ty: &Type) -> bool {
    last_segment(ty).is_some_and(|segment| segment.ident == "Option")
}

/// Reads the parameters, taking their `#[arg]` attributes off.
pub(crate) fn parse(sig: &mut syn::Signature, what: &str, errors: &mut Errors) -> Vec<Param> {
    let mut params = Vec::new();
    for input in &mut sig.inputs {
        let FnArg::Typed(typed) = input else {
            errors.add(input.span(), format!("a {what} is a free function: it has no `self`"));
            continue;
        };
        let attrs: Vec<syn::Attribute> =
            typed.attrs.iter().filter(|attr| attr.path().is_ident("arg")).cloned().collect();
        typed.attrs.retain(|attr| !attr.path().is_ident("arg"));
        if last_segment(&typed.ty).is_some_and(|segment| segment.ident == "RequestContext") {
            params.push(Param::Context);
            continue;
        }
        let Pat::Ident(pat) = &*typed.pat else {
            errors.add(typed.pat.span(), format!("{what} parameters need plain names: they are the names clients use"));
            continue;
        };
        let (mut description, mut completion) = (None, None);
        for attr in &attrs {
            let parsed = attr.parse_nested_meta(|meta| {
                let key = meta.path.get_ident().map(Ident::to_string).unwrap_or_default();
                match key.as_str() {
                    "description" => description = Some(meta.value()?.parse()?),
                    "complete" => completion = Some(Completion::Values(meta.value()?.parse()?)),
                    "complete_with" => completion = Some(Completion::Function(meta.value()?.parse()?)),
                    _ => {
                        return Err(meta.error(format!(
                            "unknown `#[arg]` option `{key}` for a {what}; the options are: description, complete, \
                             complete_with"
                        )));
                    }
                }
                Ok(())
            });
            if let Err(error) = parsed {
                errors.push(error);
            }
        }
        params.push(Param::Value { ident: pat.ident.clone(), ty: typed.ty.clone(), description, completion });
    }
    params
}
