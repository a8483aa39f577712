//! Reading a handler's argument type from the client's text while checking that text against a
//! plain shape, in one pass instead of a check and then a read.
//!
//! A `Deserializer` adapter stands between the type's `Deserialize` and serde_json's reader:
//! every value the type asks for is checked against the part of the shape it belongs to as it
//! goes by, and every value the type skips is still read through the adapter and checked. Like
//! [`Shape::accepts`], the adapter only says "certainly valid" or "cannot tell": the caller
//! takes the two-pass way on any failure, so the full validator still judges and words every
//! refusal.

use std::cell::Cell;
use std::fmt;

use serde::de::value::{BorrowedStrDeserializer, StrDeserializer, StringDeserializer};
use serde::de::{DeserializeOwned, DeserializeSeed, Deserializer, EnumAccess, MapAccess, SeqAccess, Visitor};
use serde_json::Number;

use super::{Shape, kind};

impl Shape {
    /// Reads a `T` from `text`, a JSON value, while checking it as [`Shape::accepts`] does, in
    /// one pass; `None` when `T` refuses the text or the shape cannot vouch for it.
    pub(crate) fn read<T: DeserializeOwned>(&self, text: &str) -> Option<T> {
        let mut reader = serde_json::Deserializer::from_str(text);
        let value = T::deserialize(Checking { shape: self, inner: &mut reader }).ok()?;
        reader.end().ok()?;
        Some(value)
    }
}

/// The error every check fails with; its words never reach the client.
fn cannot_tell<E: serde::de::Error>() -> E {
    E::custom("the shape cannot vouch for this value")
}

/// A deserializer whose value must fit `shape`.
struct Checking<'s, D> {
    shape: &'s Shape,
    inner: D,
}

/// Forwards `deserialize_*` methods to the inner deserializer with the visitor wrapped.
macro_rules! forward_checked {
    ($($method:ident($($arg:ident: $ty:ty),*)),* $(,)?) => {
        $(
            fn $method<V: Visitor<'de>>(self, $($arg: $ty,)* visitor: V) -> Result<V::Value, D::Error> {
                self.inner.$method($($arg,)* CheckingVisitor { shape: self.shape, inner: visitor })
            }
        )*
    };
}

impl<'de, D: Deserializer<'de>> Deserializer<'de> for Checking<'_, D> {
    type Error = D::Error;

