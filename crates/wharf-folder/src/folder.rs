//! A folder read whole and checked before anything is served: `skills/`, `prompts/*.md`,
//! `resources/**`, `apps/*.html` (MCP Apps views, each linked to the command tools it names),
//! and the command tools of `wharf.toml` or `tools.toml`. Every problem is reported with its
//! file; a folder with any is not served.
//!
//! Everything in the folder is opened from the folder's handle ([`OpenDirectory`]), never
//! through a symbolic link, and checked on the handle it is read from: a file swapped while the
//! folder is read (for a link out of it, a FIFO, a larger file) is refused, never served. The
//! folder's own path may be a link; `resources/`, `prompts/`, `skills/` and the configuration
//! files in it may not (a folder where one is, is refused). Links below `resources/` and
//! `prompts/` are left out; below `skills/`, one to a file in its own skill is served. A hard
//! link is the file it links, and is served as one: making it takes access to that file. A name
//! that is not UTF-8 or holds a control character is left out with a warning.

use std::collections::BTreeMap;
use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::io::ErrorKind;
use std::path::{Path, PathBuf};

use wharf_server::{
    CompiledSkills, EntryKind, Error, Offer, OpenDirectory, PromptDef, ResourceDef, Server, ServerBuilder, Skills,
    ToolDef,
};

use crate::apps::view;
use crate::config::{Config, ServerSection};
use crate::error::FolderError;
use crate::prompts::prompt;
use crate::resources::{check_scheme, resource};
use crate::tools::command_tool;

/// The largest file read: a resource, a prompt, a configuration file.
const MAX_FILE: u64 = 16 * 1024 * 1024;

/// How deep `resources/` is read.
const MAX_DEPTH: usize = 32;

/// Everything a folder holds, read and checked; nothing served yet.
pub struct Loaded {
    server: ServerSection,
    folder_name: String,
    tools: Vec<ToolDef>,
    prompts: Vec<PromptDef>,
    resources: Vec<ResourceDef>,
    skills: Option<CompiledSkills>,
    summary: Summary,
}

impl std::fmt::Debug for Loaded {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Loaded").field("summary", &self.summary).finish_non_exhaustive()
    }
}

/// What a folder served, by name, to tell the next version apart from it.
#[derive(Debug, Clone, Default)]
pub struct Summary {
    tools: Vec<String>,
    prompts: Vec<String>,
    /// Each resource's URI and a hash of its contents.
    resources: BTreeMap<String, u64>,
    /// How many of the resources are views.
    views: usize,
    skills: bool,
}

impl Summary {
    /// How many tools, prompts, resources and views, and whether there are skills.
    pub fn describe(&self) -> String {
        format!(
            "{} tools, {} prompts, {} resources{}{}",
            self.tools.len(),
            self.prompts.len(),
            self.resources.len() - self.views,
            if self.views > 0 { format!(", {} views", self.views) } else { String::new() },
            if self.skills { ", skills" } else { "" }
        )
    }
}

