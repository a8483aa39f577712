//! A 2026-07-28 request's `_meta` as it is written: the members the request names, then the
//! client's own (capabilities, info, log level), encoded once when the client connected rather
//! than built and dropped with every request.

use serde::Serialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

/// A 2026-07-28 request's params, the client's own `_meta` members (encoded once) written after
/// those the request names, which win.
pub(crate) struct WithBaseMeta<'a> {
    pub(crate) params: &'a Value,
    pub(crate) base: &'a [(String, Box<RawValue>)],
}

impl Serialize for WithBaseMeta<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let Some(object) = self.params.as_object() else { return self.params.serialize(serializer) };
        let mut map = serializer.serialize_map(None)?;
        let mut meta_written = false;
        for (key, value) in object {
            match value {
                Value::Object(own) if key == "_meta" => {
                    map.serialize_entry(key, &MetaWithBase { own: Some(own), base: self.base })?;
                    meta_written = true;
                }
                _ => map.serialize_entry(key, value)?,
            }
        }
        if !meta_written {
            map.serialize_entry("_meta", &MetaWithBase { own: None, base: self.base })?;
        }
        map.end()
    }
}

/// A `_meta` object: the request's own members, then the client's it does not name.
struct MetaWithBase<'a> {
    own: Option<&'a Map<String, Value>>,
    base: &'a [(String, Box<RawValue>)],
}

impl Serialize for MetaWithBase<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = serializer.serialize_map(None)?;
        for (key, value) in self.own.into_iter().flatten() {
            map.serialize_entry(key, value)?;
        }
        for (key, value) in self.base {
            if !self.own.is_some_and(|own| own.contains_key(key)) {
                map.serialize_entry(key, value)?;
            }
        }
        map.end()
    }
}
