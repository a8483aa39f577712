//! The JSON encoder for outgoing messages: compact JSON, byte for byte what `serde_json` writes,
//! with less work per string.
//!
//! `serde_json`'s serializer checks every member name and value for characters to escape one
//! byte at a time through a table, and copies every fragment through `io::Write`; a busy
//! server's answers are mostly such strings. Here a string is checked eight bytes at a time and
//! copied into the output `Vec` in one piece unless it has something to escape
//! (`benches/NOTES.md` has the measurements). Numbers, and anything unusual,
//! are written exactly as `serde_json` writes them (floats are handed to it).

use serde::Serialize;
use serde::ser::{self, Error as _, Impossible};

type Error = serde_json::Error;
type Result<T = ()> = std::result::Result<T, Error>;

/// The name `serde_json::value::RawValue` serializes itself under: a struct of that name with
/// one member of that name, whose value is JSON text to write as it is.
const RAW_VALUE_TOKEN: &str = "$serde_json::private::RawValue";

/// Appends `value` to `out` as compact JSON: the same bytes `serde_json::to_writer` writes.
///
/// Fails where `serde_json` fails: a map key that is not a string, a number, a boolean or a
/// unit variant, or a `Serialize` implementation that reports an error itself. Whatever was
/// written before the failure stays in `out`.
pub fn encode_into<T: Serialize + ?Sized>(out: &mut Vec<u8>, value: &T) -> Result {
    value.serialize(&mut Encoder { out })
}

/// Encodes `value` as compact JSON into a new buffer; see [`encode_into`].
pub fn encode<T: Serialize + ?Sized>(value: &T) -> Result<Vec<u8>> {
    let mut out = Vec::with_capacity(128);
    encode_into(&mut out, value)?;
    Ok(out)
}

struct Encoder<'a> {
    out: &'a mut Vec<u8>,
}

/// Appends `text` as a JSON string.
#[inline]
pub(crate) fn write_str(out: &mut Vec<u8>, text: &str) {
    let bytes = text.as_bytes();
    out.reserve(bytes.len() + 2);
    out.push(b'"');
    let plain = crate::escape::plain_len(bytes);
    out.extend_from_slice(&bytes[..plain]);
    if plain < bytes.len() {
        write_escaped(out, &bytes[plain..]);
    }
    out.push(b'"');
}

/// Appends `bytes`, a string's text from its first character to escape on, escaped as
/// `serde_json` escapes it: the short forms where JSON has them, `\u00XX` (lower-case hex)
/// for the other control characters.
#[cold]
fn write_escaped(out: &mut Vec<u8>, bytes: &[u8]) {
    const HEX_DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut start = 0;
    for (index, &byte) in bytes.iter().enumerate() {
        let short = match byte {
            b'"' => b'"',
            b'\\' => b'\\',
            b'\n' => b'n',
            b'\r' => b'r',
            b'\t' => b't',
            0x08 => b'b',
            0x0C => b'f',
            0x00..=0x1F => 0,
            _ => continue,
        };
        out.extend_from_slice(&bytes[start..index]);
        start = index + 1;
        if short == 0 {
            let hex = [HEX_DIGITS[usize::from(byte >> 4)], HEX_DIGITS[usize::from(byte & 0xF)]];
            out.extend_from_slice(&[b'\\', b'u', b'0', b'0', hex[0], hex[1]]);
        } else {
            out.extend_from_slice(&[b'\\', short]);
        }
    }
    out.extend_from_slice(&bytes[start..]);
}

fn write_integer(out: &mut Vec<u8>, value: impl itoa::Integer) {
    out.extend_from_slice(itoa::Buffer::new().format(value).as_bytes());
}

/// The ten integer methods of a serializer, each handing its value to `self.$write`.
macro_rules! integers {
    ($write:ident) => {
        integers!(@each $write: serialize_i8(i8) serialize_i16(i16) serialize_i32(i32) serialize_i64(i64)
            serialize_i128(i128) serialize_u8(u8) serialize_u16(u16) serialize_u32(u32) serialize_u64(u64)
            serialize_u128(u128));
    };
    (@each $write:ident: $($method:ident($kind:ty))*) => {
        $(fn $method(self, value: $kind) -> Result {
            self.$write(value)
        })*
    };
}

/// Floats are rare in MCP messages; `serde_json` writes them (shortest round-trip form, `null`
/// for NaN and the infinities), so they come out exactly as before.
fn write_float<T: Serialize>(out: &mut Vec<u8>, value: T) -> Result {
    serde_json::to_writer(out, &value)
}

/// Where a compound value is: before its first member, after one, or (for a raw value) about
/// to copy its text.
#[derive(Clone, Copy, PartialEq)]
enum Position {
    First,
    Rest,
    Raw,
}

