//! Historical order-book routes (spec §4.2, §2.5–2.8, contracts §5) through HTTP, on both backends: row shapes
//! (venue_a derived asks, venue_b rows per token, unified and interval formats), latest and downsampled reads,
//! cursor walks over a series that grows during the walk, every validation error, unknown markets, keys, and
//! a retention pass over a real store.

use std::collections::BTreeSet;

use crossbook_core::{
    Amount, BookSnapshot, Exchange, IntervalCode, Level, Market, Price, Timestamp,
    book::{BookChange, BookEvent, BookKey, GapCause, LevelChange, Side},
};
use crossbook_server::workers::retention;
use crossbook_store::{BookHistoryQuery, HistoryWindow, LogRun, Store, testing::for_each_backend};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::util::*;

/// Aligned to 5 minutes, so bucket edges fall on whole offsets.
const BASE: i64 = 1_763_000_100_000;
const A_PLAIN: &str = "KXHIST-PLAIN";
const A_BTC: &str = "KXBTC15M-HIST";
const B_COND: &str = "0xabc0000000000000000000000000000000000000000000000000000000000001";
const B_SOURCE: &str = "987654";
const YES_TOKEN: &str = "11111111111111111111";
const NO_TOKEN: &str = "22222222222222222222";

fn lv(price_micros: i64, size_units: i64) -> Level {
    Level {
        price: Price::from_micros(price_micros),
        size: Amount::from_units(size_units),
    }
}

/// A venue_a snapshot at `BASE + offset_ms`: YES bids 0.53/0.52, NO bids 0.45/0.44.
fn a_snap(market: &str, offset_ms: i64) -> BookSnapshot {
    BookSnapshot {
        exchange: Exchange::VenueA,
        market_id: market.into(),
        asset_id: None,
        timestamp: Timestamp::from_millis(BASE + offset_ms),
        bids: vec![lv(530_000, 100), lv(520_000, 50)],
        asks: vec![],
        no_bids: vec![lv(450_000, 70), lv(440_000, 30)],
    }
}

/// A venue_b token snapshot; the best bid encodes `bid`.
fn b_snap(token: &str, offset_ms: i64, bid: i64) -> BookSnapshot {
    BookSnapshot {
        exchange: Exchange::VenueB,
        market_id: B_COND.into(),
        asset_id: Some(token.into()),
        timestamp: Timestamp::from_millis(BASE + offset_ms),
        bids: vec![lv(bid, 10), lv(bid - 10_000, 20)],
        asks: vec![lv(bid + 20_000, 15)],
        no_bids: vec![],
    }
}

async fn seed_markets(store: &dyn Store) {
    let now = Timestamp::from_millis(BASE);
    let plain = Market::new(Exchange::VenueA, A_PLAIN, "KXHIST", "KXHIST", "Plain market?");
    let mut btc = Market::new(Exchange::VenueA, A_BTC, "KXBTC15M-E", "KXBTC15M", "BTC up?");
    btc.interval_code = Some(IntervalCode::M15);
    btc.window_start = Some(Timestamp::from_millis(BASE));
    btc.window_end = Some(Timestamp::from_millis(BASE + 900_000));
    let mut b = Market::new(Exchange::VenueB, B_COND, "b-event", "b-series", "B market?");
    b.source_id = Some(B_SOURCE.into());
    b.yes_token_id = Some(YES_TOKEN.into());
    b.no_token_id = Some(NO_TOKEN.into());
    store.upsert_markets(&[plain, btc, b], now).await.unwrap();
}

fn offsets(v: &Value) -> Vec<i64> {
    v["snapshots"]
        .as_array()
        .unwrap_or_else(|| panic!("no snapshots: {v}"))
        .iter()
        .map(|r| r["timestamp"].as_i64().unwrap() - BASE)
        .collect()
}

fn keys(v: &Value) -> BTreeSet<String> {
    v.as_object().unwrap().keys().cloned().collect()
}

fn set(names: &[&str]) -> BTreeSet<String> {
    names.iter().map(|s| s.to_string()).collect()
}

/// Follows `pagination_key` from `first` to the end; returns every page's body.
async fn walk(app: &TestApp, key: &str, first: &str, mut between: impl AsyncFnMut()) -> Vec<Value> {
    let mut pages = Vec::new();
    let mut uri = first.to_string();
    loop {
        let page = app.get_key(&uri, key).await.ok();
        let p = &page["pagination"];
        let rows = page["snapshots"].as_array().or(page["gaps"].as_array()).unwrap();
        assert_eq!(p["count"].as_u64().unwrap() as usize, rows.len());
        assert_eq!(p["has_more"].as_bool().unwrap(), !p["pagination_key"].is_null(), "{p}");
        let next = p["pagination_key"].as_str().map(str::to_string);
        pages.push(page);
        between().await;
        match next {
            Some(k) => uri = format!("{first}&pagination_key={k}"),
            None => return pages,
        }
        assert!(pages.len() < 1_000, "the walk never ends");
    }
}

#[tokio::test]
async fn venue_a_rows_derive_asks_and_page_newest_first() {
    for_each_backend(async |db| {
        seed_markets(db.store.as_ref()).await;
        let batch: Vec<BookSnapshot> = (0..30).map(|i| a_snap(A_PLAIN, i * 20_000)).collect();
        db.store.insert_snapshots(&batch).await.unwrap();
        let app = TestApp::new(db, |_| {});
        let k = create_keys(&db.store).await;

        let v = app
            .get_key(&format!("/v1/historical/venue_a/orderbook?market_id={A_PLAIN}"), &k.free)
            .await
            .ok();
        assert_eq!(keys(&v), set(&["snapshots", "pagination"]));
        assert_eq!(
            v["pagination"],
            json!({"limit": 100, "count": 30, "has_more": false, "pagination_key": null})
        );
        assert_eq!(offsets(&v)[..3], [580_000, 560_000, 540_000]);
        assert_eq!(
            v["snapshots"][0],
            json!({
                "market_id": A_PLAIN, "timestamp": BASE + 580_000, "continuous": true,
                "yes_bids": [{"price": "0.5300", "size": 100.0}, {"price": "0.5200", "size": 50.0}],
                "no_bids": [{"price": "0.4500", "size": 70.0}, {"price": "0.4400", "size": 30.0}],
                "best_yes_bid": 0.53, "best_yes_ask": 0.55, "mid": 0.54, "spread": 0.02
            })
        );

        // Pages of 10: exact has_more, null key on the last page, and the same rows without `/v1`.
        let pages = walk(
            &app,
            &k.free,
            &format!("/historical/venue_a/orderbook?market_id={A_PLAIN}&limit=10"),
            async || {},
        )
        .await;
        assert_eq!(pages.len(), 3);
        let all: Vec<i64> = pages.iter().flat_map(offsets).collect();
        assert_eq!(all, (0..30).rev().map(|i| i * 20_000).collect::<Vec<_>>());

        // A market with no snapshots is an empty page, not a 404.
        let v = app
            .get_key(&format!("/v1/historical/venue_a/orderbook?market_id={A_BTC}"), &k.free)
            .await
            .ok();
        assert_eq!(
            v,
            json!({"snapshots": [], "pagination": {"limit": 100, "count": 0, "has_more": false, "pagination_key": null}})
        );
    })
    .await;
}

/// The offsets of the snapshots `ranges_are_downsampled_to_the_last_snapshot_of_each_bucket` stores.
fn batch_offsets() -> Vec<i64> {
    let mut v: Vec<i64> = (0..30).map(|i| i * 20_000).collect();
    v.push(930_000);
    v
}

