//! `crossbook`: the command-line entry point. Parses flags, loads the configuration and calls the library;
//! everything else lives in the `crossbook-*` crates.
//!
//! Exit codes (contracts §11): 0 success, 2 bad usage, 1 anything else, with a one-line reason on stderr.

use std::{path::PathBuf, process::ExitCode};

use clap::{Args, Parser, Subcommand};
use crossbook_core::Plan;
use crossbook_server::config::Config;
use serde::Serialize;

/// A self-hosted prediction-market data service: records two venues' catalogs, order books and trades and
/// serves search, historical order books, arbitrage, whale tracking and webhooks over one JSON API.
///
/// Every flag also reads the environment variable CROSSBOOK_<FLAG> (e.g. CROSSBOOK_DATABASE_URL) and the
/// same key in the optional TOML file given with --config; flag beats variable beats file beats default.
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
    /// Run the API, ingestion, the arbitrage scanner and webhook delivery in one process.
    Serve(ServeArgs),
    /// Run both simulated venues alone on loopback and print their settings (TOML for --config).
    Simulate(SimulateArgs),
    /// Apply database migrations and exit (serve also applies them at start).
    Migrate,
    /// Manage API keys.
    #[command(subcommand)]
    Keys(KeysCommand),
    /// Manage the operator's arbitrage pair overrides (a venue_a market and a venue_b market that ask the same
    /// question, paired by the scanner whatever the automatic matchers say).
    #[command(subcommand)]
    Pairs(PairsCommand),
}

/// Flags of `serve`. Absent flags are skipped so that the environment and the file still apply.
#[derive(Args, Debug, Serialize, Default)]
struct ServeArgs {
    /// Address to listen on [default: 127.0.0.1:8080].
    #[arg(long, value_name = "ADDR")]
    #[serde(skip_serializing_if = "Option::is_none")]
    listen: Option<String>,
    /// Which parts run: all (default), api or ingest (api/ingest need PostgreSQL).
    #[arg(long, value_parser = ["all", "api", "ingest"])]
    #[serde(skip_serializing_if = "Option::is_none")]
    role: Option<String>,
    /// Start the simulated venues in-process and ingest from them (offline demo; creates demo keys on an
    /// empty database).
    #[arg(long)]
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    simulate: bool,
    /// Seed of the simulated market model [default: 42].
    #[arg(long, value_name = "N")]
    #[serde(skip_serializing_if = "Option::is_none")]
    sim_seed: Option<u64>,
    /// Allow webhook URLs on private and loopback hosts (development only; logged at start).
    #[arg(long)]
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    allow_private_webhook_targets: bool,
    /// Requests per minute for anonymous callers (0 = no limit) [default: 60].
    #[arg(long, value_name = "N")]
    #[serde(skip_serializing_if = "Option::is_none")]
    rate_limit_anonymous: Option<u32>,
    /// Requests per minute per free key (0 = no limit) [default: 120].
    #[arg(long, value_name = "N")]
    #[serde(skip_serializing_if = "Option::is_none")]
    rate_limit_free: Option<u32>,
    /// Requests per minute per builder key (0 = no limit) [default: 600].
    #[arg(long, value_name = "N")]
    #[serde(skip_serializing_if = "Option::is_none")]
    rate_limit_builder: Option<u32>,
    /// Requests per minute per trader key (0 = no limit) [default: 3000].
    #[arg(long, value_name = "N")]
    #[serde(skip_serializing_if = "Option::is_none")]
    rate_limit_trader: Option<u32>,
}

/// Flags of `simulate`.
#[derive(Args, Debug, Serialize)]
struct SimulateArgs {
    /// Seed of the market model: the same seed lists the same markets [default: sim_seed, 42].
    #[arg(long, value_name = "N")]
    #[serde(rename = "sim_seed", skip_serializing_if = "Option::is_none")]
    seed: Option<u64>,
    /// Address of venue_a (its REST base and WebSocket share it); port 0 picks a free one.
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:9001")]
    #[serde(skip)]
    venue_a_listen: std::net::SocketAddr,
    /// Address of venue_b (Gamma, CLOB, Data API and WebSocket under path prefixes); port 0 picks a free one.
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:9002")]
    #[serde(skip)]
    venue_b_listen: std::net::SocketAddr,
}