impl Loaded {
    /// Reads the folder at `path`, every skill file hashed: blocking work, for a thread that
    /// may block. What is inside the folder is never reached through a symbolic link (see the
    /// module's documentation).
    pub fn load(path: impl AsRef<Path>) -> Result<Loaded, FolderError> {
        let path = path.as_ref();
        if !path.is_dir() {
            return Err(FolderError::one(format!("{} is not a directory", path.display())));
        }
        let folder = OpenDirectory::open(path).map_err(|err| FolderError::one(format!("{}: {err}", path.display())))?;
        let mut problems = Vec::new();
        let config = read_config(&folder, &mut problems);
        let mut summary = Summary::default();

        let mut resources = Vec::new();
        // The view each tool is drawn by, from the frontmatter of `apps/*.html`.
        let mut views_of_tools: BTreeMap<String, (String, PathBuf)> = BTreeMap::new();
        let apps_directory = own_directory(&folder, "apps", &mut problems);
        for (file, text) in
            apps_directory.map(|directory| text_files(&directory, ".html", &mut problems)).unwrap_or_default()
        {
            let name = file.file_stem().map(|stem| stem.to_string_lossy().into_owned()).unwrap_or_default();
            let view = match view(&name, &text) {
                Ok(view) => view,
                Err(why) => {
                    problems.push(format!("{}: {why}", file.display()));
                    continue;
                }
            };
            for tool in view.tools {
                if !config.tools.iter().any(|spec| spec.name == tool) {
                    problems
                        .push(format!("{}: `tools` names `{tool}`, which is not a tool of the folder", file.display()));
                } else if let Some((_, other)) = views_of_tools.get(&tool) {
                    problems.push(format!(
                        "{}: the tool `{tool}` is drawn by {} already",
                        file.display(),
                        other.display()
                    ));
                } else {
                    views_of_tools.insert(tool, (view.resource.uri().to_owned(), file.clone()));
                }
            }
            summary.resources.insert(view.resource.uri().to_owned(), content_hash(text.as_bytes()));
            summary.views += 1;
            resources.push(view.resource);
        }

        let mut tools = Vec::new();
        for spec in &config.tools {
            let view = views_of_tools.get(&spec.name).map(|(uri, _)| uri.clone());
            if spec.visibility.is_some() && view.is_none() {
                problems.push(format!(
                    "tool `{}`: `visibility` is for a tool with a view (an apps/*.html whose frontmatter names it)",
                    spec.name
                ));
                continue;
            }
            match command_tool(spec, path) {
                Ok(mut tool) => {
                    if let Some(uri) = view {
                        tool = tool.view(uri);
                    }
                    if let Some(visibility) = &spec.visibility {
                        tool = tool.visibility(visibility.iter().copied());
                    }
                    summary.tools.push(spec.name.clone());
                    tools.push(tool);
                }
                Err(why) => problems.push(format!("tool `{}`: {why}", spec.name)),
            }
        }

        let mut prompts = Vec::new();
        let prompts_directory = own_directory(&folder, "prompts", &mut problems);
        for (file, text) in
            prompts_directory.map(|directory| text_files(&directory, ".md", &mut problems)).unwrap_or_default()
        {
            let name = file.file_stem().map(|stem| stem.to_string_lossy().into_owned()).unwrap_or_default();
            match prompt(&name, &text) {
                Ok(prompt) => {
                    summary.prompts.push(name);
                    prompts.push(prompt);
                }
                Err(why) => problems.push(format!("{}: {why}", file.display())),
            }
        }

        if let Err(why) = check_scheme(&config.resources.scheme) {
            problems.push(format!("wharf.toml [resources] scheme: {why}"));
        }
        let mut files = BTreeMap::new();
        if let Some(directory) = own_directory(&folder, "resources", &mut problems) {
            read_tree(&directory, "", 0, &mut files, &mut problems);
        }
        for (relative, bytes) in files {
            let hash = content_hash(&bytes);
            match resource(&config.resources.scheme, &relative, bytes) {
                Ok(resource) => {
                    summary.resources.insert(resource.uri().to_owned(), hash);
                    resources.push(resource);
                }
                Err(why) => problems.push(format!("resources/{relative}: {why}")),
            }
        }

        let skills = own_directory(&folder, "skills", &mut problems).and_then(|directory| {
            match Skills::from_open_directory(&directory).and_then(Skills::compile) {
                Ok(skills) => Some(skills),
                Err(err) => {
                    problems.push(format!("{}: {err}", directory.path().display()));
                    None
                }
            }
        });
        summary.skills = skills.is_some();
        if !problems.is_empty() {
            return Err(FolderError::new(problems));
        }
        let folder_name = folder
            .path()
            .file_name()
            .map(|name| name.to_string_lossy().into_owned())
            .unwrap_or_else(|| "folder".to_owned());
        Ok(Loaded { server: config.server, folder_name, tools, prompts, resources, skills, summary })
    }

    /// The server's name: `[server] name` in `wharf.toml`, else the folder's.
    pub fn name(&self) -> String {
        self.server.name.clone().unwrap_or_else(|| self.folder_name.clone())
    }

    /// What was read, to compare the next version with.
    pub fn summary(&self) -> &Summary {
        &self.summary
    }

