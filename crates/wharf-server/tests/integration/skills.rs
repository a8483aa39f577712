//! The Skills extension: listing, fetching, reading and directory reads in both eras; skills
//! read from a directory (nothing outside it served); refusals with their reasons; the limits;
//! generated skills; and a catalog swapped while clients watch.

use std::time::Duration;

use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use wharf_protocol::{ClientCapabilities, ProtocolVersion};
use wharf_server::testing::InMemoryClient;
use wharf_server::{Server, ServerOptions, SkillDef, Skills};

use wharf_testkit::schemas::assert_valid;
use wharf_testkit::temp_dir::TempDir;

const REFUNDS_MD: &str = "---\nname: refunds\ndescription: Process refund requests\nlicense: Apache-2.0\n\
                          metadata:\n  author: ann\nversion: 1.0\nenabled: yes\n---\n# Refunds\n";

fn refunds() -> SkillDef {
    SkillDef::new("acme/refunds")
        .file("SKILL.md", REFUNDS_MD)
        .file("examples/email.md", "Dear customer,\n")
        .file("examples/logo.png", vec![0x89, b'P', b'N', b'G', 0xff, 0x00])
        .file("my notes.txt", "spaced\n")
}

fn server(skills: Skills) -> Server {
    Server::builder("skills-test", "1.0.0").skills(skills).build().unwrap()
}

fn digest(bytes: &[u8]) -> String {
    format!("sha256:{}", Sha256::digest(bytes).iter().map(|byte| format!("{byte:02x}")).collect::<String>())
}

