//! `scopes = ["files:read", ...]`: the OAuth scopes a component requires, each a string
//! literal that is an RFC 6749 scope token, checked where it is written.

use proc_macro2::TokenStream;
use quote::quote;
use syn::spanned::Spanned;
use syn::{Expr, LitStr};

/// The scope literals of `scopes = [...]`; an error at the first one that is not a string
/// literal or not a scope token.
pub(crate) fn parse(value: &Expr) -> syn::Result<Vec<LitStr>> {
    let Expr::Array(array) = value else {
        return Err(syn::Error::new(value.span(), "`scopes` takes a list of strings: `scopes = [\"files:read\"]`"));
    };
    let mut scopes = Vec::new();
    for element in &array.elems {
        let Expr::Lit(syn::ExprLit { lit: syn::Lit::Str(scope), .. }) = element else {
            return Err(syn::Error::new(element.span(), "a scope is a string literal"));
        };
        let text = scope.value();
        let valid = !text.is_empty() && text.bytes().all(|byte| matches!(byte, 0x21 | 0x23..=0x5b | 0x5d..=0x7e));
        if !valid {
            return Err(syn::Error::new(
                scope.span(),
                format!(
                    "`{text}` is not an OAuth scope: use printable ASCII without spaces, `\"` or `\\` (RFC 6749 §3.3)"
                ),
            ));
        }
        scopes.push(scope.clone());
    }
    Ok(scopes)
}

/// The builder call that requires `scopes`, or nothing when there are none.
pub(crate) fn setting(scopes: &[LitStr]) -> Option<TokenStream> {
    (!scopes.is_empty()).then(|| quote! { .scopes([#(#scopes),*]) })
}
