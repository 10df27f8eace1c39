//! `crossbook simulate`: both simulated venues alone on fixed loopback ports until Ctrl-C, their settings
//! printed as TOML for `serve --config` (a second process can then ingest from them).

use serde::Serialize;

use crossbook_server::config::Config;

/// Flags of `simulate`.
#[derive(clap::Args, Debug, Serialize)]
pub struct SimulateArgs {
    /// Seed of the market model: the same seed lists the same markets [default: sim_seed, 42].
    #[arg(long, value_name = "N")]
    #[serde(rename = "sim_seed", skip_serializing_if = "Option::is_none")]
    seed: Option<u64>,
    /// How much the venues list: demo (a few dozen markets) or full (a real venue's size, with book changes
    /// at the sim_* rate settings) [default: sim_scale, demo].
    #[arg(long, value_name = "SCALE", value_parser = ["demo", "full"])]
    #[serde(rename = "sim_scale", skip_serializing_if = "Option::is_none")]
    scale: Option<String>,
    /// Address of venue_a (its REST base and WebSocket share it); port 0 picks a free one.
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:9001")]
    #[serde(skip)]
    venue_a_listen: std::net::SocketAddr,
    /// Address of venue_b (Gamma, CLOB, Data API and WebSocket under path prefixes); port 0 picks a free one.
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:9002")]
    #[serde(skip)]
    venue_b_listen: std::net::SocketAddr,
    /// Where to write the venue_a demo private key (compiled into the binary) that the printed settings name;
    /// next to the settings file when you redirect them into one in the current directory.
    #[arg(long, value_name = "FILE", default_value = "venue_a_demo_key.pem")]
    #[serde(skip)]
    key_file: std::path::PathBuf,
}

/// Writes the demo key to `path` and returns its absolute path, so the settings stay valid from another
/// working directory and need nothing from the source tree (an installed binary has no such tree).
fn write_demo_key(path: &std::path::Path) -> anyhow::Result<std::path::PathBuf> {
    use anyhow::Context as _;
    std::fs::write(path, crossbook_sim::venue_a::auth::DEMO_PRIVATE_KEY_PEM)
        .with_context(|| format!("cannot write the demo key to {}", path.display()))?;
    std::path::absolute(path).with_context(|| format!("cannot resolve {}", path.display()))
}

/// Both venues until Ctrl-C. Standard output is a TOML file for `serve --config`: the venue settings of the
/// simulator, and series filters cleared so that everything it lists is ingested.
pub async fn run(args: SimulateArgs, config: Config) -> anyhow::Result<()> {
    let sim = crossbook_sim::Simulator::start(sim_config(&config, args.venue_a_listen, args.venue_b_listen)?).await?;
    let mut urls = sim.urls().clone();
    urls.venue_a_private_key_file = write_demo_key(&args.key_file)?;
    println!(
        "# crossbook simulate (seed {}, scale {}): settings for `crossbook serve --config FILE`",
        config.sim_seed, config.sim_scale
    );
    print!("{}", urls.config_toml());
    use std::io::Write as _;
    let _ = std::io::stdout().flush();
    super::shutdown_signal().await;
    sim.shutdown().await;
    Ok(())
}

/// The simulator the settings describe (seed, scale and the full scale's rates), on the wall clock.
pub fn sim_config(
    config: &Config,
    venue_a_addr: std::net::SocketAddr,
    venue_b_addr: std::net::SocketAddr,
) -> anyhow::Result<crossbook_sim::SimConfig> {
    let scale: crossbook_sim::SimScale = config.sim_scale.parse().map_err(anyhow::Error::msg)?;
    let rates = crossbook_sim::SimRates {
        venue_a_per_sec: config.sim_venue_a_changes_per_second,
        venue_b_per_sec: config.sim_venue_b_changes_per_second,
        burst_multiple: config.sim_burst_multiple,
        burst_secs: config.sim_burst_seconds,
        burst_every_secs: config.sim_burst_every_seconds,
        quiet_percent: config.sim_quiet_percent,
        quiet_secs: config.sim_quiet_seconds,
        match_percent: config.sim_match_percent,
    };
    rates
        .validate()
        .map_err(|e| anyhow::anyhow!("invalid configuration: simulator rates: {e}"))?;
    Ok(crossbook_sim::SimConfig {
        seed: config.sim_seed,
        venue_a_addr,
        venue_b_addr,
        clock: crossbook_sim::SimClock::default(),
        scale,
        rates,
    })
}