#[tokio::test]
async fn ranges_are_downsampled_to_the_last_snapshot_of_each_bucket() {
    for_each_backend(async |db| {
        seed_markets(db.store.as_ref()).await;
        // Every 20 s for 10 minutes, then nothing for 5 minutes, then one at 15:30.
        let batch: Vec<BookSnapshot> = batch_offsets().into_iter().map(|o| a_snap(A_PLAIN, o)).collect();
        db.store.insert_snapshots(&batch).await.unwrap();
        let app = TestApp::new(db, |_| {});
        let k = create_keys(&db.store).await;
        let uri = |extra: &str| {
            format!(
                "/v1/historical/venue_a/orderbook?market_id={A_PLAIN}&start_time={}&end_time={}{extra}",
                BASE,
                BASE + 3_600_000
            )
        };

        // Default granularity 1m: oldest first, the last snapshot (at :40) of each non-empty minute.
        let v = app.get_key(&uri(""), &k.free).await.ok();
        let mut minutes: Vec<i64> = (0..10).map(|m| m * 60_000 + 40_000).collect();
        minutes.push(930_000);
        assert_eq!(offsets(&v), minutes);
        assert_eq!(v["snapshots"][0]["best_yes_ask"], 0.55);
        let v = app.get_key(&uri("&granularity=5m"), &k.free).await.ok();
        assert_eq!(offsets(&v), [280_000, 580_000, 930_000]);

        // 1s and 10s keep every snapshot here (they are 20 s apart); 1h keeps the last.
        let every: Vec<i64> = batch_offsets();
        let v = app.get_key(&uri("&granularity=10s&limit=200"), &k.free).await.ok();
        assert_eq!(offsets(&v), every);
        let v = app.get_key(&uri("&granularity=1h"), &k.free).await.ok();
        assert_eq!(offsets(&v), [930_000]);

        // Paged at each granularity: the same rows, each once.
        for (g, expected) in [
            ("1s", every.clone()),
            ("10s", every.clone()),
            ("1m", minutes.clone()),
            ("5m", vec![280_000, 580_000, 930_000]),
            ("1h", vec![930_000]),
        ] {
            for limit in [1, 4] {
                let pages = walk(
                    &app,
                    &k.free,
                    &uri(&format!("&granularity={g}&limit={limit}")),
                    async || {},
                )
                .await;
                assert_eq!(
                    pages.iter().flat_map(offsets).collect::<Vec<_>>(),
                    expected,
                    "{g} {limit}"
                );
            }
        }

        // The same instants as RFC 3339 times (BASE is 2025-11-13T02:15:00Z), with or without an offset, and a
        // bare date (midnight UTC) as the start.
        let millis = format!(
            "/v1/historical/venue_a/orderbook?market_id={A_PLAIN}&start_time={BASE}&end_time={}",
            BASE + 60_000
        );
        let expected = offsets(&app.get_key(&millis, &k.free).await.ok());
        assert!(!expected.is_empty());
        for (start, end) in [
            ("2025-11-13T02:15:00Z", "2025-11-13T02:16:00.000Z"),
            ("2025-11-13T03:15:00%2B01:00", "2025-11-13T02:16:00"),
        ] {
            let iso = format!("/v1/historical/venue_a/orderbook?market_id={A_PLAIN}&start_time={start}&end_time={end}");
            assert_eq!(offsets(&app.get_key(&iso, &k.free).await.ok()), expected, "{iso}");
        }
        let dated = format!(
            "/v1/historical/venue_a/orderbook?market_id={A_PLAIN}&start_time=2025-11-13&end_time={}",
            BASE + 60_000
        );
        assert_eq!(offsets(&app.get_key(&dated, &k.free).await.ok()), expected);
        // Unix seconds: refused, with the value in milliseconds.
        let secs = format!(
            "/v1/historical/venue_a/orderbook?market_id={A_PLAIN}&start_time={}&end_time={}",
            BASE / 1000,
            BASE + 60_000
        );
        let e = app
            .get_key(&secs, &k.free)
            .await
            .error(400, "invalid_parameter", Some("start_time"));
        let detail = e["detail"].as_str().unwrap();
        assert!(
            detail.contains("milliseconds") && detail.contains(&format!("start_time={BASE}")),
            "{detail}"
        );

        // Inclusive bounds: a range of one millisecond holding a snapshot.
        let one = format!(
            "/v1/historical/venue_a/orderbook?market_id={A_PLAIN}&start_time={0}&end_time={0}",
            BASE + 60_000
        );
        assert_eq!(offsets(&app.get_key(&one, &k.free).await.ok()), [60_000]);
    })
    .await;
}

#[tokio::test]
async fn cursor_walks_survive_a_series_that_grows_during_the_walk() {
    for_each_backend(async |db| {
        seed_markets(db.store.as_ref()).await;
        let store = db.store.clone();
        store
            .insert_snapshots(&(0..=90).map(|s| a_snap(A_PLAIN, s * 1000)).collect::<Vec<_>>())
            .await
            .unwrap();
        let app = TestApp::new(db, |_| {});
        let k = create_keys(&db.store).await;

        // Newest first, 7 per page, two new snapshots arriving after every page.
        let mut next = 91;
        let pages = walk(
            &app,
            &k.free,
            &format!("/v1/historical/venue_a/orderbook?market_id={A_PLAIN}&limit=7"),
            async || {
                store
                    .insert_snapshots(&[a_snap(A_PLAIN, next * 1000), a_snap(A_PLAIN, (next + 1) * 1000)])
                    .await
                    .unwrap();
                next += 2;
            },
        )
        .await;
        let seen: Vec<i64> = pages.iter().flat_map(offsets).collect();
        assert_eq!(seen, (0..=90).rev().map(|s| s * 1000).collect::<Vec<_>>());

        // Range at 1m over a market filling its current minute while the walk is on it: no minute twice.
        let start = BASE + 1_000_000;
        let at = |s: i64| a_snap(A_PLAIN, 1_000_000 + s * 1000);
        // The range starts mid-minute (BASE + 1 000 000 is 16:40), so minute boundaries are at 20 s, 80 s, …
        store
            .insert_snapshots(&(0..=50).map(at).collect::<Vec<_>>())
            .await
            .unwrap();
        let mut second = 51;
        let pages = walk(
            &app,
            &k.free,
            &format!(
                "/v1/historical/venue_a/orderbook?market_id={A_PLAIN}&start_time={start}&end_time={}&limit=1",
                start + 600_000
            ),
            async || {
                store
                    .insert_snapshots(&(second..second + 90).map(at).collect::<Vec<_>>())
                    .await
                    .unwrap();
                second += 90;
            },
        )
        .await;
        let seen: Vec<i64> = pages.iter().flat_map(offsets).map(|o| o - 1_000_000).collect();
        let minutes: Vec<i64> = seen.iter().map(|o| (BASE + 1_000_000 + o) / 60_000).collect();
        let distinct: BTreeSet<i64> = minutes.iter().copied().collect();
        assert_eq!(distinct.len(), minutes.len(), "a minute repeated: {seen:?}");
        assert!(minutes.windows(2).all(|w| w[0] < w[1]), "{seen:?}");
        // The series grows faster than the walk moves (90 s per page against one minute), so the walk covers
        // every minute of the range, contiguously: 16:40–16:59, then ten whole minutes up to 26:40.
        assert_eq!(minutes.len(), 11, "{seen:?}");
        assert!(minutes.windows(2).all(|w| w[1] == w[0] + 1), "{seen:?}");
    })
    .await;
}

