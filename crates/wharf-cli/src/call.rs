//! `wharf call SERVER TOOL key=value...`, `wharf read SERVER URI` and `wharf prompt SERVER NAME
//! key=value...`: one request, its result printed for a person (or as JSON), the server's
//! progress as a bar on a terminal and its log messages on stderr. What the server wrote is
//! shown with its control characters escaped; only the tool's own text may go out raw.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use tokio::sync::{mpsc, oneshot};
use wharf::client::{Client, ClientError, ErrorKind, Notifications, RequestOptions};
use wharf::protocol::{ProgressParams, ServerNotification};

use crate::answers::{AskingAtTerminal, Declining};
use crate::auth_args::interactive;
use crate::exit;
use crate::render::{self, Saver, ToolText};
use crate::server_args::{ServerArgs, block_on_unless_stopped, runtime, take_target};
use crate::suggest;
use crate::terminal_text::escaped;
use crate::typed_args;

#[derive(Debug, Args)]
pub(crate) struct CallArgs {
    /// [URL] TOOL [KEY=VALUE]...: values are typed by the tool's input schema (count=3 is a
    /// number when `count` is an integer).
    #[arg(value_name = "[URL] TOOL [KEY=VALUE]", required = true)]
    words: Vec<String>,
    /// The arguments as a JSON object; KEY=VALUE words override its members. (`--args`, the
    /// name `wharf bench` once used, works too.)
    #[arg(long, alias = "args", value_name = "JSON")]
    args_json: Option<String>,
    /// Send KEY as the call's idempotency key (`_meta["wharf/idempotencyKey"]`): a server that
    /// honours it answers a repeat of the call with the first one's result.
    #[arg(long, value_name = "KEY")]
    idempotency_key: Option<String>,
    #[command(flatten)]
    output: OutputArgs,
    #[command(flatten)]
    server: ServerArgs,
}

#[derive(Debug, Args)]
pub(crate) struct ReadArgs {
    /// [URL] URI: the resource to read.
    #[arg(value_name = "[URL] URI", required = true)]
    words: Vec<String>,
    #[command(flatten)]
    output: OutputArgs,
    #[command(flatten)]
    server: ServerArgs,
}

#[derive(Debug, Args)]
pub(crate) struct PromptArgs {
    /// [URL] NAME [KEY=VALUE]...: the prompt and its arguments.
    #[arg(value_name = "[URL] NAME [KEY=VALUE]", required = true)]
    words: Vec<String>,
    #[command(flatten)]
    output: OutputArgs,
    #[command(flatten)]
    server: ServerArgs,
}

#[derive(Debug, Args)]
struct OutputArgs {
    /// Print the whole result as JSON instead of its content.
    #[arg(long)]
    json: bool,
    /// Where images, audio and binary resources are saved (each to a new file).
    #[arg(long, value_name = "DIR", default_value = ".")]
    save_dir: PathBuf,
    /// Print the tool's text as the server wrote it, control characters and all. It is printed
    /// so when stdout is not a terminal; on one, they are escaped (`\u{1b}`) unless this is
    /// given, so that a server cannot drive the terminal. Names and log messages are escaped
    /// always.
    #[arg(long)]
    raw: bool,
}

impl OutputArgs {
    fn tool_text(&self) -> ToolText {
        ToolText::for_stdout(self.raw)
    }
}

