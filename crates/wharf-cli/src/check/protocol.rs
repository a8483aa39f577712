//! The checks made through the client, in each era the server claims: the lifecycle, every
//! listing and the answer to every call validated against the revision's schema, tool schemas
//! against the JSON Schema meta-schema, every tool called with valid and invalid arguments, and
//! a tool's MCP Apps view (`apps.rs`).

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use wharf::client::{Answer, Client, ClientError, ClientHandler, ErrorKind, RequestOptions, Target};
use wharf::protocol::{
    ClientCapabilities, CreateMessageParams, CreateMessageResult, ElicitAction, ElicitParams, ElicitResult, Era,
    ErrorCode, ErrorObject, FromJson, LoggingLevel, ProtocolVersion,
};

use crate::answers::answering_capabilities;
use crate::check::connected::Connected;
use crate::check::notifications::Observed;
use crate::check::probes::{self, Probe as ConstraintProbe};
use crate::check::report::{Outcome, Report};
use crate::check::settings::{Elicitation, Settings};
use crate::check::{apps, generate, schemas};
use crate::server_args::ServerArgs;

/// How many prompts and resources are fetched at most.
const MAX_FETCHED: usize = 50;

/// How many list pages are followed.
const MAX_PAGES: usize = 100;

/// Answers the server's questions as the command line says, counting those it refused.
struct CheckHandler {
    elicitation: Elicitation,
    sampling_reply: Option<String>,
    refused: Arc<AtomicUsize>,
}

impl ClientHandler for CheckHandler {
    fn capabilities(&self) -> ClientCapabilities {
        answering_capabilities()
    }

    fn elicit(&self, params: ElicitParams) -> Answer<'_, ElicitResult> {
        let (action, content) = match self.elicitation {
            Elicitation::Decline => (ElicitAction::Decline, None),
            Elicitation::Cancel => (ElicitAction::Cancel, None),
            Elicitation::Accept => {
                let schema = serde_json::to_value(&params.requested_schema).unwrap_or(Value::Null);
                let content = generate::valid_arguments(&schema).ok().and_then(|value| value.as_object().cloned());
                (ElicitAction::Accept, Some(content.unwrap_or_default()))
            }
        };
        if action != ElicitAction::Accept {
            self.refused.fetch_add(1, Ordering::Relaxed);
        }
        Box::pin(async move { Ok(ElicitResult { action, content, meta: None }) })
    }

    fn create_message(&self, _params: CreateMessageParams) -> Answer<'_, CreateMessageResult> {
        let reply = self.sampling_reply.clone();
        if reply.is_none() {
            self.refused.fetch_add(1, Ordering::Relaxed);
        }
        Box::pin(async move {
            let Some(text) = reply else {
                return Err(ErrorObject::new(ErrorCode(-1), "the user refused the sampling request"));
            };
            CreateMessageResult::from_json_value(json!({
                "role": "assistant", "content": {"type": "text", "text": text}, "model": "wharf-check", "stopReason": "endTurn"
            }))
            .map_err(|err| ErrorObject::new(ErrorCode::INTERNAL_ERROR, err.to_string()))
        })
    }
}

