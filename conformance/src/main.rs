//! `conformance-server --listen 127.0.0.1:PORT [--redis URL]`: every fixture the official MCP
//! conformance suite expects, served over Streamable HTTP at `/mcp`, written the way a Wharf
//! user would. With `--redis`, it is one instance of a fleet: sessions and tasks in that Redis,
//! `requestState` sealed with the hex key in `CONFORMANCE_STATE_KEY`.

mod fixtures;
mod skills;
mod stateless;
mod tasks;

use std::net::SocketAddr;
use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (address, redis_url) = match args.as_slice() {
        [flag, address] if flag == "--listen" => (address.parse::<SocketAddr>(), None),
        [flag, address, redis, url] if flag == "--listen" && redis == "--redis" => {
            (address.parse::<SocketAddr>(), Some(url.clone()))
        }
        [] => ("127.0.0.1:3000".parse(), None),
        _ => {
            eprintln!("usage: conformance-server [--listen ADDRESS:PORT [--redis URL]]");
            return ExitCode::from(2);
        }
    };
    let Ok(address) = address else {
        eprintln!("conformance-server: not an address like 127.0.0.1:3000");
        return ExitCode::from(2);
    };
    tracing_subscriber::fmt().with_writer(std::io::stderr).with_max_level(tracing::Level::WARN).with_ansi(false).init();
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(runtime) => runtime,
        Err(err) => {
            eprintln!("conformance-server: no runtime: {err}");
            return ExitCode::FAILURE;
        }
    };
    let fleet = match redis_url.map(|url| fleet(&runtime, &url)).transpose() {
        Ok(fleet) => fleet,
        Err(err) => {
            eprintln!("conformance-server: {err}");
            return ExitCode::from(2);
        }
    };
    let server = match fixtures::server(fleet.as_ref().map(|(redis, key)| (redis, key.as_slice()))) {
        Ok(server) => server,
        Err(err) => {
            eprintln!("conformance-server: {err}");
            return ExitCode::FAILURE;
        }
    };
    eprintln!("conformance-server: listening on http://{address}/mcp");
    // Every answer streams, as the official SDKs' servers do by default: the suite's stream
    // checks then have events to look at.
    let mut options = wharf::HttpOptions::default().always_stream(true);
    if let Some((redis, _)) = &fleet {
        options = options.session_store(redis.session_store());
    }
    let served = runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind(address).await.map_err(|err| err.to_string())?;
        wharf::serve_http(listener, server).options(options).await.map_err(|err| err.to_string())
    });
    match served {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("conformance-server: {err}");
            ExitCode::FAILURE
        }
    }
}

/// What one instance of a fleet shares with the others: the Redis at `url`, and the
/// `requestState` key from `CONFORMANCE_STATE_KEY` (hex).
fn fleet(runtime: &tokio::runtime::Runtime, url: &str) -> Result<(wharf::redis::Redis, Vec<u8>), String> {
    let hex = std::env::var("CONFORMANCE_STATE_KEY").map_err(|_| "--redis needs CONFORMANCE_STATE_KEY (hex)")?;
    let key = (0..hex.len())
        .step_by(2)
        .map(|at| hex.get(at..at + 2).and_then(|pair| u8::from_str_radix(pair, 16).ok()))
        .collect::<Option<Vec<u8>>>()
        .ok_or("CONFORMANCE_STATE_KEY is not hex")?;
    let _entered = runtime.enter();
    let redis = wharf::redis::Redis::connect(url).map_err(|err| err.to_string())?.prefix("conformance");
    Ok((redis, key))
}
