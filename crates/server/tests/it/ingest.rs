//! `serve --simulate` end to end: the real server with the simulated venues in-process, ingesting over the
//! real connectors (venue_a over the signed WebSocket) into a real store, on both backends.

use crossbook_core::Plan;
use crossbook_server::config::Config;
use crossbook_store::testing::for_each_backend;

use crate::util::*;

fn simulate_config(url: &str) -> Config {
    Config {
        simulate: true,
        sim_seed: 11,
        catalog_sync_seconds: 5,
        ..Config::for_tests(url)
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_simulate_ingests_both_venues_and_creates_demo_keys_once() {
    for_each_backend(async |db| {
        assert!(db.store.list_keys().await.unwrap().is_empty());
        let server = Server::start_simulated(simulate_config(&db.url)).await;

        // Ready: store up, this process leads ingestion, both venues fresh over their live feeds.
        let ready = eventually("/readyz 200 with both venues fresh", 60, async || {
            let (status, v) = get_json(&server.url("/readyz")).await?;
            let fresh = v["venues"]["venue_a"]["status"] == "fresh" && v["venues"]["venue_b"]["status"] == "fresh";
            if status == 200 && fresh {
                Ok(v)
            } else {
                Err(format!("{status} {v}"))
            }
        })
        .await;
        assert_eq!(ready["ingest"]["leader"], true);
        assert_eq!(
            ready["venues"]["venue_a"]["mode"], "websocket",
            "signed WebSocket, not REST polling: {ready}"
        );
        assert_eq!(ready["venues"]["venue_b"]["mode"], "websocket");

        // Search finds the simulated BTC windows of both venues.
        for exchange in ["venue_a", "venue_b"] {
            let url = server.url(&format!("/v1/search/markets?q=15m&exchange={exchange}&limit=100"));
            let markets = eventually(&format!("{exchange} markets in search"), 30, async || {
                let (status, v) = get_json(&url).await?;
                match v.as_array() {
                    Some(a) if status == 200 && !a.is_empty() => Ok(a.clone()),
                    _ => Err(format!("{status} {v}")),
                }
            })
            .await;
            assert!(markets.iter().all(|m| m["exchange"] == exchange), "{markets:?}");
        }

        // One demo key per plan, created because the database had none.
        let keys = db.store.list_keys().await.unwrap();
        let mut plans: Vec<Plan> = keys.iter().map(|k| k.plan).collect();
        plans.sort_by_key(|p| p.to_string());
        assert_eq!(plans, vec![Plan::Builder, Plan::Free, Plan::Trader]);
        assert!(keys.iter().all(|k| k.customer_name.starts_with("demo-")));
        server.stop().await.unwrap();

        // A restart on the same database creates none.
        let server = Server::start_simulated(simulate_config(&db.url)).await;
        let (status, _) = eventually("healthz after restart", 30, async || {
            get_json(&server.url("/healthz")).await
        })
        .await;
        assert_eq!(status, 200);
        assert_eq!(db.store.list_keys().await.unwrap().len(), 3);
        server.stop().await.unwrap();
    })
    .await;
}

#[tokio::test]
async fn role_api_does_not_ingest_and_creates_no_demo_keys() {
    for_each_backend(async |db| {
        if db.backend() != "postgres" {
            return; // the api role needs PostgreSQL (configuration refuses it on SQLite)
        }
        let mut config = simulate_config(&db.url);
        config.role = crossbook_server::config::Role::Api;
        let server = Server::start(config).await;
        // Stored data only: not ready, and says why (the live plane is unavailable here).
        let (status, v) = get_json(&server.url("/readyz")).await.unwrap();
        assert_eq!(status, 503, "{v}");
        assert_eq!(v["store"]["status"], "ok", "{v}");
        assert_eq!(v["live"]["status"], "unavailable", "{v}");
        assert_eq!(v["ingest"], serde_json::json!({"role": "api", "leader": false}));
        assert_eq!(v["venues"]["venue_a"]["status"], "not_configured");
        assert!(db.store.list_keys().await.unwrap().is_empty());
        server.stop().await.unwrap();
    })
    .await;
}

/// The simulated games are listed on both venues under the same team names and date (each venue in its own
/// title style), so the scanner's own pairing pairs them automatically once ingested; and an operator
/// override (`crossbook pairs add`) on the same two markets is honoured.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn simulated_games_pair_across_venues() {
    use crossbook_core::{
        Category, Timestamp,
        arb::{MatchSource, PairKind, PairOverride, pair_markets},
    };
    for_each_backend(async |db| {
        let server = Server::start_simulated_on(simulate_config(&db.url), db.store.clone()).await;
        let store = db.store.clone();
        let game = eventually("a game paired across venues in the ingested catalog", 90, async || {
            let listings = store.arbitrage_listings().await.map_err(|e| e.to_string())?;
            let pairs = pair_markets(&listings, &[], 60);
            pairs
                .iter()
                .find(|p| p.category() == Category::Sports)
                .map(|p| {
                    assert_eq!(*p.kind, PairKind::Matched { by: MatchSource::Auto });
                    (p.venue_a.market.market_id.clone(), p.venue_b.market.market_id.clone())
                })
                .ok_or_else(|| format!("{} listings, {} pairs, no game among them", listings.len(), pairs.len()))
        })
        .await;

        let pair = PairOverride {
            venue_a_market_id: game.0.clone(),
            venue_b_market_id: game.1.clone(),
        };
        assert!(store.add_pair_override(&pair, Timestamp::now()).await.unwrap());
        let overrides: Vec<PairOverride> = store
            .pair_overrides()
            .await
            .unwrap()
            .into_iter()
            .map(|o| o.pair)
            .collect();
        let listings = store.arbitrage_listings().await.unwrap();
        let pairs = pair_markets(&listings, &overrides, 60);
        let p = pairs
            .iter()
            .find(|p| p.venue_a.market.market_id == game.0)
            .expect("the overridden game is still paired");
        assert_eq!(p.venue_b.market.market_id, game.1);
        assert_eq!(
            *p.kind,
            PairKind::Matched {
                by: MatchSource::Override
            }
        );
        server.stop().await.unwrap();
    })
    .await;
}