/// Runs the client checks; `Some(stateless)` (the newest era spoken) when the server could be
/// reached at all.
pub(crate) async fn run(
    report: &mut Report,
    target: &Target,
    server: &ServerArgs,
    settings: &Settings,
    timeout: Duration,
) -> Option<Connected> {
    let refused = Arc::new(AtomicUsize::new(0));
    let handler = || CheckHandler {
        elicitation: settings.elicitation,
        sampling_reply: settings.sampling_reply.clone(),
        refused: refused.clone(),
    };
    let options = match server.options(target, handler()) {
        // Every log message the server has, so that each is checked against the schema.
        Ok(options) => options.timeout(timeout).probe_timeout(timeout).log_level(LoggingLevel::Debug),
        Err(message) => {
            report.add("lifecycle", "options", Outcome::Fail, message);
            return None;
        }
    };
    let started = Instant::now();
    let observed = Observed::default();
    let first = match Client::connect_with(target.clone(), observed.attach(options.clone())).await {
        Ok(client) => client,
        Err(err) => {
            report.add_timed("lifecycle", "connect", Outcome::Fail, err.to_string(), started.elapsed());
            return None;
        }
    };
    let newest = first.protocol_version();
    let era =
        if first.era() == Era::Stateless { "stateless, after server/discover" } else { "a session, after initialize" };
    report.add_timed("lifecycle", "connect", Outcome::Pass, format!("speaks {newest} ({era})"), started.elapsed());
    let mut connected = Connected {
        stateless: newest.era() == Era::Stateless,
        info: first.server_info(),
        revisions: first.discover_result().map(|discover| discover.supported_versions.clone()).unwrap_or_default(),
    };
    let mut eras = vec![(first.clone(), observed)];
    if server.protocol_version().is_none() {
        if let Some(discover) = first.discover_result() {
            // A dual-era server may list only 2026-07-28 in `server/discover` and negotiate
            // 2025 revisions through `initialize`: the newest one it lists, or the newest there is.
            let listed = discover
                .supported_versions
                .iter()
                .filter_map(|version| ProtocolVersion::parse(version))
                .filter(|version| version.era() == Era::Session)
                .max();
            let version = listed.unwrap_or(ProtocolVersion::LATEST_SESSION);
            let observed = Observed::default();
            let forced = observed.attach(options.clone().protocol_version(version));
            match Client::connect_with(target.clone(), forced).await {
                Ok(client) => {
                    report.add("lifecycle", format!("{version} session"), Outcome::Pass, "initialize answered");
                    eras.push((client, observed));
                }
                Err(err) if listed.is_some() => report.add(
                    "lifecycle",
                    format!("{version} session"),
                    Outcome::Fail,
                    format!("server/discover lists {version}, but: {err}"),
                ),
                Err(err) => report.add("lifecycle", "2025 sessions", Outcome::Skip, format!("not served: {err}")),
            }
        } else {
            report.add("lifecycle", "2026-07-28", Outcome::Skip, "not claimed: server/discover was not answered");
        }
    }
    for (client, observed) in &eras {
        let spoken = client.protocol_version().as_str().to_owned();
        if !connected.revisions.contains(&spoken) {
            connected.revisions.push(spoken);
        }
        era_checks(report, client, settings, timeout, &refused).await;
        let (anomalies, total) = client.anomalies();
        let section = section(client);
        observed.report(report, &section, client.protocol_version());
        if total == 0 {
            report.add(&section, "every message is JSON-RPC", Outcome::Pass, "");
        }
        let mut seen: Vec<(String, usize)> = Vec::new();
        for anomaly in anomalies {
            match seen.iter_mut().find(|(known, _)| *known == anomaly) {
                Some((_, times)) => *times += 1,
                None => seen.push((anomaly, 1)),
            }
        }
        for (anomaly, times) in seen {
            let detail = if times > 1 { format!("{anomaly} ({times} times)") } else { anomaly };
            report.add(&section, "wire", Outcome::Fail, detail);
        }
        if total > KEPT_ANOMALIES {
            report.add(&section, "wire", Outcome::Fail, format!("and {} more", total - KEPT_ANOMALIES));
        }
        client.close().await;
    }
    Some(connected)
}

/// The client keeps the first hundred anomalies.
const KEPT_ANOMALIES: usize = 100;

fn section(client: &Client) -> String {
    let version = client.protocol_version();
    if client.era() == Era::Stateless { format!("{version} (stateless)") } else { format!("{version} (session)") }
}