#[tokio::test]
async fn venue_b_rows_are_per_token_and_interleaved() {
    for_each_backend(async |db| {
        seed_markets(db.store.as_ref()).await;
        let mut batch = Vec::new();
        for i in 0..5 {
            batch.push(b_snap(YES_TOKEN, i * 10_000, 500_000 + i * 1000));
            batch.push(b_snap(NO_TOKEN, i * 10_000, 450_000 - i * 1000));
        }
        db.store.insert_snapshots(&batch).await.unwrap();
        let app = TestApp::new(db, |_| {});
        let k = create_keys(&db.store).await;

        let v = app
            .get_key(&format!("/v1/historical/venue_b/orderbook?market_id={B_COND}"), &k.free)
            .await
            .ok();
        assert_eq!(v["pagination"]["count"], 10);
        assert_eq!(
            v["snapshots"][0],
            json!({
                "market_id": B_COND, "asset_id": YES_TOKEN, "outcome": "YES", "timestamp": BASE + 40_000, "continuous": true,
                "bids": [{"price": "0.5040", "size": 10.0}, {"price": "0.4940", "size": 20.0}],
                "asks": [{"price": "0.5240", "size": 15.0}],
                "best_bid": 0.504, "best_ask": 0.524, "mid": 0.514, "spread": 0.02
            })
        );
        assert_eq!(v["snapshots"][1]["outcome"], "NO");
        assert_eq!(v["snapshots"][1]["asset_id"], NO_TOKEN);
        let order = |pages: &[Value]| -> Vec<(i64, String)> {
            pages
                .iter()
                .flat_map(|p| p["snapshots"].as_array().unwrap().clone())
                .map(|r| {
                    (
                        r["timestamp"].as_i64().unwrap() - BASE,
                        r["outcome"].as_str().unwrap().to_string(),
                    )
                })
                .collect()
        };
        let expected: Vec<(i64, String)> = (0..5)
            .rev()
            .flat_map(|i| [(i * 10_000, "YES".to_string()), (i * 10_000, "NO".to_string())])
            .collect();
        assert_eq!(order(std::slice::from_ref(&v)), expected);

        // Pages of 3 cut between the two tokens of one timestamp; the walk is the same sequence. The numeric
        // source id names the same market.
        let pages = walk(
            &app,
            &k.free,
            &format!("/v1/historical/venue_b/orderbook?market_id={B_SOURCE}&limit=3"),
            async || {},
        )
        .await;
        assert_eq!(pages.len(), 4);
        assert_eq!(order(&pages), expected);
        assert_eq!(pages[0]["snapshots"][0]["market_id"], B_COND);

        // The same with a range: by bucket, YES before NO.
        let range = format!(
            "/v1/historical/venue_b/orderbook?market_id={B_COND}&start_time={BASE}&end_time={}&limit=3",
            BASE + 3_600_000
        );
        let pages = walk(&app, &k.free, &range, async || {}).await;
        assert_eq!(order(&pages), [(40_000, "YES".to_string()), (40_000, "NO".to_string())]);

        // asset_id narrows to one token; a token of no such market is a 404.
        let v = app
            .get_key(
                &format!("/v1/historical/venue_b/orderbook?market_id={B_COND}&asset_id={NO_TOKEN}&limit=2"),
                &k.free,
            )
            .await
            .ok();
        assert_eq!(offsets(&v), [40_000, 30_000]);
        assert!(v["snapshots"].as_array().unwrap().iter().all(|r| r["outcome"] == "NO"));
        app.get_key(
            &format!("/v1/historical/venue_b/orderbook?market_id={B_COND}&asset_id=333"),
            &k.free,
        )
        .await
        .error(404, "not_found", None);
    })
    .await;
}

#[tokio::test]
async fn the_unified_route_has_both_formats() {
    for_each_backend(async |db| {
        seed_markets(db.store.as_ref()).await;
        let mut batch = vec![a_snap(A_PLAIN, 0), a_snap(A_BTC, 5_000)];
        // venue_b: the NO token's book changes at other moments than the YES token's.
        batch.push(b_snap(YES_TOKEN, 10_000, 500_000));
        batch.push(b_snap(YES_TOKEN, 20_000, 510_000));
        batch.push(b_snap(NO_TOKEN, 15_000, 460_000));
        db.store.insert_snapshots(&batch).await.unwrap();
        let app = TestApp::new(db, |_| {});
        let k = create_keys(&db.store).await;
        let get = async |q: &str| {
            app.get_key(&format!("/v1/historical/orderbook?{q}"), &k.free)
                .await
                .ok()
        };

        // venue_a without an interval code: `unified` by default, asks derived from the opposite bids.
        let v = get(&format!("exchange=venue_a&market_id={A_PLAIN}")).await;
        assert_eq!(
            keys(&v),
            set(&["exchange", "market_id", "format", "snapshots", "pagination"])
        );
        assert_eq!(
            (v["exchange"].as_str(), v["format"].as_str()),
            (Some("venue_a"), Some("unified"))
        );
        assert_eq!(
            v["snapshots"][0],
            json!({
                "timestamp": BASE, "continuous": true,
                "yes": {
                    "bids": [{"price": "0.5300", "size": 100.0}, {"price": "0.5200", "size": 50.0}],
                    "asks": [{"price": "0.5500", "size": 70.0}, {"price": "0.5600", "size": 30.0}],
                    "best_bid": 0.53, "best_ask": 0.55
                },
                "no": {
                    "bids": [{"price": "0.4500", "size": 70.0}, {"price": "0.4400", "size": 30.0}],
                    "asks": [{"price": "0.4700", "size": 100.0}, {"price": "0.4800", "size": 50.0}],
                    "best_bid": 0.45, "best_ask": 0.47
                },
                "mid": 0.54, "spread": 0.02
            })
        );

        // An interval market: `interval` by default, with its window and the depth of the top ask levels.
        let v = get(&format!("exchange=venue_a&market_id={A_BTC}")).await;
        assert_eq!(v["format"], "interval");
        assert_eq!(
            v["snapshots"][0],
            json!({
                "timestamp": BASE + 5_000, "interval_code": "15m", "continuous": true,
                "window_start": Timestamp::from_millis(BASE).to_iso(),
                "window_end": Timestamp::from_millis(BASE + 900_000).to_iso(),
                "yes_bid": 0.53, "yes_ask": 0.55, "no_bid": 0.45, "no_ask": 0.47, "mid": 0.54, "spread": 0.02,
                "yes_depth": 100.0, "no_depth": 150.0
            })
        );
        // `format` overrides the default either way.
        let v = get(&format!("exchange=venue_a&market_id={A_BTC}&format=unified")).await;
        assert_eq!(v["format"], "unified");
        assert!(v["snapshots"][0]["yes"].is_object());
        let v = get(&format!("exchange=venue_a&market_id={A_PLAIN}&format=interval")).await;
        assert_eq!(v["snapshots"][0]["interval_code"], Value::Null);
        assert_eq!(v["snapshots"][0]["window_start"], Value::Null);

        // venue_b: rows follow the YES token; the NO side is the NO book as of each row (none before 15 s).
        let v = get(&format!("exchange=venue_b&market_id={B_SOURCE}")).await;
        assert_eq!(
            (v["market_id"].as_str(), v["format"].as_str()),
            (Some(B_COND), Some("unified"))
        );
        assert_eq!(offsets(&v), [20_000, 10_000]);
        assert_eq!(v["snapshots"][0]["yes"]["best_bid"], 0.51);
        assert_eq!(v["snapshots"][0]["no"]["best_bid"], 0.46);
        assert_eq!(v["snapshots"][0]["no"]["best_ask"], 0.48);
        assert_eq!(
            v["snapshots"][1]["no"],
            json!({"bids": [], "asks": [], "best_bid": null, "best_ask": null})
        );
        let v = get(&format!("exchange=venue_b&market_id={B_COND}&format=interval&limit=1")).await;
        assert_eq!(v["snapshots"][0]["no_ask"], 0.48);
        assert_eq!(v["snapshots"][0]["yes_depth"], 15.0);
        assert_eq!(v["pagination"]["has_more"], true);
        let key = v["pagination"]["pagination_key"].as_str().unwrap().to_string();
        let v = get(&format!(
            "exchange=venue_b&market_id={B_COND}&format=interval&limit=1&pagination_key={key}"
        ))
        .await;
        assert_eq!(offsets(&v), [10_000]);
        assert_eq!(v["pagination"]["pagination_key"], Value::Null);
    })
    .await;
}