struct Compound<'e, 'a> {
    encoder: &'e mut Encoder<'a>,
    position: Position,
}

impl Compound<'_, '_> {
    /// Writes the comma before every element but the first.
    #[inline]
    fn separate(&mut self) {
        if self.position == Position::First {
            self.position = Position::Rest;
        } else {
            self.encoder.out.push(b',');
        }
    }

    #[inline]
    fn member<T: Serialize + ?Sized>(&mut self, key: &str, value: &T) -> Result {
        self.separate();
        write_str(self.encoder.out, key);
        self.encoder.out.push(b':');
        value.serialize(&mut *self.encoder)
    }

    #[inline]
    fn element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result {
        self.separate();
        value.serialize(&mut *self.encoder)
    }
}

impl<'e, 'a> Encoder<'a> {
    fn integer(&mut self, value: impl itoa::Integer) -> Result {
        write_integer(self.out, value);
        Ok(())
    }

    fn open(&'e mut self, bracket: u8) -> Compound<'e, 'a> {
        self.out.push(bracket);
        Compound { encoder: self, position: Position::First }
    }

    /// Opens `{"variant":` around an enum variant's content, which the returned compound
    /// closes along with the outer object.
    fn open_variant(&'e mut self, variant: &str, bracket: u8) -> Compound<'e, 'a> {
        self.out.push(b'{');
        write_str(self.out, variant);
        self.out.push(b':');
        self.open(bracket)
    }
}

impl<'e, 'a> ser::Serializer for &'e mut Encoder<'a> {
    type Ok = ();
    type Error = Error;
    type SerializeSeq = Compound<'e, 'a>;
    type SerializeTuple = Compound<'e, 'a>;
    type SerializeTupleStruct = Compound<'e, 'a>;
    type SerializeTupleVariant = Compound<'e, 'a>;
    type SerializeMap = Compound<'e, 'a>;
    type SerializeStruct = Compound<'e, 'a>;
    type SerializeStructVariant = Compound<'e, 'a>;

    fn serialize_bool(self, value: bool) -> Result {
        self.out.extend_from_slice(if value { b"true" } else { b"false" });
        Ok(())
    }

    integers!(integer);

    fn serialize_f32(self, value: f32) -> Result {
        write_float(self.out, value)
    }

    fn serialize_f64(self, value: f64) -> Result {
        write_float(self.out, value)
    }

    fn serialize_char(self, value: char) -> Result {
        write_str(self.out, value.encode_utf8(&mut [0; 4]));
        Ok(())
    }

    #[inline]
    fn serialize_str(self, value: &str) -> Result {
        write_str(self.out, value);
        Ok(())
    }

    /// Bytes are an array of numbers, as `serde_json` writes them.
    fn serialize_bytes(self, value: &[u8]) -> Result {
        let mut array = self.open(b'[');
        for byte in value {
            array.element(byte)?;
        }
        ser::SerializeSeq::end(array)
    }

    fn serialize_none(self) -> Result {
        self.serialize_unit()
    }

    #[inline]
    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result {
        value.serialize(self)
    }

    fn serialize_unit(self) -> Result {
        self.out.extend_from_slice(b"null");
        Ok(())
    }

    fn serialize_unit_struct(self, _name: &'static str) -> Result {
        self.serialize_unit()
    }

    fn serialize_unit_variant(self, _name: &'static str, _index: u32, variant: &'static str) -> Result {
        write_str(self.out, variant);
        Ok(())
    }

    fn serialize_newtype_struct<T: Serialize + ?Sized>(self, _name: &'static str, value: &T) -> Result {
        value.serialize(self)
    }

    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        value: &T,
    ) -> Result {
        self.out.push(b'{');
        write_str(self.out, variant);
        self.out.push(b':');
        value.serialize(&mut *self)?;
        self.out.push(b'}');
        Ok(())
    }

    fn serialize_seq(self, _len: Option<usize>) -> Result<Compound<'e, 'a>> {
        Ok(self.open(b'['))
    }

    fn serialize_tuple(self, _len: usize) -> Result<Compound<'e, 'a>> {
        Ok(self.open(b'['))
    }

    fn serialize_tuple_struct(self, _name: &'static str, _len: usize) -> Result<Compound<'e, 'a>> {
        Ok(self.open(b'['))
    }

    fn serialize_tuple_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        _len: usize,
    ) -> Result<Compound<'e, 'a>> {
        Ok(self.open_variant(variant, b'['))
    }

    fn serialize_map(self, _len: Option<usize>) -> Result<Compound<'e, 'a>> {
        Ok(self.open(b'{'))
    }

    #[inline]
    fn serialize_struct(self, name: &'static str, _len: usize) -> Result<Compound<'e, 'a>> {
        if name == RAW_VALUE_TOKEN {
            return Ok(Compound { encoder: self, position: Position::Raw });
        }
        Ok(self.open(b'{'))
    }

    fn serialize_struct_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        _len: usize,
    ) -> Result<Compound<'e, 'a>> {
        Ok(self.open_variant(variant, b'{'))
    }
}

