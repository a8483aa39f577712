//! `#[resource("uri")]` and `#[resource_template("scheme://{var}")]`: async functions that read a
//! resource; a template's parameters are its variables, parsed into their types.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use syn::spanned::Spanned;

use super::Options;
use super::params::{self, Completion, Param};
use crate::errors::Errors;
use crate::names::snake_case;
use crate::tool::parse::doc_comment;

const OPTIONS: &[&str] = &["name", "title", "description", "mime_type", "scopes"];

/// Which of the two attributes.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Resource,
    Template,
}

/// The variable names of an RFC 6570 template: `{var}`, `{+var}`, `{?a,b}`, `{/path*}`, `{v:3}`.
fn variables(template: &str) -> Result<Vec<String>, String> {
    let mut names = Vec::new();
    let mut rest = template;
    while let Some(start) = rest.find('{') {
        let end = rest[start..].find('}').ok_or("an expression is not closed: a `{` without its `}`")? + start;
        let expression = rest[start + 1..end].trim_start_matches(['+', '#', '.', '/', ';', '?', '&']);
        for variable in expression.split(',') {
            let variable = variable.trim_end_matches('*');
            let variable = variable.split(':').next().unwrap_or_default();
            if variable.is_empty() || !variable.chars().all(|c| c.is_alphanumeric() || c == '_' || c == '.') {
                return Err(format!("`{{{}}}` is not a template expression", &rest[start + 1..end]));
            }
            names.push(variable.to_owned());
        }
        rest = &rest[end + 1..];
    }
    Ok(names)
}

pub(crate) fn expand(kind: Kind, attr: TokenStream, item: TokenStream) -> syn::Result<TokenStream> {
    let attribute = if kind == Kind::Resource { "resource" } else { "resource_template" };
    let what = format!("#[{attribute}]");
    let options = Options::parse(attr.clone(), OPTIONS)?;
    let Some(address) = options.positional.clone() else {
        let example = if kind == Kind::Resource { "\"config://app\"" } else { "\"users://{id}/profile\"" };
        return Err(syn::Error::new(attr.span(), format!("`{what}` needs its URI first: `#[{attribute}({example})]`")));
    };
    let mut function: syn::ItemFn = syn::parse2(item)?;
    let mut errors = Errors::default();
    crate::errors::require_async(&function.sig, &what, &mut errors);
    let ident = function.sig.ident.clone();
    let name = match options.string("name")? {
        Some(name) => name.value(),
        None => snake_case(&ident.to_string()),
    };
    let mut settings = Vec::new();
    let description = options.string("description")?.map(|text| text.value()).or_else(|| doc_comment(&function.attrs));
    if let Some(description) = description {
        settings.push(quote! { .description(#description) });
    }
    if let Some(title) = options.string("title")? {
        settings.push(quote! { .title(#title) });
    }
    if let Some(mime_type) = options.string("mime_type")? {
        settings.push(quote! { .mime_type(#mime_type) });
    }
    settings.extend(options.scopes()?);
    let template_variables = match kind {
        Kind::Template => match variables(&address.value()) {
            Ok(found) if found.is_empty() => {
                errors.add(address.span(), "a template without `{variables}` is a plain resource: use `#[resource]`");
                Vec::new()
            }
            Ok(found) => found,
            Err(problem) => {
                errors.add(address.span(), problem);
                Vec::new()
            }
        },
        Kind::Resource => Vec::new(),
    };
    let params = params::parse(&mut function.sig, "resource", &mut errors);
    let mut reads = Vec::new();
    let mut call_args = Vec::new();
    for param in &params {
        match param {
            Param::Context => call_args.push(quote! { ::core::clone::Clone::clone(&__call.context) }),
            Param::Value { ident, ty, completion, .. } => {
                let key = ident.to_string();
                if kind == Kind::Resource {
                    errors.add(ident.span(), "a `#[resource]` has a fixed URI and takes no values: use `#[resource_template(\"scheme://{...}\")]` for a family of URIs");
                    continue;
                }
                if !template_variables.contains(&key) {
                    errors.add(
                        ident.span(),
                        format!(
                            "`{key}` is not a variable of `{}`; its variables are: {}",
                            address.value(),
                            template_variables.join(", ")
                        ),
                    );
                    continue;
                }
                if params::is_option(ty) {
                    reads.push(quote! {
                        let #ident: #ty = match __call.variable(#key) {
                            ::core::option::Option::Some(_) => ::core::option::Option::Some(__call.parse(#key)?),
                            ::core::option::Option::None => ::core::option::Option::None,
                        };
                    });
                } else {
                    reads.push(quote! { let #ident: #ty = __call.parse(#key)?; });
                }
                call_args.push(quote! { #ident });
                match completion {
                    Some(Completion::Values(values)) => settings.push(quote! { .complete_from(#key, #values) }),
                    Some(Completion::Function(function)) => settings.push(quote! { .complete(#key, #function) }),
                    None => {}
                }
            }
        }
    }
    errors.finish()?;
    let vis = &function.vis;
    let (builder, constructor, returns) = match kind {
        Kind::Resource => (
            format_ident!("{}_resource", snake_case(&ident.to_string())),
            quote! { ::wharf::ResourceDef::dynamic },
            quote! { ::wharf::ResourceDef },
        ),
        Kind::Template => (
            format_ident!("{}_template", snake_case(&ident.to_string())),
            quote! { ::wharf::TemplateDef::new },
            quote! { ::wharf::TemplateDef },
        ),
    };
    let doc = format!(
        "The `{name}` resource at `{}`: [`{ident}`] as a `wharf::{}`, made by `{what}`.",
        address.value(),
        if kind == Kind::Resource { "ResourceDef" } else { "TemplateDef" }
    );
    Ok(quote! {
        #function

        #[doc = #doc]
        #vis fn #builder() -> #returns {
            #constructor(#address, #name, |__call: ::wharf::resource::ResourceCall| async move {
                let __read = async { #(#reads)* ::core::result::Result::Ok::<_, ::wharf::RpcError>(#ident(#(#call_args),*).await) };
                __read.await
            })
            #(#settings)*
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn template_variables_are_read_from_every_kind_of_expression() {
        assert_eq!(variables("users://{id}/profile").unwrap(), ["id"]);
        assert_eq!(variables("files://{+path}{?rev,mode}").unwrap(), ["path", "rev", "mode"]);
        assert_eq!(variables("x://{/segments*}{name:3}").unwrap(), ["segments", "name"]);
        assert!(variables("x://{unclosed").is_err());
        assert!(variables("x://{bad name}").is_err());
    }
}