    forward_checked! {
        deserialize_any(), deserialize_bool(), deserialize_i8(), deserialize_i16(), deserialize_i32(),
        deserialize_i64(), deserialize_i128(), deserialize_u8(), deserialize_u16(), deserialize_u32(),
        deserialize_u64(), deserialize_u128(), deserialize_f32(), deserialize_f64(), deserialize_char(),
        deserialize_str(), deserialize_string(), deserialize_bytes(), deserialize_byte_buf(),
        deserialize_option(), deserialize_unit(), deserialize_seq(), deserialize_map(), deserialize_identifier(),
        deserialize_unit_struct(name: &'static str), deserialize_newtype_struct(name: &'static str),
        deserialize_tuple(len: usize), deserialize_tuple_struct(name: &'static str, len: usize),
        deserialize_struct(name: &'static str, fields: &'static [&'static str]),
    }

    /// Only unit variants, read from a string: serde_json would also read a unit variant from
    /// `{"name": null}`, which no schema of a string allows, and the adapter could not tell
    /// the two apart afterwards. Any other form is left to the two-pass way.
    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, D::Error> {
        self.inner.deserialize_str(UnitVariant { shape: self.shape, inner: visitor })
    }

    /// A skipped value is read all the same, so that it is checked.
    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, D::Error> {
        self.deserialize_any(visitor)
    }

    fn is_human_readable(&self) -> bool {
        self.inner.is_human_readable()
    }
}

/// A visitor that checks each value it is shown against `shape` before passing it on.
struct CheckingVisitor<'s, V> {
    shape: &'s Shape,
    inner: V,
}

impl<'de, V: Visitor<'de>> Visitor<'de> for CheckingVisitor<'_, V> {
    type Value = V::Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.inner.expecting(f)
    }

    fn visit_bool<E: serde::de::Error>(self, value: bool) -> Result<V::Value, E> {
        self.shape.check_kind::<E>(kind::BOOLEAN)?;
        self.inner.visit_bool(value)
    }

    fn visit_i64<E: serde::de::Error>(self, value: i64) -> Result<V::Value, E> {
        self.shape.check_number::<E>(Number::from(value))?;
        self.inner.visit_i64(value)
    }

    fn visit_u64<E: serde::de::Error>(self, value: u64) -> Result<V::Value, E> {
        self.shape.check_number::<E>(Number::from(value))?;
        self.inner.visit_u64(value)
    }

    fn visit_i128<E: serde::de::Error>(self, value: i128) -> Result<V::Value, E> {
        let number = i64::try_from(value).map(Number::from).map_err(|_| cannot_tell::<E>())?;
        self.shape.check_number::<E>(number)?;
        self.inner.visit_i128(value)
    }

    fn visit_u128<E: serde::de::Error>(self, value: u128) -> Result<V::Value, E> {
        let number = u64::try_from(value).map(Number::from).map_err(|_| cannot_tell::<E>())?;
        self.shape.check_number::<E>(number)?;
        self.inner.visit_u128(value)
    }

    fn visit_f64<E: serde::de::Error>(self, value: f64) -> Result<V::Value, E> {
        let number = Number::from_f64(value).ok_or_else(cannot_tell::<E>)?;
        self.shape.check_number::<E>(number)?;
        self.inner.visit_f64(value)
    }

    fn visit_str<E: serde::de::Error>(self, value: &str) -> Result<V::Value, E> {
        self.shape.check_str::<E>(value)?;
        self.inner.visit_str(value)
    }

    fn visit_borrowed_str<E: serde::de::Error>(self, value: &'de str) -> Result<V::Value, E> {
        self.shape.check_str::<E>(value)?;
        self.inner.visit_borrowed_str(value)
    }

    fn visit_string<E: serde::de::Error>(self, value: String) -> Result<V::Value, E> {
        self.shape.check_str::<E>(&value)?;
        self.inner.visit_string(value)
    }

    fn visit_unit<E: serde::de::Error>(self) -> Result<V::Value, E> {
        self.shape.check_kind::<E>(kind::NULL)?;
        self.inner.visit_unit()
    }

    fn visit_none<E: serde::de::Error>(self) -> Result<V::Value, E> {
        self.shape.check_kind::<E>(kind::NULL)?;
        self.inner.visit_none()
    }

    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<V::Value, D::Error> {
        self.inner.visit_some(Checking { shape: self.shape, inner: deserializer })
    }

    fn visit_newtype_struct<D: Deserializer<'de>>(self, deserializer: D) -> Result<V::Value, D::Error> {
        self.inner.visit_newtype_struct(Checking { shape: self.shape, inner: deserializer })
    }

    fn visit_seq<A: SeqAccess<'de>>(self, items: A) -> Result<V::Value, A::Error> {
        self.shape.check_kind::<A::Error>(kind::ARRAY)?;
        self.inner.visit_seq(CheckingSeq { items: self.shape.items.as_deref(), inner: items })
    }

    fn visit_map<A: MapAccess<'de>>(self, members: A) -> Result<V::Value, A::Error> {
        self.shape.check_kind::<A::Error>(kind::OBJECT)?;
        let seen = Cell::new(0);
        let value = self.inner.visit_map(CheckingMap { shape: self.shape, inner: members, seen: &seen, next: None })?;
        // Checked after the type's visitor returns, whether or not it asked for every member.
        if self.shape.required & !seen.get() == 0 { Ok(value) } else { Err(cannot_tell()) }
    }

    fn visit_enum<A: EnumAccess<'de>>(self, _: A) -> Result<V::Value, A::Error> {
        Err(cannot_tell())
    }
}

/// Reads a unit variant from a string that fits `shape`.
struct UnitVariant<'s, V> {
    shape: &'s Shape,
    inner: V,
}

