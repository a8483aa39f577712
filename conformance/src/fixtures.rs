//! The fixtures of the conformance suite: tools, resources, a template, prompts and a
//! completion, with the names, texts and behaviour the suite checks.

use std::time::Duration;

use crate::{stateless, tasks};
use serde_json::{Value, json};
use wharf::protocol::{
    AudioContent, BlobResourceContents, ContentBlock, CreateMessageParams, ElicitParams, ElicitSchema,
    EmbeddedResource, ImageContent, JsonObject, LoggingLevel, PromptMessage, ResourceContents, Role,
    TextResourceContents,
};
use wharf::{Args, Error, PromptDef, RequestContext, ResourceDef, RpcError, Server, TemplateDef, ToolDef};

/// A 1x1 PNG.
const IMAGE: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";
/// A minimal WAV file.
const AUDIO: &str = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA=";

fn image() -> ContentBlock {
    ContentBlock::Image(ImageContent {
        data: IMAGE.to_owned(),
        mime_type: "image/png".to_owned(),
        annotations: None,
        meta: None,
    })
}

fn embedded_text(uri: &str, mime_type: &str, text: &str) -> ContentBlock {
    ContentBlock::Resource(EmbeddedResource {
        resource: ResourceContents::Text(TextResourceContents {
            uri: uri.to_owned(),
            mime_type: Some(mime_type.to_owned()),
            text: text.to_owned(),
            meta: None,
        }),
        annotations: None,
        meta: None,
    })
}

