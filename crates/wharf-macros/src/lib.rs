//! Attribute macros for Wharf. This crate is a placeholder until the declarative API lands; it
//! exports nothing yet, so that the facade's dependency graph is already in its final shape.
