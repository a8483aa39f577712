//! The keywords of an object's members: `properties`, `patternProperties`,
//! `additionalProperties`, `propertyNames`, `unevaluatedProperties`, the counts of members and
//! the required ones.

use serde_json::{Map, Value};

use super::wording::{as_count, names, quoted};
use super::{Evaluated, Evaluator};
use crate::draft::Draft;
use crate::keywords::{self as kw, Keywords};
use crate::path::InstancePath;
use crate::pattern;
use crate::registry::Scope;

impl<'v> Evaluator<'v> {
    pub(super) fn required_all(
        &mut self,
        object: &Map<String, Value>,
        required: &[Value],
        keyword: &'static str,
        instance: &Value,
        path: &InstancePath<'_>,
    ) -> bool {
        let mut valid = true;
        for name in required.iter().filter_map(Value::as_str) {
            if !object.contains_key(name) {
                valid = self
                    .fail(keyword, instance, path, || format!("{} is a required property", quoted(&Value::from(name))));
                if self.done(valid) {
                    return false;
                }
            }
        }
        valid
    }

    /// The keywords of an object's members.
    pub(super) fn properties<'i>(
        &mut self,
        schema: &Keywords<'v>,
        scope: &Scope,
        object: &'i Map<String, Value>,
        instance: &'i Value,
        path: &InstancePath<'_>,
        evaluated: &mut Evaluated<'i>,
    ) -> bool {
        let tracking = self.registry.uses_unevaluated;
        let mut valid = true;
        let count = |place: usize| schema.get(place).and_then(as_count);
        if let Some(maximum) = count(kw::MAX_PROPERTIES)
            && object.len() > maximum
        {
            valid = self.fail("maxProperties", instance, path, || {
                format!("{} has more than {maximum} properties", quoted(instance))
            });
        }
        if let Some(minimum) = count(kw::MIN_PROPERTIES)
            && object.len() < minimum
        {
            valid = self.fail("minProperties", instance, path, || {
                format!("{} has fewer than {minimum} properties", quoted(instance))
            });
        }
        if let Some(Value::Array(required)) = schema.get(kw::REQUIRED) {
            valid &= self.required_all(object, required, "required", instance, path);
        }
        if scope.draft >= Draft::Draft201909
            && let Some(Value::Object(dependent)) = schema.get(kw::DEPENDENT_REQUIRED)
        {
            for (name, required) in dependent {
                if object.contains_key(name)
                    && let Value::Array(required) = required
                {
                    valid &= self.required_all(object, required, "dependentRequired", instance, path);
                }
            }
        }
        if self.done(valid) {
            return false;
        }
        let properties = match schema.get(kw::PROPERTIES) {
            Some(Value::Object(properties)) => Some(properties),
            _ => None,
        };
        let patterns = match schema.get(kw::PATTERN_PROPERTIES) {
            Some(Value::Object(patterns)) => Some(patterns),
            _ => None,
        };
        let additional = schema.get(kw::ADDITIONAL_PROPERTIES);
        let mut unexpected: Vec<&str> = Vec::new();
        for (name, member) in object {
            let member_path = path.key(name);
            let mut matched = false;
            if let Some(property) = properties.and_then(|properties| properties.get(name)) {
                matched = true;
                let (ok, _) = self.child(&["properties", name], property, scope, member, &member_path);
                valid &= ok;
            }
            if let Some(patterns) = patterns {
                for (expression, property) in patterns {
                    if self.registry.regex(expression).is_some_and(|regex| pattern::matches(regex, name)) {
                        matched = true;
                        let (ok, _) =
                            self.child(&["patternProperties", expression], property, scope, member, &member_path);
                        valid &= ok;
                    }
                }
            }
            if !matched && let Some(additional) = additional {
                if *additional == Value::Bool(false) {
                    unexpected.push(name);
                    valid = false;
                } else {
                    let (ok, _) = self.child(&["additionalProperties"], additional, scope, member, &member_path);
                    valid &= ok;
                }
                matched = true;
            }
            if matched && tracking {
                evaluated.properties.push(name);
            }
            if self.done(valid) {
                return false;
            }
        }
        if !unexpected.is_empty() {
            self.fail("additionalProperties", instance, path, || {
                format!("additional properties are not allowed ({} unexpected)", names(&unexpected))
            });
        }
        if let Some(names_schema) = schema.get(kw::PROPERTY_NAMES)
            && scope.draft >= Draft::Draft6
        {
            for name in object.keys() {
                let key = Value::String(name.clone());
                let (ok, _) = self.child(&["propertyNames"], names_schema, scope, &key, path);
                valid &= ok;
                if self.done(valid) {
                    return false;
                }
            }
        }
        if let Some(unevaluated) = schema.get(kw::UNEVALUATED_PROPERTIES)
            && scope.draft.has_unevaluated()
        {
            let mut refused: Vec<&str> = Vec::new();
            let seen = evaluated.property_set();
            for (name, member) in object {
                if evaluated.all_properties || seen.contains(name.as_str()) {
                    continue;
                }
                if *unevaluated == Value::Bool(false) {
                    refused.push(name);
                    valid = false;
                    continue;
                }
                let (ok, _) = self.child(&["unevaluatedProperties"], unevaluated, scope, member, &path.key(name));
                valid &= ok;
                evaluated.properties.push(name);
            }
            if !refused.is_empty() {
                self.fail("unevaluatedProperties", instance, path, || {
                    format!("unevaluated properties are not allowed ({} unexpected)", names(&refused))
                });
            }
        }
        valid
    }
}
