//! The Skills extension's methods: `skills/list`, `skills/get`, `resources/directory/read`,
//! and `resources/read` of a skill's files, all answered from the catalog served now.

use std::sync::Arc;

use wharf_protocol::{
    GetSkillParams, GetSkillResult, ListSkillsResult, PaginatedParams, ReadDirectoryParams, ReadDirectoryResult,
    Resource, ResourceContents,
};

use crate::content::{blob_contents, text_contents};
use crate::error::RpcError;
use crate::registry::page;
use crate::server::Server;
use crate::skills::catalog::Catalog;

/// The catalog, or the answer a server without skills gives to their methods.
fn catalog(server: &Server, method: &str) -> Result<Arc<Catalog>, RpcError> {
    server.registry().skills.clone().ok_or_else(|| {
        RpcError::method_not_found(format!(
            "Method not found: `{method}` needs the skills extension, which this server does not offer"
        ))
    })
}

/// One page of skills, each entry whole.
pub(super) fn list_skills(server: &Server, params: &PaginatedParams) -> Result<ListSkillsResult, RpcError> {
    let catalog = catalog(server, "skills/list")?;
    let (entries, next_cursor) =
        page(&catalog.entries, params.cursor.as_deref(), server.options().page_size, |_| true)?;
    let skills = entries.into_iter().map(|entry| entry.skill.clone()).collect();
    Ok(ListSkillsResult { skills, next_cursor, ..ListSkillsResult::default() })
}

/// The entry of the skill whose `SKILL.md` is the URI asked for; `-32602` for any other URI.
pub(super) fn get_skill(server: &Server, params: &GetSkillParams) -> Result<GetSkillResult, RpcError> {
    let catalog = catalog(server, "skills/get")?;
    let entry = catalog
        .entry(&params.uri)
        .ok_or_else(|| RpcError::invalid_params(format!("No skill is served at {}", params.uri)))?;
    Ok(GetSkillResult { skill: entry.skill.clone(), ..GetSkillResult::default() })
}

/// One page of a directory's direct children; `-32602` for a URI that is not a directory.
pub(super) fn read_directory(server: &Server, params: &ReadDirectoryParams) -> Result<ReadDirectoryResult, RpcError> {
    let catalog = catalog(server, "resources/directory/read")?;
    if !catalog.directory_read {
        return Err(RpcError::method_not_found(
            "Method not found: resources/directory/read (this server does not declare directoryRead)",
        ));
    }
    let children = catalog
        .directory(&params.uri)
        .ok_or_else(|| RpcError::invalid_params(format!("{} is not a directory resource", params.uri)))?;
    let (children, next_cursor) = page(&children, params.cursor.as_deref(), server.options().page_size, |_| true)?;
    let resources = children.into_iter().map(|child| Resource::clone(child)).collect();
    Ok(ReadDirectoryResult { resources, next_cursor, ..ReadDirectoryResult::default() })
}

/// The contents of a skill's file: text when it is UTF-8 (its bytes then are exactly what
/// was digested), else a blob.
pub(super) fn skill_file_contents(catalog: &Catalog, uri: &str) -> Option<Vec<ResourceContents>> {
    let file = catalog.file(uri)?;
    let contents = match std::str::from_utf8(&file.bytes) {
        Ok(text) => text_contents(uri, Some(file.mime_type), text),
        Err(_) => blob_contents(uri, Some(file.mime_type), &file.bytes),
    };
    Some(vec![contents])
}
