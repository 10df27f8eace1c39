//! `crossbook`: the command-line entry point. Parses flags, loads the configuration, sets up logging and
//! dispatches to one module per command under [`cmd`]; everything else lives in the `crossbook-*` crates.
//!
//! Exit codes (contracts §11): 0 success, 2 bad usage, 1 anything else, with a one-line reason on stderr.

use std::{path::PathBuf, process::ExitCode};

use clap::{Args, CommandFactory as _, Parser, Subcommand};
use crossbook_server::config::Config;
use serde::Serialize;

use cmd::{
    backtest::BacktestArgs, export::ExportArgs, keys::KeysCommand, pairs::PairsCommand, serve::ServeArgs,
    simulate::SimulateArgs, tail::TailArgs,
};

mod cmd;

// Every book change allocates a few small, short-lived values on one thread and frees them on another; at a
// whole venue's rate glibc's allocator took about a third of the server's CPU, which mimalloc's per-thread
// pages cut (figures in docs/performance.md).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// A self-hosted prediction-market data service: records two venues' catalogs, order books and trades and
/// serves search, historical order books, arbitrage, whale tracking and webhooks over one JSON API.
///
/// Every flag also reads the environment variable CROSSBOOK_<FLAG> (e.g. CROSSBOOK_DATABASE_URL) and the
/// same key in the optional TOML file given with --config; flag beats variable beats file beats default.
/// Settings without a flag are listed in config.default.toml (and docs/configuration.md); a CROSSBOOK_ variable that names
/// no setting is ignored with a warning, while an unknown key in the file is an error.
/// The log filter is CROSSBOOK_LOG (or RUST_LOG), e.g. CROSSBOOK_LOG=debug or "info,crossbook_venues=debug".
#[derive(Parser, Debug)]
#[command(name = "crossbook", version, about, long_about)]
struct Cli {
    #[command(flatten)]
    global: GlobalArgs,
    #[command(subcommand)]
    command: Command,
}

#[derive(Args, Debug, Serialize, Default)]
struct GlobalArgs {
    /// Optional TOML configuration file (keys as in config.default.toml).
    #[arg(long, global = true, value_name = "FILE")]
    #[serde(skip)]
    config: Option<PathBuf>,
    /// Database: sqlite://PATH (default sqlite://./data/crossbook.db, created if absent) or postgres://...
    #[arg(long, global = true, value_name = "URL")]
    #[serde(skip_serializing_if = "Option::is_none")]
    database_url: Option<String>,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Run the API, the web dashboard (at /), ingestion, the arbitrage scanner and webhook delivery in one
    /// process.
    Serve(ServeArgs),
    /// Run both simulated venues alone on loopback and print their settings (TOML for --config).
    Simulate(SimulateArgs),
    /// Apply database migrations and exit (serve also applies them at start).
    Migrate,
    /// Manage API keys.
    #[command(subcommand)]
    Keys(KeysCommand),
    /// Manage the operator's arbitrage pairs: overrides (a venue_a market and a venue_b market that ask the same
    /// question, paired by the scanner whatever the automatic matchers say) and rejections (pairs the scanner
    /// must never scan, whichever matcher formed them).
    #[command(subcommand)]
    Pairs(PairsCommand),
    /// Write one market's UTC day of order books or trades to a CSV (gzip) or Parquet file, read from the
    /// database: the file GET /v1/export/books or /v1/export/trades serves.
    Export(ExportArgs),
    /// Run a cross-venue arbitrage backtest on the recorded books, straight from the database: the run
    /// POST /v1/backtests starts. Prints the report (JSON) and a summary.
    Backtest(BacktestArgs),
    /// Follow the live stream of a running server (order books, trades, venue status, whales, arbitrage),
    /// one line per message.
    Tail(TailArgs),
}