impl ser::SerializeSeq for Compound<'_, '_> {
    type Ok = ();
    type Error = Error;

    #[inline]
    fn serialize_element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result {
        self.element(value)
    }

    #[inline]
    fn end(self) -> Result {
        self.encoder.out.push(b']');
        Ok(())
    }
}

impl ser::SerializeTuple for Compound<'_, '_> {
    type Ok = ();
    type Error = Error;

    fn serialize_element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result {
        self.element(value)
    }

    fn end(self) -> Result {
        ser::SerializeSeq::end(self)
    }
}

impl ser::SerializeTupleStruct for Compound<'_, '_> {
    type Ok = ();
    type Error = Error;

    fn serialize_field<T: Serialize + ?Sized>(&mut self, value: &T) -> Result {
        self.element(value)
    }

    fn end(self) -> Result {
        ser::SerializeSeq::end(self)
    }
}

impl ser::SerializeTupleVariant for Compound<'_, '_> {
    type Ok = ();
    type Error = Error;

    fn serialize_field<T: Serialize + ?Sized>(&mut self, value: &T) -> Result {
        self.element(value)
    }

    fn end(self) -> Result {
        self.encoder.out.extend_from_slice(b"]}");
        Ok(())
    }
}

impl ser::SerializeMap for Compound<'_, '_> {
    type Ok = ();
    type Error = Error;

    #[inline]
    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result {
        self.separate();
        key.serialize(MapKey { out: self.encoder.out })?;
        self.encoder.out.push(b':');
        Ok(())
    }

    #[inline]
    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result {
        value.serialize(&mut *self.encoder)
    }

    #[inline]
    fn end(self) -> Result {
        self.encoder.out.push(b'}');
        Ok(())
    }
}

impl ser::SerializeStruct for Compound<'_, '_> {
    type Ok = ();
    type Error = Error;

    #[inline]
    fn serialize_field<T: Serialize + ?Sized>(&mut self, key: &'static str, value: &T) -> Result {
        if self.position == Position::Raw {
            // As serde_json: only the token's own member holds the text.
            if key != RAW_VALUE_TOKEN {
                return Err(not_raw_text());
            }
            return value.serialize(RawText { out: self.encoder.out });
        }
        self.member(key, value)
    }

    #[inline]
    fn end(self) -> Result {
        if self.position != Position::Raw {
            self.encoder.out.push(b'}');
        }
        Ok(())
    }
}

impl ser::SerializeStructVariant for Compound<'_, '_> {
    type Ok = ();
    type Error = Error;

    fn serialize_field<T: Serialize + ?Sized>(&mut self, key: &'static str, value: &T) -> Result {
        self.member(key, value)
    }

    fn end(self) -> Result {
        self.encoder.out.extend_from_slice(b"}}");
        Ok(())
    }
}

/// The methods of a serializer for the scalar kinds of value (and options, unit variants and
/// newtypes), each refusing its value with `$error()`.
macro_rules! refuse_scalars {
    ($error:ident) => {
        refuse_scalars!(@each $error:
            serialize_bool(bool) serialize_i8(i8) serialize_i16(i16) serialize_i32(i32) serialize_i64(i64)
            serialize_u8(u8) serialize_u16(u16) serialize_u32(u32) serialize_u64(u64)
            serialize_f32(f32) serialize_f64(f64) serialize_char(char));

        fn serialize_some<T: Serialize + ?Sized>(self, _value: &T) -> Result {
            Err($error())
        }

        fn serialize_unit_variant(self, _name: &'static str, _index: u32, _variant: &'static str) -> Result {
            Err($error())
        }

        fn serialize_newtype_struct<T: Serialize + ?Sized>(self, _name: &'static str, _value: &T) -> Result {
            Err($error())
        }
    };
    (@each $error:ident: $($method:ident($kind:ty))*) => {
        $(fn $method(self, _value: $kind) -> Result {
            Err($error())
        })*
    };
}

