//! `crossbook serve`: binds the listener and runs the server until Ctrl-C or SIGTERM.
//!
//! With `--simulate` (and a role that ingests) the binary, not the server library, starts both simulated
//! venues in-process on ephemeral loopback ports once the store is migrated, and merges their settings
//! ([`crossbook_sim::SimUrls::config_toml`], what `crossbook simulate` prints) into the configuration: the
//! venue URLs, the venue_a demo credentials (so the signed WebSocket handshake is exercised, not REST polling)
//! and empty series filters (everything the simulator lists is followed). The server then creates the demo
//! keys on a database without keys.

use std::net::SocketAddr;

use anyhow::Context;
use crossbook_core::arb::FeeModel;
use crossbook_server::{
    BeforeIngest, DemoKeys, Startup,
    config::{Config, Role},
};
use crossbook_sim::{SimHandle, Simulator};
use serde::Serialize;

/// Flags of `serve`. Absent flags are skipped so that the environment and the file still apply.
#[derive(clap::Args, Debug, Serialize, Default)]
pub struct ServeArgs {
    /// Address to listen on, IP:PORT [default: 127.0.0.1:8080].
    #[arg(long, value_name = "ADDR")]
    #[serde(skip_serializing_if = "Option::is_none")]
    listen: Option<SocketAddr>,
    /// Which parts run: all (default), api or ingest (api/ingest need PostgreSQL).
    #[arg(long, value_parser = ["all", "api", "ingest"])]
    #[serde(skip_serializing_if = "Option::is_none")]
    role: Option<String>,
    /// The NATS server of the bus between processes, e.g. nats://127.0.0.1:4222: the ingesting process
    /// publishes live events on it and api processes mirror them [default: empty, events stay in-process].
    #[arg(long, value_name = "URL")]
    #[serde(skip_serializing_if = "Option::is_none")]
    bus_url: Option<String>,
    /// Seconds the bus keeps events and book keyframes for readers that start or catch up [default: 300].
    #[arg(long, value_name = "N")]
    #[serde(skip_serializing_if = "Option::is_none")]
    bus_window_seconds: Option<u64>,
    /// Start the simulated venues in-process and ingest from them (offline demo; creates demo keys on an
    /// empty database).
    #[arg(long)]
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    simulate: bool,
    /// Seed of the simulated market model [default: 42].
    #[arg(long, value_name = "N")]
    #[serde(skip_serializing_if = "Option::is_none")]
    sim_seed: Option<u64>,
    /// How much the simulated venues list: demo or full (a real venue's size) [default: demo].
    #[arg(long, value_name = "SCALE", value_parser = ["demo", "full"])]
    #[serde(skip_serializing_if = "Option::is_none")]
    sim_scale: Option<String>,
    /// Allow webhook URLs on private and loopback hosts (development only; logged at start).
    #[arg(long)]
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    allow_private_webhook_targets: bool,
    /// Also scan arbitrage pairs whose YES outcomes name different sides (by default they are listed by
    /// /v1/arbitrage/pairs with skip_reason yes_outcomes_differ and never priced).
    #[arg(long)]
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    arbitrage_scan_inverted_pairs: bool,
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
    /// venue_b's taker fee rate for one market category (crypto, sports or other), a decimal from 0 to 1
    /// with at most 4 decimals, e.g. --venue-b-fee-rate sports=0.03. Repeat it for several categories (or
    /// give comma-separated entries); a category not named keeps 0.07. The flag replaces the
    /// variable's or file's whole list. Opportunities name the rates they used in `fee_model`.
    #[arg(long, value_name = "CATEGORY=RATE", value_parser = fee_rate_entries)]
    #[serde(skip_serializing_if = "Vec::is_empty", serialize_with = "comma_joined")]
    venue_b_fee_rate: Vec<String>,
}

/// Checks one `--venue-b-fee-rate` value as the configuration will read it, so that a bad entry is a usage
/// error naming the flag.
fn fee_rate_entries(s: &str) -> Result<String, String> {
    s.parse::<FeeModel>()?;
    Ok(s.to_string())
}

/// The repeated flag as the configuration key's one text (`sports=0.03,other=0`).
fn comma_joined<S: serde::Serializer>(values: &[String], s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&values.join(","))
}

pub async fn run(config: Config) -> anyhow::Result<()> {
    // The database first: a service that cannot reach it says so before it announces an address.
    let store = super::open_store(&config).await?;
    let listener = crossbook_server::http::bind(config.listen)
        .map_err(|e| anyhow::anyhow!("cannot listen on {}: {e}", config.listen))?;
    tracing::info!(addr = %listener.local_addr()?, "listening");
    // `--simulate` prints its own banner (with the demo keys) once the simulated venues run; every other
    // start says where it listens, and how to make a key when there is none.
    if !config.simulate || config.role == Role::Api {
        let url = crossbook_store::redact_url(&config.database_url);
        // The server migrates too; a second run finds nothing to do.
        store
            .migrate()
            .await
            .with_context(|| format!("cannot migrate database {url}"))?;
        let has_keys = !store
            .list_keys()
            .await
            .with_context(|| format!("cannot list the keys of {url}"))?
            .is_empty();
        let base = crossbook_server::demo::base_url(listener.local_addr()?);
        println!("{}", crossbook_server::demo::serve_banner(&base, &url, has_keys));
    }
    let before_ingest = config.simulate.then(simulate_step);
    crossbook_server::serve_on(config, store, listener, super::shutdown_signal(), before_ingest).await
}

/// The `--simulate` step the server runs before ingestion: the simulated venues, unless this process does
/// not ingest.
fn simulate_step() -> BeforeIngest {
    Box::new(|mut config: Config| {
        Box::pin(async move {
            if config.role == Role::Api {
                tracing::warn!("simulate is ignored with role api: this process does not ingest");
                return Ok((config, Startup::default()));
            }
            let sim = start(&mut config).await?;
            let startup = Startup {
                demo_keys: Some(DemoKeys { tour: tour(&sim) }),
                on_shutdown: Some(Box::pin(sim.shutdown())),
            };
            Ok((config, startup))
        })
    })
}

/// Starts the simulated venues (seed `config.sim_seed`, wall clock) and points `config` at them.
async fn start(config: &mut Config) -> anyhow::Result<SimHandle> {
    let loopback: SocketAddr = ([127, 0, 0, 1], 0).into();
    let sim = Simulator::start(super::simulate::sim_config(config, loopback, loopback)?)
        .await
        .context("cannot start the simulated venues")?;
    *config = config
        .merged_with_toml(&sim.urls().config_toml())
        .map_err(anyhow::Error::msg)?;
    tracing::info!(
        venue_a = %config.venue_a_rest_url,
        venue_b = %config.venue_b_gamma_url,
        seed = config.sim_seed,
        scale = %config.sim_scale,
        "simulate: ingesting from the simulated venues"
    );
    Ok(sim)
}

/// Real ids of the simulated catalog for the start-up banner.
fn tour(sim: &SimHandle) -> crossbook_server::demo::Tour {
    let ids = sim.tour_ids();
    crossbook_server::demo::Tour {
        venue_a_market: ids.venue_a_market,
        venue_a_event: ids.venue_a_event,
        venue_b_market: ids.venue_b_market,
        pair: ids.pair,
    }
}
