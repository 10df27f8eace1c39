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
    /// Address of venue_a (its REST base and WebSocket share it); port 0 picks a free one.
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:9001")]
    #[serde(skip)]
    venue_a_listen: std::net::SocketAddr,
    /// Address of venue_b (Gamma, CLOB, Data API and WebSocket under path prefixes); port 0 picks a free one.
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:9002")]
    #[serde(skip)]
    venue_b_listen: std::net::SocketAddr,
}

/// Both venues until Ctrl-C. Standard output is a TOML file for `serve --config`: the venue settings of the
/// simulator, and series filters cleared so that everything it lists is ingested.
pub async fn run(args: SimulateArgs, config: Config) -> anyhow::Result<()> {
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
    print!("{}", sim.urls().config_toml());
    use std::io::Write as _;
    let _ = std::io::stdout().flush();
    super::shutdown_signal().await;
    sim.shutdown().await;
    Ok(())
}
