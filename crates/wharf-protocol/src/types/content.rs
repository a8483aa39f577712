//! Content blocks: what tools return and prompts contain (text, image, audio, resource links and
//! embedded resources).

use serde::{Deserialize, Serialize};

use crate::types::common::{Annotations, JsonObject};
use crate::types::resources::{Resource, ResourceContents};

/// One block of content, tagged by its `type` member.
///
/// Serialization is written by hand for text, the block nearly every tool result carries:
/// serde's internally tagged enums route every member through a wrapping serializer.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(tag = "type")]
pub enum ContentBlock {
    /// `{"type":"text"}`
    #[serde(rename = "text")]
    Text(TextContent),
    /// `{"type":"image"}`
    #[serde(rename = "image")]
    Image(ImageContent),
    /// `{"type":"audio"}` (2025-03-26 and later)
    #[serde(rename = "audio")]
    Audio(AudioContent),
    /// `{"type":"resource_link"}` (2025-06-18 and later)
    #[serde(rename = "resource_link")]
    ResourceLink(Resource),
    /// `{"type":"resource"}`
    #[serde(rename = "resource")]
    Resource(EmbeddedResource),
}

/// The other blocks, serialized the way serde derives it.
#[derive(Serialize)]
#[serde(tag = "type")]
enum OtherBlock<'a> {
    #[serde(rename = "image")]
    Image(&'a ImageContent),
    #[serde(rename = "audio")]
    Audio(&'a AudioContent),
    #[serde(rename = "resource_link")]
    ResourceLink(&'a Resource),
    #[serde(rename = "resource")]
    Resource(&'a EmbeddedResource),
}

impl Serialize for ContentBlock {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let other = match self {
            ContentBlock::Text(text) => {
                let members = 2 + usize::from(text.annotations.is_some()) + usize::from(text.meta.is_some());
                let mut block = serializer.serialize_struct("TextContent", members)?;
                block.serialize_field("type", "text")?;
                block.serialize_field("text", &text.text)?;
                if let Some(annotations) = &text.annotations {
                    block.serialize_field("annotations", annotations)?;
                }
                if let Some(meta) = &text.meta {
                    block.serialize_field("_meta", meta)?;
                }
                return block.end();
            }
            ContentBlock::Image(image) => OtherBlock::Image(image),
            ContentBlock::Audio(audio) => OtherBlock::Audio(audio),
            ContentBlock::ResourceLink(link) => OtherBlock::ResourceLink(link),
            ContentBlock::Resource(resource) => OtherBlock::Resource(resource),
        };
        other.serialize(serializer)
    }
}

impl ContentBlock {
    /// A text block.
    pub fn text(text: impl Into<String>) -> ContentBlock {
        ContentBlock::Text(TextContent { text: text.into(), annotations: None, meta: None })
    }
}

/// Text content.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TextContent {
    /// The text.
    pub text: String,
    /// Usage hints.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
}

/// Image content, base64-encoded.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ImageContent {
    /// The base64-encoded image.
    pub data: String,
    /// The image's MIME type, such as `image/png`.
    pub mime_type: String,
    /// Usage hints.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
}

/// Audio content, base64-encoded.
pub type AudioContent = ImageContent;

/// A resource embedded in a message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EmbeddedResource {
    /// The resource's contents.
    pub resource: ResourceContents,
    /// Usage hints.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn blocks_serialize_with_their_type_first_and_round_trip() {
        let text = ContentBlock::Text(TextContent {
            text: "hi".to_owned(),
            annotations: Some(Annotations { priority: Some(0.5), ..Annotations::default() }),
            meta: Some(json!({"k": 1}).as_object().unwrap().clone()),
        });
        let encoded = serde_json::to_string(&text).unwrap();
        assert_eq!(encoded, r#"{"type":"text","text":"hi","annotations":{"priority":0.5},"_meta":{"k":1}}"#);
        assert_eq!(serde_json::from_str::<ContentBlock>(&encoded).unwrap(), text);
        assert_eq!(serde_json::to_string(&ContentBlock::text("x")).unwrap(), r#"{"type":"text","text":"x"}"#);
        let image = ContentBlock::Image(ImageContent {
            data: "AAAA".to_owned(),
            mime_type: "image/png".to_owned(),
            annotations: None,
            meta: None,
        });
        let encoded = serde_json::to_value(&image).unwrap();
        assert_eq!(encoded, json!({"type": "image", "data": "AAAA", "mimeType": "image/png"}));
        assert_eq!(serde_json::from_value::<ContentBlock>(encoded).unwrap(), image);
    }
}
