//! `#[prompt]`: an async function that renders a prompt (its parameters are the prompt's
//! arguments), or a `const` template string whose `{placeholders}` are.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use syn::spanned::Spanned;

use super::Options;
use super::params::{self, Completion, Param};
use crate::errors::Errors;
use crate::names::{snake_case, valid_tool_name};
use crate::tool::parse::doc_comment;

const FUNCTION_OPTIONS: &[&str] = &["name", "title", "description", "scopes"];
const TEMPLATE_OPTIONS: &[&str] = &["name", "title", "description", "describe", "optional", "complete", "scopes"];

pub(crate) fn expand(attr: TokenStream, item: TokenStream) -> syn::Result<TokenStream> {
    match syn::parse2::<syn::Item>(item)? {
        syn::Item::Fn(function) => expand_function(Options::parse(attr, FUNCTION_OPTIONS)?, function),
        syn::Item::Const(constant) => expand_template(Options::parse(attr, TEMPLATE_OPTIONS)?, constant),
        other => Err(syn::Error::new(
            other.span(),
            "`#[prompt]` goes on an async function that renders the prompt, or on a `const` template string",
        )),
    }
}

/// The name, description and title settings shared by both forms.
fn common(
    options: &Options,
    default_name: String,
    attrs: &[syn::Attribute],
    span: proc_macro2::Span,
    errors: &mut Errors,
) -> (String, Vec<TokenStream>) {
    let name = match options.string("name") {
        Ok(Some(name)) => name.value(),
        Ok(None) => default_name,
        Err(error) => {
            errors.push(error);
            String::new()
        }
    };
    if !valid_tool_name(&name) {
        errors.add(
            span,
            format!(
                "`{name}` is not a valid prompt name: use 1 to 128 characters from A-Z, a-z, 0-9, `_`, `-` and `.`"
            ),
        );
    }
    let mut settings = Vec::new();
    let description =
        options.string("description").ok().flatten().map(|text| text.value()).or_else(|| doc_comment(attrs));
    match description {
        Some(description) => settings.push(quote! { .description(#description) }),
        None => errors
            .add(span, format!("prompt `{name}` has no description: add a `///` doc comment saying what it is for")),
    }
    if let Ok(Some(title)) = options.string("title") {
        settings.push(quote! { .title(#title) });
    }
    match options.scopes() {
        Ok(scopes) => settings.extend(scopes),
        Err(error) => errors.push(error),
    }
    (name, settings)
}

fn expand_function(options: Options, mut function: syn::ItemFn) -> syn::Result<TokenStream> {
    let mut errors = Errors::default();
    crate::errors::require_async(&function.sig, "#[prompt]", &mut errors);
    let ident = function.sig.ident.clone();
    let (name, mut settings) =
        common(&options, snake_case(&ident.to_string()), &function.attrs, ident.span(), &mut errors);
    let params = params::parse(&mut function.sig, "prompt", &mut errors);
    let mut reads = Vec::new();
    let mut call_args = Vec::new();
    for param in &params {
        match param {
            Param::Context => call_args.push(quote! { ::core::clone::Clone::clone(&__call.context) }),
            Param::Value { ident, ty, description, completion } => {
                let key = ident.to_string();
                let text = quote! { ::std::string::String };
                let required = match crate::tool::parse::last_segment(ty).map(|segment| segment.ident.to_string()) {
                    Some(segment) if segment == "String" => true,
                    Some(segment)
                        if segment == "Option" && quote!(#ty).to_string().replace(' ', "").ends_with("<String>") =>
                    {
                        false
                    }
                    _ => {
                        errors.add(ty.span(), "prompt arguments are text: take `String`, or `Option<String>` for an optional one, and parse inside");
                        true
                    }
                };
                let read = if required {
                    quote! { let #ident: #text = __call.arguments.get(#key).cloned().unwrap_or_default(); }
                } else {
                    quote! { let #ident: ::core::option::Option<#text> = __call.arguments.get(#key).cloned(); }
                };
                reads.push(read);
                call_args.push(quote! { #ident });
                let description = description.as_ref().map_or(key.clone(), syn::LitStr::value);
                settings.push(quote! { .argument(#key, #description, #required) });
                settings.extend(completion_setting(&key, completion.as_ref()));
            }
        }
    }
    errors.finish()?;
    let builder = format_ident!("{}_prompt", snake_case(&ident.to_string()));
    let vis = &function.vis;
    let doc = format!("The `{name}` prompt: [`{ident}`] as a `wharf::PromptDef`, made by `#[prompt]`.");
    Ok(quote! {
        #function

        #[doc = #doc]
        #vis fn #builder() -> ::wharf::PromptDef {
            ::wharf::PromptDef::new(#name, |__call: ::wharf::prompt::PromptCall| async move {
                #(#reads)*
                #ident(#(#call_args),*).await
            })
            #(#settings)*
        }
    })
}

fn completion_setting(key: &str, completion: Option<&Completion>) -> Option<TokenStream> {
    match completion? {
        Completion::Values(values) => Some(quote! { .complete_from(#key, #values) }),
        Completion::Function(function) => Some(quote! { .complete(#key, #function) }),
    }
}

/// The `{placeholder}` names of a template, `{{` and `}}` being literal braces.
fn placeholders(template: &str) -> Result<Vec<String>, String> {
    let mut names = Vec::new();
    let mut chars = template.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '{' if chars.peek() == Some(&'{') => {
                chars.next();
            }
            '}' if chars.peek() == Some(&'}') => {
                chars.next();
            }
            '{' => {
                let name: String = chars.by_ref().take_while(|c| *c != '}').collect();
                if name.is_empty() || !name.chars().all(|c| c.is_alphanumeric() || c == '_') {
                    return Err(format!(
                        "`{{{name}}}` is not a placeholder: use `{{name}}` with letters, digits and `_`"
                    ));
                }
                if !names.contains(&name) {
                    names.push(name);
                }
            }
            '}' => return Err("a lone `}`: write `}}` for a literal brace".to_owned()),
            _ => {}
        }
    }
    Ok(names)
}

/// `key = "text"` pairs, or bare keys, inside `describe(...)`, `optional(...)`, `complete(...)`.
fn pairs(tokens: &TokenStream) -> syn::Result<Vec<(syn::Ident, Option<syn::Expr>)>> {
    let mut found = Vec::new();
    let parser = syn::meta::parser(|meta| {
        let key = meta.path.get_ident().cloned().ok_or_else(|| meta.error("expected a placeholder name"))?;
        let value = if meta.input.peek(syn::Token![=]) { Some(meta.value()?.parse()?) } else { None };
        found.push((key, value));
        Ok(())
    });
    syn::parse::Parser::parse2(parser, tokens.clone())?;
    Ok(found)
}

fn expand_template(options: Options, constant: syn::ItemConst) -> syn::Result<TokenStream> {
    let mut errors = Errors::default();
    let ident = &constant.ident;
    let default_name = ident.to_string().to_lowercase();
    let (name, mut settings) = common(&options, default_name, &constant.attrs, ident.span(), &mut errors);
    let syn::Expr::Lit(syn::ExprLit { lit: syn::Lit::Str(template), .. }) = &*constant.expr else {
        return Err(syn::Error::new(constant.expr.span(), "a `#[prompt]` template is a string literal"));
    };
    let names = match placeholders(&template.value()) {
        Ok(names) => names,
        Err(problem) => return Err(syn::Error::new(template.span(), problem)),
    };
    let mut descriptions = std::collections::HashMap::new();
    let mut optional = Vec::new();
    let mut completions = Vec::new();
    for (group, target) in [("describe", 0), ("optional", 1), ("complete", 2)] {
        let Some((_, tokens)) = options.group(group) else { continue };
        for (key, value) in pairs(tokens)? {
            if !names.contains(&key.to_string()) {
                errors.add(
                    key.span(),
                    format!(
                        "`{key}` is not a placeholder of this template; its placeholders are: {}",
                        names.join(", ")
                    ),
                );
                continue;
            }
            match (target, value) {
                (0, Some(syn::Expr::Lit(syn::ExprLit { lit: syn::Lit::Str(text), .. }))) => {
                    descriptions.insert(key.to_string(), text.value());
                }
                (1, None) => optional.push(key.to_string()),
                (2, Some(values)) => completions.push((key.to_string(), values)),
                _ => errors.add(key.span(), format!("write `{group}({key} = ...)` as the documentation shows")),
            }
        }
    }
    errors.finish()?;
    for placeholder in &names {
        let description = descriptions.get(placeholder).cloned().unwrap_or_else(|| placeholder.clone());
        let required = !optional.contains(placeholder);
        settings.push(quote! { .argument(#placeholder, #description, #required) });
    }
    for (key, values) in &completions {
        settings.push(quote! { .complete_from(#key, #values) });
    }
    let builder = format_ident!("{}_prompt", name.replace(['.', '-'], "_"));
    let vis = &constant.vis;
    let doc = format!("The `{name}` prompt: the template [`{ident}`] as a `wharf::PromptDef`, made by `#[prompt]`.");
    Ok(quote! {
        #constant

        #[doc = #doc]
        #vis fn #builder() -> ::wharf::PromptDef {
            ::wharf::PromptDef::template(#name, #ident)
            #(#settings)*
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_are_found_and_braces_escaped() {
        assert_eq!(placeholders("Review {code} in {style} ({style}) {{literal}}").unwrap(), ["code", "style"]);
        assert!(placeholders("a {bad name}").is_err());
        assert!(placeholders("a } b").is_err());
    }
}
