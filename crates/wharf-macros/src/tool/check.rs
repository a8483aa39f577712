//! Everything that can be wrong with a `#[tool]` is found here, before any code is generated,
//! and reported together, each error at its span and saying what to do.

use syn::spanned::Spanned;
use syn::{Expr, Lit, Type, UnOp};

use super::parse::{Argument, Param, ToolSpec, last_segment};
use crate::errors::Errors;
use crate::names::{snake_case, valid_tool_name};

/// The `format` values Wharf validates at run time.
pub(crate) const FORMATS: &[&str] = &["email", "uri", "uuid", "date-time", "date", "time", "ipv4", "ipv6", "hostname"];

/// The most parameters a handler may take: the arguments count as one.
const MAX_EXTRACTORS: usize = 6;

/// The name the tool is listed under.
pub(crate) fn tool_name(spec: &ToolSpec, sig: &syn::Signature) -> String {
    match &spec.options.name {
        Some(name) => name.value(),
        None => snake_case(&sig.ident.to_string()),
    }
}

/// Where the function is: free, or a method of an impl block.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Place {
    Free,
    Method,
}

pub(crate) fn check(spec: &ToolSpec, sig: &syn::Signature, place: Place) -> syn::Result<()> {
    let mut errors = Errors::default();
    crate::errors::require_async(sig, "#[tool]", &mut errors);
    if !sig.generics.params.is_empty() {
        errors.add(sig.generics.span(), "a `#[tool]` function cannot be generic: its argument types make its schema");
    }

    let name = tool_name(spec, sig);
    if !valid_tool_name(&name) {
        let span = spec.options.name.as_ref().map_or(sig.ident.span(), |name| name.span());
        errors.add(
            span,
            format!("`{name}` is not a valid tool name: use 1 to 128 characters from A-Z, a-z, 0-9, `_`, `-` and `.`"),
        );
    }
    if spec.options.description.is_none() && spec.docs.is_none() {
        errors.add(
            sig.ident.span(),
            format!(
                "tool `{name}` has no description: add a `///` doc comment saying what it does (the model reads \
                 it), or `#[tool(description = \"...\")]`"
            ),
        );
    }
    if let Some(task) = &spec.options.task
        && !matches!(task.value().as_str(), "optional" | "required")
    {
        errors.add(task.span(), "`task` is \"optional\" or \"required\"");
    }
    if let Some(idempotency) = &spec.options.idempotency
        && !matches!(idempotency.value().as_str(), "client" | "derived")
    {
        errors.add(
            idempotency.span(),
            "`idempotency` is \"client\" (the key the client sends) or \"derived\" (the client's key, else one derived from the caller and the arguments)",
        );
    }
    if let Some(ui) = &spec.options.ui {
        let uri = ui.value();
        if uri.strip_prefix("ui://").is_none_or(|rest| rest.is_empty() || rest.contains(char::is_whitespace)) {
            errors.add(
                ui.span(),
                format!("`{uri}` is not a view's URI: views are `ui://` resources, like `ui://app/view`"),
            );
        }
    }
    if let Some(visibility) = &spec.options.visibility {
        if visibility.is_empty() {
            errors.add(
                sig.ident.span(),
                "`visibility` is empty: nobody could call the tool; name \"model\", \"app\" or both",
            );
        }
        for (at, caller) in visibility.iter().enumerate() {
            let value = caller.value();
            if !matches!(value.as_str(), "model" | "app") {
                errors
                    .add(caller.span(), format!("`{value}` is not a caller: `visibility` names \"model\" and \"app\""));
            } else if visibility[..at].iter().any(|before| before.value() == value) {
                errors.add(caller.span(), format!("`visibility` names \"{value}\" twice"));
            }
        }
    }
    for icon in &spec.options.icons {
        if icon.value().is_empty() {
            errors.add(icon.span(), "an icon needs a URL (`https:` or `data:`)");
        }
    }

    let mut extractors = 0;
    let mut explicit_args = None;
    let mut arguments = 0;
    for param in &spec.params {
        match param {
            Param::Receiver { span, shared_ref } => {
                if place == Place::Free {
                    errors.add(
                        *span,
                        "`#[tool]` on a method goes on its impl block: `#[wharf::tool] impl MyTools { ... }` makes \
                         every method a tool, and `tool_defs()` on an `Arc<MyTools>` lists them",
                    );
                } else if !shared_ref {
                    errors.add(
                        *span,
                        "a tool method takes `&self`: tools run concurrently on a shared `Arc<Self>`; keep mutable \
                         state behind a `Mutex` or an atomic",
                    );
                }
            }
            Param::Pattern(span) => errors.add(
                *span,
                "tool arguments need plain names (they are the JSON argument names); destructure inside the body",
            ),
            Param::Extractor { ty, span } => {
                extractors += 1;
                if last_segment(ty).is_some_and(|segment| segment.ident == "Args") {
                    explicit_args = Some(*span);
                }
            }
            Param::Argument(argument) => {
                arguments += 1;
                check_argument(argument, &mut errors);
            }
        }
    }
    if let Some(span) = explicit_args
        && arguments > 0
    {
        errors.add(span, "take the tool's arguments either as parameters or as one `Args<T>`, not both");
    }
    if extractors + usize::from(arguments > 0) > MAX_EXTRACTORS {
        errors.add(
            sig.inputs.span(),
            format!("a tool handler takes at most {MAX_EXTRACTORS} extractors (all arguments together count as one)"),
        );
    }
    errors.finish()
}

