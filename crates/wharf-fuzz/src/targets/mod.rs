//! The fuzz targets, each in its file with what it generates and the reference it is held to.

mod arguments;
mod encoder;
mod incoming;
mod schema_shape;
mod uri_template;

use crate::target::Target;

/// Every target, in the order runs take them.
pub fn all_targets() -> Vec<Box<dyn Target>> {
    vec![
        Box::new(incoming::IncomingMessages),
        Box::new(arguments::UniqueArguments),
        Box::new(encoder::Encoder),
        Box::new(schema_shape::SchemaShape),
        Box::new(uri_template::UriTemplates),
    ]
}