#[tokio::test]
async fn invalid_parameters_name_the_parameter() {
    for_each_backend(async |db| {
        seed_markets(db.store.as_ref()).await;
        db.store
            .insert_snapshots(&(0..3).map(|i| a_snap(A_PLAIN, i * 1000)).collect::<Vec<_>>())
            .await
            .unwrap();
        let app = TestApp::new(db, |_| {});
        let k = create_keys(&db.store).await;
        let a = format!("/v1/historical/venue_a/orderbook?market_id={A_PLAIN}");
        let b = format!("/v1/historical/venue_b/orderbook?market_id={B_COND}");
        let u = format!("/v1/historical/orderbook?exchange=venue_a&market_id={A_PLAIN}");

        // (query suffix, status, code, param), on every route.
        let cases: &[(&str, u16, &str, &str)] = &[
            ("&start_time=1763000100000", 400, "invalid_parameter", "start_time"),
            ("&end_time=1763000100000", 400, "invalid_parameter", "end_time"),
            (
                "&start_time=1763000200000&end_time=1763000100000",
                400,
                "invalid_parameter",
                "start_time",
            ),
            (
                "&start_time=abc&end_time=1763000100000",
                400,
                "invalid_parameter",
                "start_time",
            ),
            (
                "&start_time=1763000100000&end_time=2026-11-21T25:00:00Z",
                400,
                "invalid_parameter",
                "end_time",
            ),
            // Unix seconds.
            (
                "&start_time=1763000100&end_time=1763000200000",
                400,
                "invalid_parameter",
                "start_time",
            ),
            (
                "&start_time=-5&end_time=1763000100000",
                400,
                "invalid_parameter",
                "start_time",
            ),
            (
                "&start_time=&end_time=1763000100000",
                400,
                "invalid_parameter",
                "start_time",
            ),
            (
                "&start_time=1.5&end_time=1763000100000",
                400,
                "invalid_parameter",
                "start_time",
            ),
            ("&granularity=10m", 400, "invalid_parameter", "granularity"),
            ("&granularity=1M", 400, "invalid_parameter", "granularity"),
            ("&granularity=", 400, "invalid_parameter", "granularity"),
            ("&limit=0", 400, "invalid_parameter", "limit"),
            ("&limit=201", 400, "invalid_parameter", "limit"),
            ("&limit=abc", 400, "invalid_parameter", "limit"),
            ("&limit=", 400, "invalid_parameter", "limit"),
            ("&limit=1&limit=2", 400, "invalid_parameter", "limit"),
            ("&pagination_key=garbage", 400, "invalid_parameter", "pagination_key"),
            ("&pagination_key=", 400, "invalid_parameter", "pagination_key"),
            (
                "&pagination_key=AQEAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
                400,
                "invalid_parameter",
                "pagination_key",
            ),
        ];
        for base in [&a, &b, &u] {
            for (suffix, status, code, param) in cases {
                app.get_key(&format!("{base}{suffix}"), &k.free)
                    .await
                    .error(*status, code, Some(param));
            }
            // The limits themselves are fine.
            app.get_key(&format!("{base}&limit=1"), &k.free).await.ok();
            app.get_key(&format!("{base}&limit=200&granularity=5m"), &k.free)
                .await
                .ok();
        }
        let d = app
            .get_key(&format!("{a}&limit=201"), &k.free)
            .await
            .error(400, "invalid_parameter", Some("limit"));
        assert_eq!(d["detail"], "limit must be an integer from 1 to 200");

        // Required parameters.
        for path in ["/v1/historical/venue_a/orderbook", "/v1/historical/venue_b/orderbook"] {
            app.get_key(path, &k.free)
                .await
                .error(400, "missing_parameter", Some("market_id"));
            app.get_key(&format!("{path}?market_id="), &k.free).await.error(
                400,
                "invalid_parameter",
                Some("market_id"),
            );
        }
        app.get_key(&format!("/v1/historical/orderbook?market_id={A_PLAIN}"), &k.free)
            .await
            .error(400, "missing_parameter", Some("exchange"));
        app.get_key("/v1/historical/orderbook?exchange=venue_a", &k.free)
            .await
            .error(400, "missing_parameter", Some("market_id"));
        app.get_key(
            &format!("/v1/historical/orderbook?exchange=venue_c&market_id={A_PLAIN}"),
            &k.free,
        )
        .await
        .error(400, "invalid_parameter", Some("exchange"));
        app.get_key(&format!("{u}&format=wide"), &k.free)
            .await
            .error(400, "invalid_parameter", Some("format"));
        app.get_key(&format!("{b}&asset_id="), &k.free)
            .await
            .error(400, "invalid_parameter", Some("asset_id"));

        // Unknown markets, including a market of the other venue.
        app.get_key("/v1/historical/venue_a/orderbook?market_id=NOPE", &k.free)
            .await
            .error(404, "not_found", None);
        app.get_key(&format!("/v1/historical/venue_a/orderbook?market_id={B_COND}"), &k.free)
            .await
            .error(404, "not_found", None);
        app.get_key(&format!("/historical/venue_b/orderbook?market_id={A_PLAIN}"), &k.free)
            .await
            .error(404, "not_found", None);
        app.get_key("/v1/historical/orderbook?exchange=venue_b&market_id=123", &k.free)
            .await
            .error(404, "not_found", None);

        // A key from another query: another market, another range, the latest read, another route, another
        // format; and a key edited by one character.
        let key = app.get_key(&format!("{a}&limit=1"), &k.free).await.ok()["pagination"]["pagination_key"]
            .as_str()
            .unwrap()
            .to_string();
        app.get_key(&format!("{a}&limit=1&pagination_key={key}"), &k.free)
            .await
            .ok();
        for other in [
            format!("/v1/historical/venue_a/orderbook?market_id={A_BTC}"),
            format!("{a}&start_time={BASE}&end_time={}", BASE + 60_000),
            u.clone(),
            format!("{u}&format=interval"),
        ] {
            app.get_key(&format!("{other}&pagination_key={key}"), &k.free)
                .await
                .error(400, "invalid_parameter", Some("pagination_key"));
        }
        let range = format!("{a}&start_time={BASE}&end_time={}&limit=1", BASE + 60_000);
        let range_key = app.get_key(&range, &k.free).await.ok()["pagination"]["pagination_key"].clone();
        // One bucket only: no next page.
        assert_eq!(range_key, Value::Null);
        let mut edited = key.clone().into_bytes();
        edited[3] = if edited[3] == b'A' { b'B' } else { b'A' };
        let edited = String::from_utf8(edited).unwrap();
        app.get_key(&format!("{a}&limit=1&pagination_key={edited}"), &k.free)
            .await
            .error(400, "invalid_parameter", Some("pagination_key"));
        // The page size may change during a walk.
        app.get_key(&format!("{a}&limit=5&pagination_key={key}"), &k.free)
            .await
            .ok();
    })
    .await;
}

#[tokio::test]
async fn a_key_is_required() {
    for_each_backend(async |db| {
        seed_markets(db.store.as_ref()).await;
        let app = TestApp::new(db, |_| {});
        let k = create_keys(&db.store).await;
        for path in [
            format!("/v1/historical/venue_a/orderbook?market_id={A_PLAIN}"),
            format!("/historical/venue_b/orderbook?market_id={B_COND}"),
            format!("/v1/historical/orderbook?exchange=venue_a&market_id={A_PLAIN}"),
            // Without a key, even an invalid request is a 401 first.
            "/v1/historical/venue_a/orderbook?limit=0".to_string(),
        ] {
            app.get(&path).await.error(401, "unauthorized", None);
            app.get_key(&path, UNKNOWN_KEY).await.error(401, "unauthorized", None);
            app.get_key(&path, "not-a-key").await.error(401, "unauthorized", None);
        }
        for key in [&k.free, &k.builder, &k.trader] {
            app.get_key(&format!("/v1/historical/venue_a/orderbook?market_id={A_PLAIN}"), key)
                .await
                .ok();
        }
    })
    .await;
}

#[tokio::test]
async fn the_routes_are_documented() {
    for_each_backend(async |db| {
        let app = TestApp::new(db, |_| {});
        let doc = app.get("/openapi.json").await.ok();
        for path in [
            "/v1/historical/venue_a/orderbook",
            "/v1/historical/venue_b/orderbook",
            "/v1/historical/orderbook",
        ] {
            let op = &doc["paths"][path]["get"];
            assert!(op.is_object(), "{path} missing");
            assert_eq!(op["x-also-at"], path.trim_start_matches("/v1"), "{path}");
            assert_eq!(op["tags"][0], "historical");
            let params: Vec<&str> = op["parameters"]
                .as_array()
                .unwrap()
                .iter()
                .map(|p| p["name"].as_str().unwrap())
                .collect();
            for p in [
                "market_id",
                "start_time",
                "end_time",
                "granularity",
                "limit",
                "pagination_key",
            ] {
                assert!(params.contains(&p), "{path}: {p} not in {params:?}");
            }
            assert!(!params.contains(&"common"), "{params:?}");
        }
    })
    .await;
}

