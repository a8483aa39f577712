//! A typed map for the user's own data: shared server state and per-session values.

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

/// A map from a type to one value of that type.
///
/// A session's `Extensions` holds whatever per-session data handlers want to keep: insert a
/// value while handling one request and read it back in a later one on the same session.
#[derive(Default, Clone)]
pub struct Extensions {
    map: Arc<Mutex<HashMap<TypeId, Arc<dyn Any + Send + Sync>>>>,
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
        self.lock().get(&TypeId::of::<T>()).cloned().and_then(|value| value.downcast::<T>().ok())
    }

    /// The value of type `T`, storing the result of `make` first if there is none yet.
    pub fn get_or_insert_with<T: Any + Send + Sync>(&self, make: impl FnOnce() -> T) -> Arc<T> {
        let mut map = self.lock();
        let value = map.entry(TypeId::of::<T>()).or_insert_with(|| Arc::new(make())).clone();
        value.downcast::<T>().unwrap_or_else(|_| unreachable!("the map is keyed by TypeId"))
    }

    /// Removes the value of type `T`.
    pub fn remove<T: Any + Send + Sync>(&self) -> Option<Arc<T>> {
        self.lock().remove(&TypeId::of::<T>()).and_then(|value| value.downcast::<T>().ok())
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<TypeId, Arc<dyn Any + Send + Sync>>> {
        self.map.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl std::fmt::Debug for Extensions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Extensions").field("len", &self.lock().len()).finish()
    }
}