fn object(value: Value) -> JsonObject {
    match value {
        Value::Object(object) => object,
        _ => JsonObject::new(),
    }
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct SamplingArgs {
    /// The prompt to send to the LLM
    prompt: String,
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct ElicitationArgs {
    /// The message to show the user
    message: String,
}

/// Builds the fixture server; one instance of a fleet keeps its tasks in `redis` and seals
/// `requestState` with the fleet's `state_key`.
pub(crate) fn server(fleet: Option<(&wharf::redis::Redis, &[u8])>) -> Result<Server, Error> {
    let mut builder = Server::builder("wharf-conformance-server", env!("CARGO_PKG_VERSION"))
        .instructions("The fixtures of the MCP conformance suite, served by Wharf.");
    if let Some((redis, state_key)) = fleet {
        builder = builder.task_store(redis.task_store()).request_state_key("fleet", state_key);
    }
    let builder = tools()
        .into_iter()
        .chain(stateless::tools())
        .chain(tasks::tools())
        .fold(builder, |builder, tool| builder.tool(tool));
    let builder = resources().into_iter().fold(builder, |builder, resource| builder.resource(resource));
    let builder = builder.skills(crate::skills::skills());
    let builder =
        prompts().into_iter().chain(stateless::prompts()).fold(builder, |builder, prompt| builder.prompt(prompt));
    builder
        .resource_template(
            TemplateDef::new("test://template/{id}/data", "template", |call| async move {
                let id = call.variable("id").unwrap_or_default().to_owned();
                let text = json!({"id": id, "templateTest": true, "data": format!("Data for ID: {id}")}).to_string();
                ResourceContents::Text(TextResourceContents {
                    uri: call.uri.clone(),
                    mime_type: Some("application/json".to_owned()),
                    text,
                    meta: None,
                })
            })
            .description("A resource template with parameter substitution")
            .mime_type("application/json"),
        )
        .build()
}

fn tools() -> Vec<ToolDef> {
    vec![
        ToolDef::new("test_simple_text", || async { "This is a simple text response for testing." })
            .description("Tests simple text content response"),
        ToolDef::new("test_image_content", || async { image() }).description("Tests image content response"),
        ToolDef::new("test_audio_content", || async {
            ContentBlock::Audio(AudioContent {
                data: AUDIO.to_owned(),
                mime_type: "audio/wav".to_owned(),
                annotations: None,
                meta: None,
            })
        })
        .description("Tests audio content response"),
        ToolDef::new("test_embedded_resource", || async {
            embedded_text("test://embedded-resource", "text/plain", "This is an embedded resource content.")
        })
        .description("Tests embedded resource content response"),
        ToolDef::new("test_multiple_content_types", || async {
            vec![
                ContentBlock::text("Multiple content types test:"),
                image(),
                embedded_text("test://mixed-content-resource", "application/json", r#"{"test":"data","value":123}"#),
            ]
        })
        .description("Tests response with multiple content types (text, image, resource)"),
        ToolDef::new("test_tool_with_logging", |context: RequestContext| async move {
            for (index, message) in
                ["Tool execution started", "Tool processing data", "Tool execution completed"].into_iter().enumerate()
            {
                if index > 0 {
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
                context.log(LoggingLevel::Info, Some("conformance"), message).await;
            }
            "Tool with logging executed successfully"
        })
        .description("Tests tool that emits log messages during execution"),
        ToolDef::new("test_tool_with_progress", |context: RequestContext| async move {
            for (index, progress) in [0.0, 50.0, 100.0].into_iter().enumerate() {
                if index > 0 {
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
                context.progress(progress, Some(100.0), Some(&format!("Completed step {progress} of 100"))).await;
            }
            context.progress_token().map(|token| token.to_string()).unwrap_or_default()
        })
        .description("Tests tool that reports progress notifications"),
        ToolDef::new("test_error_handling", || async {
            Err::<String, _>("This tool intentionally returns an error for testing")
        })
        .description("Tests error response handling"),
        ToolDef::new("test_sampling", sampling).description("Tests server-initiated sampling (LLM completion request)"),
        ToolDef::new("test_elicitation", elicitation)
            .description("Tests server-initiated elicitation (user input request)"),
        ToolDef::new("test_elicitation_sep1034_defaults", |context: RequestContext| async move {
            let schema = json!({
                "type": "object",
                "properties": {
                    "name": {"type": "string", "description": "User name", "default": "John Doe"},
                    "age": {"type": "integer", "description": "User age", "default": 30},
                    "score": {"type": "number", "description": "User score", "default": 95.5},
                    "status": {"type": "string", "description": "User status",
                               "enum": ["active", "inactive", "pending"], "default": "active"},
                    "verified": {"type": "boolean", "description": "Verification status", "default": true}
                },
                "required": []
            });
            elicit_and_report(&context, "Please review and update the form fields with defaults", schema).await
        })
        .description("Tests elicitation with default values for every primitive type (SEP-1034)"),
        ToolDef::new("test_elicitation_sep1330_enums", |context: RequestContext| async move {
            let schema = json!({
                "type": "object",
                "properties": {
                    "untitledSingle": {"type": "string", "description": "Select one option",
                                       "enum": ["option1", "option2", "option3"]},
                    "titledSingle": {"type": "string", "description": "Select one option with titles",
                                     "oneOf": [{"const": "value1", "title": "First Option"},
                                               {"const": "value2", "title": "Second Option"},
                                               {"const": "value3", "title": "Third Option"}]},
                    "legacyEnum": {"type": "string", "description": "Select one option (legacy)",
                                   "enum": ["opt1", "opt2", "opt3"],
                                   "enumNames": ["Option One", "Option Two", "Option Three"]},
                    "untitledMulti": {"type": "array", "description": "Select multiple options",
                                      "minItems": 1, "maxItems": 3,
                                      "items": {"type": "string", "enum": ["option1", "option2", "option3"]}},
                    "titledMulti": {"type": "array", "description": "Select multiple options with titles",
                                    "minItems": 1, "maxItems": 3,
                                    "items": {"anyOf": [{"const": "value1", "title": "First Choice"},
                                                        {"const": "value2", "title": "Second Choice"},
                                                        {"const": "value3", "title": "Third Choice"}]}}
                },
                "required": []
            });
            elicit_and_report(&context, "Please select options from the enum fields", schema).await
        })
        .description("Tests elicitation with every enum form (SEP-1330)"),
        ToolDef::new("json_schema_2020_12_tool", |Args(arguments): Args<JsonObject>| async move {
            format!("JSON Schema 2020-12 tool called with: {}", Value::Object(arguments))
        })
        .input_schema(object(json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "$defs": {"address": {"$anchor": "addressDef", "type": "object",
                                  "properties": {"street": {"type": "string"}, "city": {"type": "string"}}}},
            "properties": {
                "name": {"type": "string"},
                "address": {"$ref": "#/$defs/address"},
                "contactMethod": {"type": "string", "enum": ["phone", "email"]},
                "phone": {"type": "string"},
                "email": {"type": "string"}
            },
            "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
            "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
            "then": {"required": ["phone"]},
            "else": {"required": ["email"]},
            "additionalProperties": false
        })))
        .description("Tool with JSON Schema 2020-12 features for conformance testing (SEP-1613)"),
        ToolDef::new("test_reconnection", |context: RequestContext| async move {
            // Close the response stream early; the client reconnects with `Last-Event-ID`
            // and receives the result from the stream's stored events (SEP-1699).
            tokio::time::sleep(Duration::from_millis(50)).await;
            context.close_sse_stream();
            tokio::time::sleep(Duration::from_millis(100)).await;
            "Reconnection test completed successfully. The result arrived after the stream was closed."
        })
        .description("Tests SSE polling: closes the stream before the result (SEP-1699)"),
    ]
}

async fn sampling(context: RequestContext, Args(args): Args<SamplingArgs>) -> Result<String, RpcError> {
    let answer = context.create_message(CreateMessageParams::user_text(args.prompt, 100)).await?;
    Ok(format!("LLM response: {}", answer.text()))
}

async fn elicitation(context: RequestContext, Args(args): Args<ElicitationArgs>) -> Result<String, RpcError> {
    let schema = json!({
        "type": "object",
        "properties": {
            "username": {"type": "string", "description": "User's response"},
            "email": {"type": "string", "description": "User's email address"}
        },
        "required": ["username", "email"]
    });
    let (action, content) = elicit(&context, &args.message, schema).await?;
    Ok(format!("User response: action={action}, content={content}"))
}

async fn elicit_and_report(context: &RequestContext, message: &str, schema: Value) -> Result<String, RpcError> {
    let (action, content) = elicit(context, message, schema).await?;
    Ok(format!("Elicitation completed: action={action}, content={content}"))
}

/// Asks the user through the client; the answer's action and content as text.
async fn elicit(context: &RequestContext, message: &str, schema: Value) -> Result<(String, Value), RpcError> {
    let schema: ElicitSchema = serde_json::from_value(schema)
        .map_err(|err| RpcError::internal(format!("a fixture schema is wrong: {err}")))?;
    let answer = context
        .elicit(ElicitParams { message: message.to_owned(), requested_schema: Some(schema), ..ElicitParams::default() })
        .await?;
    let action = serde_json::to_value(answer.action).ok().and_then(|action| action.as_str().map(str::to_owned));
    Ok((action.unwrap_or_default(), answer.content.map_or(Value::Null, Value::Object)))
}

fn resources() -> Vec<ResourceDef> {
    vec![
        ResourceDef::text("test://static-text", "static-text", "This is the content of the static text resource.")
            .title("Static Text Resource")
            .description("A static text resource for testing")
            .mime_type("text/plain"),
        ResourceDef::dynamic("test://static-binary", "static-binary", |_| async {
            ResourceContents::Blob(BlobResourceContents {
                uri: "test://static-binary".to_owned(),
                mime_type: Some("image/png".to_owned()),
                blob: IMAGE.to_owned(),
                meta: None,
            })
        })
        .description("A static binary resource (image) for testing")
        .mime_type("image/png"),
        ResourceDef::text("test://watched-resource", "watched-resource", "Watched resource content")
            .description("A resource that can be subscribed to")
            .mime_type("text/plain"),
    ]
}

fn prompts() -> Vec<PromptDef> {
    vec![
        PromptDef::template("test_simple_prompt", "This is a simple prompt for testing.")
            .description("A simple prompt without arguments"),
        PromptDef::template("test_prompt_with_arguments", "Prompt with arguments: arg1='{arg1}', arg2='{arg2}'")
            .description("A prompt with required arguments")
            .argument("arg1", "First test argument", true)
            .argument("arg2", "Second test argument", true)
            .complete_from("arg1", ["paris", "park", "party"]),
        PromptDef::new("test_prompt_with_embedded_resource", |call| async move {
            let uri = call.argument("resourceUri").unwrap_or_default().to_owned();
            vec![
                PromptMessage {
                    role: Role::User,
                    content: embedded_text(&uri, "text/plain", "Embedded resource content for testing."),
                },
                PromptMessage {
                    role: Role::User,
                    content: ContentBlock::text("Please process the embedded resource above."),
                },
            ]
        })
        .description("A prompt that includes an embedded resource")
        .argument("resourceUri", "URI of the resource to embed", true),
        PromptDef::new("test_prompt_with_image", |_| async {
            vec![
                PromptMessage { role: Role::User, content: image() },
                PromptMessage { role: Role::User, content: ContentBlock::text("Please analyze the image above.") },
            ]
        })
        .description("A prompt that includes an image"),
    ]
}