pub(crate) fn call(mut args: CallArgs) -> ExitCode {
    let target = match take_target(&mut args.words, &args.server) {
        Ok(target) => target,
        Err(message) => return exit::usage("call", &message),
    };
    let Some((tool, words)) = args.words.split_first() else {
        return exit::usage("call", "name the tool to call");
    };
    let (tool, words) = (tool.clone(), words.to_vec());
    run("call", &args.server, target, |client| async move {
        let tools = client.list_tools().await?;
        // A tool left out of the list may still be callable (a server may list only what the
        // caller's scopes allow): it is called anyway, its arguments untyped, and the server
        // has the last word.
        let described = tools.iter().find(|described| described.name == tool);
        let known: Vec<&str> = tools.iter().map(|tool| tool.name.as_str()).collect();
        let suggestion = suggest::closest(&tool, known.iter().copied());
        if described.is_none() {
            let going_on = match suggestion {
                Some(name) => format!("did you mean `{}`? Calling `{tool}` anyway", escaped(name)),
                None => "calling it anyway".to_owned(),
            };
            eprintln!(
                "wharf call: `{}` is not among the tools the server lists ({}); {going_on}",
                escaped(&tool),
                escaped(&known.join(", "))
            );
        }
        let schema = described.map(|described| &described.input_schema);
        let arguments = match typed_args::arguments(&words, args.args_json.as_deref(), schema) {
            Ok(arguments) => arguments,
            Err(message) => return Ok(exit::usage("call", &message)),
        };
        let (progress, steps) = mpsc::unbounded_channel();
        let bar = tokio::spawn(progress_bar(steps, std::io::stderr().is_terminal()));
        let mut options = RequestOptions::default().progress(progress);
        if let Some(key) = &args.idempotency_key {
            let mut meta = serde_json::Map::new();
            meta.insert(wharf::idempotency::IDEMPOTENCY_KEY_META.to_owned(), serde_json::Value::from(key.as_str()));
            options = options.meta(meta);
        }
        let result = client.call_tool_with(&tool, arguments, &options).await;
        drop(options);
        let _ = bar.await;
        let result = match result {
            // The server refused a name it does not list: its answer, then the likely one.
            Err(err) if described.is_none() && err.kind() == ErrorKind::Rpc => {
                let code = exit::failure("call", &err);
                if let Some(name) = suggestion {
                    eprintln!(
                        "wharf call: the server has no tool `{}`; did you mean `{}`?",
                        escaped(&tool),
                        escaped(name)
                    );
                }
                return Ok(code);
            }
            result => result?,
        };
        let mut out = std::io::stdout().lock();
        if args.output.json {
            let _ = render::json(&mut out, &result);
        } else {
            let mut saver = Saver::new(&args.output.save_dir, &tool);
            let _ = render::content(&mut out, &result.content, &mut saver, args.output.tool_text());
            if let Some(structured) = &result.structured_content {
                let _ = writeln!(out, "structured content:");
                let _ = render::json(&mut out, structured);
            }
        }
        if result.is_error == Some(true) {
            eprintln!("wharf call: the tool `{tool}` reported an error");
            return Ok(ExitCode::from(exit::TOOL_ERROR));
        }
        Ok(ExitCode::SUCCESS)
    })
}

pub(crate) fn read(mut args: ReadArgs) -> ExitCode {
    let target = match take_target(&mut args.words, &args.server) {
        Ok(target) => target,
        Err(message) => return exit::usage("read", &message),
    };
    let [uri] = args.words.as_slice() else {
        return exit::usage("read", "name one resource URI");
    };
    let uri = uri.clone();
    run("read", &args.server, target, |client| async move {
        let result = client.read_resource(&uri).await?;
        let mut out = std::io::stdout().lock();
        if args.output.json {
            let _ = render::json(&mut out, &result);
        } else {
            let mut saver = Saver::new(&args.output.save_dir, "resource");
            for contents in &result.contents {
                let _ = render::resource(&mut out, contents, &mut saver, args.output.tool_text());
            }
        }
        Ok(ExitCode::SUCCESS)
    })
}

pub(crate) fn prompt(mut args: PromptArgs) -> ExitCode {
    let target = match take_target(&mut args.words, &args.server) {
        Ok(target) => target,
        Err(message) => return exit::usage("prompt", &message),
    };
    let Some((name, words)) = args.words.split_first() else {
        return exit::usage("prompt", "name the prompt");
    };
    let name = name.clone();
    let arguments = match typed_args::string_arguments(words) {
        Ok(arguments) => arguments,
        Err(message) => return exit::usage("prompt", &message),
    };
    run("prompt", &args.server, target, |client| async move {
        let result = match client.get_prompt(&name, arguments).await {
            Err(err) if err.kind() == ErrorKind::Rpc => return Ok(refused_prompt(&client, &name, &err).await),
            result => result?,
        };
        let mut out = std::io::stdout().lock();
        if args.output.json {
            let _ = render::json(&mut out, &result);
            return Ok(ExitCode::SUCCESS);
        }
        let mut saver = Saver::new(&args.output.save_dir, &name);
        for message in &result.messages {
            let role = serde_json::to_value(message.role).ok().and_then(|role| role.as_str().map(str::to_owned));
            let _ = writeln!(out, "[{}]", role.unwrap_or_default());
            let content = std::slice::from_ref(&message.content);
            let _ = render::content(&mut out, content, &mut saver, args.output.tool_text());
        }
        Ok(ExitCode::SUCCESS)
    })
}