#[tokio::test]
async fn skills_are_listed_fetched_read_and_browsed_in_both_eras() {
    for stateless in [true, false] {
        let server = server(Skills::new().skill(refunds()));
        let (client, version) = if stateless {
            (InMemoryClient::stateless(server, ClientCapabilities::default()), ProtocolVersion::LATEST)
        } else {
            (InMemoryClient::latest_session(server).await, ProtocolVersion::LATEST_SESSION)
        };
        let capabilities = if stateless {
            client.request("server/discover", json!({})).await.unwrap()["capabilities"].clone()
        } else {
            let initialized = client.sent().into_iter().find(|sent| sent["method"] == "initialize").unwrap();
            let answer = client.received().into_iter().find(|received| received["id"] == initialized["id"]).unwrap();
            answer["result"]["capabilities"].clone()
        };
        assert_eq!(capabilities["extensions"]["io.modelcontextprotocol/skills"], json!({"directoryRead": true}));
        assert!(capabilities["resources"].is_object(), "skills need the resources capability");

        let listed = client.request("skills/list", json!({})).await.unwrap();
        let entry = &listed["skills"][0];
        assert_eq!(entry["uri"], "skill://acme/refunds/SKILL.md");
        assert_eq!(
            entry["frontmatter"],
            json!({"name": "refunds", "description": "Process refund requests", "license": "Apache-2.0",
                   "metadata": {"author": "ann"}, "version": 1.0, "enabled": "yes"})
        );
        let files = entry["resources"].as_array().unwrap();
        let uris: Vec<&str> = files.iter().map(|file| file["uri"].as_str().unwrap()).collect();
        assert_eq!(
            uris,
            [
                "skill://acme/refunds/SKILL.md",
                "skill://acme/refunds/examples/email.md",
                "skill://acme/refunds/examples/logo.png",
                "skill://acme/refunds/my%20notes.txt"
            ]
        );
        assert_eq!(files[0]["digest"], digest(REFUNDS_MD.as_bytes()));
        assert_eq!(files[0]["size"], REFUNDS_MD.len());
        assert_eq!(listed.get("ttlMs").is_some(), stateless, "cache hints on 2026-07-28 only: {listed}");

        let fetched = client.request("skills/get", json!({"uri": "skill://acme/refunds/SKILL.md"})).await.unwrap();
        assert_eq!(&fetched["skill"], entry);
        assert!(fetched.get("nextCursor").is_none());
        for not_a_skill in ["skill://acme/refunds/examples/email.md", "skill://nope/SKILL.md", "skill://acme/refunds"] {
            let refused = client.request("skills/get", json!({"uri": not_a_skill})).await.unwrap_err();
            assert_eq!(refused.code.0, -32602, "{not_a_skill}");
            assert!(refused.message.contains(not_a_skill), "{}", refused.message);
        }

        // Every listed file reads back as the bytes its digest and size describe.
        for file in files {
            let uri = file["uri"].as_str().unwrap();
            let read = client.request("resources/read", json!({"uri": uri})).await.unwrap();
            let contents = &read["contents"][0];
            assert_eq!(contents["uri"], uri);
            let bytes = match contents.get("text") {
                Some(text) => text.as_str().unwrap().as_bytes().to_vec(),
                None => {
                    use base64::Engine as _;
                    base64::engine::general_purpose::STANDARD.decode(contents["blob"].as_str().unwrap()).unwrap()
                }
            };
            assert_eq!(digest(&bytes), file["digest"], "{uri}");
            assert_eq!(bytes.len(), file["size"].as_u64().unwrap() as usize, "{uri}");
        }
        let logo = client.request("resources/read", json!({"uri": "skill://acme/refunds/examples/logo.png"})).await;
        assert_eq!(logo.unwrap()["contents"][0]["mimeType"], "image/png", "binary files are blobs with their type");
        let skill_md = client.request("resources/read", json!({"uri": "skill://acme/refunds/SKILL.md"})).await;
        assert_eq!(skill_md.unwrap()["contents"][0]["mimeType"], "text/markdown");

        let resources = client.request("resources/list", json!({})).await.unwrap();
        assert_eq!(
            resources["resources"][0],
            json!({"uri": "skill://acme/refunds/SKILL.md", "name": "refunds", "description": "Process refund requests",
                   "mimeType": "text/markdown", "size": REFUNDS_MD.len()})
        );
        assert_eq!(resources["resources"].as_array().unwrap().len(), 1, "only SKILL.md is listed");

        let root = client.request("resources/directory/read", json!({"uri": "skill://acme/refunds"})).await.unwrap();
        let children: Vec<(&str, &str)> = root["resources"]
            .as_array()
            .unwrap()
            .iter()
            .map(|child| (child["name"].as_str().unwrap(), child["mimeType"].as_str().unwrap()))
            .collect();
        assert_eq!(
            children,
            [("SKILL.md", "text/markdown"), ("examples", "inode/directory"), ("my notes.txt", "text/plain")]
        );
        let prefix = client.request("resources/directory/read", json!({"uri": "skill://acme"})).await.unwrap();
        assert_eq!(prefix["resources"][0]["uri"], "skill://acme/refunds");
        let examples =
            client.request("resources/directory/read", json!({"uri": "skill://acme/refunds/examples"})).await.unwrap();
        assert_eq!(examples["resources"].as_array().unwrap().len(), 2);
        for not_a_directory in ["skill://acme/refunds/SKILL.md", "skill://acme/refunds/nothing", "skill://"] {
            let refused =
                client.request("resources/directory/read", json!({"uri": not_a_directory})).await.unwrap_err();
            assert_eq!(refused.code.0, -32602, "{not_a_directory}");
        }
        let missing = client.request("resources/read", json!({"uri": "skill://acme/refunds/nothing.md"})).await;
        assert!(missing.is_err());
        if version != ProtocolVersion::LATEST {
            assert_valid(&client, version);
        }
    }
}

#[tokio::test]
async fn pages_never_split_a_skill_and_cursors_are_checked() {
    let mut skills = Skills::new();
    for index in 0..5 {
        let name = format!("skill-{index}");
        let text = format!("---\nname: {name}\ndescription: number {index}\n---\n");
        skills = skills.skill(SkillDef::new(&name).file("SKILL.md", text).file("a.md", "a").file("b.md", "b"));
    }
    let server = Server::builder("paged", "1.0.0")
        .options(ServerOptions::default().page_size(2))
        .skills(skills)
        .build()
        .unwrap();
    let client = InMemoryClient::latest_session(server).await;
    let mut cursor: Option<String> = None;
    let mut seen = Vec::new();
    for _ in 0..5 {
        let params = cursor.as_ref().map_or(json!({}), |cursor| json!({"cursor": cursor}));
        let page = client.request("skills/list", params).await.unwrap();
        for skill in page["skills"].as_array().unwrap() {
            assert_eq!(skill["resources"].as_array().unwrap().len(), 3, "an entry is whole");
            seen.push(skill["frontmatter"]["name"].as_str().unwrap().to_owned());
        }
        cursor = page.get("nextCursor").and_then(Value::as_str).map(str::to_owned);
        if cursor.is_none() {
            break;
        }
    }
    assert_eq!(seen, ["skill-0", "skill-1", "skill-2", "skill-3", "skill-4"]);
    let refused = client.request("skills/list", json!({"cursor": "made-up"})).await.unwrap_err();
    assert_eq!(refused.code.0, -32602);
}

