//! [`ServerCore`]: what a request needs from the server that serves it, so that the request
//! context and the extractors hold the server without knowing its registry or transports.

use std::any::Any;
use std::sync::Arc;

use crate::extensions::Extensions;
use crate::input::seal::Sealer;
use crate::large_result::settings::LargeResults;
use crate::layer::Layer;
use crate::options::ServerOptions;

/// The part of a server a request reaches while it runs. `Server` implements it; the context
/// holds it as a trait object.
pub(crate) trait ServerCore: Send + Sync + 'static {
    /// The middleware around every request, which also watches what handlers send.
    fn layers(&self) -> &[Box<dyn Layer>];
    /// The server's options.
    fn options(&self) -> &ServerOptions;
    /// What seals and opens `requestState`.
    fn sealer(&self) -> &Sealer;
    /// The shared state handlers take with `State<S>`.
    fn state(&self) -> &Extensions;
    /// The budgets of tool results, and where results over them are kept.
    fn large_results(&self) -> &LargeResults;
    /// The server itself, for handlers that ask for it.
    fn into_any(self: Arc<Self>) -> Arc<dyn Any + Send + Sync>;
}
