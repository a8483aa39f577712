//! Skills (SEP-2640) from the client's side: listing them reads no file; loading one reads its
//! `SKILL.md` and checks it against the listing (size, digest, frontmatter) before handing it
//! over, and its other files are read, and checked the same way, only when asked for.

use base64::Engine;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use wharf_protocol::{ListSkillsResult, ResourceContents, SKILLS_EXTENSION, Skill, SkillFile, SkillResources};

use crate::client::Client;
use crate::decoded::decoded;
use crate::error::ClientError;
use crate::options::RequestOptions;

/// How many pages of skills are followed.
const MAX_PAGES: usize = 100;

/// A skill whose `SKILL.md` was read and matched its listing.
#[derive(Debug, Clone)]
pub struct LoadedSkill {
    /// The skill as listed.
    pub skill: Skill,
    /// Its `SKILL.md`, frontmatter included.
    pub text: String,
    /// The body after the frontmatter.
    pub body: String,
}

impl Client {
    /// True when the server offers skills.
    pub fn offers_skills(&self) -> bool {
        self.capabilities().extensions.as_ref().is_some_and(|extensions| extensions.contains_key(SKILLS_EXTENSION))
    }

    /// Every skill the server lists, without reading any of their files.
    pub async fn list_skills(&self) -> Result<Vec<Skill>, ClientError> {
        let mut skills = Vec::new();
        let mut cursor: Option<String> = None;
        for _ in 0..MAX_PAGES {
            let params = match &cursor {
                Some(cursor) => json!({ "cursor": cursor }),
                None => json!({}),
            };
            let raw = self.request_raw("skills/list", &params, &RequestOptions::default()).await?;
            let mut page = decoded::<ListSkillsResult>(&raw)?;
            skills.append(&mut page.skills);
            match page.next_cursor {
                Some(next) if Some(&next) != cursor.as_ref() => cursor = Some(next),
                Some(next) => {
                    return Err(ClientError::invalid(format!("`skills/list` gave the same cursor twice: `{next}`")));
                }
                None => return Ok(skills),
            }
        }
        Err(ClientError::invalid(format!("`skills/list` had more than {MAX_PAGES} pages")))
    }

    /// Reads a skill's `SKILL.md` and checks it: its size and digest those listed, and its
    /// frontmatter the listed frontmatter, field by field. A skill that fails is refused.
    pub async fn load_skill(&self, skill: &Skill) -> Result<LoadedSkill, ClientError> {
        let bytes = self.read_checked(skill, &skill.uri).await?;
        let text =
            String::from_utf8(bytes).map_err(|_| refused(skill, &skill.uri, "its SKILL.md is not UTF-8".to_owned()))?;
        let (frontmatter, body) =
            wharf_frontmatter::yaml_frontmatter(&text).map_err(|why| refused(skill, &skill.uri, why.to_string()))?;
        for (key, listed) in &skill.frontmatter {
            match frontmatter.get(key) {
                Some(read) if read == listed => {}
                Some(read) => {
                    return Err(refused(
                        skill,
                        &skill.uri,
                        format!("its `{key}` is {read}, but the listing says {listed}"),
                    ));
                }
                None => {
                    return Err(refused(
                        skill,
                        &skill.uri,
                        format!("its frontmatter has no `{key}`, which the listing has"),
                    ));
                }
            }
        }
        let body = body.to_owned();
        Ok(LoadedSkill { skill: skill.clone(), text, body })
    }

    /// Reads one file of a loaded skill, checked against the listing like `SKILL.md`.
    pub async fn read_skill_file(&self, loaded: &LoadedSkill, uri: &str) -> Result<Vec<u8>, ClientError> {
        self.read_checked(&loaded.skill, uri).await
    }

    /// The bytes of `uri`, a file `skill` lists, when their size and digest match the listing;
    /// a file of a dynamic skill, whose files cannot be digested ahead, as it is read.
    async fn read_checked(&self, skill: &Skill, uri: &str) -> Result<Vec<u8>, ClientError> {
        let listed: Option<&SkillFile> = match &skill.resources {
            None => {
                return Err(refused(skill, uri, "the entry lists no `resources`, so it must not be loaded".to_owned()));
            }
            Some(SkillResources::Dynamic) => None,
            Some(SkillResources::Files(files)) => Some(
                files
                    .iter()
                    .find(|file| file.uri == uri)
                    .ok_or_else(|| refused(skill, uri, "the listing does not name this file".to_owned()))?,
            ),
        };
        let read = self.read_resource(uri).await?;
        let contents = read
            .contents
            .iter()
            .find(|contents| contents_uri(contents) == uri)
            .or(read.contents.first())
            .ok_or_else(|| refused(skill, uri, "reading it gave no contents".to_owned()))?;
        let bytes = match contents {
            ResourceContents::Text(text) => text.text.clone().into_bytes(),
            ResourceContents::Blob(blob) => base64::engine::general_purpose::STANDARD
                .decode(&blob.blob)
                .map_err(|err| refused(skill, uri, format!("its blob is not base64: {err}")))?,
        };
        let Some(listed) = listed else { return Ok(bytes) };
        match listed.size {
            Some(size) if size == bytes.len() as u64 => {}
            Some(size) => {
                return Err(refused(skill, uri, format!("it is {} bytes, but the listing says {size}", bytes.len())));
            }
            None => return Err(refused(skill, uri, "the listing gives no size".to_owned())),
        }
        let digest =
            listed.digest.as_deref().ok_or_else(|| refused(skill, uri, "the listing gives no digest".to_owned()))?;
        let actual = format!("sha256:{}", hex(&Sha256::digest(&bytes)));
        if digest != actual {
            return Err(refused(skill, uri, format!("its digest is {actual}, but the listing says {digest}")));
        }
        Ok(bytes)
    }
}

fn contents_uri(contents: &ResourceContents) -> &str {
    match contents {
        ResourceContents::Text(text) => &text.uri,
        ResourceContents::Blob(blob) => &blob.uri,
    }
}

fn refused(skill: &Skill, uri: &str, why: String) -> ClientError {
    let name = skill.frontmatter.get("name").and_then(Value::as_str).unwrap_or(&skill.uri);
    ClientError::invalid(format!("skill `{name}` refused: {uri} does not match its listing: {why}"))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}
