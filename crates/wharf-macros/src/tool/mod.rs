//! `#[tool]`: parse the attribute and the function (or every method of an impl block), check
//! them, generate the tool definitions.

mod check;
mod expand;
pub(crate) mod parse;

use std::collections::HashMap;

use proc_macro2::TokenStream;
use quote::quote;
use syn::spanned::Spanned;

use crate::errors::Errors;
use check::Place;

/// Expands `#[tool(attr)] item`, or returns every error found, each at its span.
pub(crate) fn expand(attr: TokenStream, item: TokenStream) -> syn::Result<TokenStream> {
    match syn::parse2::<syn::Item>(item)? {
        syn::Item::Fn(mut function) => {
            let options = parse::ToolOptions::parse(attr)?;
            let spec = parse::ToolSpec::from_signature(options, &function.attrs, &mut function.sig)?;
            check::check(&spec, &function.sig, Place::Free)?;
            Ok(expand::expand_function(&spec, &function))
        }
        syn::Item::Impl(item_impl) => expand_impl(attr, item_impl),
        other => Err(syn::Error::new(
            other.span(),
            "`#[tool]` goes on an async function, or on an impl block whose methods are all tools",
        )),
    }
}

/// Every method of the impl block becomes a tool; `tool_defs()` on an `Arc<Self>` lists them.
fn expand_impl(attr: TokenStream, mut item_impl: syn::ItemImpl) -> syn::Result<TokenStream> {
    let mut errors = Errors::default();
    if !attr.is_empty() {
        errors.add(attr.span(), "on an impl block, `#[tool]` takes no options: put `#[tool(...)]` on a method");
    }
    if !item_impl.generics.params.is_empty() || item_impl.trait_.is_some() {
        errors.add(item_impl.impl_token.span(), "`#[tool]` goes on an inherent impl block without generics");
    }
    let mut definitions = Vec::new();
    let mut names: HashMap<String, proc_macro2::Span> = HashMap::new();
    for item in &mut item_impl.items {
        let syn::ImplItem::Fn(method) = item else { continue };
        let options = match method.attrs.iter().position(|attr| attr.path().is_ident("tool")) {
            Some(index) => {
                let attr = method.attrs.remove(index);
                match &attr.meta {
                    syn::Meta::Path(_) => Ok(parse::ToolOptions::default()),
                    syn::Meta::List(list) => parse::ToolOptions::parse(list.tokens.clone()),
                    syn::Meta::NameValue(_) => Err(syn::Error::new(attr.span(), "write `#[tool(...)]`")),
                }
            }
            None => Ok(parse::ToolOptions::default()),
        };
        let spec = options.and_then(|options| parse::ToolSpec::from_signature(options, &method.attrs, &mut method.sig));
        let spec = match spec {
            Ok(spec) => spec,
            Err(error) => {
                errors.push(error);
                continue;
            }
        };
        if let Err(error) = check::check(&spec, &method.sig, Place::Method) {
            errors.push(error);
            continue;
        }
        let name = check::tool_name(&spec, &method.sig);
        let span = spec.options.name.as_ref().map_or(method.sig.ident.span(), |name| name.span());
        if names.insert(name.clone(), span).is_some() {
            errors.add(span, format!("two methods make a tool named `{name}`: give one `#[tool(name = \"...\")]`"));
        }
        let ident = method.sig.ident.clone();
        let has_self = spec.params.iter().any(|param| matches!(param, parse::Param::Receiver { .. }));
        definitions.push(expand::tool_def(&spec, &method.sig, |args| {
            if has_self {
                quote! { __this.#ident(#(#args),*).await }
            } else {
                quote! { Self::#ident(#(#args),*).await }
            }
        }));
    }
    if definitions.is_empty() && errors.is_empty() {
        errors.add(item_impl.impl_token.span(), "this impl block has no methods to make tools of");
    }
    errors.finish()?;
    let self_ty = &item_impl.self_ty;
    Ok(quote! {
        #item_impl

        impl #self_ty {
            /// The tools of this impl block, one per method, made by `#[tool]`.
            pub fn tool_defs(self: &::std::sync::Arc<Self>) -> ::std::vec::Vec<::wharf::ToolDef> {
                ::std::vec![#({
                    let __this = ::std::sync::Arc::clone(self);
                    #definitions
                }),*]
            }
        }
    })
}
