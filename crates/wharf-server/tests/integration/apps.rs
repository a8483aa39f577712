//! MCP Apps: a view and the tools linked to it on the wire in every era (the extension in the
//! capabilities, the view listed and read with its `_meta.ui`, the tools' `_meta.ui`), and the
//! wiring mistakes `build` refuses, each named.

use serde_json::{Value, json};
use wharf_protocol::{
    APP_MIME_TYPE, CallToolResult, ClientCapabilities, ProtocolVersion, ViewCsp, ViewMeta, ViewPermissions, Visibility,
};
use wharf_server::testing::InMemoryClient;
use wharf_server::{ResourceDef, Server, ToolDef};
use wharf_testkit::schemas::assert_valid;

const DASHBOARD: &str = "<!DOCTYPE html><html><body><div id=\"weather\"></div></body></html>";

fn dashboard_meta() -> ViewMeta {
    ViewMeta {
        csp: Some(ViewCsp {
            connect_domains: vec!["https://api.openweathermap.org".to_owned()],
            resource_domains: vec!["https://*.jsdelivr.net".to_owned()],
            ..ViewCsp::default()
        }),
        permissions: Some(ViewPermissions { clipboard_write: Some(Default::default()), ..Default::default() }),
        domain: None,
        prefers_border: Some(true),
    }
}

fn weather_server() -> Server {
    Server::builder("weather", "1.0.0")
        .resource(ResourceDef::view("ui://weather/dashboard", "dashboard", DASHBOARD).view_meta(dashboard_meta()))
        .tool(
            ToolDef::new("get_weather", || async { "Sunny, 22 °C" })
                .description("The weather, with a dashboard")
                .view("ui://weather/dashboard"),
        )
        .tool(
            ToolDef::new("refresh_dashboard", || async { "refreshed" })
                .view("ui://weather/dashboard")
                .visibility([Visibility::App]),
        )
        .build()
        .expect("a well-wired server")
}

/// The capabilities the server answered `client` with, in either era.
async fn capabilities(client: &InMemoryClient, stateless: bool) -> Value {
    if stateless {
        return client.request("server/discover", json!({})).await.unwrap()["capabilities"].clone();
    }
    let initialize = client.sent().into_iter().find(|sent| sent["method"] == "initialize").unwrap();
    let answer = client.received().into_iter().find(|received| received["id"] == initialize["id"]).unwrap();
    answer["result"]["capabilities"].clone()
}

#[tokio::test]
async fn a_view_and_its_tools_go_out_with_their_ui_metadata_in_every_era() {
    let eras = [
        (Some(ProtocolVersion::LATEST), ProtocolVersion::LATEST),
        (None, ProtocolVersion::LATEST_SESSION),
        (None, ProtocolVersion::V2025_06_18),
        (None, ProtocolVersion::V2024_11_05),
    ];
    for (stateless, version) in eras {
        let client = match stateless {
            Some(_) => InMemoryClient::stateless(weather_server(), ClientCapabilities::default()),
            None => InMemoryClient::session(weather_server(), version, ClientCapabilities::default()).await.unwrap().0,
        };
        let capabilities = capabilities(&client, stateless.is_some()).await;
        assert_eq!(capabilities["extensions"]["io.modelcontextprotocol/ui"], json!({}), "{version}: {capabilities}");

        let listed = client.request("resources/list", json!({})).await.unwrap();
        let view =
            listed["resources"].as_array().unwrap().iter().find(|resource| resource["uri"] == "ui://weather/dashboard");
        let view = view.unwrap_or_else(|| panic!("{version}: the view is not listed: {listed}"));
        assert_eq!(view["mimeType"], APP_MIME_TYPE);
        let ui = json!({
            "csp": {"connectDomains": ["https://api.openweathermap.org"], "resourceDomains": ["https://*.jsdelivr.net"]},
            "permissions": {"clipboardWrite": {}},
            "prefersBorder": true
        });

        let read = client.request("resources/read", json!({"uri": "ui://weather/dashboard"})).await.unwrap();
        let contents = &read["contents"][0];
        assert_eq!(contents["mimeType"], APP_MIME_TYPE, "{version}: {read}");
        assert_eq!(contents["text"], DASHBOARD);
        assert_eq!(contents["_meta"]["ui"], ui, "{version}: the host builds its CSP from the contents' _meta.ui");
        assert_eq!(read.get("ttlMs").is_some(), stateless.is_some(), "{version}: cache hints on 2026-07-28: {read}");

        let tools = client.request("tools/list", json!({})).await.unwrap();
        let tool = |name: &str| tools["tools"].as_array().unwrap().iter().find(|tool| tool["name"] == name).cloned();
        let weather = tool("get_weather").expect("listed");
        let refresh = tool("refresh_dashboard").expect("an app-only tool is listed: the host hides it from the model");
        // Every revision carries `_meta` on listings (2024-11-05 as an extra member, which hosts
        // of the extension read: its negotiation works from 2024-11-05 on).
        assert_eq!(view["_meta"]["ui"], ui, "{version}: {view}");
        assert_eq!(weather["_meta"]["ui"], json!({"resourceUri": "ui://weather/dashboard"}), "{version}");
        assert_eq!(weather["_meta"]["ui/resourceUri"], "ui://weather/dashboard", "the deprecated flat key too");
        assert_eq!(
            refresh["_meta"]["ui"],
            json!({"resourceUri": "ui://weather/dashboard", "visibility": ["app"]}),
            "{version}"
        );
        let called = client.request("tools/call", json!({"name": "refresh_dashboard", "arguments": {}})).await.unwrap();
        assert_eq!(called["content"][0]["text"], "refreshed", "the server serves an app-only tool: the host gates it");
        assert_valid(&client, version);
    }
}