#[tokio::test]
async fn a_retention_pass_removes_expired_snapshots() {
    for_each_backend(async |db| {
        let now = Timestamp::now().millis();
        const DAY: i64 = 86_400_000;
        let at = |ms: i64| BookSnapshot {
            timestamp: Timestamp::from_millis(ms),
            ..a_snap("RET", 0)
        };
        let old = [now - 45 * DAY, now - 40 * DAY, now - 32 * DAY];
        let kept = [now - 29 * DAY, now - DAY, now];
        db.store
            .insert_snapshots(&old.iter().chain(&kept).map(|t| at(*t)).collect::<Vec<_>>())
            .await
            .unwrap();
        let mut settings = retention::Settings::from_days(30).unwrap();
        settings.batch_rows = 1;
        let report = retention::pass(db.store.as_ref(), &settings, &CancellationToken::new())
            .await
            .unwrap();
        let left: Vec<i64> = db
            .store
            .snapshots(&BookHistoryQuery {
                exchange: Exchange::VenueA,
                market_id: "RET".into(),
                asset_id: None,
                window: HistoryWindow::Latest { before: None },
                limit: 100,
            })
            .await
            .unwrap()
            .iter()
            .map(|s| s.timestamp.millis())
            .collect();
        assert_eq!(left, kept.iter().rev().copied().collect::<Vec<_>>());
        if db.backend() == "sqlite" {
            assert_eq!(
                (report.rows, report.steps),
                (3, 4),
                "one row per step, then an empty step"
            );
        } else {
            assert_eq!(report.partitions, 3, "one day each");
        }
    })
    .await;
}

/// A keyframe of a book at `offset_ms`.
fn keyframe(seq: u64, offset_ms: i64) -> BookEvent {
    BookEvent {
        seq,
        venue_seq: None,
        venue_ts: None,
        received_at: Timestamp::from_millis(BASE + offset_ms),
        change: BookChange::Snapshot {
            bids: vec![lv(500_000, 10)],
            asks: vec![],
            no_bids: vec![lv(400_000, 5)],
        },
    }
}

fn gap_at(seq: u64, offset_ms: i64, cause: GapCause) -> BookEvent {
    BookEvent {
        seq,
        venue_seq: None,
        venue_ts: None,
        received_at: Timestamp::from_millis(BASE + offset_ms),
        change: BookChange::Gap(cause),
    }
}

#[tokio::test]
async fn gaps_are_listed_per_book_with_cause_and_end_and_paged() {
    for_each_backend(async |db| {
        seed_markets(db.store.as_ref()).await;
        let s = db.store.as_ref();
        let heads = s
            .register_log_books(&[
                BookKey::venue_a(A_PLAIN),
                BookKey::venue_b(B_COND, YES_TOKEN),
                BookKey::venue_b(B_COND, NO_TOKEN),
            ])
            .await
            .unwrap();
        // venue_a: a disconnect from 10 s to 12 s, then a silence still open at 30 s.
        let a = vec![
            keyframe(1, 0),
            gap_at(2, 10_000, GapCause::Disconnect),
            keyframe(3, 12_000),
            gap_at(4, 30_000, GapCause::Silence),
        ];
        // venue_b: both tokens lose the socket at 5 s; the YES token also had a sequence gap at 20 s.
        let yes = vec![
            keyframe(1, 0),
            gap_at(2, 5_000, GapCause::Disconnect),
            keyframe(3, 6_000),
            gap_at(4, 20_000, GapCause::SequenceGap),
            keyframe(5, 20_500),
        ];
        let no = vec![keyframe(1, 0), gap_at(2, 5_000, GapCause::Disconnect), keyframe(3, 6_500)];
        let runs: Vec<LogRun> = [a, yes, no]
            .into_iter()
            .zip(&heads)
            .map(|(events, h)| LogRun { book_id: h.id, events })
            .collect();
        s.append_log(&runs).await.unwrap();
        let app = TestApp::new(db, |_| {});
        let k = create_keys(&db.store).await;

        let v = app
            .get_key(&format!("/v1/historical/gaps?exchange=venue_a&market_id={A_PLAIN}"), &k.free)
            .await
            .ok();
        assert_eq!(
            v["gaps"],
            json!([
                {"exchange": "venue_a", "market_id": A_PLAIN, "asset_id": null, "outcome": null,
                 "start_time": BASE + 10_000, "end_time": BASE + 12_000, "cause": "disconnect", "ended_by": "resnapshot"},
                {"exchange": "venue_a", "market_id": A_PLAIN, "asset_id": null, "outcome": null,
                 "start_time": BASE + 30_000, "end_time": null, "cause": "silence", "ended_by": null}
            ])
        );
        // A range keeps the gaps that overlap it.
        let v = app
            .get_key(
                &format!(
                    "/historical/gaps?exchange=venue_a&market_id={A_PLAIN}&start_time={}&end_time={}",
                    BASE + 11_000,
                    BASE + 20_000
                ),
                &k.free,
            )
            .await
            .ok();
        assert_eq!(v["gaps"].as_array().unwrap().len(), 1);
        assert_eq!(v["gaps"][0]["cause"], "disconnect");

        // venue_b: both tokens, oldest first, YES before NO at the same instant; paged one by one.
        let pages = walk(&app, &k.free, &format!("/v1/historical/gaps?exchange=venue_b&market_id={B_COND}&limit=1"), async || {}).await;
        let rows: Vec<(i64, String, String)> = pages
            .iter()
            .flat_map(|p| p["gaps"].as_array().unwrap().clone())
            .map(|g| {
                (
                    g["start_time"].as_i64().unwrap() - BASE,
                    g["outcome"].as_str().unwrap().to_string(),
                    g["cause"].as_str().unwrap().to_string(),
                )
            })
            .collect();
        assert_eq!(
            rows,
            [
                (5_000, "YES".to_string(), "disconnect".to_string()),
                (5_000, "NO".to_string(), "disconnect".to_string()),
                (20_000, "YES".to_string(), "sequence_gap".to_string()),
            ]
        );
        // One token with asset_id.
        let v = app
            .get_key(
                &format!("/v1/historical/gaps?exchange=venue_b&market_id={B_COND}&asset_id={NO_TOKEN}"),
                &k.free,
            )
            .await
            .ok();
        assert_eq!(v["gaps"].as_array().unwrap().len(), 1);
        assert_eq!(v["gaps"][0]["end_time"], BASE + 6_500);

        // Errors name the parameter; unknown markets are 404; a key is required.
        app.get_key(&format!("/v1/historical/gaps?market_id={A_PLAIN}"), &k.free)
            .await
            .error(400, "missing_parameter", Some("exchange"));
        app.get_key(
            &format!("/v1/historical/gaps?exchange=venue_a&market_id={A_PLAIN}&asset_id=1"),
            &k.free,
        )
        .await
        .error(400, "invalid_parameter", Some("asset_id"));
        app.get_key(
            &format!("/v1/historical/gaps?exchange=venue_a&market_id={A_PLAIN}&pagination_key=xyz"),
            &k.free,
        )
        .await
        .error(400, "invalid_parameter", Some("pagination_key"));
        app.get_key("/v1/historical/gaps?exchange=venue_a&market_id=NOPE", &k.free)
            .await
            .error(404, "not_found", None);
        app.get(&format!("/v1/historical/gaps?exchange=venue_a&market_id={A_PLAIN}"))
            .await
            .error(401, "unauthorized", None);
    })
    .await;
}

#[tokio::test]
async fn the_gaps_route_is_documented() {
    for_each_backend(async |db| {
        let app = TestApp::new(db, |_| {});
        let doc = app.get("/openapi.json").await.ok();
        {
            let path = "/v1/historical/gaps";
            let op = &doc["paths"][path]["get"];
            assert_eq!(op["tags"][0], "historical", "{path}");
            let params: Vec<&str> = op["parameters"]
                .as_array()
                .unwrap()
                .iter()
                .map(|p| p["name"].as_str().unwrap())
                .collect();
            for p in [
                "exchange",
                "market_id",
                "asset_id",
                "start_time",
                "end_time",
                "limit",
                "pagination_key",
            ] {
                assert!(params.contains(&p), "{path}: {p} not in {params:?}");
            }
            assert!(!params.contains(&"granularity"), "{params:?}");
            for status in ["200", "400", "401", "404"] {
                assert!(op["responses"][status].is_object(), "{path}: no {status}");
            }
        }
        let causes = &doc["components"]["schemas"]["GapCauseName"]["enum"];
        assert_eq!(
            causes,
            &json!([
                "sequence_gap",
                "disconnect",
                "silence",
                "restart",
                "rate_limited",
                "bad_message",
                "write_failed"
            ])
        );
    })
    .await;
}