impl<'de, V: Visitor<'de>> Visitor<'de> for UnitVariant<'_, V> {
    type Value = V::Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.inner.expecting(f)
    }

    fn visit_str<E: serde::de::Error>(self, name: &str) -> Result<V::Value, E> {
        self.shape.check_str::<E>(name)?;
        self.inner.visit_enum(StrDeserializer::new(name))
    }

    fn visit_borrowed_str<E: serde::de::Error>(self, name: &'de str) -> Result<V::Value, E> {
        self.shape.check_str::<E>(name)?;
        self.inner.visit_enum(BorrowedStrDeserializer::new(name))
    }

    fn visit_string<E: serde::de::Error>(self, name: String) -> Result<V::Value, E> {
        self.shape.check_str::<E>(&name)?;
        self.inner.visit_enum(StringDeserializer::new(name))
    }
}

/// A seed whose value must fit `shape` (or anything, without one).
struct CheckingSeed<'s, S> {
    shape: Option<&'s Shape>,
    inner: S,
}

impl<'de, S: DeserializeSeed<'de>> DeserializeSeed<'de> for CheckingSeed<'_, S> {
    type Value = S::Value;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<S::Value, D::Error> {
        // Without a shape, anything fits, but objects are still walked so that a member given
        // twice is never waved through.
        let shape = self.shape.unwrap_or(&super::ANY);
        self.inner.deserialize(Checking { shape, inner: deserializer })
    }
}

/// The items of an array, each checked against `items` when the schema has one.
struct CheckingSeq<'s, A> {
    items: Option<&'s Shape>,
    inner: A,
}

impl<'de, A: SeqAccess<'de>> SeqAccess<'de> for CheckingSeq<'_, A> {
    type Error = A::Error;

    fn next_element_seed<S: DeserializeSeed<'de>>(&mut self, seed: S) -> Result<Option<S::Value>, A::Error> {
        self.inner.next_element_seed(CheckingSeed { shape: self.items, inner: seed })
    }

    fn size_hint(&self) -> Option<usize> {
        self.inner.size_hint()
    }
}

/// The members of an object: each name is looked up among the properties, its value checked
/// against that property (or `additionalProperties`), and the properties given are counted in
/// `seen` for the required check.
struct CheckingMap<'s, 'c, A> {
    shape: &'s Shape,
    inner: A,
    seen: &'c Cell<u64>,
    /// The property the member name just read names: `Some(None)` for a name that is not a
    /// property.
    next: Option<Option<usize>>,
}

impl<'de, A: MapAccess<'de>> MapAccess<'de> for CheckingMap<'_, '_, A> {
    type Error = A::Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>, A::Error> {
        let named = Cell::new(None);
        let key =
            self.inner.next_key_seed(NameSeed { properties: &self.shape.properties, named: &named, inner: seed })?;
        if key.is_some() {
            // A name the type read as something other than a string cannot be looked up.
            self.next = Some(named.get().ok_or_else(cannot_tell::<A::Error>)?);
        }
        Ok(key)
    }

    fn next_value_seed<S: DeserializeSeed<'de>>(&mut self, seed: S) -> Result<S::Value, A::Error> {
        let shape = match self.next.take() {
            Some(Some(index)) => {
                // A member given twice: the full validator sees only the last one, and so must
                // the handler; leave it to that path.
                let bit = 1 << index;
                if self.seen.get() & bit != 0 {
                    return Err(cannot_tell());
                }
                self.seen.set(self.seen.get() | bit);
                Some(&self.shape.properties[index].1)
            }
            // A member the schema does not name may be given twice, which this reader cannot
            // see without keeping every such name; the full path refuses that.
            Some(None) => return Err(cannot_tell()),
            None => return Err(cannot_tell()),
        };
        self.inner.next_value_seed(CheckingSeed { shape, inner: seed })
    }

    fn size_hint(&self) -> Option<usize> {
        self.inner.size_hint()
    }
}