#[tokio::test]
async fn a_view_s_data_goes_as_structured_content_beside_the_text_for_the_model() {
    let server = || {
        Server::builder("weather", "1.0.0")
            .resource(ResourceDef::view("ui://weather/dashboard", "dashboard", DASHBOARD))
            .tool(
                ToolDef::new("get_weather", || async {
                    CallToolResult::for_view("Sunny, 22 °C", json!({"temperature": 22, "conditions": "sunny"}))
                })
                .view("ui://weather/dashboard"),
            )
            .build()
            .unwrap()
    };
    for version in [ProtocolVersion::V2025_11_25, ProtocolVersion::V2025_06_18, ProtocolVersion::V2024_11_05] {
        let (client, _) = InMemoryClient::session(server(), version, ClientCapabilities::default()).await.unwrap();
        let called = client.request("tools/call", json!({"name": "get_weather", "arguments": {}})).await.unwrap();
        assert_eq!(called["content"][0]["text"], "Sunny, 22 °C", "{version}: the model's text in every revision");
        let structured = version != ProtocolVersion::V2024_11_05;
        assert_eq!(
            called.get("structuredContent").cloned(),
            structured.then(|| json!({"temperature": 22, "conditions": "sunny"})),
            "{version}: the view's data where the revision carries it"
        );
        assert_valid(&client, version);
    }
}

#[tokio::test]
async fn a_server_without_views_declares_no_ui_extension() {
    let server = Server::builder("plain", "1.0.0").tool(ToolDef::new("ping", || async { "pong" })).build().unwrap();
    let client = InMemoryClient::stateless(server, ClientCapabilities::default());
    let capabilities = capabilities(&client, true).await;
    assert!(
        capabilities.get("extensions").is_none_or(|extensions| extensions.get("io.modelcontextprotocol/ui").is_none())
    );
}

#[test]
fn build_refuses_each_wiring_mistake_naming_the_tool_or_view() {
    let refused = Server::builder("miswired", "1.0.0")
        .resource(ResourceDef::text("config://app", "config", "{}"))
        .resource(ResourceDef::view("https://example.com/view.html", "not-ui", DASHBOARD))
        .resource(ResourceDef::view("ui://bad/csp", "bad-csp", DASHBOARD).view_meta(ViewMeta {
            csp: Some(ViewCsp { connect_domains: vec!["https://*.example.com".to_owned()], ..ViewCsp::default() }),
            ..ViewMeta::default()
        }))
        .resource(ResourceDef::view("ui://bad/origin", "bad-origin", DASHBOARD).view_meta(ViewMeta {
            csp: Some(ViewCsp { frame_domains: vec!["www.youtube.com".to_owned()], ..ViewCsp::default() }),
            ..ViewMeta::default()
        }))
        .tool(ToolDef::new("orphan", || async { "" }).view("ui://missing/view"))
        .tool(ToolDef::new("wrong_kind", || async { "" }).view("config://app"))
        .tool(ToolDef::new("nobody", || async { "" }).view("ui://bad/csp").visibility([]))
        .build()
        .expect_err("refused")
        .to_string();
    for expected in [
        "tool `orphan` names the view `ui://missing/view`, which is not registered",
        "tool `wrong_kind`: `config://app` is not a view's URI",
        "tool `nobody`: `visibility` is empty",
        "view `https://example.com/view.html`: `https://example.com/view.html` is not a view's URI",
        "view `ui://bad/csp`: `csp.connectDomains`: `https://*.example.com` has a wildcard",
        "view `ui://bad/origin`: `csp.frameDomains`: `www.youtube.com` is not an origin",
    ] {
        assert!(refused.contains(expected), "missing «{expected}» in: {refused}");
    }
}

#[test]
fn a_tool_naming_a_resource_that_is_not_a_view_is_refused() {
    let refused = Server::builder("miswired", "1.0.0")
        .resource(ResourceDef::text("ui://plain/page", "page", DASHBOARD))
        .tool(ToolDef::new("shows", || async { "" }).view("ui://plain/page"))
        .build()
        .expect_err("refused")
        .to_string();
    assert!(
        refused.contains("tool `shows` names `ui://plain/page` as its view, but that resource is not of type `text/html;profile=mcp-app`"),
        "{refused}"
    );
}

#[tokio::test]
async fn an_update_that_leaves_a_tool_without_its_view_changes_nothing() {
    let server = weather_server();
    let refused = server.update(|update| {
        update.remove_resource("ui://weather/dashboard");
        Ok(())
    });
    let refused = refused.expect_err("the tools would lose their view").to_string();
    assert!(
        refused.contains("tool `get_weather` names the view `ui://weather/dashboard`, which is not registered"),
        "{refused}"
    );
    let client = InMemoryClient::latest_session(server.clone()).await;
    let read = client.request("resources/read", json!({"uri": "ui://weather/dashboard"})).await;
    assert!(read.is_ok(), "the view is still served");
    // The tool and its view go together, in one update.
    server
        .update(|update| {
            update.remove_resource("ui://weather/dashboard");
            update.remove_tool("get_weather");
            update.remove_tool("refresh_dashboard");
            Ok(())
        })
        .expect("nothing names the view any more");
}
