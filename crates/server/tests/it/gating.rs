//! The gating table of contracts §3, driven through HTTP for every route group.
//!
//! Groups with real routes are exercised on them; groups whose routes do not exist yet are exercised on probe
//! routes built from the same extractor (`Gate<G>`) behind the same middleware and layers. When a group's
//! routes land, add a row with a real route next to its probe row.

use crossbook_core::Plan;
use crossbook_store::{Store, testing::for_each_backend};

use crate::util::*;

/// The callers: the columns of contracts §3, with "invalid" split into malformed, unknown and revoked keys.
const CALLERS: [&str; 7] = [
    "no key",
    "malformed key",
    "unknown key",
    "revoked key",
    "free",
    "builder",
    "trader",
];

#[derive(Debug, Clone, Copy, PartialEq)]
enum Want {
    /// 200; on a probe, the full view.
    Full,
    /// 200 with the preview view (probes of preview groups).
    Preview,
    E401,
    /// 403 naming this plan.
    E403(&'static str),
}
use Want::*;

const KEYED: [Want; 7] = [E401, E401, E401, E401, Full, Full, Full];

/// One row: a request in a route group and the outcome per caller, copied from contracts §3.
const TABLE: &[(&str, &str, [Want; 7])] = &[
    ("search", "/v1/search?q=btc", [Full; 7]),
    ("search", "/v1/search/series", [Full; 7]),
    ("search", "/search/events?q=btc", [Full; 7]),
    ("search", "/v1/search/markets?series_id=KXNBA", [Full; 7]),
    ("search", "/v1/search/recent/events", [Full; 7]),
    ("search", "/search/recent/markets", [Full; 7]),
    ("search", "/v1/search/events/KXNBA-26NOV21LALBOS/markets", [Full; 7]),
    ("search", "/probe/search", [Full; 7]),
    (
        "public whale feed and catalog",
        "/probe/public_whales",
        [Preview, Preview, Preview, Preview, Preview, Full, Full],
    ),
    (
        "arbitrage history",
        "/probe/arbitrage_history",
        [Preview, Preview, Preview, Preview, Preview, Preview, Full],
    ),
    ("historical orderbooks", "/probe/historical", KEYED),
    (
        "historical orderbooks",
        "/v1/historical/venue_a/orderbook?market_id=KXBTC15M-26NOV211915-15",
        KEYED,
    ),
    (
        "historical orderbooks",
        "/historical/venue_b/orderbook?market_id=0x5f1c2e9a7b3d4c6e8f0a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f6a",
        KEYED,
    ),
    (
        "historical orderbooks",
        "/v1/historical/orderbook?exchange=venue_a&market_id=KXNBA-26NOV21LALBOS-LAL",
        KEYED,
    ),
    ("arbitrage current", "/probe/arbitrage_current", KEYED),
    (
        "price spread",
        "/probe/price_spread",
        [E401, E401, E401, E401, E403("trader"), E403("trader"), Full],
    ),
    ("personal whale routes", "/probe/personal_whales", KEYED),
    ("webhooks: GET, DELETE, list", "/probe/webhooks_read", KEYED),
    (
        "webhooks: POST, PUT whale",
        "/probe/webhooks_write_whale",
        [E401, E401, E401, E401, E403("builder"), Full, Full],
    ),
    (
        "webhooks: POST, PUT arbitrage",
        "/probe/webhooks_write_arbitrage",
        [E401, E401, E401, E401, E403("trader"), E403("trader"), Full],
    ),
];

/// The `X-API-Key` value of each caller (`None`: no header).
async fn caller_keys(store: &std::sync::Arc<dyn Store>) -> [Option<String>; 7] {
    let keys = create_keys(store).await;
    // A trader key, revoked: it must count as no key at all.
    let revoked = store.create_key("revoked-customer", Plan::Trader).await.unwrap();
    assert_eq!(store.revoke_key(&revoked.info.prefix).await.unwrap(), 1);
    [
        None,
        Some("not-a-key".to_string()),
        Some(UNKNOWN_KEY.to_string()),
        Some(revoked.key),
        Some(keys.free),
        Some(keys.builder),
        Some(keys.trader),
    ]
}

#[tokio::test]
async fn every_route_group_follows_the_table() {
    for_each_backend(async |db| {
        seed_catalog(&db.store).await;
        let keys = caller_keys(&db.store).await;
        let app = TestApp::new(db, |_| {});
        let probe = app.probe();
        for (group, uri, row) in TABLE {
            let target = if uri.starts_with("/probe/") { &probe } else { &app };
            for ((caller, key), want) in CALLERS.iter().zip(&keys).zip(row) {
                let resp = match key {
                    Some(k) => target.get_key(uri, k).await,
                    None => target.get(uri).await,
                };
                let ctx = format!("{group}: {uri} as {caller}");
                match want {
                    Full | Preview => {
                        let body = resp.ok();
                        if uri.starts_with("/probe/") {
                            let view = if *want == Full { "full" } else { "preview" };
                            assert_eq!(body["view"], view, "{ctx}");
                        }
                    }
                    E401 => {
                        let body = resp.error(401, "unauthorized", None);
                        let detail = if key.is_none() {
                            "this route requires an API key in the X-API-Key header"
                        } else {
                            "the API key is unknown or revoked"
                        };
                        assert_eq!(body["detail"], detail, "{ctx}");
                    }
                    E403(plan) => {
                        let body = resp.error(403, "entitlement_required", None);
                        assert_eq!(body["required_plan"], *plan, "{ctx}");
                        let words = if *plan == "trader" { "Trader" } else { "Builder" };
                        assert_eq!(body["detail"], format!("this route requires the {words} plan"), "{ctx}");
                    }
                }
            }
        }
    })
    .await;
}

#[tokio::test]
async fn key_extractors() {
    for_each_backend(async |db| {
        let keys = create_keys(&db.store).await;
        let probe = TestApp::new(db, |_| {}).probe();

        // OptionalKey: the customer of a valid key; nothing for no key or an invalid one.
        let free_customer = probe.get_key("/probe/optional_key", &keys.free).await.ok()["customer"].clone();
        assert!(free_customer.is_i64(), "{free_customer}");
        assert!(probe.get("/probe/optional_key").await.ok()["customer"].is_null());
        assert!(probe.get_key("/probe/optional_key", UNKNOWN_KEY).await.ok()["customer"].is_null());
        assert!(probe.get_with("/probe/optional_key", &[("x-api-key", "")]).await.ok()["customer"].is_null());

        // RequireKey: any plan.
        assert_eq!(
            probe.get_key("/probe/require_key", &keys.free).await.ok()["customer"],
            free_customer
        );
        probe.get("/probe/require_key").await.error(401, "unauthorized", None);
        probe
            .get_key("/probe/require_key", "cbk_tooshort")
            .await
            .error(401, "unauthorized", None);

        // RequirePlan<Trader>.
        probe.get_key("/probe/require_trader", &keys.trader).await.ok();
        let body = probe
            .get_key("/probe/require_trader", &keys.builder)
            .await
            .error(403, "entitlement_required", None);
        assert_eq!(body["required_plan"], "trader");
        probe
            .get("/probe/require_trader")
            .await
            .error(401, "unauthorized", None);
    })
    .await;
}

#[tokio::test]
async fn revocation_takes_effect_when_the_cache_entry_expires() {
    for_each_backend(async |db| {
        // With a long-lived cache entry, a revoked key still works until the entry expires...
        let k = db.store.create_key("cached", Plan::Free).await.unwrap();
        let cached = TestApp::new(db, |c| c.key_cache_seconds = 3600).probe();
        cached.get_key("/probe/historical", &k.key).await.ok();
        db.store.revoke_key(&k.info.prefix).await.unwrap();
        cached.get_key("/probe/historical", &k.key).await.ok();

        // ...and with no caching it stops at once.
        let k = db.store.create_key("uncached", Plan::Free).await.unwrap();
        let uncached = TestApp::new(db, |c| c.key_cache_seconds = 0).probe();
        uncached.get_key("/probe/historical", &k.key).await.ok();
        db.store.revoke_key(&k.info.prefix).await.unwrap();
        uncached
            .get_key("/probe/historical", &k.key)
            .await
            .error(401, "unauthorized", None);

        // Nothing is cached with a zero lifetime; unknown keys are cached (briefly) like known ones.
        assert_eq!(uncached.state.keys.len(), 0);
        let before = cached.state.keys.len();
        cached
            .get_key("/probe/historical", UNKNOWN_KEY)
            .await
            .error(401, "unauthorized", None);
        assert_eq!(cached.state.keys.len(), before + 1);
    })
    .await;
}
