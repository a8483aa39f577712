//! A 2025 session's hash as Redis keeps it: the names of its fields, and the session read
//! back from an `HGETALL` answer, as the `redis` crate or Wharf's own connection gives it.

use wharf_http::{SessionStoreError, StoredSession};

use crate::resp::Reply;

pub(crate) const OPENED: &str = "opened";
pub(crate) const INITIALIZED: &str = "initialized";
pub(crate) const LEVEL: &str = "level";
pub(crate) const SUBSCRIPTION: &str = "sub:";

/// A session from `HGETALL`'s answer (field and value one after the other, or a map in RESP3),
/// read as it came: each value is moved, no map is built. None when `opened` is missing (the
/// session was deleted, and a late change wrote a field of it again).
pub(crate) fn stored(answer: redis::Value) -> Result<Option<StoredSession>, SessionStoreError> {
    let unexpected = || SessionStoreError::unavailable("Redis answered HGETALL unexpectedly");
    let mut session = StoredSession::default();
    let mut take = |field: redis::Value, value: redis::Value| -> Result<(), SessionStoreError> {
        let (redis::Value::BulkString(field), redis::Value::BulkString(value)) = (field, value) else {
            return Err(unexpected());
        };
        read_field(&mut session, &field, value);
        Ok(())
    };
    match answer {
        redis::Value::Array(items) => {
            let mut items = items.into_iter();
            while let Some(field) = items.next() {
                take(field, items.next().ok_or_else(unexpected)?)?;
            }
        }
        redis::Value::Map(pairs) => {
            for (field, value) in pairs {
                take(field, value)?;
            }
        }
        redis::Value::Nil => {}
        _ => return Err(unexpected()),
    }
    Ok((!session.opened.is_empty()).then_some(session))
}

/// The same from Wharf's own connection's reply (RESP2: fields and values one after the other).
pub(crate) fn stored_from_lane(answer: Option<Reply>) -> Result<Option<StoredSession>, SessionStoreError> {
    let unexpected = || SessionStoreError::unavailable("Redis answered HGETALL unexpectedly");
    let Some(Reply::Array(Some(items))) = answer else { return Err(unexpected()) };
    let mut session = StoredSession::default();
    let mut items = items.into_iter();
    while let Some(field) = items.next() {
        let (Reply::Bulk(Some(field)), Some(Reply::Bulk(Some(value)))) = (field, items.next()) else {
            return Err(unexpected());
        };
        read_field(&mut session, &field, value.to_vec());
    }
    Ok((!session.opened.is_empty()).then_some(session))
}

/// One field of a session's hash, and its value, read into `session`.
fn read_field(session: &mut StoredSession, field: &[u8], value: Vec<u8>) {
    match field {
        field if field == OPENED.as_bytes() => session.opened = value,
        field if field == INITIALIZED.as_bytes() => session.initialized = true,
        field if field == LEVEL.as_bytes() => session.log_level = String::from_utf8(value).ok(),
        field => {
            if let Some(uri) = field.strip_prefix(SUBSCRIPTION.as_bytes()) {
                session.subscriptions.push(String::from_utf8_lossy(uri).into_owned());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hash_without_what_initialize_settled_is_no_session() {
        let bulk = |text: &str| redis::Value::BulkString(text.as_bytes().to_vec());
        let late_change = redis::Value::Array(vec![bulk("level"), bulk("debug")]);
        assert_eq!(stored(late_change).unwrap(), None);
        assert_eq!(stored(redis::Value::Nil).unwrap(), None);
        let fields = [(OPENED, "{}"), (INITIALIZED, "1"), (LEVEL, "warning"), ("sub:file:///a", "1")];
        let as_array =
            redis::Value::Array(fields.iter().flat_map(|(field, value)| [bulk(field), bulk(value)]).collect());
        let as_map = redis::Value::Map(fields.iter().map(|(field, value)| (bulk(field), bulk(value))).collect());
        for answer in [as_array, as_map] {
            let session = stored(answer).unwrap().unwrap();
            assert_eq!(session.opened, b"{}");
            assert!(session.initialized);
            assert_eq!(session.log_level.as_deref(), Some("warning"));
            assert_eq!(session.subscriptions, vec!["file:///a".to_owned()]);
        }
        // An odd count, or what is not a string, is refused rather than read halfway.
        assert!(stored(redis::Value::Array(vec![bulk("opened")])).is_err());
        assert!(stored(redis::Value::Array(vec![bulk("opened"), redis::Value::Int(1)])).is_err());
        assert!(stored(redis::Value::Int(1)).is_err());
    }

    #[test]
    fn the_same_hash_is_read_from_wharfs_own_connection() {
        let bulk = |text: &str| Reply::Bulk(Some(bytes::Bytes::copy_from_slice(text.as_bytes())));
        let fields = [(OPENED, "{}"), (INITIALIZED, "1"), (LEVEL, "warning"), ("sub:file:///a", "1")];
        let answer = Reply::Array(Some(fields.iter().flat_map(|(field, value)| [bulk(field), bulk(value)]).collect()));
        let session = stored_from_lane(Some(answer)).unwrap().unwrap();
        assert_eq!(session.opened, b"{}");
        assert!(session.initialized);
        assert_eq!(session.log_level.as_deref(), Some("warning"));
        assert_eq!(session.subscriptions, vec!["file:///a".to_owned()]);
        let late_change = Reply::Array(Some(vec![bulk("level"), bulk("debug")]));
        assert_eq!(stored_from_lane(Some(late_change)).unwrap(), None);
        assert_eq!(stored_from_lane(Some(Reply::Array(Some(vec![])))).unwrap(), None, "no such session");
        assert!(stored_from_lane(Some(Reply::Array(Some(vec![bulk("opened")])))).is_err());
        assert!(stored_from_lane(Some(Reply::Array(Some(vec![bulk("opened"), Reply::Integer(1)])))).is_err());
        assert!(stored_from_lane(Some(Reply::Error(bytes::Bytes::from_static(b"WRONGTYPE")))).is_err());
        assert!(stored_from_lane(None).is_err());
    }
}