#[derive(Subcommand, Debug)]
enum KeysCommand {
    /// Create a key for customer NAME; prints the key (shown once) as the last line.
    Create {
        /// Customer name; keys created with the same name belong to the same customer.
        #[arg(long)]
        name: String,
        /// Plan of the key.
        #[arg(long, value_parser = ["free", "builder", "trader"])]
        plan: String,
    },
    /// List keys: prefix, customer name, plan, created, revoked.
    List,
    /// Revoke the key whose prefix is PREFIX (as shown by `keys list`).
    Revoke {
        /// Key prefix, e.g. cbk_AbCd1234.
        prefix: String,
    },
}

#[derive(Subcommand, Debug)]
enum PairsCommand {
    /// Pair a venue_a market with a venue_b market (YES on one must be YES on the other).
    Add {
        /// venue_a market ticker.
        venue_a_market_id: String,
        /// venue_b condition id (0x...).
        venue_b_market_id: String,
    },
    /// List the overrides: venue_a market, venue_b market, created.
    List,
    /// Remove the override naming MARKET_ID (either venue's id).
    Remove {
        /// venue_a ticker or venue_b condition id of the pair.
        market_id: String,
    },
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
    let serve_args = match &cli.command {
        Command::Serve(a) => Some(a),
        _ => None,
    };
    let simulate_args = match &cli.command {
        Command::Simulate(a) => Some(a),
        _ => None,
    };
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
    init_logging(&config, matches!(cli.command, Command::Serve(_) | Command::Simulate(_)));
    let _ = rustls::crypto::ring::default_provider().install_default();

    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(r) => r,
        Err(e) => {
            eprintln!("crossbook: cannot start the runtime: {e}");
            return ExitCode::from(1);
        }
    };
    match runtime.block_on(run(cli.command, config)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            // One line: the outermost context and its cause.
            let msg = e.chain().map(|c| c.to_string()).collect::<Vec<_>>().join(": ");
            eprintln!("crossbook: {}", msg.replace('\n', " "));
            ExitCode::from(1)
        }
    }
}

async fn run(command: Command, config: Config) -> anyhow::Result<()> {
    match command {
        Command::Serve(_) => serve(config).await,
        Command::Simulate(a) => simulate(a, config).await,
        Command::Migrate => {
            let store = open_store(&config).await?;
            store.migrate().await?;
            println!(
                "migrations applied to {}",
                crossbook_store::redact_url(&config.database_url)
            );
            store.close().await;
            Ok(())
        }
        Command::Keys(k) => keys(k, config).await,
        Command::Pairs(p) => pairs(p, config).await,
    }
}

async fn open_store(config: &Config) -> anyhow::Result<std::sync::Arc<dyn crossbook_store::Store>> {
    let url = crossbook_store::redact_url(&config.database_url);
    let store = crossbook_store::open(&config.database_url)
        .await
        .map_err(|e| anyhow::anyhow!("cannot open database {url}: {e}"))?;
    store
        .ping()
        .await
        .map_err(|e| anyhow::anyhow!("cannot reach database {url}: {e}"))?;
    Ok(store)
}

async fn serve(config: Config) -> anyhow::Result<()> {
    let listener = tokio::net::TcpListener::bind(config.listen)
        .await
        .map_err(|e| anyhow::anyhow!("cannot listen on {}: {e}", config.listen))?;
    tracing::info!(addr = %listener.local_addr()?, "listening");
    crossbook_server::serve(config, listener, shutdown_signal()).await
}

/// `crossbook simulate`: both venues until Ctrl-C. Standard output is a TOML file for `serve --config`: the
/// venue settings of the simulator, and series filters cleared so that everything it lists is ingested.
async fn simulate(args: SimulateArgs, config: Config) -> anyhow::Result<()> {
    let sim = crossbook_sim::Simulator::start(crossbook_sim::SimConfig {
        seed: config.sim_seed,
        venue_a_addr: args.venue_a_listen,
        venue_b_addr: args.venue_b_listen,
        clock: crossbook_sim::SimClock::default(),
    })
    .await?;
    println!(
        "# crossbook simulate (seed {}): settings for `crossbook serve --config FILE`",
        config.sim_seed
    );
    print!("{}", sim.urls());
    println!("venue_a_series = \"\"\nvenue_b_series = \"\"");
    use std::io::Write as _;
    let _ = std::io::stdout().flush();
    shutdown_signal().await;
    sim.shutdown().await;
    Ok(())
}

/// Resolves on Ctrl-C or SIGTERM, whichever comes first.
async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! { _ = ctrl_c => {}, _ = term => {} }
    tracing::info!("shutdown requested");
}

