//! What a fuzz target is: a generator of cases and a check of one case against a reference.

use crate::rng::Rng;

/// One reader or writer under test, with its generator and its reference.
pub trait Target: Sync {
    /// The name `wharf-fuzz` and the corpus directory know it by.
    fn name(&self) -> &'static str;

    /// A new case: bytes that [`Target::check`] reads.
    fn generate(&self, rng: &mut Rng) -> Vec<u8>;

    /// Holds Wharf to the reference on one case: `Ok` with a label for how the case went
    /// (for the run's statistics), or the disagreement, its kind on the first line.
    fn check(&self, case: &[u8]) -> Result<&'static str, String>;
}
