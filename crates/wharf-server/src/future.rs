//! The boxed future handlers are stored as: a tool's, a prompt's, a resource's and a
//! completion's handler each return one.

use std::future::Future;
use std::pin::Pin;

/// A boxed future, as handlers are stored.
pub(crate) type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send + 'static>>;