/// What kind of JSON value a Rust type deserializes from, as far as its name tells.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Number,
    Text,
    List,
    Other,
}

fn kind(ty: &Type) -> Kind {
    match ty {
        Type::Reference(reference) => kind(&reference.elem),
        Type::Array(_) | Type::Slice(_) => Kind::List,
        _ => {
            let Some(segment) = last_segment(ty) else { return Kind::Other };
            let ident = segment.ident.to_string();
            if ident == "Option"
                && let syn::PathArguments::AngleBracketed(arguments) = &segment.arguments
                && let Some(syn::GenericArgument::Type(inner)) = arguments.args.first()
            {
                return kind(inner);
            }
            match ident.as_str() {
                "u8" | "u16" | "u32" | "u64" | "u128" | "usize" | "i8" | "i16" | "i32" | "i64" | "i128" | "isize"
                | "f32" | "f64" => Kind::Number,
                "String" | "str" | "Cow" => Kind::Text,
                "Vec" | "VecDeque" | "HashSet" | "BTreeSet" => Kind::List,
                _ => Kind::Other,
            }
        }
    }
}

/// The number an expression is, if it is a numeric literal (possibly negative).
pub(crate) fn number(expr: &Expr) -> Option<f64> {
    match expr {
        Expr::Lit(syn::ExprLit { lit: Lit::Int(int), .. }) => int.base10_parse().ok(),
        Expr::Lit(syn::ExprLit { lit: Lit::Float(float), .. }) => float.base10_parse().ok(),
        Expr::Unary(unary) if matches!(unary.op, UnOp::Neg(_)) => number(&unary.expr).map(|value| -value),
        _ => None,
    }
}

fn string(expr: &Expr) -> Option<String> {
    match expr {
        Expr::Lit(syn::ExprLit { lit: Lit::Str(text), .. }) => Some(text.value()),
        _ => None,
    }
}

fn check_argument(argument: &Argument, errors: &mut Errors) {
    check_constraints(&argument.ident, &argument.ty, &argument.constraints, errors);
    if let Some(first) = argument.item_constraints.first() {
        match element(&argument.ty) {
            Some(item) => check_constraints(&argument.ident, item, &argument.item_constraints, errors),
            None if kind(&argument.ty) == Kind::Other => {}
            None => errors
                .add(first.key.span(), format!("`items(...)` applies to lists, and `{}` is not one", argument.ident)),
        }
    }
}

