//! `serve --simulate`: both simulated venues in-process on loopback, ingestion pointed at them, and demo keys
//! on an empty database.
//!
//! The simulator listens on ephemeral loopback ports; [`start`] rewrites the venue URLs of the configuration to
//! them, sets the venue_a demo credentials (so the signed WebSocket handshake is exercised, not REST polling)
//! and clears both series filters (the simulator lists its own series, all of which are followed).

use std::net::SocketAddr;

use anyhow::Context;
use crossbook_core::{Exchange, IntervalCode, Plan};
use crossbook_sim::{Phase, SimClock, SimConfig, SimHandle, Simulator};
use crossbook_store::{NewKey, Store};

use crate::config::Config;

/// Customer names of the demo keys, one per plan.
pub const DEMO_CUSTOMERS: [(&str, Plan); 3] = [
    ("demo-free", Plan::Free),
    ("demo-builder", Plan::Builder),
    ("demo-trader", Plan::Trader),
];

/// Starts the simulated venues (seed `config.sim_seed`, wall clock) and points `config` at them.
pub async fn start(config: &mut Config) -> anyhow::Result<SimHandle> {
    let loopback: SocketAddr = ([127, 0, 0, 1], 0).into();
    let sim = Simulator::start(SimConfig {
        seed: config.sim_seed,
        venue_a_addr: loopback,
        venue_b_addr: loopback,
        clock: SimClock::default(),
    })
    .await
    .context("cannot start the simulated venues")?;
    point_at(config, &sim);
    tracing::info!(
        venue_a = %config.venue_a_rest_url,
        venue_b = %config.venue_b_gamma_url,
        seed = config.sim_seed,
        "simulate: ingesting from the simulated venues"
    );
    Ok(sim)
}

/// Rewrites the venue settings of `config` to the simulator's.
pub fn point_at(config: &mut Config, sim: &SimHandle) {
    let u = sim.urls();
    config.venue_a_rest_url = u.venue_a_rest_url.clone();
    config.venue_a_ws_url = u.venue_a_ws_url.clone();
    config.venue_a_key_id = u.venue_a_key_id.clone();
    config.venue_a_private_key_file = u.venue_a_private_key_file.display().to_string();
    config.venue_a_series = String::new();
    config.venue_b_gamma_url = u.venue_b_gamma_url.clone();
    config.venue_b_clob_url = u.venue_b_clob_url.clone();
    config.venue_b_data_url = u.venue_b_data_url.clone();
    config.venue_b_ws_url = u.venue_b_ws_url.clone();
    config.venue_b_series = String::new();
}

/// Creates one key per plan when the database has no key at all, and returns them (`None` otherwise).
///
/// Two processes starting together on one empty database both see it empty; callers serialise on the ingest
/// lock ([`crossbook_store::LeaderLock`]) so that exactly one of them creates the keys.
pub async fn create_demo_keys(store: &dyn Store) -> anyhow::Result<Option<Vec<(Plan, NewKey)>>> {
    if !store.list_keys().await.context("cannot list keys")?.is_empty() {
        return Ok(None);
    }
    let mut keys = Vec::new();
    for (name, plan) in DEMO_CUSTOMERS {
        let k = store
            .create_key(name, plan)
            .await
            .with_context(|| format!("cannot create the {plan} demo key"))?;
        keys.push((plan, k));
    }
    Ok(Some(keys))
}

/// The text `serve --simulate` prints once with new demo keys: each key, then `curl` lines to paste.
/// `market` is a venue_a ticker for the historical example.
pub fn demo_banner(keys: &[(Plan, NewKey)], base: &str, market: Option<&str>) -> String {
    let key_of = |p: Plan| {
        keys.iter()
            .find(|(q, _)| *q == p)
            .map(|(_, k)| k.key.as_str())
            .unwrap_or("")
    };
    let mut s = String::new();
    s.push_str("Demo API keys (created because the database had none; shown only this once):\n");
    for (plan, k) in keys {
        s.push_str(&format!("  {:<8} {}\n", plan.to_string(), k.key));
    }
    let trader = key_of(Plan::Trader);
    let free = key_of(Plan::Free);
    let market = market.unwrap_or("KXBTC24H-EXAMPLE");
    s.push_str("\nTry (the venues are fresh within seconds; GET /readyz says so):\n");
    s.push_str(&format!("  curl '{base}/readyz'\n"));
    s.push_str(&format!("  curl '{base}/v1/search/markets?q=btc&limit=5'\n"));
    s.push_str(&format!(
        "  curl -H 'X-API-Key: {free}' '{base}/v1/arbitrage/current?min_net_cents=0&limit=5'\n"
    ));
    s.push_str(&format!(
        "  curl -H 'X-API-Key: {trader}' '{base}/v1/historical/venue_a/orderbook?market_id={market}&limit=5'\n"
    ));
    s
}

/// A venue_a market that stays open for a while (the current 24 h BTC window), for the historical example.
pub fn example_market(sim: &SimHandle) -> Option<String> {
    let markets = sim.markets(Exchange::VenueA);
    markets
        .iter()
        .find(|m| m.interval == Some(IntervalCode::H24) && m.phase == Phase::Open)
        .or_else(|| markets.iter().find(|m| m.phase == Phase::Open))
        .map(|m| m.market_id.clone())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crossbook_store::ApiKeyInfo;

    #[test]
    fn banner_names_every_key_and_route() {
        let key = |k: &str, plan| {
            (
                plan,
                NewKey {
                    key: k.to_string(),
                    info: ApiKeyInfo {
                        id: 1,
                        prefix: k[..12].to_string(),
                        customer_id: 1,
                        customer_name: "x".into(),
                        plan,
                        created_at: crossbook_core::Timestamp::from_millis(0),
                        revoked_at: None,
                    },
                },
            )
        };
        let keys = vec![
            key("cbk_free00000000", Plan::Free),
            key("cbk_build0000000", Plan::Builder),
            key("cbk_trade0000000", Plan::Trader),
        ];
        let b = demo_banner(&keys, "http://127.0.0.1:8080", Some("KXBTC24H-26MAY1316-00"));
        for needle in [
            "cbk_free00000000",
            "cbk_build0000000",
            "X-API-Key: cbk_trade0000000",
            "/v1/search/markets?q=btc",
            "/v1/arbitrage/current",
            "/v1/historical/venue_a/orderbook?market_id=KXBTC24H-26MAY1316-00",
        ] {
            assert!(b.contains(needle), "{needle} missing from\n{b}");
        }
    }
}