/// The methods of a serializer that takes only strings and numbers: every other kind of value
/// is refused with `$error()`.
macro_rules! refuse_compounds {
    ($error:ident) => {
        fn serialize_bytes(self, _value: &[u8]) -> Result {
            Err($error())
        }

        fn serialize_none(self) -> Result {
            Err($error())
        }

        fn serialize_unit(self) -> Result {
            Err($error())
        }

        fn serialize_unit_struct(self, _name: &'static str) -> Result {
            Err($error())
        }

        fn serialize_newtype_variant<T: Serialize + ?Sized>(
            self,
            _name: &'static str,
            _index: u32,
            _variant: &'static str,
            _value: &T,
        ) -> Result {
            Err($error())
        }

        fn serialize_seq(self, _len: Option<usize>) -> Result<Self::SerializeSeq> {
            Err($error())
        }

        fn serialize_tuple(self, _len: usize) -> Result<Self::SerializeTuple> {
            Err($error())
        }

        fn serialize_tuple_struct(self, _name: &'static str, _len: usize) -> Result<Self::SerializeTupleStruct> {
            Err($error())
        }

        fn serialize_tuple_variant(
            self,
            _name: &'static str,
            _index: u32,
            _variant: &'static str,
            _len: usize,
        ) -> Result<Self::SerializeTupleVariant> {
            Err($error())
        }

        fn serialize_map(self, _len: Option<usize>) -> Result<Self::SerializeMap> {
            Err($error())
        }

        fn serialize_struct(self, _name: &'static str, _len: usize) -> Result<Self::SerializeStruct> {
            Err($error())
        }

        fn serialize_struct_variant(
            self,
            _name: &'static str,
            _index: u32,
            _variant: &'static str,
            _len: usize,
        ) -> Result<Self::SerializeStructVariant> {
            Err($error())
        }
    };
}

/// Writes a map key as `serde_json` does: strings and unit variants as they are; numbers,
/// booleans and characters as strings; anything else is an error.
struct MapKey<'a> {
    out: &'a mut Vec<u8>,
}

fn key_must_be_a_string() -> Error {
    Error::custom("key must be a string")
}

impl MapKey<'_> {
    fn quoted_integer(self, value: impl itoa::Integer) -> Result {
        self.out.push(b'"');
        write_integer(self.out, value);
        self.out.push(b'"');
        Ok(())
    }

    fn quoted_float<T: Serialize>(self, value: T, finite: bool) -> Result {
        if !finite {
            return Err(Error::custom("float key must be finite (got NaN or +/-inf)"));
        }
        self.out.push(b'"');
        write_float(self.out, value)?;
        self.out.push(b'"');
        Ok(())
    }
}

impl ser::Serializer for MapKey<'_> {
    type Ok = ();
    type Error = Error;
    type SerializeSeq = Impossible<(), Error>;
    type SerializeTuple = Impossible<(), Error>;
    type SerializeTupleStruct = Impossible<(), Error>;
    type SerializeTupleVariant = Impossible<(), Error>;
    type SerializeMap = Impossible<(), Error>;
    type SerializeStruct = Impossible<(), Error>;
    type SerializeStructVariant = Impossible<(), Error>;

    #[inline]
    fn serialize_str(self, value: &str) -> Result {
        write_str(self.out, value);
        Ok(())
    }

    fn serialize_unit_variant(self, _name: &'static str, _index: u32, variant: &'static str) -> Result {
        self.serialize_str(variant)
    }

    fn serialize_newtype_struct<T: Serialize + ?Sized>(self, _name: &'static str, value: &T) -> Result {
        value.serialize(self)
    }

    fn serialize_bool(self, value: bool) -> Result {
        self.out.extend_from_slice(if value { b"\"true\"" } else { b"\"false\"" });
        Ok(())
    }

    integers!(quoted_integer);

    fn serialize_f32(self, value: f32) -> Result {
        self.quoted_float(value, value.is_finite())
    }

    fn serialize_f64(self, value: f64) -> Result {
        self.quoted_float(value, value.is_finite())
    }

    fn serialize_char(self, value: char) -> Result {
        self.serialize_str(value.encode_utf8(&mut [0; 4]))
    }

    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result {
        value.serialize(self)
    }

    refuse_compounds!(key_must_be_a_string);
}

/// The text of a raw value, copied as it is: `RawValue` hands it over as its one member.
struct RawText<'a> {
    out: &'a mut Vec<u8>,
}

fn not_raw_text() -> Error {
    Error::custom("a raw JSON value must hold its text as a string")
}

impl ser::Serializer for RawText<'_> {
    type Ok = ();
    type Error = Error;
    type SerializeSeq = Impossible<(), Error>;
    type SerializeTuple = Impossible<(), Error>;
    type SerializeTupleStruct = Impossible<(), Error>;
    type SerializeTupleVariant = Impossible<(), Error>;
    type SerializeMap = Impossible<(), Error>;
    type SerializeStruct = Impossible<(), Error>;
    type SerializeStructVariant = Impossible<(), Error>;

    fn serialize_str(self, value: &str) -> Result {
        self.out.extend_from_slice(value.as_bytes());
        Ok(())
    }

    refuse_scalars!(not_raw_text);
    refuse_compounds!(not_raw_text);
}