/// A change of one YES bid level at `offset_ms` (size 0 removes it).
fn bid_change(seq: u64, offset_ms: i64, price_micros: i64, size_units: i64) -> BookEvent {
    BookEvent {
        seq,
        venue_seq: None,
        venue_ts: None,
        received_at: Timestamp::from_millis(BASE + offset_ms),
        change: BookChange::Delta(vec![LevelChange {
            side: Side::Bid,
            price: Price::from_micros(price_micros),
            size: Amount::from_units(size_units),
        }]),
    }
}

#[tokio::test]
async fn rows_come_from_the_event_log_with_continuity_after_older_sampled_snapshots() {
    for_each_backend(async |db| {
        seed_markets(db.store.as_ref()).await;
        let s = db.store.as_ref();
        // Sampled snapshots from before the log (0 s, 30 s), and one from its time, which the log supersedes.
        s.insert_snapshots(&[a_snap(A_PLAIN, 0), a_snap(A_PLAIN, 30_000), a_snap(A_PLAIN, 150_000)])
            .await
            .unwrap();
        let heads = s
            .register_log_books(&[
                BookKey::venue_a(A_PLAIN),
                BookKey::venue_b(B_COND, YES_TOKEN),
                BookKey::venue_b(B_COND, NO_TOKEN),
            ])
            .await
            .unwrap();
        // From 60 s: a keyframe, changes, a gap at 130 s and a resnapshot at 190 s.
        let a = vec![
            keyframe(1, 60_000),
            bid_change(2, 61_000, 510_000, 3),
            bid_change(3, 125_000, 520_000, 4),
            gap_at(4, 130_000, GapCause::Disconnect),
            keyframe(5, 190_000),
            bid_change(6, 200_000, 560_000, 2),
        ];
        // venue_b: the NO token changes at other moments than the YES token.
        let yes = vec![keyframe(1, 10_000), bid_change(2, 20_000, 510_000, 1)];
        let no = vec![keyframe(1, 5_000), bid_change(2, 15_000, 505_000, 7)];
        let runs: Vec<LogRun> = [a, yes, no]
            .into_iter()
            .zip(&heads)
            .map(|(events, h)| LogRun { book_id: h.id, events })
            .collect();
        s.append_log(&runs).await.unwrap();
        let app = TestApp::new(db, |_| {});
        let k = create_keys(&db.store).await;
        let get = async |q: &str| app.get_key(q, &k.free).await.ok();
        let continuity = |v: &Value| -> Vec<bool> {
            v["snapshots"]
                .as_array()
                .unwrap()
                .iter()
                .map(|r| r["continuous"].as_bool().unwrap())
                .collect()
        };

        // Latest: the log's rows newest first, then the sampled ones from before it.
        let v = get(&format!("/v1/historical/venue_a/orderbook?market_id={A_PLAIN}")).await;
        assert_eq!(offsets(&v), [200_000, 190_000, 125_000, 61_000, 60_000, 30_000, 0]);
        assert_eq!(continuity(&v), [true, false, true, true, true, true, true]);
        assert_eq!(v["snapshots"][0]["best_yes_bid"], 0.56);
        assert_eq!(v["snapshots"][3]["best_yes_bid"], 0.51);
        // Paged one row at a time, the walk is the same.
        let uri = format!("/v1/historical/venue_a/orderbook?market_id={A_PLAIN}&limit=2");
        let walk = walk(&app, &k.free, &uri, async || {}).await;
        let walked: Vec<i64> = walk.iter().flat_map(offsets).collect();
        assert_eq!(walked, [200_000, 190_000, 125_000, 61_000, 60_000, 30_000, 0]);

        // A range at 1m: a sampled row for the minute before the log, then one row per minute from the log; the
        // minute ending in the gap has none, and the one after it is not continuous.
        let range = format!(
            "/v1/historical/venue_a/orderbook?market_id={A_PLAIN}&start_time={BASE}&end_time={}&granularity=1m",
            BASE + 239_999
        );
        let v = get(&range).await;
        assert_eq!(offsets(&v), [30_000, 61_000, 200_000]);
        assert_eq!(continuity(&v), [true, true, false]);

        // Unified on venue_b: each YES row pairs with the NO token's book as of that moment, from the log.
        let v = get(&format!(
            "/v1/historical/orderbook?exchange=venue_b&market_id={B_COND}&format=unified"
        ))
        .await;
        assert_eq!(offsets(&v), [20_000, 10_000]);
        assert_eq!(v["snapshots"][0]["no"]["best_bid"], 0.505);
        assert_eq!(v["snapshots"][1]["no"]["best_bid"], 0.5);
    })
    .await;
}

