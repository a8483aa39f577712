//! Logging for a server built with Wharf: one call installs a `tracing` subscriber that writes
//! to stderr (never stdout, which belongs to the protocol over stdio), its levels read from
//! `WHARF_LOG` or else `RUST_LOG`.
//!
//! Wharf itself only emits `tracing` events; without a subscriber they go nowhere. Call
//! [`init`] first thing in `main`:
//!
//! ```no_run
//! wharf::logging::init();
//! // WHARF_LOG=debug logs every request; WHARF_LOG=wharf_server=debug,info only Wharf's.
//! ```
//!
//! The filter is a list of `target=level` directives and at most one bare level for the rest
//! (`trace`, `debug`, `info`, `warn`, `error` or `off`), as `RUST_LOG` is usually written;
//! crate names are targets (`wharf_server`, `my_server`). A value that cannot be read is said
//! so on stderr, and the default is used instead. Programs with a subscriber of their own need
//! none of this: Wharf logs through whatever subscriber is installed.

use std::io::IsTerminal;
use std::str::FromStr;

use tracing_subscriber::Layer as _;
use tracing_subscriber::filter::Targets;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;

/// The variables read, in order: the first one set is used.
pub const VARIABLES: [&str; 2] = ["WHARF_LOG", "RUST_LOG"];

/// Installs a subscriber on stderr, filtered by `WHARF_LOG` or `RUST_LOG`, and by `info` when
/// neither is set. Does nothing if a subscriber is already installed.
pub fn init() {
    init_with_default("info");
}

/// [`init`] with another filter for when neither variable is set (`"warn"`, say).
pub fn init_with_default(default: &str) {
    let setting = VARIABLES.iter().find_map(|name| std::env::var(name).ok().map(|value| (*name, value)));
    let (filter, complaint) = filter(setting.as_ref().map(|(name, value)| (*name, value.as_str())), default);
    let stderr = std::io::stderr();
    // The filter belongs to the layer, so that the most verbose level it lets through is the
    // process's maximum: a disabled `debug!` then costs one comparison.
    let layer = tracing_subscriber::fmt::layer().with_writer(std::io::stderr).with_ansi(stderr.is_terminal());
    let installed = tracing_subscriber::registry().with(layer.with_filter(filter)).try_init();
    if let Some(complaint) = complaint
        && installed.is_ok()
    {
        tracing::warn!("{complaint}");
    }
}

/// The filter for `setting` (a variable's name and value), or for `default` when it is unset
/// or cannot be read; in that case also the complaint to log.
/// [`init_with_default`], with OpenTelemetry: spans (the MCP layer's, and the handlers' own at
/// INFO and above) also go to `telemetry`'s exporter, whatever the log filter lets through to
/// stderr.
#[cfg(feature = "otel")]
pub fn init_with_telemetry(default: &str, telemetry: &crate::otel::Telemetry) {
    let setting = VARIABLES.iter().find_map(|name| std::env::var(name).ok().map(|value| (*name, value)));
    let (filter, complaint) = filter(setting.as_ref().map(|(name, value)| (*name, value.as_str())), default);
    let stderr = std::io::stderr();
    let layer = tracing_subscriber::fmt::layer().with_writer(std::io::stderr).with_ansi(stderr.is_terminal());
    let spans = telemetry.tracing_layer().with_filter(tracing_subscriber::filter::LevelFilter::INFO);
    let installed = tracing_subscriber::registry().with(layer.with_filter(filter)).with(spans).try_init();
    if let Some(complaint) = complaint
        && installed.is_ok()
    {
        tracing::warn!("{complaint}");
    }
}

fn filter(setting: Option<(&str, &str)>, default: &str) -> (Targets, Option<String>) {
    let fallback = || Targets::from_str(default).unwrap_or_else(|_| Targets::new().with_default(tracing::Level::INFO));
    match setting {
        None => (fallback(), None),
        Some((_, value)) if value.trim().is_empty() => (fallback(), None),
        Some((name, value)) => match directives(value) {
            Ok(targets) => (targets, None),
            Err(err) => (
                fallback(),
                Some(format!(
                    "{name}={value:?} is not a log filter ({err}); logging at {default:?} instead. Write a level \
                     (trace, debug, info, warn, error, off), or target=level directives such as \
                     wharf_server=debug,info"
                )),
            ),
        },
    }
}

/// Reads `level` and `target=level` directives. A bare word that is no level is refused: as a
/// target name it would turn every other log off, which is never what a typo meant.
fn directives(value: &str) -> Result<Targets, String> {
    const LEVELS: [&str; 6] = ["trace", "debug", "info", "warn", "error", "off"];
    let is_level = |word: &str| LEVELS.iter().any(|level| level.eq_ignore_ascii_case(word.trim()));
    for directive in value.split(',').filter(|directive| !directive.trim().is_empty()) {
        let level = directive.split_once('=').map_or(directive, |(_, level)| level);
        if !is_level(level) {
            return Err(format!("`{}` is not a level", level.trim()));
        }
    }
    Targets::from_str(value.trim()).map_err(|err| err.to_string())
}

#[cfg(test)]
mod tests {
    use tracing::Level;
    use tracing_subscriber::filter::LevelFilter;

    use super::filter;

    #[test]
    fn a_level_or_directives_are_read_and_anything_else_is_named_and_replaced() {
        let (targets, complaint) = filter(Some(("WHARF_LOG", "debug")), "warn");
        assert!(complaint.is_none());
        assert!(targets.would_enable("my_server", &Level::DEBUG));
        let (targets, _) = filter(Some(("RUST_LOG", "wharf_server=debug,warn")), "info");
        assert!(targets.would_enable("wharf_server::transport", &Level::DEBUG));
        assert!(!targets.would_enable("my_server", &Level::INFO));
        let (targets, _) = filter(None, "warn");
        assert_eq!(targets.default_level(), Some(LevelFilter::WARN));
        for typo in ["loud", "debgu", "wharf_server=loud,info"] {
            let (targets, complaint) = filter(Some(("WHARF_LOG", typo)), "warn");
            let complaint = complaint.expect("an invalid filter is named");
            assert!(complaint.starts_with(&format!("WHARF_LOG={typo:?} is not a log filter")), "{complaint}");
            assert_eq!(targets.default_level(), Some(LevelFilter::WARN));
        }
    }
}
