//! `#[prompt]`, `#[resource]` and `#[resource_template]`: the same pipeline as `#[tool]`
//! (parse, check everything, expand with absolute paths) for the other components.

mod params;
pub(crate) mod prompt;
pub(crate) mod resource;

use syn::{Expr, Ident, LitStr};

/// `key = value` and bare `key` options of a component attribute, in order.
#[derive(Default)]
pub(crate) struct Options {
    pub(crate) positional: Option<LitStr>,
    pub(crate) values: Vec<(Ident, Option<Expr>, proc_macro2::TokenStream)>,
}

impl Options {
    /// Parses `"positional", key = value, flag, key(inner tokens)`.
    pub(crate) fn parse(attr: proc_macro2::TokenStream, known: &[&str]) -> syn::Result<Options> {
        let mut options = Options::default();
        let mut tokens = attr.clone().into_iter().peekable();
        if let Some(proc_macro2::TokenTree::Literal(_)) = tokens.peek() {
            let parser = |input: syn::parse::ParseStream<'_>| -> syn::Result<(LitStr, proc_macro2::TokenStream)> {
                let literal: LitStr = input.parse()?;
                if input.peek(syn::Token![,]) {
                    input.parse::<syn::Token![,]>()?;
                }
                Ok((literal, input.parse()?))
            };
            let (literal, rest) = syn::parse::Parser::parse2(parser, attr)?;
            options.positional = Some(literal);
            return options.parse_named(rest, known);
        }
        options.parse_named(attr, known)
    }

    fn parse_named(mut self, attr: proc_macro2::TokenStream, known: &[&str]) -> syn::Result<Options> {
        let parser = syn::meta::parser(|meta| {
            let key = meta.path.get_ident().cloned().ok_or_else(|| meta.error("expected an option name"))?;
            if !known.contains(&key.to_string().as_str()) {
                return Err(meta.error(format!("unknown option `{key}`; the options are: {}", known.join(", "))));
            }
            if meta.input.peek(syn::Token![=]) {
                let value: Expr = meta.value()?.parse()?;
                self.values.push((key, Some(value), proc_macro2::TokenStream::new()));
            } else if meta.input.peek(syn::token::Paren) {
                let content;
                syn::parenthesized!(content in meta.input);
                self.values.push((key, None, content.parse()?));
            } else {
                self.values.push((key, None, proc_macro2::TokenStream::new()));
            }
            Ok(())
        });
        syn::parse::Parser::parse2(parser, attr)?;
        Ok(self)
    }

    /// The string literal given for `key`.
    pub(crate) fn string(&self, key: &str) -> syn::Result<Option<LitStr>> {
        for (name, value, _) in &self.values {
            if name == key {
                return match value {
                    Some(Expr::Lit(syn::ExprLit { lit: syn::Lit::Str(text), .. })) => Ok(Some(text.clone())),
                    _ => Err(syn::Error::new(name.span(), format!("`{key}` takes a string literal"))),
                };
            }
        }
        Ok(None)
    }

    /// The builder call for `scopes = [...]`, if given.
    pub(crate) fn scopes(&self) -> syn::Result<Option<proc_macro2::TokenStream>> {
        for (name, value, _) in &self.values {
            if name == "scopes" {
                let value = value.as_ref().ok_or_else(|| {
                    syn::Error::new(name.span(), "`scopes` takes a list: `scopes = [\"files:read\"]`")
                })?;
                return Ok(crate::scopes::setting(&crate::scopes::parse(value)?));
            }
        }
        Ok(None)
    }

    /// The tokens inside `key(...)`.
    pub(crate) fn group(&self, key: &str) -> Option<(&Ident, &proc_macro2::TokenStream)> {
        self.values
            .iter()
            .find(|(name, value, _)| name == key && value.is_none())
            .map(|(name, _, tokens)| (name, tokens))
    }
}
