//! Which definition of the official JSON Schema describes a message: a method's result, a
//! notification, a server-to-client request and the envelopes, by revision. Used by whoever
//! checks messages against the schema (`wharf check`, the tests).

use crate::version::ProtocolVersion;

/// The schema's definition of the result of `method`, a client-to-server request; `None` for a
/// method the schema has no result definition for.
pub fn result_definition(method: &str) -> Option<&'static str> {
    Some(match method {
        "initialize" => "InitializeResult",
        "ping" | "logging/setLevel" | "resources/subscribe" | "resources/unsubscribe" => "EmptyResult",
        "server/discover" => "DiscoverResult",
        "tools/list" => "ListToolsResult",
        "tools/call" => "CallToolResult",
        "prompts/list" => "ListPromptsResult",
        "prompts/get" => "GetPromptResult",
        "resources/list" => "ListResourcesResult",
        "resources/templates/list" => "ListResourceTemplatesResult",
        "resources/read" => "ReadResourceResult",
        "completion/complete" => "CompleteResult",
        "subscriptions/listen" => "SubscriptionsListenResult",
        "tasks/get" => "GetTaskResult",
        "tasks/cancel" => "CancelTaskResult",
        "tasks/result" => "GetTaskPayloadResult",
        "tasks/list" => "ListTasksResult",
        _ => return None,
    })
}

/// The schema's definition of the server-to-client notification `method`.
pub fn notification_definition(method: &str) -> Option<&'static str> {
    Some(match method {
        "notifications/progress" => "ProgressNotification",
        "notifications/message" => "LoggingMessageNotification",
        "notifications/cancelled" => "CancelledNotification",
        "notifications/resources/updated" => "ResourceUpdatedNotification",
        "notifications/resources/list_changed" => "ResourceListChangedNotification",
        "notifications/tools/list_changed" => "ToolListChangedNotification",
        "notifications/prompts/list_changed" => "PromptListChangedNotification",
        "notifications/subscriptions/acknowledged" => "SubscriptionsAcknowledgedNotification",
        "notifications/elicitation/complete" => "ElicitationCompleteNotification",
        "notifications/tasks/status" => "TaskStatusNotification",
        _ => return None,
    })
}

/// The schema's definition of the server-to-client request `method`.
pub fn server_request_definition(method: &str) -> Option<&'static str> {
    Some(match method {
        "sampling/createMessage" => "CreateMessageRequest",
        "elicitation/create" => "ElicitRequest",
        "roots/list" => "ListRootsRequest",
        "ping" => "PingRequest",
        _ => return None,
    })
}

/// The schema's definition of a successful response's envelope in `version`
/// (`JSONRPCResultResponse` from 2025-11-25 on, `JSONRPCResponse` before).
pub fn result_response_definition(version: ProtocolVersion) -> &'static str {
    if version >= ProtocolVersion::V2025_11_25 { "JSONRPCResultResponse" } else { "JSONRPCResponse" }
}

/// The schema's definition of an error response's envelope in `version`
/// (`JSONRPCErrorResponse` from 2025-11-25 on, `JSONRPCError` before).
pub fn error_response_definition(version: ProtocolVersion) -> &'static str {
    if version >= ProtocolVersion::V2025_11_25 { "JSONRPCErrorResponse" } else { "JSONRPCError" }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_method_the_server_answers_has_a_result_definition() {
        for method in ["initialize", "tools/call", "resources/read", "tasks/result", "subscriptions/listen"] {
            assert!(result_definition(method).is_some(), "{method}");
        }
        assert_eq!(result_definition("made/up"), None);
        assert_eq!(notification_definition("notifications/progress"), Some("ProgressNotification"));
        assert_eq!(server_request_definition("elicitation/create"), Some("ElicitRequest"));
        assert_eq!(error_response_definition(ProtocolVersion::V2025_06_18), "JSONRPCError");
        assert_eq!(result_response_definition(ProtocolVersion::V2026_07_28), "JSONRPCResultResponse");
    }
}
