//! Demo keys of `serve --simulate`: one key per plan on a database without keys, and the banner that prints
//! them once with `curl` lines to paste. The caller that starts the simulated venues asks for them through
//! [`crate::Startup`]; the server creates them because it holds the store and the ingest lock.

use anyhow::Context;
use crossbook_core::Plan;
use crossbook_store::{NewKey, Store};

/// Customer names of the demo keys, one per plan.
pub const DEMO_CUSTOMERS: [(&str, Plan); 3] = [
    ("demo-free", Plan::Free),
    ("demo-builder", Plan::Builder),
    ("demo-trader", Plan::Trader),
];

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