/// A member name: passed on to the type's seed, and looked up among `properties` on the way.
struct NameSeed<'s, 'c, K> {
    properties: &'s [(String, Shape)],
    named: &'c Cell<Option<Option<usize>>>,
    inner: K,
}

impl<'de, K: DeserializeSeed<'de>> DeserializeSeed<'de> for NameSeed<'_, '_, K> {
    type Value = K::Value;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<K::Value, D::Error> {
        self.inner.deserialize(Naming { properties: self.properties, named: self.named, inner: deserializer })
    }
}

/// The deserializer of a member name, which notes the property the name is.
struct Naming<'s, 'c, D> {
    properties: &'s [(String, Shape)],
    named: &'c Cell<Option<Option<usize>>>,
    inner: D,
}

/// Forwards `deserialize_*` methods to the name's deserializer with the visitor wrapped.
macro_rules! forward_naming {
    ($($method:ident($($arg:ident: $ty:ty),*)),* $(,)?) => {
        $(
            fn $method<V: Visitor<'de>>(self, $($arg: $ty,)* visitor: V) -> Result<V::Value, D::Error> {
                let visitor = NamingVisitor { properties: self.properties, named: self.named, inner: visitor };
                self.inner.$method($($arg,)* visitor)
            }
        )*
    };
}

