//! Errors of the macros: several collected and reported together, each at its span, and the
//! check every macro makes of its function.

use syn::spanned::Spanned;

/// Every macro of this crate wraps async functions: the handlers are awaited.
pub(crate) fn require_async(sig: &syn::Signature, attribute: &str, errors: &mut Errors) {
    if sig.asyncness.is_none() {
        errors.add(
            sig.fn_token.span(),
            format!(
                "`{attribute}` needs an async function: write `async fn {}(...)`; Wharf awaits its handlers",
                sig.ident
            ),
        );
    }
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

    pub(crate) fn is_empty(&self) -> bool {
        self.0.is_none()
    }

    pub(crate) fn finish(self) -> syn::Result<()> {
        self.0.map_or(Ok(()), Err)
    }
}