#[tokio::test]
async fn invalid_skills_are_refused_with_the_reason() {
    let good = "---\nname: good\ndescription: fine\n---\n";
    let cases =
        [
            (Skills::new().skill(SkillDef::new("Bad").file("SKILL.md", good)), "lowercase"),
            (Skills::new().skill(SkillDef::new("good--one").file("SKILL.md", good)), "two hyphens"),
            (Skills::new().skill(SkillDef::new("other").file("SKILL.md", good)), "must be the last segment"),
            (Skills::new().skill(SkillDef::new("good").file("README.md", good)), "no SKILL.md"),
            (Skills::new().skill(SkillDef::new("good").file("SKILL.md", "# no frontmatter")), "`---` line"),
            (Skills::new().skill(SkillDef::new("good").file("SKILL.md", "---\nname: good\n---\n")), "no `description`"),
            (Skills::new().skill(SkillDef::new("good").file("SKILL.md", good).file("../up.md", "x")), "`..`"),
            (
                Skills::new()
                    .skill(SkillDef::new("good").file("SKILL.md", good))
                    .skill(SkillDef::new("good").file("SKILL.md", good)),
                "defined twice",
            ),
            (
                Skills::new().skill(SkillDef::new("good").file(
                    "SKILL.md",
                    "---\nname: good\ndescription: d\nmetadata:\n  io.modelcontextprotocol/x: y\n---\n",
                )),
                "reserves",
            ),
        ];
    for (skills, why) in cases {
        let refused = Server::builder("bad", "1.0.0").skills(skills).build().unwrap_err().to_string();
        assert!(refused.contains(why), "expected {why:?} in: {refused}");
    }
    let taken = Server::builder("taken", "1.0.0")
        .resource(wharf_server::ResourceDef::text("skill://good/SKILL.md", "mine", "x"))
        .skills(Skills::new().skill(SkillDef::new("good").file("SKILL.md", good)))
        .build()
        .unwrap_err();
    assert!(taken.to_string().contains("already a registered resource"), "{taken}");
}