/// Flags of any command merged over the file and environment.
#[derive(Serialize)]
struct Overrides<'a> {
    #[serde(flatten)]
    global: &'a GlobalArgs,
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    serve: Option<&'a ServeArgs>,
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    simulate: Option<&'a SimulateArgs>,
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            // clap prints help/version with exit 0 and usage errors with exit 2.
            let _ = e.print();
            return ExitCode::from(if e.use_stderr() { 2 } else { 0 });
        }
    };
    // `tail` is a client of a server, not the service: it reads no configuration, which also keeps its
    // CROSSBOOK_KEY from being taken for an (unknown, hence rejected) service setting.
    let command = match cli.command {
        Command::Tail(args) => {
            if let Err(msg) = args.validate() {
                // Built first so that the usage line names `crossbook tail`, not `tail`.
                let mut cli = Cli::command();
                cli.build();
                let kind = clap::error::ErrorKind::ValueValidation;
                let error = match cli.find_subcommand_mut("tail") {
                    Some(tail) => tail.error(kind, msg),
                    None => Cli::command().error(kind, msg),
                };
                error.exit();
            }
            init_logging(tracing_subscriber::EnvFilter::new("warn"), false);
            return execute(cmd::tail::run(args));
        }
        other => other,
    };
    let serve_args = match &command {
        Command::Serve(a) => Some(a),
        _ => None,
    };
    let simulate_args = match &command {
        Command::Simulate(a) => Some(a),
        _ => None,
    };
    for name in crossbook_server::config::ignored_environment() {
        let key = name
            .trim_start_matches(crossbook_server::config::ENV_PREFIX)
            .to_ascii_lowercase();
        eprintln!("crossbook: warning: ignoring the environment variable {name}: there is no setting {key}");
    }
    let config = match Config::load(
        cli.global.config.as_deref(),
        &Overrides {
            global: &cli.global,
            serve: serve_args,
            simulate: simulate_args,
        },
    ) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("crossbook: {e}");
            return ExitCode::from(2);
        }
    };
    // Short-lived commands print their own results; only warnings go to the log.
    let serving = matches!(command, Command::Serve(_) | Command::Simulate(_));
    let filter = match log_filter(if serving { &config.log } else { "warn" }) {
        Ok(f) => f,
        Err(e) => {
            eprintln!("crossbook: invalid configuration: log {:?}: {e}", config.log);
            return ExitCode::from(2);
        }
    };
    init_logging(filter, config.log_format == "json");
    execute(run(command, config))
}

/// Runs a command to completion on a fresh runtime and turns its outcome into the exit code.
fn execute(command: impl std::future::Future<Output = anyhow::Result<()>>) -> ExitCode {
    let _ = rustls::crypto::ring::default_provider().install_default();

    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(r) => r,
        Err(e) => {
            eprintln!("crossbook: cannot start the runtime: {e}");
            return ExitCode::from(1);
        }
    };
    match runtime.block_on(command) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            // One line: the outermost context and its cause.
            let msg = e.chain().map(|c| c.to_string()).collect::<Vec<_>>().join(": ");
            eprintln!("crossbook: {}", msg.replace('\n', " "));
            ExitCode::from(if e.is::<cmd::BadInput>() { 2 } else { 1 })
        }
    }
}

async fn run(command: Command, config: Config) -> anyhow::Result<()> {
    match command {
        Command::Serve(_) => cmd::serve::run(config).await,
        Command::Simulate(a) => cmd::simulate::run(a, config).await,
        Command::Migrate => cmd::migrate::run(config).await,
        Command::Keys(k) => cmd::keys::run(k, config).await,
        Command::Pairs(p) => cmd::pairs::run(p, config).await,
        Command::Export(a) => cmd::export::run(a, config).await,
        Command::Backtest(a) => cmd::backtest::run(a, config).await,
        // Dispatched before the configuration is loaded (see `main`).
        Command::Tail(args) => cmd::tail::run(args).await,
    }
}

/// The log filter `spec` (tracing's `EnvFilter` syntax), with sqlx's per-statement lines kept to warnings
/// unless `spec` names sqlx itself: at debug they would be most of the log.
fn log_filter(spec: &str) -> Result<tracing_subscriber::EnvFilter, String> {
    let spec = spec.trim();
    let full = if spec.contains("sqlx") {
        spec.to_string()
    } else if spec.is_empty() {
        "info,sqlx=warn".to_string()
    } else {
        format!("{spec},sqlx=warn")
    };
    tracing_subscriber::EnvFilter::builder()
        .parse(&full)
        .map_err(|e| e.to_string())
}

fn init_logging(filter: tracing_subscriber::EnvFilter, json: bool) {
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    if json {
        builder.json().with_ansi(false).init();
    } else {
        use std::io::IsTerminal as _;
        builder
            .with_ansi(colour(std::io::stderr().is_terminal(), std::env::var_os("NO_COLOR")))
            .init();
    }
}

/// Colour codes only on a terminal (a file, a pipe, systemd or Docker get plain text), and never when
/// `NO_COLOR` is set to anything non-empty (no-color.org).
fn colour(terminal: bool, no_color: Option<std::ffi::OsString>) -> bool {
    terminal && no_color.is_none_or(|v| v.is_empty())
}

#[cfg(test)]
mod tests {
    use super::{colour, log_filter};

    #[test]
    fn log_filters_quiet_sqlx_unless_named_and_refuse_nonsense() {
        assert_eq!(log_filter("debug").unwrap().to_string(), "sqlx=warn,debug");
        assert!(
            log_filter("info,sqlx=debug")
                .unwrap()
                .to_string()
                .contains("sqlx=debug")
        );
        assert!(!log_filter("info,sqlx=debug").unwrap().to_string().contains("sqlx=warn"));
        assert!(log_filter("info,crossbook_venues=[[[").is_err());
    }

    #[test]
    fn colour_only_on_a_terminal_without_no_color() {
        assert!(colour(true, None));
        assert!(colour(true, Some("".into())), "an empty NO_COLOR does not count");
        assert!(!colour(true, Some("1".into())));
        assert!(!colour(false, None));
    }
}