/// The trade tape, on both backends: newest first without a range (walked in pages through ties on the
/// execution time), oldest first within one, one token with `asset_id`, exact prices and notionals, and the
/// same errors as the order-book routes.
#[tokio::test]
async fn the_trade_tape_pages_through_one_markets_trades() {
    use crossbook_core::{Outcome, TakerSide, Trade};
    for_each_backend(async |db| {
        seed_markets(db.store.as_ref()).await;
        let trade = |ex: Exchange, market: &str, i: i64, outcome: Outcome| Trade {
            exchange: ex,
            source_trade_id: format!("{market}-{i}"),
            market_id: market.into(),
            event_id: "E".into(),
            // Two trades a second: pages cut through ties.
            executed_at: Timestamp::from_millis(BASE + (i / 2) * 1000),
            taker_side: if i % 2 == 0 { TakerSide::Buy } else { TakerSide::Sell },
            outcome,
            price: Price::from_micros(410_000 + i * 10_000),
            size: Amount::from_micros(2_500_000),
        };
        let mut batch: Vec<Trade> = (0..7)
            .map(|i| {
                trade(
                    Exchange::VenueB,
                    B_COND,
                    i,
                    if i % 3 == 0 { Outcome::No } else { Outcome::Yes },
                )
            })
            .collect();
        batch.push(trade(Exchange::VenueA, A_PLAIN, 0, Outcome::No));
        // A venue_b id as ingestion makes it from a trade with a transaction hash (before the walks' range).
        let mut with_tx = trade(Exchange::VenueB, B_COND, -4, Outcome::Yes);
        with_tx.source_trade_id = "0xfeed:0a1b2c3d4e5f".into();
        batch.push(with_tx);
        db.store.insert_trades(&batch).await.unwrap();
        let app = TestApp::new(db, |_| {});
        let k = create_keys(&db.store).await;
        let ids = |v: &Value| -> Vec<String> {
            v["trades"]
                .as_array()
                .unwrap_or_else(|| panic!("no trades: {v}"))
                .iter()
                .map(|t| t["trade_id"].as_str().unwrap().to_string())
                .collect()
        };
        let walk = async |query: &str| {
            let (mut all, mut key) = (Vec::new(), None::<String>);
            loop {
                let page_key = key
                    .as_deref()
                    .map(|k| format!("&pagination_key={k}"))
                    .unwrap_or_default();
                let v = app
                    .get_key(
                        &format!("/v1/historical/venue_b/trades?{query}&limit=3{page_key}"),
                        &k.free,
                    )
                    .await
                    .ok();
                all.extend(ids(&v));
                assert_eq!(
                    v["pagination"]["count"].as_u64().unwrap() as usize,
                    v["trades"].as_array().unwrap().len()
                );
                match v["pagination"]["pagination_key"].as_str() {
                    Some(next) => {
                        assert_eq!(v["pagination"]["has_more"], true);
                        key = Some(next.to_string());
                    }
                    None => break all,
                }
            }
        };
        let mut newest: Vec<String> = (0..7).rev().map(|i| format!("{B_COND}-{i}")).collect();
        newest.push("0xfeed:0a1b2c3d4e5f".into());
        assert_eq!(walk(&format!("market_id={B_COND}")).await, newest, "newest first");
        assert_eq!(
            walk(&format!("market_id={B_COND}&asset_id={NO_TOKEN}")).await,
            [6, 3, 0].map(|i| format!("{B_COND}-{i}")),
            "one token's trades"
        );
        let range = format!("market_id={B_COND}&start_time={}&end_time={}", BASE + 1000, BASE + 2000);
        assert_eq!(
            walk(&range).await,
            [2, 3, 4, 5].map(|i| format!("{B_COND}-{i}")),
            "a range, oldest first"
        );

        let v = app
            .get_key(
                &format!("/v1/historical/venue_b/trades?market_id={B_COND}&limit=1"),
                &k.free,
            )
            .await
            .ok();
        assert_eq!(
            v["trades"][0],
            json!({
                "trade_id": format!("{B_COND}-6"), "market_id": B_COND, "asset_id": NO_TOKEN, "outcome": "NO",
                "side": "buy", "price": 0.47, "size": 2.5, "notional": 1.175,
                "timestamp": BASE + 3000, "executed_at": Timestamp::from_millis(BASE + 3000).to_iso(),
                "transaction_hash": null,
            })
        );
        let yes = app
            .get_key(
                &format!("/v1/historical/venue_b/trades?market_id={B_COND}&asset_id={YES_TOKEN}&limit=200"),
                &k.free,
            )
            .await
            .ok();
        let last = yes["trades"].as_array().unwrap().last().unwrap().clone();
        assert_eq!(
            (last["trade_id"].as_str(), last["transaction_hash"].as_str()),
            (Some("0xfeed:0a1b2c3d4e5f"), Some("0xfeed"))
        );
        assert_eq!(
            (v["exchange"].as_str(), v["market_id"].as_str()),
            (Some("venue_b"), Some(B_COND))
        );
        let v = app
            .get_key(&format!("/v1/historical/venue_a/trades?market_id={A_PLAIN}"), &k.free)
            .await
            .ok();
        assert_eq!(ids(&v), [format!("{A_PLAIN}-0")]);
        assert_eq!(v["trades"][0]["asset_id"], Value::Null);

        // Errors: as the order-book routes.
        let other_key = v["pagination"]["pagination_key"].clone();
        assert!(other_key.is_null(), "one page only");
        let first = app
            .get_key(
                &format!("/v1/historical/venue_b/trades?market_id={B_COND}&limit=1"),
                &k.free,
            )
            .await
            .ok();
        let key = first["pagination"]["pagination_key"].as_str().unwrap();
        app.get_key(
            &format!("/v1/historical/venue_b/trades?market_id={B_COND}&asset_id={YES_TOKEN}&pagination_key={key}"),
            &k.free,
        )
        .await
        .error(400, "invalid_parameter", Some("pagination_key"));
        app.get_key(
            &format!("/v1/historical/venue_b/trades?market_id={B_COND}&start_time={BASE}"),
            &k.free,
        )
        .await
        .error(400, "invalid_parameter", Some("start_time"));
        app.get_key(
            &format!("/v1/historical/venue_b/trades?market_id={B_COND}&limit=0"),
            &k.free,
        )
        .await
        .error(400, "invalid_parameter", Some("limit"));
        app.get_key(
            &format!("/v1/historical/venue_b/trades?market_id={B_COND}&asset_id=333"),
            &k.free,
        )
        .await
        .error(404, "not_found", None);
        app.get_key("/v1/historical/venue_a/trades?market_id=KXNOPE", &k.free)
            .await
            .error(404, "not_found", None);
        app.get(&format!("/v1/historical/venue_a/trades?market_id={A_PLAIN}"))
            .await
            .error(401, "unauthorized", None);
    })
    .await;
}

/// Top of book over time, on both backends: the order-book rows cut to the best quotes, with the venue_a ask
/// derived from the best NO bid, both venue_b tokens or one, and the same paging and errors.
#[tokio::test]
async fn top_of_book_rows_are_the_best_quotes_of_the_order_book_rows() {
    for_each_backend(async |db| {
        seed_markets(db.store.as_ref()).await;
        let mut batch = vec![a_snap(A_PLAIN, 0), a_snap(A_PLAIN, 10_000)];
        for i in 0..3 {
            batch.push(b_snap(YES_TOKEN, i * 10_000, 500_000 + i * 1000));
            batch.push(b_snap(NO_TOKEN, i * 10_000, 450_000 - i * 1000));
        }
        db.store.insert_snapshots(&batch).await.unwrap();
        let app = TestApp::new(db, |_| {});
        let k = create_keys(&db.store).await;

        let v = app
            .get_key(&format!("/v1/historical/venue_a/top-of-book?market_id={A_PLAIN}"), &k.free)
            .await
            .ok();
        assert_eq!(v["pagination"]["count"], 2);
        assert_eq!(
            v["rows"][0],
            json!({
                "market_id": A_PLAIN, "asset_id": null, "outcome": "YES", "timestamp": BASE + 10_000,
                "best_bid": 0.53, "best_bid_size": 100.0, "best_ask": 0.55, "best_ask_size": 70.0,
                "mid": 0.54, "spread": 0.02, "continuous": true,
            }),
            "the YES ask is 1 − the best NO bid, with its size"
        );

        // Both tokens, YES before NO at each time; then the same rows a page at a time.
        let all = app
            .get_key(&format!("/v1/historical/venue_b/top-of-book?market_id={B_COND}"), &k.free)
            .await
            .ok();
        let rows = all["rows"].as_array().unwrap();
        assert_eq!(rows.len(), 6);
        assert_eq!(
            (rows[0]["asset_id"].as_str(), rows[0]["outcome"].as_str(), rows[0]["best_bid"].as_f64()),
            (Some(YES_TOKEN), Some("YES"), Some(0.502))
        );
        assert_eq!(
            (rows[1]["asset_id"].as_str(), rows[1]["best_ask"].as_f64(), rows[1]["best_ask_size"].as_f64()),
            (Some(NO_TOKEN), Some(0.468), Some(15.0))
        );
        let mut paged = Vec::new();
        let mut key = String::new();
        loop {
            let v = app
                .get_key(
                    &format!("/v1/historical/venue_b/top-of-book?market_id={B_COND}&limit=4{key}"),
                    &k.free,
                )
                .await
                .ok();
            paged.extend(v["rows"].as_array().unwrap().iter().cloned());
            match v["pagination"]["pagination_key"].as_str() {
                Some(next) => key = format!("&pagination_key={next}"),
                None => break,
            }
        }
        assert_eq!(&paged, rows, "pages give the same rows");
        let one = app
            .get_key(
                &format!("/v1/historical/venue_b/top-of-book?market_id={B_COND}&asset_id={NO_TOKEN}&start_time={BASE}&end_time={}&granularity=1m", BASE + 60_000),
                &k.free,
            )
            .await
            .ok();
        assert_eq!(one["rows"].as_array().unwrap().len(), 1, "one bucket: {one}");
        assert_eq!(one["rows"][0]["best_bid"], 0.448, "the bucket's last book");

        app.get_key(&format!("/v1/historical/venue_b/top-of-book?market_id={B_COND}&granularity=2m"), &k.free)
            .await
            .error(400, "invalid_parameter", Some("granularity"));
        app.get_key(&format!("/v1/historical/venue_b/top-of-book?market_id={B_COND}&asset_id=333"), &k.free)
            .await
            .error(404, "not_found", None);
        app.get(&format!("/v1/historical/venue_a/top-of-book?market_id={A_PLAIN}"))
            .await
            .error(401, "unauthorized", None);
    })
    .await;
}

