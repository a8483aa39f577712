//! What JSON Schema asks of a JSON value: its type by the schema's names, equality in which
//! `1` and `1.0` are the same number, numbers compared without losing large integers, and a
//! string's length in code points.

use std::cmp::Ordering;

use serde_json::{Number, Value};

/// The type a schema's `type` names: `integer` is a number with no fractional part.
pub(crate) fn has_type(value: &Value, name: &str) -> bool {
    match name {
        "null" => value.is_null(),
        "boolean" => value.is_boolean(),
        "object" => value.is_object(),
        "array" => value.is_array(),
        "string" => value.is_string(),
        "number" => value.is_number(),
        "integer" => value.as_number().is_some_and(is_integer),
        _ => false,
    }
}

pub(crate) fn is_integer(number: &Number) -> bool {
    number.is_i64() || number.is_u64() || number.as_f64().is_some_and(|float| float.is_finite() && float.fract() == 0.0)
}

/// Equality as JSON Schema means it (`enum`, `const`, `uniqueItems`).
pub(crate) fn equal(left: &Value, right: &Value) -> bool {
    match (left, right) {
        (Value::Number(left), Value::Number(right)) => compare(left, right) == Some(Ordering::Equal),
        (Value::Array(left), Value::Array(right)) => {
            left.len() == right.len() && left.iter().zip(right).all(|(left, right)| equal(left, right))
        }
        (Value::Object(left), Value::Object(right)) => {
            left.len() == right.len()
                && left.iter().all(|(key, value)| right.get(key).is_some_and(|other| equal(value, other)))
        }
        _ => left == right,
    }
}

/// Two numbers compared exactly when both are integers, else as floats.
pub(crate) fn compare(left: &Number, right: &Number) -> Option<Ordering> {
    if let (Some(left), Some(right)) = (left.as_i64(), right.as_i64()) {
        return Some(left.cmp(&right));
    }
    if let (Some(left), Some(right)) = (left.as_u64(), right.as_u64()) {
        return Some(left.cmp(&right));
    }
    // One is a negative integer and the other a large unsigned one.
    if left.is_i64() && right.is_u64() {
        return Some(Ordering::Less);
    }
    if left.is_u64() && right.is_i64() {
        return Some(Ordering::Greater);
    }
    left.as_f64()?.partial_cmp(&right.as_f64()?)
}

/// True when `value` is a whole multiple of `divisor` (which is above zero).
pub(crate) fn is_multiple_of(value: &Number, divisor: &Number) -> bool {
    if let (Some(value), Some(divisor)) = (value.as_i64(), divisor.as_u64()) {
        return divisor == 0 || value.unsigned_abs() % divisor == 0;
    }
    if let (Some(value), Some(divisor)) = (value.as_u64(), divisor.as_u64()) {
        return divisor == 0 || value % divisor == 0;
    }
    let (Some(value), Some(divisor)) = (value.as_f64(), divisor.as_f64()) else { return false };
    if value == 0.0 {
        return true;
    }
    let quotient = value / divisor;
    if !quotient.is_finite() {
        return false;
    }
    // A float's quotient carries the rounding of both operands: 0.0075 / 0.0001 is
    // 75.00000000000001.
    let nearest = quotient.round();
    (quotient - nearest).abs() <= quotient.abs() * 1e-12
        || (nearest * divisor - value).abs() <= f64::EPSILON * value.abs()
}

/// A string's length as JSON Schema counts it: in Unicode code points.
pub(crate) fn length(text: &str) -> usize {
    text.chars().count()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn numbers_are_equal_by_value_and_multiples_survive_float_rounding() {
        assert!(equal(&json!(1), &json!(1.0)));
        assert!(equal(&json!({"a": [1, 2.0]}), &json!({"a": [1.0, 2]})));
        assert!(!equal(&json!([1, 2]), &json!([2, 1])));
        assert!(!equal(&json!(true), &json!(1)));
        let number = |value: Value| value.as_number().unwrap().clone();
        assert!(is_multiple_of(&number(json!(0.0075)), &number(json!(0.0001))));
        assert!(!is_multiple_of(&number(json!(0.00751)), &number(json!(0.0001))));
        assert!(is_multiple_of(&number(json!(10)), &number(json!(2))));
        assert!(!is_multiple_of(&number(json!(7)), &number(json!(2))));
        assert!(is_multiple_of(&number(json!(4.5)), &number(json!(1.5))));
        assert!(!is_multiple_of(&number(json!(1e308)), &number(json!(0.123456789))));
        assert_eq!(compare(&number(json!(-1)), &number(json!(u64::MAX))), Some(Ordering::Less));
        assert!(has_type(&json!(1.0), "integer") && !has_type(&json!(1.5), "integer"));
        assert_eq!(length("💩"), 1);
    }
}
