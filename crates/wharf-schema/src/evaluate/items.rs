//! The keywords of an array's items: `prefixItems` and `items` (or `items` and
//! `additionalItems` up to 2019-09), `contains` and its bounds, `unevaluatedItems`, the counts
//! of items and their uniqueness.

use serde_json::Value;

use super::wording::{as_count, quoted, repeated};
use super::{Evaluated, Evaluator};
use crate::draft::Draft;
use crate::keywords::{self as kw, Keywords};
use crate::path::InstancePath;
use crate::registry::Scope;

impl<'v> Evaluator<'v> {
    /// The keywords of an array's items.
    pub(super) fn items<'i>(
        &mut self,
        schema: &Keywords<'v>,
        scope: &Scope,
        items: &'i [Value],
        instance: &'i Value,
        path: &InstancePath<'_>,
        evaluated: &mut Evaluated<'i>,
    ) -> bool {
        let mut valid = true;
        let count = |place: usize| schema.get(place).and_then(as_count);
        if let Some(maximum) = count(kw::MAX_ITEMS)
            && items.len() > maximum
        {
            valid =
                self.fail("maxItems", instance, path, || format!("{} has more than {maximum} items", quoted(instance)));
        }
        if let Some(minimum) = count(kw::MIN_ITEMS)
            && items.len() < minimum
        {
            valid = self
                .fail("minItems", instance, path, || format!("{} has fewer than {minimum} items", quoted(instance)));
        }
        if schema.get(kw::UNIQUE_ITEMS) == Some(&Value::Bool(true))
            && let Some((first, second)) = repeated(items)
        {
            valid = self.fail("uniqueItems", instance, path, || {
                format!("{} has non-unique items (at {first} and {second})", quoted(instance))
            });
        }
        if self.done(valid) {
            return false;
        }
        // Positional schemas: `prefixItems` (2020-12), or `items` as an array (up to 2019-09),
        // then `items` (2020-12) or `additionalItems` for the rest.
        let (positional, positional_keyword, rest, rest_keyword) = if scope.draft.has_item_arrays() {
            match schema.get(kw::ITEMS) {
                Some(Value::Array(positional)) => {
                    (Some(positional), "items", schema.get(kw::ADDITIONAL_ITEMS), "additionalItems")
                }
                single => (None, "items", single, "items"),
            }
        } else {
            let positional = match schema.get(kw::PREFIX_ITEMS) {
                Some(Value::Array(positional)) => Some(positional),
                _ => None,
            };
            (positional, "prefixItems", schema.get(kw::ITEMS), "items")
        };
        let mut covered = 0;
        if let Some(positional) = positional {
            for (index, (item, item_schema)) in items.iter().zip(positional).enumerate() {
                let (ok, _) =
                    self.child(&[positional_keyword, &index.to_string()], item_schema, scope, item, &path.index(index));
                valid &= ok;
                if self.done(valid) {
                    return false;
                }
            }
            covered = positional.len().min(items.len());
            evaluated.items = evaluated.items.max(covered);
        }
        if let Some(rest_schema) = rest {
            for (index, item) in items.iter().enumerate().skip(covered) {
                let (ok, _) = self.child(&[rest_keyword], rest_schema, scope, item, &path.index(index));
                valid &= ok;
                if self.done(valid) {
                    return false;
                }
            }
            evaluated.all_items = true;
        }
        if let Some(contains) = schema.get(kw::CONTAINS)
            && scope.draft >= Draft::Draft6
        {
            valid &= self.contains(schema, scope, contains, items, instance, path, evaluated);
        }
        if let Some(unevaluated) = schema.get(kw::UNEVALUATED_ITEMS)
            && scope.draft.has_unevaluated()
        {
            let seen = evaluated.item_set();
            for (index, item) in items.iter().enumerate() {
                if evaluated.all_items || index < evaluated.items || seen.contains(&index) {
                    continue;
                }
                let (ok, _) = self.child(&["unevaluatedItems"], unevaluated, scope, item, &path.index(index));
                valid &= ok;
                if self.done(valid) {
                    return false;
                }
            }
            evaluated.all_items = true;
        }
        valid
    }

    #[allow(clippy::too_many_arguments)]
    fn contains<'i>(
        &mut self,
        schema: &Keywords<'v>,
        scope: &Scope,
        contains: &'v Value,
        items: &'i [Value],
        instance: &'i Value,
        path: &InstancePath<'_>,
        evaluated: &mut Evaluated<'i>,
    ) -> bool {
        let bounded = scope.draft >= Draft::Draft201909;
        let count = |place: usize| if bounded { schema.get(place).and_then(as_count) } else { None };
        let (minimum, maximum) = (count(kw::MIN_CONTAINS).unwrap_or(1), count(kw::MAX_CONTAINS));
        let mut matched = 0;
        for (index, item) in items.iter().enumerate() {
            let (ok, _) = self.quietly(&["contains"], contains, scope, item, &path.index(index));
            if ok {
                matched += 1;
                if scope.draft >= Draft::Draft202012 {
                    evaluated.item_indices.push(index);
                }
            }
        }
        let mut valid = true;
        if matched < minimum {
            let keyword =
                if minimum == 1 || schema.get(kw::MIN_CONTAINS).is_none() { "contains" } else { "minContains" };
            valid = self.fail(keyword, instance, path, || {
                format!(
                    "{} has {matched} items matching the schema under `contains`, fewer than {minimum}",
                    quoted(instance)
                )
            });
        }
        if let Some(maximum) = maximum
            && matched > maximum
        {
            valid = self.fail("maxContains", instance, path, || {
                format!(
                    "{} has {matched} items matching the schema under `contains`, more than {maximum}",
                    quoted(instance)
                )
            });
        }
        valid
    }
}
