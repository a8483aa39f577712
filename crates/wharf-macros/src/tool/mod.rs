//! `#[tool]`: parse the attribute and the function, check them, generate the tool definition.

mod check;
mod expand;
mod parse;

use proc_macro2::TokenStream;

/// Expands `#[tool(attr)] item`, or returns every error found, each at its span.
pub(crate) fn expand(attr: TokenStream, item: TokenStream) -> syn::Result<TokenStream> {
    let mut function: syn::ItemFn = syn::parse2(item)?;
    let options = parse::ToolOptions::parse(attr)?;
    let spec = parse::ToolSpec::from_function(options, &mut function)?;
    check::check(&spec, &function)?;
    Ok(expand::expand(&spec, &function))
}

/// Several errors reported together.
#[derive(Default)]
pub(crate) struct Errors(Option<syn::Error>);

impl Errors {
    pub(crate) fn push(&mut self, error: syn::Error) {
        match &mut self.0 {
            Some(errors) => errors.combine(error),
            None => self.0 = Some(error),
        }
    }

    pub(crate) fn add(&mut self, span: proc_macro2::Span, message: impl std::fmt::Display) {
        self.push(syn::Error::new(span, message));
    }

    pub(crate) fn finish(self) -> syn::Result<()> {
        self.0.map_or(Ok(()), Err)
    }
}