    /// A server builder with the folder's name, version, description and instructions, and
    /// every component the folder holds.
    pub fn builder(self) -> ServerBuilder {
        let version = self.server.version.clone().unwrap_or_else(|| "0.1.0".to_owned());
        let mut builder = Server::builder(self.name(), version);
        if let Some(title) = &self.server.title {
            builder = builder.title(title.clone());
        }
        if let Some(description) = &self.server.description {
            builder = builder.description(description.clone());
        }
        if let Some(instructions) = &self.server.instructions {
            builder = builder.instructions(instructions.clone());
        }
        builder = self.tools.into_iter().fold(builder, ServerBuilder::tool);
        builder = self.prompts.into_iter().fold(builder, ServerBuilder::prompt);
        builder = self.resources.into_iter().fold(builder, ServerBuilder::resource);
        match self.skills {
            Some(skills) => builder.compiled_skills(skills),
            None => builder,
        }
    }

    /// The builder for a folder that is watched, reloaded as it changes: since a client reads the
    /// capabilities only at `initialize`, tools, prompts, resources, completions and skills are
    /// declared from the start, so that what the folder gains later is seen by every session.
    pub fn builder_for_watching(mut self) -> ServerBuilder {
        if self.skills.is_none() {
            // No skill, so nothing to refuse: compiling none always succeeds.
            self.skills = Skills::new().compile().ok();
        }
        [Offer::Tools, Offer::Prompts, Offer::Resources, Offer::Completions]
            .into_iter()
            .fold(self.builder(), ServerBuilder::offer)
    }

    /// Serves this version of the folder on `server` instead of `previous`, all at once;
    /// subscribers of a resource whose contents changed, or which is gone, are told. Returns
    /// what is served now.
    pub fn replace(self, server: &Server, previous: &Summary) -> Result<Summary, Error> {
        let summary = self.summary.clone();
        server.update(|update| {
            for name in &previous.tools {
                update.remove_tool(name);
            }
            for name in &previous.prompts {
                update.remove_prompt(name);
            }
            for uri in previous.resources.keys() {
                update.remove_resource(uri);
            }
            for tool in self.tools {
                update.add_tool(tool)?;
            }
            for prompt in self.prompts {
                update.add_prompt(prompt)?;
            }
            for resource in self.resources {
                update.add_resource(resource)?;
            }
            // A folder without skills serves none, the extension still declared (see
            // `builder_for_watching`).
            match self.skills {
                Some(skills) => update.set_compiled_skills(skills)?,
                None => update.set_skills(Skills::new())?,
            }
            for (uri, hash) in &previous.resources {
                if summary.resources.get(uri) != Some(hash) {
                    update.resource_updated(uri.clone());
                }
            }
            Ok(())
        })?;
        Ok(summary)
    }
}

/// `wharf.toml`, with the tools of `tools.toml` added.
fn read_config(folder: &OpenDirectory, problems: &mut Vec<String>) -> Config {
    let mut config = Config::default();
    for name in ["wharf.toml", "tools.toml"] {
        let file = folder.path().join(name);
        let text = match folder.read_file(name, MAX_FILE).map(String::from_utf8) {
            Ok(Ok(text)) => text,
            Ok(Err(_)) => {
                problems.push(format!("{}: not UTF-8", file.display()));
                continue;
            }
            Err(err) if err.kind() == ErrorKind::NotFound => continue,
            Err(err) => {
                problems.push(format!("{}: {err}", file.display()));
                continue;
            }
        };
        match toml::from_str::<Config>(&text) {
            Ok(read) if name == "wharf.toml" => config = Config { tools: [config.tools, read.tools].concat(), ..read },
            Ok(read) if read.server.name.is_some() || read.server.instructions.is_some() => {
                problems.push(format!("{}: `[server]` belongs in wharf.toml", file.display()));
            }
            Ok(read) => config.tools.extend(read.tools),
            Err(err) => problems.push(format!("{}: {}", file.display(), err.to_string().trim_end())),
        }
    }
    let mut seen = std::collections::BTreeSet::new();
    for tool in &config.tools {
        if !seen.insert(tool.name.clone()) {
            problems.push(format!("the tool `{}` is defined twice", tool.name));
        }
    }
    config
}