impl<'de, D: Deserializer<'de>> Deserializer<'de> for Naming<'_, '_, D> {
    type Error = D::Error;

    forward_naming! {
        deserialize_any(), deserialize_bool(), deserialize_i8(), deserialize_i16(), deserialize_i32(),
        deserialize_i64(), deserialize_i128(), deserialize_u8(), deserialize_u16(), deserialize_u32(),
        deserialize_u64(), deserialize_u128(), deserialize_f32(), deserialize_f64(), deserialize_char(),
        deserialize_str(), deserialize_string(), deserialize_bytes(), deserialize_byte_buf(),
        deserialize_option(), deserialize_unit(), deserialize_seq(), deserialize_map(), deserialize_identifier(),
        deserialize_ignored_any(),
        deserialize_unit_struct(name: &'static str), deserialize_newtype_struct(name: &'static str),
        deserialize_tuple(len: usize), deserialize_tuple_struct(name: &'static str, len: usize),
        deserialize_struct(name: &'static str, fields: &'static [&'static str]),
        deserialize_enum(name: &'static str, variants: &'static [&'static str]),
    }

    fn is_human_readable(&self) -> bool {
        self.inner.is_human_readable()
    }
}

/// The visitor of a member name: notes which property a string name is, then passes it on.
/// Any other kind of name leaves `named` empty, which the map takes as "cannot tell".
struct NamingVisitor<'s, 'c, V> {
    properties: &'s [(String, Shape)],
    named: &'c Cell<Option<Option<usize>>>,
    inner: V,
}

impl<V> NamingVisitor<'_, '_, V> {
    fn note(&self, name: &str) {
        self.named.set(Some(self.properties.iter().position(|(property, _)| property == name)));
    }
}

impl<'de, V: Visitor<'de>> Visitor<'de> for NamingVisitor<'_, '_, V> {
    type Value = V::Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.inner.expecting(f)
    }

    fn visit_str<E: serde::de::Error>(self, name: &str) -> Result<V::Value, E> {
        self.note(name);
        self.inner.visit_str(name)
    }

    fn visit_borrowed_str<E: serde::de::Error>(self, name: &'de str) -> Result<V::Value, E> {
        self.note(name);
        self.inner.visit_borrowed_str(name)
    }

    fn visit_string<E: serde::de::Error>(self, name: String) -> Result<V::Value, E> {
        self.note(&name);
        self.inner.visit_string(name)
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use serde::Deserialize;
    use serde_json::{Value, json};

    use super::*;
    use crate::schema::schema_for;

    fn shape(schema: Value) -> Shape {
        Shape::of(schema.as_object().unwrap()).expect("a plain schema")
    }

    /// Reads `text` both ways and checks that the one pass is never more lenient than the two
    /// (the shape's check, then the read) and reads the same value; returns whether the one
    /// pass read it.
    fn one_pass<T: DeserializeOwned + PartialEq + fmt::Debug>(shape: &Shape, text: &str) -> bool {
        let read = shape.read::<T>(text);
        if let Some(value) = &read {
            assert!(shape.accepts(text), "the one pass took {text}, which the shape refuses");
            let two_passes: T = serde_json::from_str(text).expect("the type reads what the one pass read");
            assert_eq!(&two_passes, value, "{text}");
        }
        read.is_some()
    }

    #[derive(Debug, PartialEq, Deserialize, schemars::JsonSchema)]
    struct Inner {
        label: String,
        weight: Option<f64>,
    }

    #[derive(Debug, PartialEq, Deserialize, schemars::JsonSchema)]
    struct Call {
        message: String,
        count: u32,
        flag: Option<bool>,
        tags: Vec<String>,
        inner: Inner,
        extra: BTreeMap<String, i64>,
    }

    #[test]
    fn derived_types_are_read_and_checked_in_one_pass() {
        let shape = shape(Value::Object(schema_for::<Call>()));
        let valid = r#"{"message": "hi", "count": 3, "tags": ["a", "b"], "inner": {"label": "x", "weight": 1.5},
                        "extra": {}, "flag": null}"#;
        assert!(one_pass::<Call>(&shape, valid));
        assert!(one_pass::<Call>(
            &shape,
            r#"{"message": "\u00e9", "count": 0, "tags": [], "extra": {}, "inner": {"label": ""}}"#
        ));
        for refused in [
            r#"{"message": "hi", "count": -1, "tags": [], "extra": {}, "inner": {"label": ""}}"#,
            r#"{"message": 1, "count": 1, "tags": [], "extra": {}, "inner": {"label": ""}}"#,
            r#"{"message": "hi", "count": 1, "tags": [1], "extra": {}, "inner": {"label": ""}}"#,
            r#"{"message": "hi", "count": 1, "tags": [], "extra": {"k": "v"}, "inner": {"label": ""}}"#,
            r#"{"message": "hi", "count": 1, "tags": [], "extra": {}, "inner": {"weight": 1}}"#,
            r#"{"message": "hi", "count": 1, "tags": [], "extra": {}, "inner": {"label": "", "weight": "1"}}"#,
            r#"{"message": "hi", "count": 1, "tags": [], "extra": {}}"#,
            r#"{"message": "hi", "tags": [], "extra": {}, "inner": {"label": ""}}"#,
            r#"{"message": "hi", "message": "again", "count": 1, "tags": [], "extra": {}, "inner": {"label": ""}}"#,
            // Valid, but a map's members are names the schema does not give: the full path
            // reads them, where one given twice is refused.
            r#"{"message": "hi", "count": 1, "tags": [], "extra": {"k": -1}, "inner": {"label": ""}}"#,
            r#"["hi", 1, null, [], {"label": ""}, {}]"#,
            r#"{"message": "hi", "count": 1, "tags": [], "extra": {}, "inner": {"label": ""}} trailing"#,
        ] {
            assert!(!one_pass::<Call>(&shape, refused), "{refused}");
        }
    }

    #[derive(Debug, PartialEq, Deserialize)]
    struct OnlyA {
        a: String,
    }

    #[test]
    fn members_the_type_skips_are_checked_all_the_same() {
        let shape = shape(json!({
            "type": "object",
            "properties": {"a": {"type": "string"}, "b": {"type": "integer", "maximum": 3}},
            "required": ["a"],
            "additionalProperties": {"type": "boolean"}
        }));
        assert!(one_pass::<OnlyA>(&shape, r#"{"a": "x", "b": 2}"#));
        // Valid, but a member the schema does not name is left to the full path.
        assert!(!one_pass::<OnlyA>(&shape, r#"{"a": "x", "b": 2, "c": true}"#));
        assert!(!one_pass::<OnlyA>(&shape, r#"{"a": "x", "b": 4}"#));
        assert!(!one_pass::<OnlyA>(&shape, r#"{"a": "x", "b": "two"}"#));
        assert!(!one_pass::<OnlyA>(&shape, r#"{"a": "x", "c": 1}"#));
        let closed = self::shape(
            json!({"type": "object", "properties": {"a": {"type": "string"}}, "additionalProperties": false}),
        );
        assert!(one_pass::<OnlyA>(&closed, r#"{"a": "x"}"#));
        assert!(!one_pass::<OnlyA>(&closed, r#"{"a": "x", "z": null}"#));
    }

    /// Reads the first member of an object and stops, as a hand-written `Deserialize` may.
    #[derive(Debug, PartialEq)]
    struct FirstMember(String);

    impl<'de> Deserialize<'de> for FirstMember {
        fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<FirstMember, D::Error> {
            struct First;
            impl<'de> Visitor<'de> for First {
                type Value = FirstMember;
                fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                    f.write_str("an object")
                }
                fn visit_map<A: MapAccess<'de>>(self, mut members: A) -> Result<FirstMember, A::Error> {
                    let (name, _) = members.next_entry::<String, serde::de::IgnoredAny>()?.unwrap_or_default();
                    Ok(FirstMember(name))
                }
            }
            deserializer.deserialize_map(First)
        }
    }

    #[test]
    fn required_members_are_checked_even_when_the_type_stops_reading_early() {
        let shape = shape(json!({"type": "object", "required": ["a", "b"],
                                 "properties": {"a": {"type": "string"}, "b": {"type": "string"}}}));
        assert!(!one_pass::<FirstMember>(&shape, r#"{"a": "x"}"#));
        let optional = self::shape(json!({"type": "object", "properties": {"a": {"type": "string"}}}));
        assert!(one_pass::<FirstMember>(&optional, r#"{"a": "x"}"#));
    }

    #[derive(Debug, PartialEq, Deserialize, schemars::JsonSchema)]
    #[serde(rename_all = "lowercase")]
    enum Operation {
        Add,
        Divide,
    }

    #[derive(Debug, PartialEq, Deserialize, schemars::JsonSchema)]
    struct Calculation {
        operation: Operation,
        a: f64,
    }

    #[test]
    fn unit_variants_are_read_from_strings_only() {
        let shape = shape(Value::Object(schema_for::<Calculation>()));
        assert!(one_pass::<Calculation>(&shape, r#"{"operation": "add", "a": 1}"#));
        assert!(one_pass::<Calculation>(&shape, r#"{"operation": "divid\u0065", "a": 1}"#));
        assert!(!one_pass::<Calculation>(&shape, r#"{"operation": "modulo", "a": 1}"#));
        // serde_json alone reads this into `Operation::Add` too, but the schema wants a string.
        let object = r#"{"operation": {"add": null}, "a": 1}"#;
        assert!(serde_json::from_str::<Calculation>(object).is_ok());
        assert!(!one_pass::<Calculation>(&shape, object));
    }

    #[test]
    fn numbers_and_strings_meet_their_bounds() {
        #[derive(Debug, PartialEq, Deserialize)]
        struct Bounded {
            n: f64,
            s: String,
            big: Option<i128>,
        }
        let shape = shape(json!({"type": "object", "properties": {
            "n": {"type": "number", "exclusiveMinimum": 0, "maximum": 10},
            "s": {"type": "string", "minLength": 2, "enum": ["ab", "abc"]},
            "big": {"type": "integer"}
        }}));
        assert!(one_pass::<Bounded>(&shape, r#"{"n": 10, "s": "ab", "big": 5}"#));
        assert!(one_pass::<Bounded>(&shape, r#"{"n": 0.5, "s": "abc"}"#));
        assert!(!one_pass::<Bounded>(&shape, r#"{"n": 0, "s": "ab"}"#));
        assert!(!one_pass::<Bounded>(&shape, r#"{"n": 10.5, "s": "ab"}"#));
        assert!(!one_pass::<Bounded>(&shape, r#"{"n": 1, "s": "abcd"}"#));
        assert!(!one_pass::<Bounded>(&shape, r#"{"n": 1, "s": "ab", "big": 1.5}"#));
    }
}