async fn keys(cmd: KeysCommand, config: Config) -> anyhow::Result<()> {
    let store = open_store(&config).await?;
    store.migrate().await?;
    let result = async {
        match cmd {
            KeysCommand::Create { name, plan } => {
                let plan: Plan = plan.parse().map_err(anyhow::Error::msg)?;
                let name = name.trim();
                anyhow::ensure!(!name.is_empty(), "--name must not be empty");
                let k = store.create_key(name, plan).await?;
                println!(
                    "created {} key {} for customer {:?}; it is shown only once:",
                    plan, k.info.prefix, name
                );
                println!("{}", k.key);
            }
            KeysCommand::List => {
                let keys = store.list_keys().await?;
                println!(
                    "{:<14} {:<24} {:<8} {:<25} REVOKED",
                    "PREFIX", "NAME", "PLAN", "CREATED"
                );
                for k in keys {
                    println!(
                        "{:<14} {:<24} {:<8} {:<25} {}",
                        k.prefix,
                        k.customer_name,
                        k.plan,
                        k.created_at.to_iso(),
                        k.revoked_at.map(|t| t.to_iso()).unwrap_or_else(|| "-".into())
                    );
                }
            }
            KeysCommand::Revoke { prefix } => {
                let matching: Vec<_> = store
                    .list_keys()
                    .await?
                    .into_iter()
                    .filter(|k| k.prefix.starts_with(&prefix) && k.revoked_at.is_none())
                    .collect();
                match matching.len() {
                    0 => anyhow::bail!("no active key with prefix {prefix:?}"),
                    1 => {
                        store.revoke_key(&matching[0].prefix).await?;
                        println!("revoked {}", matching[0].prefix);
                    }
                    n => anyhow::bail!("prefix {prefix:?} matches {n} keys; give more characters"),
                }
            }
        }
        Ok(())
    }
    .await;
    store.close().await;
    result
}

fn init_logging(config: &Config, serving: bool) {
    use tracing_subscriber::EnvFilter;
    // Short-lived commands print their own results; only warnings go to the log.
    let filter = if serving {
        config.log.clone()
    } else {
        "warn".to_string()
    };
    let filter = EnvFilter::try_new(&filter).unwrap_or_else(|_| EnvFilter::new("info"));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    if config.log_format == "json" {
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

/// `crossbook pairs add|list|remove`. The running scanner picks changes up within its catalog refresh (5 s).
async fn pairs(cmd: PairsCommand, config: Config) -> anyhow::Result<()> {
    use crossbook_core::{Exchange, Timestamp, arb::PairOverride};
    let store = open_store(&config).await?;
    store.migrate().await?;
    let result = async {
        match cmd {
            PairsCommand::Add {
                venue_a_market_id,
                venue_b_market_id,
            } => {
                let (a, b) = (venue_a_market_id.trim(), venue_b_market_id.trim());
                anyhow::ensure!(!a.is_empty() && !b.is_empty(), "both market ids are required");
                let pair = PairOverride {
                    venue_a_market_id: a.to_string(),
                    venue_b_market_id: b.to_string(),
                };
                if !store.add_pair_override(&pair, Timestamp::now()).await? {
                    anyhow::bail!("{a} or {b} is already in an override; remove it first (crossbook pairs remove ID)");
                }
                println!("paired venue_a {a} with venue_b {b}");
                for (ex, id) in [(Exchange::VenueA, a), (Exchange::VenueB, b)] {
                    if store.get_market(ex, id).await?.is_none() {
                        eprintln!(
                            "note: {id} is not in the catalog yet; the pair applies once both markets are active"
                        );
                    }
                }
            }
            PairsCommand::List => {
                println!("{:<40} {:<68} CREATED", "VENUE_A", "VENUE_B");
                for o in store.pair_overrides().await? {
                    println!(
                        "{:<40} {:<68} {}",
                        o.pair.venue_a_market_id,
                        o.pair.venue_b_market_id,
                        o.created_at.to_iso()
                    );
                }
            }
            PairsCommand::Remove { market_id } => match store.remove_pair_override(market_id.trim()).await? {
                0 => anyhow::bail!("no override names {market_id:?}"),
                _ => println!("removed the override of {market_id}"),
            },
        }
        Ok(())
    }
    .await;
    store.close().await;
    result
}

#[cfg(test)]
mod tests {
    use super::colour;

    #[test]
    fn colour_only_on_a_terminal_without_no_color() {
        assert!(colour(true, None));
        assert!(colour(true, Some("".into())), "an empty NO_COLOR does not count");
        assert!(!colour(true, Some("1".into())));
        assert!(!colour(false, None));
    }
}