/// The checks of one era.
async fn era_checks(
    report: &mut Report,
    client: &Client,
    settings: &Settings,
    timeout: Duration,
    refused: &AtomicUsize,
) {
    let section = section(client);
    let (method, definition) =
        if client.era() == Era::Stateless { ("server/discover", "DiscoverResult") } else { ("ping", "EmptyResult") };
    let lifecycle = Probe { name: method.to_owned(), method, params: json!({}), definition, refusal: Outcome::Fail };
    probe(report, &section, client, lifecycle, timeout).await;
    let capabilities = client.capabilities().clone();
    if capabilities.tools.is_some() {
        let tools = listing(report, &section, client, "tools/list", "tools").await;
        if let Some(tools) = tools {
            let kept: Vec<String> = match client.list_tools().await {
                Ok(kept) => kept.into_iter().map(|tool| tool.name).collect(),
                Err(_) => Vec::new(),
            };
            for tool in &tools {
                tool_checks(report, &section, client, tool, &kept, settings, timeout, refused).await;
            }
        }
    }
    if capabilities.prompts.is_some()
        && let Some(prompts) = listing(report, &section, client, "prompts/list", "prompts").await
    {
        for prompt in prompts.iter().take(MAX_FETCHED) {
            let name = prompt.get("name").and_then(Value::as_str).unwrap_or_default();
            let mut arguments = serde_json::Map::new();
            for argument in prompt.get("arguments").and_then(Value::as_array).into_iter().flatten() {
                if argument.get("required") == Some(&Value::Bool(true))
                    && let Some(argument) = argument.get("name").and_then(Value::as_str)
                {
                    arguments.insert(argument.to_owned(), json!("wharf-check"));
                }
            }
            let params = json!({"name": name, "arguments": arguments});
            let rendering = Probe::fetch(format!("prompts/get {name}"), "prompts/get", params, "GetPromptResult");
            probe(report, &section, client, rendering, timeout).await;
        }
        if capabilities.completions.is_some()
            && let Some((prompt, argument)) = prompts.iter().find_map(|prompt| {
                let argument = prompt.get("arguments")?.as_array()?.first()?.get("name")?.as_str()?;
                Some((prompt.get("name")?.as_str()?, argument))
            })
        {
            let params =
                json!({"ref": {"type": "ref/prompt", "name": prompt}, "argument": {"name": argument, "value": ""}});
            let method = "completion/complete";
            let completion =
                Probe { name: method.to_owned(), method, params, definition: "CompleteResult", refusal: Outcome::Fail };
            probe(report, &section, client, completion, timeout).await;
        }
    }
    if capabilities.resources.is_some() {
        if let Some(resources) = listing(report, &section, client, "resources/list", "resources").await {
            for resource in resources.iter().take(MAX_FETCHED) {
                let uri = resource.get("uri").and_then(Value::as_str).unwrap_or_default();
                let params = json!({"uri": uri});
                let reading =
                    Probe::fetch(format!("resources/read {uri}"), "resources/read", params, "ReadResourceResult");
                probe(report, &section, client, reading, timeout).await;
            }
        }
        listing(report, &section, client, "resources/templates/list", "resourceTemplates").await;
    }
}

/// One request whose result must match a definition of the revision's schema.
struct Probe {
    /// How the report names it.
    name: String,
    method: &'static str,
    params: Value,
    definition: &'static str,
    /// The outcome of a JSON-RPC error.
    refusal: Outcome,
}

impl Probe {
    /// Reading an item (a prompt, a resource): a refusal is only a warning, as the check cannot
    /// know what arguments or state it needs.
    fn fetch(name: String, method: &'static str, params: Value, definition: &'static str) -> Probe {
        Probe { name, method, params, definition, refusal: Outcome::Warn }
    }
}

/// Sends the probe's request and reports how its answer matched the schema, timed.
async fn probe(report: &mut Report, section: &str, client: &Client, probe: Probe, timeout: Duration) {
    let started = Instant::now();
    let answer = client.request_with(probe.method, probe.params, &RequestOptions::default().timeout(timeout)).await;
    let took = started.elapsed();
    let (outcome, detail) = match answer {
        Ok(result) => conformance(client.protocol_version(), probe.definition, &result),
        Err(err) if err.kind() == ErrorKind::Rpc => (probe.refusal, err.to_string()),
        Err(err) => (Outcome::Fail, err.to_string()),
    };
    report.add_timed(section, probe.name, outcome, detail, took);
}

