//! MCP Apps views from a folder: `apps/NAME.html` served as `ui://apps/NAME`, linked to the
//! tools its frontmatter names, reloaded when edited; and views wired wrong, refused with their
//! file.

use serde_json::{Value, json};
use wharf_folder::{Loaded, watch};
use wharf_protocol::{ClientCapabilities, ProtocolVersion};
use wharf_server::testing::InMemoryClient;
use wharf_testkit::eventually::next_notification_of;
use wharf_testkit::temp_dir::TempDir;

const DICE_TOOLS: &str = r#"
[[tools]]
name = "roll"
description = "Roll a die"
command = ["python3", "-c", "import json; print(json.dumps({'rolls': [4]}))"]
output = "json"

[[tools]]
name = "roll_again"
description = "Roll again, from the view"
command = ["python3", "-c", "import json; print(json.dumps({'rolls': [2]}))"]
output = "json"
visibility = ["app"]
"#;

const DICE_VIEW: &str = "---\ntitle: Dice\ntools: [roll, roll_again]\ncsp:\n  connectDomains: [\"https://api.example.com\"]\nprefersBorder: true\n---\n<!DOCTYPE html><p>dice</p>\n";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn apps_html_files_are_views_linked_to_the_tools_they_name_and_reloaded() {
    let folder = TempDir::new("views");
    folder.write("wharf.toml", DICE_TOOLS);
    folder.write("apps/dice.html", DICE_VIEW);
    let loaded = Loaded::load(folder.path()).unwrap();
    assert_eq!(loaded.summary().describe(), "2 tools, 0 prompts, 0 resources, 1 views");
    let served = loaded.summary().clone();
    let server = loaded.builder_for_watching().build().unwrap();
    let (client, _) =
        InMemoryClient::session(server.clone(), ProtocolVersion::LATEST_SESSION, ClientCapabilities::default())
            .await
            .unwrap();
    let _watching = watch(server, folder.path(), served).unwrap();

    let tools = client.request("tools/list", json!({})).await.unwrap();
    let meta = |tools: &Value, name: &str| {
        tools["tools"].as_array().unwrap().iter().find(|tool| tool["name"] == name).unwrap()["_meta"]["ui"].clone()
    };
    assert_eq!(meta(&tools, "roll"), json!({"resourceUri": "ui://apps/dice"}));
    assert_eq!(meta(&tools, "roll_again"), json!({"resourceUri": "ui://apps/dice", "visibility": ["app"]}));
    let read = client.request("resources/read", json!({"uri": "ui://apps/dice"})).await.unwrap();
    let contents = &read["contents"][0];
    assert_eq!(contents["mimeType"], "text/html;profile=mcp-app");
    assert_eq!(contents["text"], "<!DOCTYPE html><p>dice</p>\n", "the frontmatter is not served");
    assert_eq!(
        contents["_meta"]["ui"],
        json!({"csp": {"connectDomains": ["https://api.example.com"]}, "prefersBorder": true})
    );

    // Edited while served: subscribers are told, and the new page is read.
    client.request("resources/subscribe", json!({"uri": "ui://apps/dice"})).await.unwrap();
    folder.write("apps/dice.html", DICE_VIEW.replace("<p>dice</p>", "<p>dice, edited</p>"));
    let updated = next_notification_of(&client, "notifications/resources/updated").await;
    assert_eq!(updated["params"]["uri"], "ui://apps/dice");
    let read = client.request("resources/read", json!({"uri": "ui://apps/dice"})).await.unwrap();
    assert_eq!(read["contents"][0]["text"], "<!DOCTYPE html><p>dice, edited</p>\n");
}

#[test]
fn a_view_wired_wrong_is_refused_with_its_file() {
    let refused = |files: &[(&str, &str)]| {
        let folder = TempDir::new("miswired-view");
        for (name, text) in files {
            folder.write(name, text);
        }
        Loaded::load(folder.path()).expect_err("refused").to_string()
    };
    let unknown_tool =
        refused(&[("wharf.toml", DICE_TOOLS), ("apps/dice.html", "---\ntools: [roll, nope]\n---\n<p></p>")]);
    assert!(
        unknown_tool.contains("dice.html: `tools` names `nope`, which is not a tool of the folder"),
        "{unknown_tool}"
    );
    let wildcard =
        refused(&[("apps/dice.html", "---\ncsp:\n  frameDomains: [\"https://*.example.com\"]\n---\n<p></p>")]);
    assert!(wildcard.contains("dice.html: `csp.frameDomains`") && wildcard.contains("wildcard"), "{wildcard}");
    let twice = refused(&[
        ("wharf.toml", DICE_TOOLS),
        ("apps/dice.html", DICE_VIEW),
        ("apps/other.html", "---\ntools: [roll]\n---\n<p></p>"),
    ]);
    assert!(twice.contains("the tool `roll` is drawn by"), "{twice}");
    let viewless = refused(&[("wharf.toml", DICE_TOOLS)]);
    assert!(viewless.contains("tool `roll_again`: `visibility` is for a tool with a view"), "{viewless}");
}
