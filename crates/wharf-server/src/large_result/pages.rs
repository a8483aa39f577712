//! Reading large results in pages: the resource template `wharf-result://{id}{?page}`, which a
//! server with result budgets serves. A page is answered only to the principal (else the
//! session) that made the call; to anyone else, and after the result expired, the resource is
//! not found.

use std::sync::Arc;

use serde_json::json;
use wharf_protocol::{BlobResourceContents, ResourceContents, TextResourceContents};

use super::owner::owner_of;
use super::spill::RESULT_SCHEME;
use super::store::ResultStore;
use crate::error::RpcError;
use crate::resource::{ResourceCall, TemplateDef};

/// The template the pages of large results are read through.
pub(crate) fn pages_template(store: Arc<dyn ResultStore>) -> TemplateDef {
    TemplateDef::new(format!("{RESULT_SCHEME}{{id}}{{?page}}"), "large-results", move |call: ResourceCall| {
        let store = store.clone();
        async move { read_page(&*store, &call).await }
    })
    .title("Large results")
    .description(
        "Tool results larger than their client takes, in pages (?page=1, 2, ...); each is readable only by \
         whoever made the call, and for a limited time",
    )
}

async fn read_page(store: &dyn ResultStore, call: &ResourceCall) -> Result<ResourceContents, RpcError> {
    let not_found = || RpcError::resource_not_found(&call.uri);
    let id = call.variable("id").unwrap_or_default();
    let page = match call.variable("page") {
        None | Some("") => 1,
        Some(page) => page.parse::<usize>().map_err(|_| {
            RpcError::invalid_params(format!("Invalid params: `page` is a page number from 1, not `{page}`"))
        })?,
    };
    let found = store.page(id, page).await.ok_or_else(not_found)?;
    if !found.owner.is_empty() && found.owner != owner_of(&call.context) {
        // Not yours: as if it did not exist, so that its existence is not told either.
        return Err(not_found());
    }
    let meta = json!({"wharf/page": page, "wharf/pages": found.pages, "wharf/size": found.size});
    let meta = meta.as_object().cloned();
    Ok(if found.binary {
        ResourceContents::Blob(BlobResourceContents {
            uri: call.uri.clone(),
            mime_type: found.mime_type,
            blob: found.page.to_string(),
            meta,
        })
    } else {
        ResourceContents::Text(TextResourceContents {
            uri: call.uri.clone(),
            mime_type: found.mime_type,
            text: found.page.to_string(),
            meta,
        })
    })
}