/// The item type of `Vec<T>`, `Option<Vec<T>>`, `[T; N]` or `&[T]`.
fn element(ty: &Type) -> Option<&Type> {
    match ty {
        Type::Reference(reference) => element(&reference.elem),
        Type::Array(array) => Some(&array.elem),
        Type::Slice(slice) => Some(&slice.elem),
        _ => {
            let segment = last_segment(ty)?;
            let syn::PathArguments::AngleBracketed(arguments) = &segment.arguments else { return None };
            let Some(syn::GenericArgument::Type(inner)) = arguments.args.first() else { return None };
            match segment.ident.to_string().as_str() {
                "Option" => element(inner),
                "Vec" | "VecDeque" | "HashSet" | "BTreeSet" => Some(inner),
                _ => None,
            }
        }
    }
}

fn check_constraints(ident: &syn::Ident, ty: &Type, constraints: &[super::parse::Constraint], errors: &mut Errors) {
    let kind = kind(ty);
    let mut bounds: [Option<f64>; 6] = [None; 6];
    for constraint in constraints {
        let key = constraint.key.to_string();
        let span = constraint.key.span();
        let Some(value) = &constraint.value else { continue };
        match key.as_str() {
            "pattern" => match string(value) {
                None => errors.add(value.span(), "`pattern` is a regular expression in a string literal"),
                Some(_) if kind == Kind::Number || kind == Kind::List => {
                    errors.add(span, format!("`pattern` applies to strings, and `{}` is not one", ident))
                }
                Some(_) => {}
            },
            "format" => match string(value) {
                Some(format) if FORMATS.contains(&format.as_str()) => {}
                _ => errors.add(value.span(), format!("`format` is one of: {}", FORMATS.join(", "))),
            },
            "one_of" => {
                let literal_list = matches!(value, Expr::Array(array) if !array.elems.is_empty()
                    && array.elems.iter().all(|item| matches!(item, Expr::Lit(_)) || number(item).is_some()));
                if !literal_list {
                    errors.add(
                        value.span(),
                        "`one_of` is a non-empty list of literals, such as `[\"celsius\", \"fahrenheit\"]`",
                    );
                }
            }
            numeric => {
                let Some(bound) = number(value) else {
                    errors.add(value.span(), format!("`{numeric}` takes a number literal"));
                    continue;
                };
                let (slot, wants) = match numeric {
                    "min" => (0, Kind::Number),
                    "max" => (1, Kind::Number),
                    "min_length" => (2, Kind::Text),
                    "max_length" => (3, Kind::Text),
                    "min_items" => (4, Kind::List),
                    "max_items" => (5, Kind::List),
                    _ => (usize::MAX, Kind::Number),
                };
                if kind != Kind::Other && kind != wants {
                    let hint = match (wants, kind) {
                        (Kind::Text, Kind::Number) => "; for numbers use `min`/`max`",
                        (Kind::Number, Kind::Text) => "; for strings use `min_length`/`max_length`",
                        (Kind::Text, Kind::List) => "; for lists use `min_items`/`max_items`",
                        _ => "",
                    };
                    let what = match wants {
                        Kind::Number => "numbers",
                        Kind::Text => "strings",
                        _ => "lists",
                    };
                    errors.add(span, format!("`{numeric}` applies to {what}, and `{}` is not one{hint}", ident));
                }
                if slot != usize::MAX {
                    bounds[slot] = Some(bound);
                }
                if (numeric.ends_with("length") || numeric.ends_with("items")) && (bound < 0.0 || bound.fract() != 0.0)
                {
                    errors.add(value.span(), format!("`{numeric}` is a count: a whole number, 0 or more"));
                }
                if numeric == "multiple_of" && bound <= 0.0 {
                    errors.add(value.span(), "`multiple_of` must be greater than 0");
                }
            }
        }
    }
    for (low, high, what) in [
        (0, 1, "min` is greater than `max"),
        (2, 3, "min_length` is greater than `max_length"),
        (4, 5, "min_items` is greater than `max_items"),
    ] {
        if let (Some(low), Some(high)) = (bounds[low], bounds[high])
            && low > high
        {
            errors.add(ident.span(), format!("`{what}` for `{}`: no value could pass", ident));
        }
    }
}