/// The execution price of a size at an instant, worked out by hand from the logged books: venue_a's asks
/// derived from the opposite bids, venue_b's token asks walked across two levels, each venue's fee per
/// contract at each level's price, the book's state at the instant (not later), the walk's best ask equal to
/// the order-book route's `best_yes_ask` at that instant, and an instant inside a capture gap priced at
/// nothing with the gap named.
#[tokio::test]
async fn the_execution_price_walks_the_book_as_it_stood() {
    for_each_backend(async |db| {
        seed_markets(db.store.as_ref()).await;
        let s = db.store.as_ref();
        let heads = s
            .register_log_books(&[BookKey::venue_a(A_PLAIN), BookKey::venue_b(B_COND, YES_TOKEN)])
            .await
            .unwrap();
        // venue_a: YES bids 0.50 × 10 and NO bids 0.40 × 5 from 0 s; a disconnect from 10 s to 12 s.
        let a = vec![
            keyframe(1, 0),
            gap_at(2, 10_000, GapCause::Disconnect),
            keyframe(3, 12_000),
        ];
        // venue_b's YES token: asks 0.55 × 4 and 0.56 × 10 from 0 s; from 20 s a single ask 0.90 × 1.
        let asks = |levels: Vec<Level>, seq: u64, offset_ms: i64| BookEvent {
            seq,
            venue_seq: None,
            venue_ts: None,
            received_at: Timestamp::from_millis(BASE + offset_ms),
            change: BookChange::Snapshot {
                bids: vec![lv(500_000, 3)],
                asks: levels,
                no_bids: vec![],
            },
        };
        let yes = vec![
            asks(vec![lv(550_000, 4), lv(560_000, 10)], 1, 0),
            asks(vec![lv(900_000, 1)], 2, 20_000),
        ];
        let runs: Vec<LogRun> = [a, yes]
            .into_iter()
            .zip(&heads)
            .map(|(events, h)| LogRun { book_id: h.id, events })
            .collect();
        s.append_log(&runs).await.unwrap();
        let app = TestApp::new(db, |_| {});
        let k = create_keys(&db.store).await;
        let price = |venue: &str, market: &str, side: &str, size: &str, offset_ms: i64| {
            format!(
                "/v1/historical/{venue}/execution-price?market_id={market}&side={side}&size={size}&time={}",
                BASE + offset_ms
            )
        };

        // YES on venue_a at 1 s: the YES asks are 1 − the NO bids, 0.60 × 5; 3 contracts at 0.60 = 1.80, fee
        // ceil(7 × 0.60 × 0.40) = 2 c each.
        let v = app
            .get_key(&price("venue_a", A_PLAIN, "yes", "3", 1_000), &k.free)
            .await
            .ok();
        assert_eq!(
            v,
            json!({
                "exchange": "venue_a", "market_id": A_PLAIN, "asset_id": null, "side": "yes", "time": BASE + 1_000,
                "continuous": true, "gap": null, "book_time": BASE, "size": 3.0, "filled_size": 3.0,
                "available_size": 5.0, "average_price": 0.6, "worst_price": 0.6, "cost_dollars": 1.8,
                "fee_dollars": 0.06, "total_dollars": 1.86, "fee_model": "venue_a:0.07",
                "levels": [{"price": "0.6000", "size": 3.0}]
            })
        );
        // The order-book route at that instant has the same best ask.
        let book = app
            .get_key(
                &format!(
                    "/v1/historical/venue_a/orderbook?market_id={A_PLAIN}&start_time={}&end_time={}&granularity=1s",
                    BASE,
                    BASE + 1_000
                ),
                &k.free,
            )
            .await
            .ok();
        assert_eq!(book["snapshots"][0]["best_yes_ask"], v["worst_price"]);
        // NO on venue_a: 1 − the YES bids, 0.50 × 10; 12 asked, 10 there. Fee ceil(7 × 0.25) = 2 c each.
        let v = app
            .get_key(&price("venue_a", A_PLAIN, "no", "12", 1_000), &k.free)
            .await
            .ok();
        assert_eq!(
            (
                &v["filled_size"],
                &v["available_size"],
                &v["cost_dollars"],
                &v["fee_dollars"],
                &v["average_price"]
            ),
            (&json!(10.0), &json!(10.0), &json!(5.0), &json!(0.2), &json!(0.5))
        );
        // Inside the disconnect: nothing priced, the gap named; at its end the book is known again.
        let v = app
            .get_key(&price("venue_a", A_PLAIN, "yes", "3", 11_000), &k.free)
            .await
            .ok();
        assert_eq!(
            (
                &v["continuous"],
                &v["gap"],
                &v["filled_size"],
                &v["average_price"],
                &v["levels"]
            ),
            (
                &json!(false),
                &json!({"cause": "disconnect", "start_time": BASE + 10_000, "end_time": BASE + 12_000}),
                &json!(0.0),
                &Value::Null,
                &json!([])
            )
        );
        let v = app
            .get_key(&price("venue_a", A_PLAIN, "yes", "3", 12_000), &k.free)
            .await
            .ok();
        assert_eq!(
            (&v["continuous"], &v["book_time"]),
            (&json!(true), &json!(BASE + 12_000))
        );

        // venue_b, YES at 5 s: 4 at 0.55 and 2 at 0.56 = 3.32; the average 0.5533. Fees at 0.07:
        // 0.07 × 0.55 × 0.45 = 0.017325 → 0.01733 per contract, 0.07 × 0.56 × 0.44 = 0.017248 → 0.01725;
        // 4 × 0.01733 + 2 × 0.01725 = 0.10382 → 0.10 dollars.
        let v = app
            .get_key(&price("venue_b", B_COND, "yes", "6", 5_000), &k.free)
            .await
            .ok();
        assert_eq!(
            (
                &v["asset_id"],
                &v["average_price"],
                &v["worst_price"],
                &v["cost_dollars"],
                &v["fee_dollars"]
            ),
            (
                &json!(YES_TOKEN),
                &json!(0.5533),
                &json!(0.56),
                &json!(3.32),
                &json!(0.1)
            )
        );
        assert_eq!(v["fee_model"], "venue_b:other=0.07");
        assert_eq!(
            v["levels"],
            json!([{"price": "0.5500", "size": 4.0}, {"price": "0.5600", "size": 2.0}])
        );
        // At 25 s the book had changed: the state then is walked, not the earlier one.
        let v = app
            .get_key(&price("venue_b", B_COND, "yes", "6", 25_000), &k.free)
            .await
            .ok();
        assert_eq!(
            (&v["filled_size"], &v["worst_price"], &v["book_time"]),
            (&json!(1.0), &json!(0.9), &json!(BASE + 20_000))
        );
        // The NO token was never recorded: not continuous, no gap, nothing priced.
        let v = app
            .get_key(&price("venue_b", B_COND, "no", "1", 5_000), &k.free)
            .await
            .ok();
        assert_eq!(
            (&v["continuous"], &v["gap"], &v["filled_size"]),
            (&json!(false), &Value::Null, &json!(0.0))
        );

        // Bad input: each a 400 naming the parameter, an unknown market a 404.
        for (query, code, param) in [
            (
                format!("market_id={A_PLAIN}&side=yes&size=3"),
                "missing_parameter",
                "time",
            ),
            (format!("side=yes&size=3&time={BASE}"), "missing_parameter", "market_id"),
            (
                format!("market_id={A_PLAIN}&side=maybe&size=3&time={BASE}"),
                "invalid_parameter",
                "side",
            ),
            (
                format!("market_id={A_PLAIN}&side=yes&size=0&time={BASE}"),
                "invalid_parameter",
                "size",
            ),
            (
                format!("market_id={A_PLAIN}&side=yes&size=-1&time={BASE}"),
                "invalid_parameter",
                "size",
            ),
            (
                format!("market_id={A_PLAIN}&side=yes&size=1.0000001&time={BASE}"),
                "invalid_parameter",
                "size",
            ),
            (
                format!("market_id={A_PLAIN}&side=yes&size=2000000000&time={BASE}"),
                "invalid_parameter",
                "size",
            ),
            (
                format!("market_id={A_PLAIN}&side=yes&size=3&time=1763000100"),
                "invalid_parameter",
                "time",
            ),
        ] {
            app.get_key(&format!("/v1/historical/venue_a/execution-price?{query}"), &k.free)
                .await
                .error(400, code, Some(param));
        }
        app.get_key(&price("venue_a", "KXNOPE", "yes", "3", 1_000), &k.free)
            .await
            .error(404, "not_found", None);
        app.get(&price("venue_a", A_PLAIN, "yes", "3", 1_000))
            .await
            .error(401, "unauthorized", None);
    })
    .await;
}