fn conformance(version: ProtocolVersion, definition: &str, value: &Value) -> (Outcome, String) {
    match schemas::conforms(version, definition, value) {
        Ok(true) => (Outcome::Pass, format!("a valid {definition}")),
        Ok(false) => (Outcome::Pass, String::new()),
        Err(why) => (Outcome::Fail, why),
    }
}

/// Every page of a listing, each checked against the schema; the items, or `None` when the
/// listing failed.
async fn listing(report: &mut Report, section: &str, client: &Client, method: &str, key: &str) -> Option<Vec<Value>> {
    let definition = wharf::protocol::result_definition(method).unwrap_or("Result");
    let mut items = Vec::new();
    let mut cursor: Option<String> = None;
    let mut problems = Vec::new();
    let started = Instant::now();
    for page in 0..MAX_PAGES {
        let params = match &cursor {
            Some(cursor) => json!({"cursor": cursor}),
            None => json!({}),
        };
        let result = match client.request(method, params).await {
            Ok(result) => result,
            Err(err) => {
                report.add_timed(
                    section,
                    method,
                    Outcome::Fail,
                    format!("page {}: {err}", page + 1),
                    started.elapsed(),
                );
                return None;
            }
        };
        if let Err(why) = schemas::conforms(client.protocol_version(), definition, &result) {
            problems.push(format!("page {}: {why}", page + 1));
        }
        items.extend(result.get(key).and_then(Value::as_array).cloned().unwrap_or_default());
        match result.get("nextCursor").and_then(Value::as_str) {
            Some(next) if Some(next) != cursor.as_deref() => cursor = Some(next.to_owned()),
            Some(next) => {
                problems.push(format!("the cursor `{next}` came twice"));
                break;
            }
            None => break,
        }
    }
    let names: Vec<&str> = items
        .iter()
        .filter_map(|item| item.get("name").or_else(|| item.get("uri")).or_else(|| item.get("uriTemplate")))
        .filter_map(Value::as_str)
        .collect();
    let mut sorted = names.clone();
    sorted.sort_unstable();
    if let Some(twice) = sorted.windows(2).find(|pair| pair[0] == pair[1]) {
        problems.push(format!("`{}` is listed twice", twice[0]));
    }
    let took = started.elapsed();
    if problems.is_empty() {
        report.add_timed(section, method, Outcome::Pass, format!("{} {key}, valid {definition}s", items.len()), took);
    } else {
        report.add_timed(section, method, Outcome::Fail, problems.join("; "), took);
    }
    Some(items)
}

