//! Builders for content blocks and resource contents; images, audio and blobs are given as raw
//! bytes and base64-encoded here.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use wharf_protocol::{
    BlobResourceContents, ContentBlock, EmbeddedResource, ImageContent, Resource, ResourceContents,
    TextResourceContents,
};

/// Base64 (standard alphabet, padded), as MCP uses for binary data.
pub fn base64_encode(bytes: &[u8]) -> String {
    STANDARD.encode(bytes)
}

/// A text block.
pub fn text(text: impl Into<String>) -> ContentBlock {
    ContentBlock::text(text)
}

/// An image block from raw bytes, such as a PNG file's contents.
pub fn image(bytes: &[u8], mime_type: impl Into<String>) -> ContentBlock {
    ContentBlock::Image(ImageContent {
        data: base64_encode(bytes),
        mime_type: mime_type.into(),
        annotations: None,
        meta: None,
    })
}

/// An audio block from raw bytes, such as a WAV file's contents.
pub fn audio(bytes: &[u8], mime_type: impl Into<String>) -> ContentBlock {
    ContentBlock::Audio(ImageContent {
        data: base64_encode(bytes),
        mime_type: mime_type.into(),
        annotations: None,
        meta: None,
    })
}

/// A link to a resource the client can read with `resources/read`.
pub fn resource_link(uri: impl Into<String>, name: impl Into<String>) -> ContentBlock {
    ContentBlock::ResourceLink(Resource { uri: uri.into(), name: name.into(), ..Resource::default() })
}

/// An embedded text resource.
pub fn embedded_text(uri: impl Into<String>, mime_type: Option<&str>, text: impl Into<String>) -> ContentBlock {
    ContentBlock::Resource(EmbeddedResource {
        resource: text_contents(uri, mime_type, text),
        annotations: None,
        meta: None,
    })
}

/// An embedded binary resource from raw bytes.
pub fn embedded_blob(uri: impl Into<String>, mime_type: Option<&str>, bytes: &[u8]) -> ContentBlock {
    ContentBlock::Resource(EmbeddedResource {
        resource: blob_contents(uri, mime_type, bytes),
        annotations: None,
        meta: None,
    })
}

/// Text contents of a resource.
pub fn text_contents(uri: impl Into<String>, mime_type: Option<&str>, text: impl Into<String>) -> ResourceContents {
    ResourceContents::Text(TextResourceContents {
        uri: uri.into(),
        mime_type: mime_type.map(str::to_owned),
        text: text.into(),
        meta: None,
    })
}

/// Binary contents of a resource, from raw bytes.
pub fn blob_contents(uri: impl Into<String>, mime_type: Option<&str>, bytes: &[u8]) -> ResourceContents {
    ResourceContents::Blob(BlobResourceContents {
        uri: uri.into(),
        mime_type: mime_type.map(str::to_owned),
        blob: base64_encode(bytes),
        meta: None,
    })
}