/// Reports the server's refusal of the prompt `name`, then, when the server does not list a
/// prompt of that name, the ones it lists and the likely one. They are listed only now, so that
/// a prompt that exists costs no extra request.
async fn refused_prompt(client: &Client, name: &str, refusal: &ClientError) -> ExitCode {
    let code = exit::failure("prompt", refusal);
    if let Ok(prompts) = client.list_prompts().await
        && !prompts.iter().any(|prompt| prompt.name == name)
    {
        let known: Vec<&str> = prompts.iter().map(|prompt| prompt.name.as_str()).collect();
        eprintln!(
            "wharf prompt: `{}` is not among the prompts the server lists ({}){}",
            escaped(name),
            escaped(&known.join(", ")),
            escaped(&suggest::did_you_mean(name, known.iter().copied()))
        );
    }
    code
}

/// Connects, runs `work` with the client while the server's log messages are printed as they
/// come, closes, and turns a failure into its exit code.
fn run<F, Fut>(command: &str, server: &ServerArgs, target: wharf::client::Target, work: F) -> ExitCode
where
    F: FnOnce(Client) -> Fut,
    Fut: Future<Output = Result<ExitCode, ClientError>>,
{
    // A person at the terminal answers the server's questions; elsewhere they are declined.
    let options = if interactive() {
        server.options(&target, AskingAtTerminal::default())
    } else {
        server.options(&target, Declining { tell: true })
    };
    let options = match options {
        Ok(options) => options,
        Err(message) => return exit::usage(command, &message),
    };
    block_on_unless_stopped(&runtime(), async {
        let client = match Client::connect_with(target, options).await {
            Ok(client) => client,
            Err(err) => return exit::failure(command, &err),
        };
        let (stop, stopped) = oneshot::channel();
        let printer = tokio::spawn(print_logs(client.notifications(), stopped));
        let outcome = work(client.clone()).await;
        let _ = stop.send(());
        let _ = printer.await;
        client.close().await;
        match outcome {
            Ok(code) => code,
            Err(err) => exit::failure(command, &err),
        }
    })
    .unwrap_or_else(|stopped| stopped.exit(command))
}

/// Prints the server's log messages on stderr as they come, and those already received once
/// `stopped` fires.
async fn print_logs(mut notifications: Notifications, mut stopped: oneshot::Receiver<()>) {
    loop {
        tokio::select! {
            biased;
            next = notifications.next() => match next {
                Some(notification) => print_log(notification),
                None => return,
            },
            _ = &mut stopped => {
                while let Some(notification) = notifications.try_next() {
                    print_log(notification);
                }
                return;
            }
        }
    }
}

/// Prints one log message, over the progress line if one is drawn, its control characters
/// escaped.
fn print_log(notification: ServerNotification) {
    {
        if let ServerNotification::Message(message) = notification {
            let level = serde_json::to_value(message.level).ok().and_then(|level| level.as_str().map(str::to_owned));
            let data = match &message.data {
                serde_json::Value::String(text) => text.clone(),
                other => other.to_string(),
            };
            let clear = if std::io::stderr().is_terminal() { "\r\x1b[2K" } else { "" };
            let data = escaped(&data);
            match &message.logger {
                Some(logger) => eprintln!("{clear}[{}] {}: {data}", level.unwrap_or_default(), escaped(logger)),
                None => eprintln!("{clear}[{}] {data}", level.unwrap_or_default()),
            }
        }
    }
}

/// Draws the progress of a call on one line of a terminal, cleared at the end.
async fn progress_bar(mut steps: mpsc::UnboundedReceiver<ProgressParams>, draw: bool) {
    let mut drawn = false;
    while let Some(step) = steps.recv().await {
        if !draw {
            continue;
        }
        let line = match step.total.filter(|total| *total > 0.0) {
            Some(total) => {
                let filled = ((step.progress / total).clamp(0.0, 1.0) * 30.0).round() as usize;
                format!("[{}{}] {}/{}", "#".repeat(filled), " ".repeat(30 - filled), step.progress, total)
            }
            None => format!("[{}]", step.progress),
        };
        let message = step.message.map(|message| format!(" {}", escaped(&message))).unwrap_or_default();
        eprint!("\r\x1b[2K{line}{message}");
        drawn = true;
    }
    if drawn {
        eprint!("\r\x1b[2K");
    }
}