/// A tool's schemas, then calls with valid and invalid arguments.
#[allow(clippy::too_many_arguments, reason = "one tool's checks, described in full")]
async fn tool_checks(
    report: &mut Report,
    section: &str,
    client: &Client,
    tool: &Value,
    kept: &[String],
    settings: &Settings,
    timeout: Duration,
    refused: &AtomicUsize,
) {
    let name = tool.get("name").and_then(Value::as_str).unwrap_or_default();
    let input = tool.get("inputSchema").cloned().unwrap_or(Value::Null);
    let mut problems = Vec::new();
    if input.get("type").and_then(Value::as_str) != Some("object") {
        problems.push("inputSchema's type is not \"object\"".to_owned());
    }
    if let Err(why) = schemas::is_json_schema(&input) {
        problems.push(format!("inputSchema is not JSON Schema: {why}"));
    }
    let output = tool.get("outputSchema").cloned();
    if let Some(output) = &output
        && let Err(why) = schemas::is_json_schema(output)
    {
        problems.push(format!("outputSchema is not JSON Schema: {why}"));
    }
    if !kept.iter().any(|kept| kept == name) {
        problems.push("its x-mcp-header marks are invalid, so clients must not call it".to_owned());
    }
    let schemas_valid = problems.is_empty();
    if schemas_valid {
        report.add(section, format!("{name}: schemas"), Outcome::Pass, "valid JSON Schema");
    } else {
        report.add(section, format!("{name}: schemas"), Outcome::Fail, problems.join("; "));
    }
    let ui = apps::tool_ui(tool);
    let has_view = matches!(&ui, Some(Ok(meta)) if meta.resource_uri.is_some());
    if let Some(ui) = ui {
        apps::view_checks(report, section, client, name, ui, timeout).await;
    }
    repeat_check(report, section, name, tool);
    if settings.no_calls {
        return;
    }
    if !schemas_valid {
        report.add(section, format!("{name}: call"), Outcome::Skip, "its schemas are not valid");
        return;
    }
    let destructive = tool.pointer("/annotations/destructiveHint") == Some(&Value::Bool(true))
        && tool.pointer("/annotations/readOnlyHint") != Some(&Value::Bool(true));
    let call_valid = !destructive || settings.include_destructive;
    let probe = !destructive || settings.probe_destructive;
    if !call_valid {
        report.add(section, format!("{name}: call"), Outcome::Skip, "destructive (--include-destructive calls it)");
    }
    if !probe {
        report.add(
            section,
            format!("{name}: constraints"),
            Outcome::Skip,
            "destructive (--probe-destructive probes it)",
        );
        if !call_valid {
            return;
        }
    }
    let sample = settings.sample_arguments.get(name).cloned();
    let made = match arguments_for(&input, sample.clone(), timeout).await {
        Ok(made) => made,
        Err(why) => {
            report.add(section, format!("{name}: call"), Outcome::Skip, why.clone());
            report.add(section, format!("{name}: constraints"), Outcome::Skip, why);
            return;
        }
    };
    if let (Some(_), Err(why)) = (&sample, &made.valid) {
        report.add(section, format!("{name}: sample arguments"), Outcome::Warn, why.clone());
    }
    if call_valid {
        match &made.valid {
            Err(why) => report.add(section, format!("{name}: call"), Outcome::Skip, why.clone()),
            Ok(arguments) => {
                let refused_before = refused.load(Ordering::Relaxed);
                let started = Instant::now();
                let answer = call(client, name, arguments, settings, timeout).await;
                let took = started.elapsed();
                let was_refused = refused.load(Ordering::Relaxed) > refused_before;
                let (outcome, detail) = match answer {
                    Ok(result)
                        if has_view
                            && result.get("isError") != Some(&Value::Bool(true))
                            && apps::gives_no_text(&result) =>
                    {
                        (
                            Outcome::Fail,
                            "the tool has a view but its result gives the model no text: hosts without views show only \
                         `content` (SEP-1865)"
                                .to_owned(),
                        )
                    }
                    Ok(result) => valid_call_outcome(client.protocol_version(), &result, output.as_ref()),
                    Err(err) if err.kind() == ErrorKind::Rpc && was_refused => (
                        Outcome::Warn,
                        format!(
                            "{err} (wharf check had declined the server's question: see --elicitation, --sampling-reply)"
                        ),
                    ),
                    Err(err) => (Outcome::Fail, format!("{arguments}: {err}")),
                };
                report.add_timed(section, format!("{name}: call"), outcome, detail, took);
            }
        }
    }
    if !probe {
        return;
    }
    if made.probes.is_empty() {
        // Nothing to probe constraint by constraint: one set of arguments the schema refuses.
        invalid_call(report, section, client, name, made.invalid, settings, timeout).await;
        return;
    }
    probe_calls(report, section, client, name, &made.probes, settings, timeout).await;
}

