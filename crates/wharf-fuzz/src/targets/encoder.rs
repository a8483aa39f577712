//! `encoder`: Wharf's JSON encoder (`encode`) against `serde_json::to_vec`, byte for byte, on
//! values that use every part of serde's data model: strings of every character class and
//! length (the encoder checks eight bytes at a time), floats from raw bits (NaN, infinities,
//! subnormals), 128-bit integers, map keys of every kind (some of which both must refuse), enum
//! variants, and raw JSON text.

use serde::ser::{
    Serialize, SerializeMap, SerializeSeq, SerializeStruct, SerializeStructVariant, SerializeTuple,
    SerializeTupleStruct, SerializeTupleVariant, Serializer,
};
use serde_json::value::RawValue;

use crate::rng::Rng;
use crate::target::Target;

/// The target.
pub(super) struct Encoder;

/// The name serde_json's `RawValue` serializes itself under.
const RAW_VALUE_TOKEN: &str = "$serde_json::private::RawValue";

/// Names for structs, variants and fields; some need escaping, one is the raw-value token.
const NAMES: &[&str] = &["a", "name", "b\"c", "\u{e9}", "\u{1}", "\\", "x\u{2028}", "", RAW_VALUE_TOKEN];

/// Characters that strings are drawn from, besides every ASCII byte.
const WIDE_CHARS: &[char] = &[
    '\u{80}',
    '\u{e9}',
    '\u{7ff}',
    '\u{800}',
    '\u{2028}',
    '\u{fffd}',
    '\u{ffff}',
    '\u{10000}',
    '\u{1f600}',
    '\u{10ffff}',
];

/// A value in serde's data model, read off the case's bytes.
#[derive(Debug)]
enum Model {
    Unit,
    Bool(bool),
    I8(i8),
    I64(i64),
    I128(i128),
    U16(u16),
    U64(u64),
    U128(u128),
    F32(f32),
    F64(f64),
    Char(char),
    Str(String),
    Bytes(Vec<u8>),
    None,
    Some(Box<Model>),
    UnitStruct,
    UnitVariant(&'static str),
    NewtypeStruct(Box<Model>),
    NewtypeVariant(&'static str, Box<Model>),
    Seq(Vec<Model>),
    Tuple(Vec<Model>),
    TupleStruct(Vec<Model>),
    TupleVariant(&'static str, Vec<Model>),
    Map(Vec<(Model, Model)>),
    Struct(&'static str, Vec<(&'static str, Model)>),
    StructVariant(&'static str, Vec<(&'static str, Model)>),
    Raw(Box<RawValue>),
}

/// Reads choices off a case's bytes; past the end every choice is zero.
struct Choices<'a> {
    bytes: &'a [u8],
    at: usize,
    nodes: usize,
}

impl Choices<'_> {
    fn byte(&mut self) -> u8 {
        let byte = self.bytes.get(self.at).copied().unwrap_or(0);
        self.at += 1;
        byte
    }

    fn array<const N: usize>(&mut self) -> [u8; N] {
        std::array::from_fn(|_| self.byte())
    }

    fn name(&mut self) -> &'static str {
        NAMES[self.byte() as usize % NAMES.len()]
    }

    fn text(&mut self) -> String {
        let len = match self.byte() {
            250.. => 200 + self.byte() as usize,
            byte => byte as usize % 40,
        };
        (0..len)
            .map(|_| match self.byte() {
                byte @ 0..=127 => byte as char,
                byte => WIDE_CHARS[byte as usize % WIDE_CHARS.len()],
            })
            .collect()
    }

    fn items(&mut self, depth: usize) -> Vec<Model> {
        (0..self.byte() % 5).map(|_| self.model(depth + 1)).collect()
    }

    fn fields(&mut self, depth: usize) -> Vec<(&'static str, Model)> {
        (0..self.byte() % 4).map(|_| (self.name(), self.model(depth + 1))).collect()
    }

    fn model(&mut self, depth: usize) -> Model {
        self.nodes += 1;
        let kinds = if depth >= 5 || self.nodes > 200 { 15 } else { 27 };
        match self.byte() % kinds {
            0 => Model::Unit,
            1 => Model::Bool(self.byte() & 1 == 1),
            2 => Model::I8(self.byte() as i8),
            3 => Model::I64(i64::from_le_bytes(self.array())),
            4 => Model::I128(i128::from_le_bytes(self.array())),
            5 => Model::U16(u16::from_le_bytes(self.array())),
            6 => Model::U64(u64::from_le_bytes(self.array())),
            7 => Model::U128(u128::from_le_bytes(self.array())),
            8 => Model::F32(f32::from_le_bytes(self.array())),
            9 => Model::F64(f64::from_le_bytes(self.array())),
            10 => Model::Char(char::from_u32(u32::from_le_bytes(self.array()) % 0x11_0000).unwrap_or('\u{fffd}')),
            11 | 12 => Model::Str(self.text()),
            13 => Model::None,
            14 => Model::UnitVariant(self.name()),
            15 => Model::Bytes(self.text().into_bytes()),
            16 => Model::Some(Box::new(self.model(depth + 1))),
            17 => Model::UnitStruct,
            18 => Model::NewtypeStruct(Box::new(self.model(depth + 1))),
            19 => Model::NewtypeVariant(self.name(), Box::new(self.model(depth + 1))),
            20 => Model::Seq(self.items(depth)),
            21 => Model::Tuple(self.items(depth)),
            22 => Model::TupleStruct(self.items(depth)),
            23 => Model::TupleVariant(self.name(), self.items(depth)),
            24 => Model::Map((0..self.byte() % 4).map(|_| (self.model(depth + 1), self.model(depth + 1))).collect()),
            25 => {
                let name = if self.byte().is_multiple_of(8) { RAW_VALUE_TOKEN } else { "S" };
                Model::Struct(name, self.fields(depth))
            }
            _ => match self.byte() % 3 {
                0 => Model::StructVariant(self.name(), self.fields(depth)),
                _ => {
                    let text = self.text();
                    let raw = RawValue::from_string(serde_json::Value::from(text.clone()).to_string());
                    let raw = if text.starts_with('1') { RawValue::from_string(text) } else { raw };
                    raw.map_or(Model::Unit, Model::Raw)
                }
            },
        }
    }
}