#[tokio::test]
async fn a_skill_over_the_limits_is_left_out() {
    let mut big = SkillDef::new("big").file("SKILL.md", "---\nname: big\ndescription: too many files\n---\n");
    for index in 0..512 {
        big = big.file(format!("files/{index}.txt"), "x");
    }
    let small = SkillDef::new("small").file("SKILL.md", "---\nname: small\ndescription: fine\n---\n");
    let client = InMemoryClient::latest_session(server(Skills::new().skill(big).skill(small))).await;
    let listed = client.request("skills/list", json!({})).await.unwrap();
    let names: Vec<&str> = listed["skills"]
        .as_array()
        .unwrap()
        .iter()
        .map(|skill| skill["frontmatter"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["small"], "513 files is over the 512-file limit");
}

#[tokio::test]
async fn skills_need_resources_and_no_template_answers_for_their_files() {
    let empty = InMemoryClient::stateless(server(Skills::new()), ClientCapabilities::default());
    let discovered = empty.request("server/discover", json!({})).await.unwrap();
    assert!(discovered["capabilities"]["resources"].is_object(), "declared with the extension, even with no skill");
    assert_eq!(empty.request("skills/list", json!({})).await.unwrap()["skills"], json!([]));

    let greedy = wharf_server::TemplateDef::new("skill://{+path}", "greedy", |_call| async {
        "not the skill's bytes".to_owned()
    });
    let server =
        Server::builder("shadow", "1.0.0").resource_template(greedy).skills(Skills::new().skill(refunds())).build();
    let client = InMemoryClient::latest_session(server.unwrap()).await;
    let read =
        client.request("resources/read", json!({"uri": "skill://acme/refunds/examples/email.md"})).await.unwrap();
    assert_eq!(read["contents"][0]["text"], "Dear customer,\n", "the skill's file, as digested");
    let other = client.request("resources/read", json!({"uri": "skill://elsewhere/x"})).await.unwrap();
    assert_eq!(other["contents"][0]["text"], "not the skill's bytes", "the template answers the rest");
}

#[tokio::test]
async fn a_generated_skill_says_dynamic_and_makes_its_files_when_read() {
    let counter = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let made = counter.clone();
    let daily =
        SkillDef::generated("reports/daily", "---\nname: daily\ndescription: Today's report\n---\n", move || {
            let count = made.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            vec![("data/today.json".to_owned(), format!("{{\"run\":{count}}}").into_bytes())]
        });
    let client = InMemoryClient::stateless(server(Skills::new().skill(daily)), ClientCapabilities::default());
    let listed = client.request("skills/list", json!({})).await.unwrap();
    assert_eq!(listed["skills"][0]["resources"], "dynamic");
    let first =
        client.request("resources/read", json!({"uri": "skill://reports/daily/data/today.json"})).await.unwrap();
    let second =
        client.request("resources/read", json!({"uri": "skill://reports/daily/data/today.json"})).await.unwrap();
    assert_ne!(first["contents"][0]["text"], second["contents"][0]["text"], "made anew on each read");
    assert_eq!(first["contents"][0]["mimeType"], "application/json");
    let root = client.request("resources/directory/read", json!({"uri": "skill://reports/daily"})).await.unwrap();
    let names: Vec<&str> =
        root["resources"].as_array().unwrap().iter().map(|child| child["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["SKILL.md", "data"]);
    let data = client.request("resources/directory/read", json!({"uri": "skill://reports/daily/data"})).await.unwrap();
    assert_eq!(data["resources"][0]["uri"], "skill://reports/daily/data/today.json");
}

#[tokio::test]
async fn without_directory_reads_the_setting_is_absent_and_the_method_unknown() {
    let client = InMemoryClient::stateless(
        server(Skills::new().skill(refunds()).directory_read(false)),
        ClientCapabilities::default(),
    );
    let discovered = client.request("server/discover", json!({})).await.unwrap();
    assert_eq!(discovered["capabilities"]["extensions"]["io.modelcontextprotocol/skills"], json!({}));
    let refused = client.request("resources/directory/read", json!({"uri": "skill://acme/refunds"})).await.unwrap_err();
    assert_eq!(refused.code.0, -32601);
    let plain = InMemoryClient::latest_session(Server::builder("plain", "1.0.0").build().unwrap()).await;
    assert_eq!(plain.request("skills/list", json!({})).await.unwrap_err().code.0, -32601);
}

#[tokio::test]
async fn a_directory_of_skills_is_served_and_nothing_outside_it() {
    let dir = TempDir::new("skills-scan");
    dir.write("pdf-processing/SKILL.md", "---\nname: pdf-processing\ndescription: PDFs\n---\n# PDF\n");
    dir.write("pdf-processing/references/FORMS.md", "forms\n");
    dir.write("pdf-processing/forms/filler/SKILL.md", "---\nname: filler\ndescription: Fill forms\n---\n");
    dir.write("pdf-processing/.hidden", "never served\n");
    dir.write("acme/billing/refunds/SKILL.md", "---\nname: refunds\ndescription: Refunds\n---\n");
    dir.write("loose.md", "not in a skill\n");
    let outside = TempDir::new("skills-outside");
    outside.write("secret.txt", "secret\n");
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink(outside.join("secret.txt"), dir.path().join("pdf-processing/secret.txt")).unwrap();
        std::os::unix::fs::symlink(dir.path().join("loose.md"), dir.path().join("pdf-processing/linked.md")).unwrap();
        std::os::unix::fs::symlink(
            dir.path().join("pdf-processing/references/FORMS.md"),
            dir.path().join("pdf-processing/forms.md"),
        )
        .unwrap();
    }
    let client = InMemoryClient::latest_session(server(Skills::from_directory(dir.path()).unwrap())).await;
    let listed = client.request("skills/list", json!({})).await.unwrap();
    let entries: Vec<(&str, usize)> = listed["skills"]
        .as_array()
        .unwrap()
        .iter()
        .map(|skill| (skill["uri"].as_str().unwrap(), skill["resources"].as_array().unwrap().len()))
        .collect();
    let pdf_files = if cfg!(unix) { 4 } else { 3 };
    assert_eq!(
        entries,
        [
            ("skill://acme/billing/refunds/SKILL.md", 1),
            ("skill://pdf-processing/SKILL.md", pdf_files),
            ("skill://pdf-processing/forms/filler/SKILL.md", 1)
        ],
        "nested skills are listed flat, and their files count in the enclosing skill"
    );
    let pdf = listed["skills"][1]["resources"].to_string();
    assert!(pdf.contains("skill://pdf-processing/forms/filler/SKILL.md"), "{pdf}");
    assert!(!pdf.contains("hidden") && !pdf.contains("secret"), "{pdf}");
    for never in ["skill://pdf-processing/.hidden", "skill://pdf-processing/secret.txt", "skill://loose.md"] {
        assert!(client.request("resources/read", json!({"uri": never})).await.is_err(), "{never}");
    }
    #[cfg(unix)]
    {
        let inside = client.request("resources/read", json!({"uri": "skill://pdf-processing/forms.md"})).await;
        assert_eq!(inside.unwrap()["contents"][0]["text"], "forms\n", "a link within its skill is a file of it");
        let linked = client.request("resources/read", json!({"uri": "skill://pdf-processing/linked.md"})).await;
        assert!(linked.is_err(), "a link out of its skill is never served, even to a file under the root");
    }
    // A root that is itself a skill: the skills below it are served under its name.
    let own = TempDir::new("skills-own-root");
    own.write(
        "SKILL.md",
        format!("---\nname: {}\ndescription: the root\n---\n", own.path().file_name().unwrap().to_str().unwrap()),
    );
    own.write("inner/SKILL.md", "---\nname: inner\ndescription: below the root\n---\n");
    // Its name, `wharf-skills-own-root-PID`, is a valid skill name.
    let root_name = own.path().file_name().unwrap().to_str().unwrap().to_owned();
    let client = InMemoryClient::latest_session(server(Skills::from_directory(own.path()).unwrap())).await;
    let listed = client.request("skills/list", json!({})).await.unwrap();
    let uris: Vec<&str> =
        listed["skills"].as_array().unwrap().iter().map(|skill| skill["uri"].as_str().unwrap()).collect();
    assert_eq!(uris, [format!("skill://{root_name}/SKILL.md"), format!("skill://{root_name}/inner/SKILL.md")]);
    let refused = Skills::from_directory(dir.path().join("does-not-exist")).unwrap_err();
    assert!(refused.to_string().contains("does-not-exist"), "{refused}");
}

#[tokio::test]
async fn skills_swapped_while_serving_tell_subscribers_and_a_broken_set_changes_nothing() {
    let server = server(Skills::new().skill(refunds()));
    let (client, _) =
        InMemoryClient::session(server.clone(), ProtocolVersion::LATEST_SESSION, ClientCapabilities::default())
            .await
            .unwrap();
    let email = "skill://acme/refunds/examples/email.md";
    client.request("resources/subscribe", json!({"uri": email})).await.unwrap();

    let broken = Skills::new().skill(SkillDef::new("acme/refunds").file("SKILL.md", "no frontmatter"));
    assert!(server.set_skills(broken).is_err());
    let still = client.request("resources/read", json!({"uri": email})).await.unwrap();
    assert_eq!(still["contents"][0]["text"], "Dear customer,\n", "the skills before are still served");

    let edited = refunds().file("examples/email.md", "Dear valued customer,\n");
    server.set_skills(Skills::new().skill(edited)).unwrap();
    let mut seen = Vec::new();
    while let Some(notification) = client.next_notification(Duration::from_secs(2)).await {
        seen.push(notification);
        if seen.iter().any(|seen| seen["method"] == "notifications/resources/updated") {
            break;
        }
    }
    assert!(
        seen.iter().any(|seen| seen["method"] == "notifications/resources/updated" && seen["params"]["uri"] == email),
        "{seen:?}"
    );
    assert!(
        !seen.iter().any(|seen| seen["method"] == "notifications/resources/list_changed"),
        "the listing did not change: {seen:?}"
    );
    let now = client.request("resources/read", json!({"uri": email})).await.unwrap();
    assert_eq!(now["contents"][0]["text"], "Dear valued customer,\n");
    let listed = client.request("skills/get", json!({"uri": "skill://acme/refunds/SKILL.md"})).await.unwrap();
    let file = listed["skill"]["resources"].as_array().unwrap().iter().find(|file| file["uri"] == email).cloned();
    assert_eq!(file.unwrap()["digest"], digest(b"Dear valued customer,\n"), "the digest follows the contents");

    let another = SkillDef::new("other").file("SKILL.md", "---\nname: other\ndescription: new\n---\n");
    server.set_skills(Skills::new().skill(refunds()).skill(another)).unwrap();
    let mut list_changed = false;
    while let Some(notification) = client.next_notification(Duration::from_secs(2)).await {
        if notification["method"] == "notifications/resources/list_changed" {
            list_changed = true;
            break;
        }
    }
    assert!(list_changed, "a new skill changes the resource list");
}

// Issue 38: skills read from a directory that changes while it is read, and names no URI carries.

#[cfg(unix)]
#[tokio::test]
async fn a_skill_file_swapped_for_a_link_out_of_the_directory_while_it_is_read_is_never_served() {
    let dir = TempDir::new("skills-swap");
    dir.write("notes/SKILL.md", "---\nname: notes\ndescription: Notes\n---\n");
    dir.write("notes/swap.md", "inside\n");
    let outside = TempDir::new("skills-swap-outside");
    outside.write("secret.txt", "outside the directory\n");
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let (target, staged, secret) =
        (dir.path().join("notes/swap.md"), dir.path().join("notes/.staged"), outside.join("secret.txt"));
    let swapper = std::thread::spawn({
        let stop = stop.clone();
        move || {
            let mut swaps = 0u64;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                std::fs::write(&staged, "inside\n").unwrap();
                std::fs::rename(&staged, &target).unwrap();
                std::os::unix::fs::symlink(&secret, &staged).unwrap();
                std::fs::rename(&staged, &target).unwrap();
                swaps += 2;
            }
            swaps
        }
    });
    let started = std::time::Instant::now();
    let mut reads = 0;
    while started.elapsed() < Duration::from_secs(2) {
        reads += 1;
        let Ok(skills) = Skills::from_directory(dir.path()) else { continue };
        let client = InMemoryClient::stateless(server(skills), ClientCapabilities::default());
        if let Ok(read) = client.request("resources/read", json!({"uri": "skill://notes/swap.md"})).await {
            assert_eq!(read["contents"][0]["text"], "inside\n", "a file outside the directory was served");
        }
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let swaps = swapper.join().unwrap();
    eprintln!("{reads} reads of the directory, {swaps} swaps, the outside file never served");
}

#[cfg(unix)]
#[tokio::test]
async fn a_name_that_is_not_utf8_or_holds_a_control_character_is_left_out_of_the_skills() {
    use std::os::unix::ffi::OsStrExt;
    let dir = TempDir::new("skills-odd-names");
    dir.write("notes/SKILL.md", "---\nname: notes\ndescription: Notes\n---\n");
    dir.write("notes/references/how.md", "How.\n");
    for name in [&b"notes/Icon\r"[..], b"notes/caf\xe9.md", b"notes/references/tab\there.md", b"odd\x01dir/x.md"] {
        let path = dir.path().join(std::ffi::OsStr::from_bytes(name));
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, "odd\n").unwrap();
    }
    let skills = Skills::from_directory(dir.path()).expect("the odd names are left out, the rest is served");
    let client = InMemoryClient::latest_session(server(skills)).await;
    let listed = client.request("skills/list", json!({})).await.unwrap();
    let files: Vec<&str> =
        listed["skills"][0]["resources"].as_array().unwrap().iter().map(|file| file["uri"].as_str().unwrap()).collect();
    assert_eq!(files, ["skill://notes/SKILL.md", "skill://notes/references/how.md"], "{listed}");
}