/// For a tool marked destructive: whether a call repeated by a client that lost its answer
/// runs twice. A warning unless the tool is marked `idempotentHint` or takes idempotency keys
/// (Wharf's `_meta["wharf/idempotency"]`).
fn repeat_check(report: &mut Report, section: &str, name: &str, tool: &Value) {
    let hint = |hint: &str| tool.pointer(&format!("/annotations/{hint}")) == Some(&Value::Bool(true));
    if !hint("destructiveHint") || hint("readOnlyHint") {
        return;
    }
    let check = format!("{name}: repeated calls");
    if hint("idempotentHint") {
        report.add(section, check, Outcome::Pass, "destructive, and marked idempotentHint");
    } else if let Some(keys) = tool.pointer("/_meta/wharf~1idempotency") {
        report.add(section, check, Outcome::Pass, format!("destructive, and takes idempotency keys ({keys})"));
    } else {
        report.add(
            section,
            check,
            Outcome::Warn,
            "destructive, yet neither idempotentHint nor idempotency keys: a client that repeats a call whose answer \
             was lost (a timeout, a dropped connection) makes it take effect twice; see Wharf's `idempotency`",
        );
    }
}

/// What a tool is called with: valid arguments (or why there are none), invalid ones, and
/// probes of each constraint.
struct Made {
    valid: Result<Value, String>,
    invalid: Option<(Value, String)>,
    probes: Vec<ConstraintProbe>,
}

/// A tool's arguments, made from its schema on a blocking thread and given up on at `timeout`:
/// the work is capped, but the schema is the server's, and the check's deadline holds for its
/// own work too. `sample`, from `--args-file`, stands for the valid arguments when given (and
/// is said to be wrong when the schema refuses it).
async fn arguments_for(input: &Value, sample: Option<Value>, timeout: Duration) -> Result<Made, String> {
    let input = input.clone();
    let making = tokio::task::spawn_blocking(move || {
        let valid = match sample {
            Some(sample) => match schemas::matches_schema(&input, &sample) {
                Ok(()) => Ok(sample),
                Err(why) => Err(format!("the sample arguments from --args-file do not match the schema: {why}")),
            },
            None => generate::valid_arguments(&input),
        };
        let probes = valid.as_ref().map(|valid| probes::probes(&input, valid)).unwrap_or_default();
        Made { invalid: generate::invalid_arguments(&input), valid, probes }
    });
    match tokio::time::timeout(timeout, making).await {
        Ok(Ok(made)) => Ok(made),
        Ok(Err(failed)) => Err(format!("making arguments from its schema failed: {failed}")),
        Err(_) => Err(format!("making arguments from its schema took longer than the timeout ({timeout:?})")),
    }
}

/// One call with arguments the schema refuses: a refusal passes, acceptance is a warning.
async fn invalid_call(
    report: &mut Report,
    section: &str,
    client: &Client,
    name: &str,
    invalid: Option<(Value, String)>,
    settings: &Settings,
    timeout: Duration,
) {
    let Some((arguments, why)) = invalid else {
        report.add(section, format!("{name}: invalid arguments"), Outcome::Skip, "its schema accepts anything");
        return;
    };
    let started = Instant::now();
    let answer = call(client, name, &arguments, settings, timeout).await;
    let took = started.elapsed();
    let (outcome, detail) = match answer {
        Ok(result) if result.get("isError") == Some(&Value::Bool(true)) => {
            (Outcome::Pass, format!("{why}: a tool error (isError)"))
        }
        Ok(_) => (Outcome::Warn, format!("{why}: accepted ({arguments})")),
        Err(err) if err.code() == Some(ErrorCode::INVALID_PARAMS) => (Outcome::Pass, format!("{why}: -32602")),
        Err(err) if err.kind() == ErrorKind::Rpc => {
            (Outcome::Warn, format!("{why}: {err}; -32602 or a tool error expected"))
        }
        Err(err) => (Outcome::Fail, format!("{why}: {err}")),
    };
    report.add_timed(section, format!("{name}: invalid arguments"), outcome, detail, took);
}

/// A probe as the summary lists it: `a` and its constraint, or the constraint alone where it
/// names its member (`required`, `additionalProperties`).
fn probe_name(probe: &ConstraintProbe) -> String {
    if probe.constraint.starts_with("required") || probe.constraint.starts_with("additionalProperties") {
        probe.constraint.clone()
    } else {
        format!("`{}` {}", probe.argument, probe.constraint)
    }
}

