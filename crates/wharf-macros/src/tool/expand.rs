//! The code `#[tool]` generates: the function as written (without its `#[arg]` attributes),
//! and beside it `<name>_tool()`, which builds the `wharf::ToolDef`. Every path is absolute, so
//! the expansion works whatever the user imported.

use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::Type;
use syn::spanned::Spanned;

use super::check::tool_name;
use super::parse::{Argument, Param, ToolSpec, last_segment};
use crate::names::snake_case;

/// A free function, and beside it `<name>_tool()`.
pub(crate) fn expand_function(spec: &ToolSpec, function: &syn::ItemFn) -> TokenStream {
    let vis = &function.vis;
    let ident = &function.sig.ident;
    let builder = format_ident!("{}_tool", snake_case(&ident.to_string()));
    let name = tool_name(spec, &function.sig);
    let doc = format!("The `{name}` tool: [`{ident}`] as a `wharf::ToolDef`, made by `#[tool]`.");
    let definition = tool_def(spec, &function.sig, |args| quote! { #ident(#(#args),*).await });
    quote! {
        #function

        #[doc = #doc]
        #vis fn #builder() -> ::wharf::ToolDef {
            // Free functions have no receiver; the definition captures this in its place.
            let __this = ();
            #definition
        }
    }
}

/// An expression that makes the `ToolDef` of one function; `call` makes the call of the
/// function from its argument expressions.
pub(crate) fn tool_def(
    spec: &ToolSpec,
    sig: &syn::Signature,
    call: impl FnOnce(&[TokenStream]) -> TokenStream,
) -> TokenStream {
    let name = tool_name(spec, sig);
    let description = spec.options.description.as_ref().map(syn::LitStr::value).or_else(|| spec.docs.clone());
    let arguments: Vec<&Argument> = spec
        .params
        .iter()
        .filter_map(|param| match param {
            Param::Argument(argument) => Some(&**argument),
            _ => None,
        })
        .collect();

    let mut closure_params = Vec::new();
    let mut call_args = Vec::new();
    let mut extractor_index = 0usize;
    if !arguments.is_empty() {
        closure_params.push(quote! { ::wharf::Args(__arguments): ::wharf::Args<__WharfToolArguments> });
    }
    for param in &spec.params {
        match param {
            Param::Argument(argument) => {
                let field = &argument.ident;
                call_args.push(quote! { __arguments.#field });
            }
            Param::Extractor { ty, .. } => {
                let extractor = format_ident!("__extractor_{}", extractor_index);
                extractor_index += 1;
                closure_params.push(quote! { #extractor: #ty });
                call_args.push(quote! { #extractor });
            }
            Param::Receiver { .. } | Param::Pattern(_) => {}
        }
    }

    let arguments_struct = (!arguments.is_empty()).then(|| arguments_struct(&arguments));
    let mut settings = Vec::new();
    if let Some(description) = description {
        settings.push(quote! { .description(#description) });
    }
    if let Some(title) = &spec.options.title {
        settings.push(quote! { .title(#title) });
    }
    let options = &spec.options;
    if options.read_only || options.destructive || options.idempotent || options.open_world {
        let hint = |set: bool| {
            if set {
                quote! { ::core::option::Option::Some(true) }
            } else {
                quote! { ::core::option::Option::None }
            }
        };
        let (read_only, destructive, idempotent, open_world) =
            (hint(options.read_only), hint(options.destructive), hint(options.idempotent), hint(options.open_world));
        settings.push(quote! {
            .annotations(::wharf::protocol::ToolAnnotations {
                read_only_hint: #read_only,
                destructive_hint: #destructive,
                idempotent_hint: #idempotent,
                open_world_hint: #open_world,
                ..::core::default::Default::default()
            })
        });
    }
    settings.extend(crate::scopes::setting(&options.scopes));
    for icon in &options.icons {
        settings.push(quote! {
            .icon(::wharf::protocol::Icon { src: ::std::string::String::from(#icon), ..::core::default::Default::default() })
        });
    }
    if let Some(task) = &options.task {
        let support = if task.value() == "required" {
            quote! { Required }
        } else {
            quote! { Optional }
        };
        settings.push(quote! { .task_support(::wharf::task::TaskSupport::#support) });
    }
    if let Some(idempotency) = &options.idempotency {
        let policy = if idempotency.value() == "derived" {
            quote! { derived }
        } else {
            quote! { client_key }
        };
        settings.push(quote! { .idempotency(::wharf::idempotency::Idempotency::#policy()) });
    }
    if let Some(ui) = &options.ui {
        settings.push(quote! { .view(#ui) });
    }
    if let Some(visibility) = &options.visibility {
        let callers = visibility.iter().map(|caller| match caller.value().as_str() {
            "model" => quote! { ::wharf::protocol::Visibility::Model },
            _ => quote! { ::wharf::protocol::Visibility::App },
        });
        settings.push(quote! { .visibility([#(#callers),*]) });
    }
    if let Some(output) = json_output(&sig.output) {
        settings.push(quote! { .output::<#output>() });
    }
    let call = call(&call_args);
    let returns_a_tool_result = returns_a_tool_result(&sig.output);
    quote! {
        {
            #arguments_struct
            #returns_a_tool_result
            ::wharf::ToolDef::new(#name, move |#(#closure_params),*| {
                let __this = ::core::clone::Clone::clone(&__this);
                async move { let _ = &__this; #call }
            })
            #(#settings)*
        }
    }
}

/// The struct the arguments are deserialized into; its derived schema is the `inputSchema`.
fn arguments_struct(arguments: &[&Argument]) -> TokenStream {
    let mut fields = Vec::new();
    let mut defaults = Vec::new();
    for argument in arguments {
        let ident = &argument.ident;
        let ty = &argument.ty;
        let mut attrs = Vec::new();
        if let Some(rename) = &argument.rename {
            attrs.push(quote! { #[serde(rename = #rename)] });
        }
        if let Some(description) = &argument.description {
            attrs.push(quote! { #[schemars(description = #description)] });
        }
        if let Some(default) = &argument.default {
            let function = format_ident!("__wharf_default_{}", ident);
            let path = function.to_string();
            attrs.push(quote! { #[serde(default = #path)] });
            defaults.push(quote! {
                fn #function() -> #ty { ::core::convert::From::from(#default) }
            });
        }
        for constraint in &argument.constraints {
            let keyword = keyword(&constraint.key.to_string());
            let value = match &constraint.value {
                Some(value) => quote! { #value },
                None => quote! { true },
            };
            attrs.push(quote! { #[schemars(extend(#keyword = #value))] });
        }
        if !argument.item_constraints.is_empty() {
            // `allOf` adds the item constraints to the item schema the type derives, instead of
            // replacing it.
            let entries = argument.item_constraints.iter().map(|constraint| {
                let keyword = keyword(&constraint.key.to_string());
                let value = constraint.value.as_ref().map_or_else(|| quote! { true }, |value| quote! { #value });
                quote! { #keyword: #value }
            });
            attrs.push(quote! { #[schemars(extend("allOf" = [{ "items": { #(#entries),* } }]))] });
        }
        fields.push(quote! { #(#attrs)* #ident: #ty });
    }
    let checks = arguments.iter().map(|argument| {
        let ty = &argument.ty;
        quote::quote_spanned! {syn::spanned::Spanned::span(ty)=> ::wharf::__private::tool_argument::<#ty>(); }
    });
    quote! {
        const _: () = { #(#checks)* };
        #[derive(::wharf::serde::Deserialize, ::wharf::schemars::JsonSchema)]
        #[serde(crate = "::wharf::serde")]
        #[schemars(crate = "::wharf::schemars")]
        struct __WharfToolArguments {
            #(#fields),*
        }
        #(#defaults)*
    }
}

/// The JSON Schema keyword of an `#[arg]` constraint.
fn keyword(key: &str) -> &'static str {
    match key {
        "min" => "minimum",
        "max" => "maximum",
        "exclusive_min" => "exclusiveMinimum",
        "exclusive_max" => "exclusiveMaximum",
        "multiple_of" => "multipleOf",
        "min_length" => "minLength",
        "max_length" => "maxLength",
        "pattern" => "pattern",
        "format" => "format",
        "one_of" => "enum",
        "min_items" => "minItems",
        "max_items" => "maxItems",
        _ => "uniqueItems",
    }
}

/// A check that the return type is one a tool may return, spanned at that type: without it a
/// wrong type is reported as the whole handler not being one, without naming the type.
fn returns_a_tool_result(output: &syn::ReturnType) -> TokenStream {
    let ty = match output {
        syn::ReturnType::Type(_, ty) => quote! { #ty },
        syn::ReturnType::Default => quote! { () },
    };
    let span = match output {
        syn::ReturnType::Type(_, ty) => ty.span(),
        syn::ReturnType::Default => proc_macro2::Span::call_site(),
    };
    quote_spanned! {span=>
        {
            fn __wharf_returns_a_tool_result<T: ::wharf::tool::IntoToolResult>() {}
            __wharf_returns_a_tool_result::<#ty>();
        }
    }
}

/// `T` when the function returns `Json<T>` or `Result<Json<T>, E>`.
fn json_output(output: &syn::ReturnType) -> Option<Type> {
    let syn::ReturnType::Type(_, ty) = output else { return None };
    let segment = last_segment(ty)?;
    let first_type = |segment: &syn::PathSegment| match &segment.arguments {
        syn::PathArguments::AngleBracketed(arguments) => arguments.args.iter().find_map(|argument| match argument {
            syn::GenericArgument::Type(ty) => Some(ty.clone()),
            _ => None,
        }),
        _ => None,
    };
    match segment.ident.to_string().as_str() {
        "Json" => first_type(segment),
        "Result" => {
            let ok = first_type(segment)?;
            let inner = last_segment(&ok)?;
            (inner.ident == "Json").then(|| first_type(inner)).flatten()
        }
        _ => None,
    }
}