/// The folder's own directory `name` (`resources`, `prompts`, `skills`), opened; none when
/// there is no such directory. One that is a symbolic link is a problem: it could lead anywhere.
fn own_directory(folder: &OpenDirectory, name: &str, problems: &mut Vec<String>) -> Option<OpenDirectory> {
    match folder.directory(name) {
        Ok(directory) => Some(directory),
        Err(err) if matches!(err.kind(), ErrorKind::NotFound | ErrorKind::NotADirectory) => None,
        Err(err) => {
            problems.push(format!(
                "{}: {err}; the folder's own directories are never reached through a link",
                folder.path().join(name).display()
            ));
            None
        }
    }
}

/// A hash of a file's contents, to tell whether it changed.
fn content_hash(bytes: &[u8]) -> u64 {
    let mut hasher = DefaultHasher::new();
    bytes.hash(&mut hasher);
    hasher.finish()
}

/// The files directly in `directory` whose names end with `extension`, read as text. Links are
/// left out: one could lead out of the folder.
fn text_files(directory: &OpenDirectory, extension: &str, problems: &mut Vec<String>) -> Vec<(PathBuf, String)> {
    let entries = match directory.entries() {
        Ok(entries) => entries,
        Err(err) => {
            problems.push(format!("{}: {err}", directory.path().display()));
            return Vec::new();
        }
    };
    let mut files = Vec::new();
    for entry in entries.iter().filter(|entry| entry.name().ends_with(extension) && !entry.name().starts_with('.')) {
        let file = directory.path().join(entry.name());
        if entry.kind() != EntryKind::File {
            tracing::warn!(target: "wharf::folder", "{}: not a regular file; not served", file.display());
            continue;
        }
        match directory.read_file(entry.name(), MAX_FILE).map(String::from_utf8) {
            Ok(Ok(text)) => files.push((file, text)),
            Ok(Err(_)) => problems.push(format!("{}: not UTF-8", file.display())),
            // Gone since it was listed: not part of this version.
            Err(err) if err.kind() == ErrorKind::NotFound => {}
            Err(err) => problems.push(format!("{}: {err}", file.display())),
        }
    }
    files
}

/// Every regular file under `directory` (`relative` below the resources root), hidden ones
/// and symbolic links left out.
fn read_tree(
    directory: &OpenDirectory,
    relative: &str,
    depth: usize,
    files: &mut BTreeMap<String, Vec<u8>>,
    problems: &mut Vec<String>,
) {
    if depth > MAX_DEPTH {
        problems.push(format!("{}: more than {MAX_DEPTH} directories deep", directory.path().display()));
        return;
    }
    let entries = match directory.entries() {
        Ok(entries) => entries,
        Err(err) => {
            problems.push(format!("{}: {err}", directory.path().display()));
            return;
        }
    };
    for entry in entries.iter().filter(|entry| !entry.name().starts_with('.')) {
        let path = directory.path().join(entry.name());
        let inside = if relative.is_empty() { entry.name().to_owned() } else { format!("{relative}/{}", entry.name()) };
        let opened = match entry.kind() {
            EntryKind::Directory => {
                directory.directory(entry.name()).map(|below| read_tree(&below, &inside, depth + 1, files, problems))
            }
            EntryKind::File => directory.read_file(entry.name(), MAX_FILE).map(|bytes| {
                files.insert(inside, bytes);
            }),
            EntryKind::Link => {
                tracing::warn!(target: "wharf::folder", "{}: a symbolic link; not served", path.display());
                Ok(())
            }
            EntryKind::Other => {
                tracing::warn!(target: "wharf::folder", "{}: not a regular file; not served", path.display());
                Ok(())
            }
        };
        match opened {
            Ok(()) => {}
            // Gone since it was listed: not part of this version.
            Err(err) if err.kind() == ErrorKind::NotFound => {}
            Err(err) if err.kind() == ErrorKind::FileTooLarge => {
                problems.push(format!("{}: a resource may have 16 MiB at most", path.display()));
            }
            Err(err) => problems.push(format!("{}: {err}", path.display())),
        }
    }
}