/// Calls the tool once per probe: each must be refused (-32602 or a tool error). A tool that
/// runs with a value its schema forbids fails, naming the argument and the constraint (a
/// `format`, which JSON Schema leaves to the validator, only warns); the refused ones are
/// counted in one line.
async fn probe_calls(
    report: &mut Report,
    section: &str,
    client: &Client,
    name: &str,
    probes: &[ConstraintProbe],
    settings: &Settings,
    timeout: Duration,
) {
    let started = Instant::now();
    let mut refused = Vec::new();
    for probe in probes {
        let answer = call(client, name, &probe.arguments, settings, timeout).await;
        let check = format!("{name}: {} {}", probe.argument, probe.constraint);
        let value = &probe.shown;
        match answer {
            Ok(result) if result.get("isError") == Some(&Value::Bool(true)) => refused.push(probe_name(probe)),
            Err(err) if err.code() == Some(ErrorCode::INVALID_PARAMS) => refused.push(probe_name(probe)),
            Ok(_) if probe.format_only => report.add(
                section,
                check,
                Outcome::Warn,
                format!(
                    "`{}` = {value} is not {}, yet the tool ran (formats are asserted at the validator's choice)",
                    probe.argument, probe.constraint
                ),
            ),
            Ok(_) => report.add(
                section,
                check,
                Outcome::Fail,
                format!("`{}` = {value} breaks `{}`, yet the tool ran with it", probe.argument, probe.constraint),
            ),
            Err(err) if err.kind() == ErrorKind::Rpc => report.add(
                section,
                check,
                Outcome::Warn,
                format!("`{}` = {value}: {err}; -32602 or a tool error expected", probe.argument),
            ),
            Err(err) => report.add(section, check, Outcome::Fail, format!("`{}` = {value}: {err}", probe.argument)),
        }
    }
    // The ones refused, in one line; each one accepted has a line of its own above.
    if !refused.is_empty() {
        let detail = format!("{} of {} probes refused ({})", refused.len(), probes.len(), refused.join(", "));
        let detail = crate::render::cut(&detail, 400).to_string();
        report.add_timed(section, format!("{name}: constraints"), Outcome::Pass, detail, started.elapsed());
    }
}

async fn call(
    client: &Client,
    name: &str,
    arguments: &Value,
    settings: &Settings,
    timeout: Duration,
) -> Result<Value, ClientError> {
    let params = json!({"name": name, "arguments": arguments});
    // A progress token, so that a server that reports progress does, and its notifications
    // are checked too; each progress notification extends the deadline, up to --max-timeout.
    let (progress, _listening) = tokio::sync::mpsc::unbounded_channel();
    let options =
        RequestOptions::default().timeout(timeout).progress(progress).progress_extends_timeout(settings.max_timeout);
    client.request_with("tools/call", params, &options).await
}

/// A call with valid arguments: a result that matches the schema, and the tool's output
/// schema when it has one; a tool error is allowed (the tool may need what the check cannot
/// give) but said.
fn valid_call_outcome(version: ProtocolVersion, result: &Value, output: Option<&Value>) -> (Outcome, String) {
    if let Err(why) = schemas::conforms(version, "CallToolResult", result) {
        return (Outcome::Fail, why);
    }
    if result.get("isError") == Some(&Value::Bool(true)) {
        let text = result.pointer("/content/0/text").and_then(Value::as_str).unwrap_or("");
        return (Outcome::Pass, format!("the tool reported an error: {}", crate::render::cut(text, 80)));
    }
    if let Some(output) = output {
        match result.get("structuredContent") {
            None => {
                return (
                    Outcome::Fail,
                    "the tool has an outputSchema but the result has no structuredContent".to_owned(),
                );
            }
            Some(structured) => {
                if let Err(why) = schemas::matches_schema(output, structured) {
                    return (Outcome::Fail, format!("structuredContent does not match the outputSchema: {why}"));
                }
            }
        }
    }
    (Outcome::Pass, "a valid CallToolResult".to_owned())
}
