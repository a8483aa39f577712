//! A typed map for the user's own data: shared server state and per-session values.

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

type Map = Mutex<HashMap<TypeId, Arc<dyn Any + Send + Sync>>>;

/// A map from a type to one value of that type.
///
/// A session's `Extensions` holds whatever per-session data handlers want to keep: insert a
/// value while handling one request and read it back in a later one on the same session.
#[derive(Default)]
pub struct Extensions {
    /// Made by the first insert or clone: most sessions (every stateless request is one) keep
    /// nothing, and an empty map costs them no allocation.
    map: OnceLock<Arc<Map>>,
}

impl Clone for Extensions {
    /// A handle to the same map: a value inserted through either is seen by both.
    fn clone(&self) -> Extensions {
        Extensions { map: OnceLock::from(self.shared().clone()) }
    }
}

impl Extensions {
    /// An empty map.
    pub fn new() -> Extensions {
        Extensions::default()
    }

    /// Stores `value`, replacing any earlier value of the same type.
    pub fn insert<T: Any + Send + Sync>(&self, value: T) {
        self.lock().insert(TypeId::of::<T>(), Arc::new(value));
    }

    /// The value of type `T`, if one was stored.
    pub fn get<T: Any + Send + Sync>(&self) -> Option<Arc<T>> {
        let map = self.map.get()?;
        let value = map.lock().unwrap_or_else(PoisonError::into_inner).get(&TypeId::of::<T>()).cloned();
        value.and_then(|value| value.downcast::<T>().ok())
    }

    /// The value of type `T`, storing the result of `make` first if there is none yet.
    pub fn get_or_insert_with<T: Any + Send + Sync>(&self, make: impl FnOnce() -> T) -> Arc<T> {
        let mut map = self.lock();
        let value = map.entry(TypeId::of::<T>()).or_insert_with(|| Arc::new(make())).clone();
        value.downcast::<T>().unwrap_or_else(|_| unreachable!("the map is keyed by TypeId"))
    }

    /// Removes the value of type `T`.
    pub fn remove<T: Any + Send + Sync>(&self) -> Option<Arc<T>> {
        let map = self.map.get()?;
        let removed = map.lock().unwrap_or_else(PoisonError::into_inner).remove(&TypeId::of::<T>());
        removed.and_then(|value| value.downcast::<T>().ok())
    }

    fn shared(&self) -> &Arc<Map> {
        self.map.get_or_init(Arc::default)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<TypeId, Arc<dyn Any + Send + Sync>>> {
        self.shared().lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl std::fmt::Debug for Extensions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let len = self.map.get().map_or(0, |map| map.lock().unwrap_or_else(PoisonError::into_inner).len());
        f.debug_struct("Extensions").field("len", &len).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clones_share_one_map_whether_made_before_or_after_the_first_insert() {
        let empty = Extensions::new();
        assert_eq!(empty.get::<u32>(), None);
        assert_eq!(empty.remove::<u32>(), None);
        let early = empty.clone();
        empty.insert(7u32);
        assert_eq!(early.get::<u32>().as_deref(), Some(&7));
        let late = empty.clone();
        late.insert(String::from("kept"));
        assert_eq!(empty.get::<String>().as_deref().map(String::as_str), Some("kept"));
        assert_eq!(early.remove::<u32>().as_deref(), Some(&7));
        assert_eq!(late.get::<u32>(), None);
        assert_eq!(*empty.get_or_insert_with(|| 9u64), 9);
        assert_eq!(format!("{early:?}"), "Extensions { len: 2 }");
    }
}