impl Serialize for Model {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Model::Unit => serializer.serialize_unit(),
            Model::Bool(value) => serializer.serialize_bool(*value),
            Model::I8(value) => serializer.serialize_i8(*value),
            Model::I64(value) => serializer.serialize_i64(*value),
            Model::I128(value) => serializer.serialize_i128(*value),
            Model::U16(value) => serializer.serialize_u16(*value),
            Model::U64(value) => serializer.serialize_u64(*value),
            Model::U128(value) => serializer.serialize_u128(*value),
            Model::F32(value) => serializer.serialize_f32(*value),
            Model::F64(value) => serializer.serialize_f64(*value),
            Model::Char(value) => serializer.serialize_char(*value),
            Model::Str(value) => serializer.serialize_str(value),
            Model::Bytes(value) => serializer.serialize_bytes(value),
            Model::None => serializer.serialize_none(),
            Model::Some(value) => serializer.serialize_some(value),
            Model::UnitStruct => serializer.serialize_unit_struct("U"),
            Model::UnitVariant(variant) => serializer.serialize_unit_variant("E", 0, variant),
            Model::NewtypeStruct(value) => serializer.serialize_newtype_struct("N", value),
            Model::NewtypeVariant(variant, value) => serializer.serialize_newtype_variant("E", 1, variant, value),
            Model::Seq(items) => {
                let mut seq = serializer.serialize_seq(Some(items.len()))?;
                items.iter().try_for_each(|item| seq.serialize_element(item))?;
                seq.end()
            }
            Model::Tuple(items) => {
                let mut tuple = serializer.serialize_tuple(items.len())?;
                items.iter().try_for_each(|item| tuple.serialize_element(item))?;
                tuple.end()
            }
            Model::TupleStruct(items) => {
                let mut tuple = serializer.serialize_tuple_struct("T", items.len())?;
                items.iter().try_for_each(|item| tuple.serialize_field(item))?;
                tuple.end()
            }
            Model::TupleVariant(variant, items) => {
                let mut tuple = serializer.serialize_tuple_variant("E", 2, variant, items.len())?;
                items.iter().try_for_each(|item| tuple.serialize_field(item))?;
                tuple.end()
            }
            Model::Map(entries) => {
                let mut map = serializer.serialize_map(None)?;
                entries.iter().try_for_each(|(key, value)| map.serialize_entry(key, value))?;
                map.end()
            }
            Model::Struct(name, fields) => {
                let mut record = serializer.serialize_struct(name, fields.len())?;
                fields.iter().try_for_each(|(field, value)| record.serialize_field(field, value))?;
                record.end()
            }
            Model::StructVariant(variant, fields) => {
                let mut record = serializer.serialize_struct_variant("E", 3, variant, fields.len())?;
                fields.iter().try_for_each(|(field, value)| record.serialize_field(field, value))?;
                record.end()
            }
            Model::Raw(raw) => raw.serialize(serializer),
        }
    }
}

impl Target for Encoder {
    fn name(&self) -> &'static str {
        "encoder"
    }

    fn generate(&self, rng: &mut Rng) -> Vec<u8> {
        let len = rng.below(400);
        rng.bytes(len)
    }

    fn check(&self, case: &[u8]) -> Result<&'static str, String> {
        let model = Choices { bytes: case, at: 0, nodes: 0 }.model(0);
        let ours = wharf_protocol::encode(&model);
        let reference = serde_json::to_vec(&model);
        match (&ours, &reference) {
            (Ok(ours), Ok(reference)) if ours == reference => Ok("encoded"),
            (Err(_), Err(_)) => Ok("refused by both"),
            _ => Err(format!(
                "the encoder and serde_json disagree\nvalue: {model:?}\nencode: {}\nserde_json: {}",
                shown(&ours),
                shown(&reference)
            )),
        }
    }
}

fn shown(result: &Result<Vec<u8>, serde_json::Error>) -> String {
    match result {
        Ok(bytes) => String::from_utf8_lossy(bytes).into_owned(),
        Err(err) => format!("error: {err}"),
    }
}
