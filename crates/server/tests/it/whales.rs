//! Whale routes (spec §2.13, §4.4, §5.4; contracts §7) and the whale tracker, on both backends: thresholds at
//! the edge, `min_trade_size`, filters, paging, the watchlist lifecycle and its status codes, stats per period,
//! the daily pool, the preview per plan, locked catalog entries, and a whale from the bus to the feeds.

use std::{sync::Arc, time::Duration};

use axum::{body::Body, http::Method};
use crossbook_core::{
    Amount, Event, Exchange, Market, Outcome, Price, Status, TakerSide, Timestamp, Trade, whale::utc_day,
};
use crossbook_live::DomainEvent;
use crossbook_server::whales::daily_pool;
use crossbook_store::{Store, testing::for_each_backend};
use serde_json::{Value, json};
use tokio_util::{sync::CancellationToken, task::TaskTracker};

use crate::util::*;

const A: Exchange = Exchange::VenueA;
const B: Exchange = Exchange::VenueB;

const MIN: i64 = 60_000;

fn ago(minutes: i64) -> Timestamp {
    Timestamp::from_millis(Timestamp::now().millis() - minutes * MIN)
}

/// A trade at 0.40 whose notional is exactly `notional_micros` micro-dollars (a multiple of 0.4 µ$).
fn trade(ex: Exchange, id: &str, event: &str, market: &str, at: Timestamp, notional_micros: i64) -> Trade {
    Trade {
        exchange: ex,
        source_trade_id: id.into(),
        market_id: market.into(),
        event_id: event.into(),
        executed_at: at,
        taker_side: TakerSide::Sell,
        outcome: Outcome::No,
        price: Price::from_cents(40),
        size: Amount::from_micros(notional_micros * 10 / 4),
    }
}

fn usd(u: i64) -> i64 {
    u * 1_000_000
}

/// Seeds active events `EV0..n` alternating venues (even: venue_a), volume_24h decreasing, one market each
/// (`M<i>`, titled "Market i"); plus a closed venue_a event `CLOSED`.
async fn seed_events(store: &Arc<dyn Store>, n: usize) {
    let mut events = Vec::new();
    let mut markets = Vec::new();
    for i in 0..n {
        let ex = if i % 2 == 0 { A } else { B };
        let mut e = Event::new(ex, &format!("EV{i}"), "SER", &format!("Event {i}"));
        e.volume_24h = Some(Amount::from_units(100_000 - i as i64));
        events.push(e);
        let mut m = Market::new(
            ex,
            &format!("M{i}"),
            &format!("EV{i}"),
            "SER",
            &format!("Question {i}?"),
        );
        m.title = Some(format!("Market {i}"));
        if ex == B {
            m.slug = Some(format!("market-{i}"));
        }
        markets.push(m);
    }
    let mut closed = Event::new(A, "CLOSED", "SER", "Closed event");
    closed.status = Status::Closed;
    events.push(closed);
    store.upsert_events(&events, Timestamp::now()).await.unwrap();
    store.upsert_markets(&markets, Timestamp::now()).await.unwrap();
}

async fn send_json(app: &TestApp, method: Method, uri: &str, key: &str, body: Value) -> Resp {
    app.send(
        method,
        uri,
        &[("x-api-key", key), ("content-type", "application/json")],
        Body::from(body.to_string()),
    )
    .await
}

async fn track(app: &TestApp, key: &str, ex: &str, ticker: &str, threshold: Value) -> Resp {
    // `Value::Null` is sent as an explicit null (the default threshold).
    let body = json!({"exchange": ex, "event_ticker": ticker, "whale_threshold_usd": threshold});
    send_json(app, Method::POST, "/whales/user/events/by-ticker", key, body).await
}

async fn get_as(app: &TestApp, key: Option<&str>, uri: &str) -> Resp {
    match key {
        Some(k) => app.get_key(uri, k).await,
        None => app.get(uri).await,
    }
}

fn trade_ids(v: &Value) -> Vec<String> {
    ids(&v["trades"], "source_trade_id")
}

#[tokio::test]
async fn user_feed_thresholds_override_filters_and_paging() {
    for_each_backend(async |db| {
        seed_events(&db.store, 3).await;
        let keys = create_keys(&db.store).await;
        let app = TestApp::new(db, |_| {});
        assert_eq!(track(&app, &keys.free, "venue_a", "EV0", json!(1000)).await.status, 201);
        assert_eq!(track(&app, &keys.free, "venue_b", "EV1", json!(500)).await.status, 201);
        db.store
            .insert_trades(&[
                trade(A, "edge", "EV0", "M0", ago(10), usd(1000)),
                trade(A, "below", "EV0", "M0", ago(9), usd(1000) - 400_000),
                trade(A, "big", "EV0", "M0", ago(8), usd(4000)),
                trade(B, "b-edge", "EV1", "M1", ago(7), usd(500)),
                trade(B, "b-small", "EV1", "M1", ago(6), usd(100)),
                trade(A, "old", "EV0", "M0", ago(3 * 24 * 60), usd(2000)),
                trade(A, "untracked", "EV2", "M2", ago(5), usd(90_000)),
            ])
            .await
            .unwrap();

        // Each event at its own threshold; equal counts as a whale; newest first.
        let v = app.get_key("/whales/user/feed", &keys.free).await.ok();
        assert_eq!(trade_ids(&v), ["b-edge", "big", "edge", "old"]);
        assert_eq!(v["pagination"], json!({"limit": 50, "offset": 0, "total": 4}));
        assert_eq!(
            v["stats"],
            json!({"total_volume_24h": 5500.0, "total_trades_24h": 3, "avg_trade_size": 1833.33})
        );
        let t = &v["trades"][1];
        let fields: Vec<&str> = t.as_object().unwrap().keys().map(String::as_str).collect();
        for f in [
            "id",
            "exchange",
            "event_id",
            "event_title",
            "market_id",
            "market_ticker",
            "market_title",
            "source_trade_id",
            "executed_at",
            "taker_side",
            "outcome",
            "price",
            "size",
            "notional_usd",
        ] {
            assert!(fields.contains(&f), "{f} missing: {t}");
        }
        assert_eq!(t["exchange"], "venue_a");
        assert_eq!(t["event_id"], "EV0");
        assert_eq!(t["event_title"], "Event 0");
        assert_eq!(t["market_ticker"], "M0");
        assert_eq!(t["market_title"], "Market 0");
        assert_eq!(t["taker_side"], "sell");
        assert_eq!(t["outcome"], "NO");
        assert_eq!(t["price"], 0.4);
        assert_eq!(t["size"], 10000.0);
        assert_eq!(t["notional_usd"], 4000.0);
        assert!(t["id"].is_i64());
        assert_eq!(v["trades"][0]["market_ticker"], "market-1", "venue_b shows the slug");

        // min_trade_size overrides every event's threshold.
        let v = app
            .get_key("/whales/user/feed?min_trade_size=100", &keys.free)
            .await
            .ok();
        assert_eq!(trade_ids(&v), ["b-small", "b-edge", "big", "below", "edge", "old"]);
        let v = app
            .get_key("/whales/user/feed?min_trade_size=2000", &keys.free)
            .await
            .ok();
        assert_eq!(trade_ids(&v), ["big", "old"]);
        let v = app
            .get_key("/whales/user/feed?min_trade_size=999.6", &keys.free)
            .await
            .ok();
        assert_eq!(trade_ids(&v), ["big", "below", "edge", "old"], "999.60 meets 999.6");

        // Platform, event and date filters.
        let v = app.get_key("/whales/user/feed?platform=venue_b", &keys.free).await.ok();
        assert_eq!(trade_ids(&v), ["b-edge"]);
        let v = app.get_key("/whales/user/feed?event_id=EV0", &keys.free).await.ok();
        assert_eq!(trade_ids(&v), ["big", "edge", "old"]);
        let v = app.get_key("/whales/user/feed?event_id=EV2", &keys.free).await.ok();
        assert_eq!(trade_ids(&v), Vec::<String>::new(), "not on the watchlist");
        let start = ago(9).to_iso();
        let end = ago(7).to_iso();
        let v = app
            .get_key(
                &format!("/whales/user/feed?start_date={start}&end_date={end}"),
                &keys.free,
            )
            .await
            .ok();
        assert_eq!(trade_ids(&v), ["b-edge", "big"], "inclusive bounds");
        assert_eq!(v["pagination"]["total"], 2);
        let v = app
            .get_key(&format!("/whales/user/feed?end_date={}", ago(60).to_iso()), &keys.free)
            .await
            .ok();
        assert_eq!(trade_ids(&v), ["old"]);

        // Paging.
        let v = app.get_key("/whales/user/feed?limit=2&offset=1", &keys.free).await.ok();
        assert_eq!(trade_ids(&v), ["big", "edge"]);
        assert_eq!(v["pagination"], json!({"limit": 2, "offset": 1, "total": 4}));
        let v = app.get_key("/whales/user/feed?limit=500", &keys.free).await.ok();
        assert_eq!(v["pagination"]["limit"], 500);

        // Another customer's feed is their own (empty) watchlist.
        let v = app.get_key("/whales/user/feed", &keys.trader).await.ok();
        assert_eq!(v["pagination"]["total"], 0);

        // Validation: every error names its parameter.
        for (q, param) in [
            ("limit=0", "limit"),
            ("limit=501", "limit"),
            ("limit=", "limit"),
            ("offset=-1", "offset"),
            ("platform=venue_c", "platform"),
            ("event_id=", "event_id"),
            ("min_trade_size=-1", "min_trade_size"),
            ("min_trade_size=abc", "min_trade_size"),
            ("start_date=yesterday", "start_date"),
            ("end_date=", "end_date"),
            ("start_date=2026-11-22&end_date=2026-11-21", "start_date"),
        ] {
            app.get_key(&format!("/whales/user/feed?{q}"), &keys.free).await.error(
                400,
                "invalid_parameter",
                Some(param),
            );
        }
        // Key required; no /v1 alias.
        app.get("/whales/user/feed").await.error(401, "unauthorized", None);
        app.get_key("/whales/user/feed", UNKNOWN_KEY)
            .await
            .error(401, "unauthorized", None);
        app.get_key("/v1/whales/user/feed", &keys.free)
            .await
            .error(404, "not_found", None);
    })
    .await;
}

#[tokio::test]
async fn watchlist_create_duplicate_unknown_patch_delete() {
    for_each_backend(async |db| {
        seed_events(&db.store, 2).await;
        let keys = create_keys(&db.store).await;
        let app = TestApp::new(db, |_| {});
        db.store
            .insert_trades(&[
                trade(A, "w1", "EV0", "M0", ago(5), usd(1500)),
                trade(A, "w2", "EV0", "M0", ago(4), usd(800)),
            ])
            .await
            .unwrap();

        // Created with the default threshold (1000).
        let r = track(&app, &keys.free, "venue_a", "EV0", Value::Null).await;
        assert_eq!(r.status, 201, "{}", r.text);
        let v = r.json();
        assert_eq!(v["success"], true);
        assert!(v["message"].as_str().is_some_and(|m| !m.is_empty()));
        let id = v["id"].as_i64().unwrap();
        assert_eq!(v["exchange"], "venue_a");
        assert_eq!(v["event_id"], "EV0");
        assert_eq!(v["event_ticker"], "EV0");
        assert_eq!(v["event_title"], "Event 0");
        assert_eq!(v["whale_threshold_usd"], 1000.0);
        assert_eq!(v["whale_count_24h"], 1);
        assert!(Timestamp::parse_iso(v["created_at"].as_str().unwrap()).is_ok());

        // Duplicate, unknown, closed, invalid bodies.
        track(&app, &keys.free, "venue_a", "EV0", json!(5))
            .await
            .error(409, "conflict", None);
        track(&app, &keys.free, "venue_a", "NOPE", Value::Null)
            .await
            .error(404, "not_found", None);
        track(&app, &keys.free, "venue_b", "EV0", Value::Null)
            .await
            .error(404, "not_found", None);
        track(&app, &keys.free, "venue_a", "CLOSED", Value::Null).await.error(
            400,
            "invalid_parameter",
            Some("event_ticker"),
        );
        track(&app, &keys.free, "venue_x", "EV1", Value::Null)
            .await
            .error(400, "invalid_parameter", Some("exchange"));
        track(&app, &keys.free, "venue_b", "EV1", json!(-5)).await.error(
            400,
            "invalid_parameter",
            Some("whale_threshold_usd"),
        );
        track(&app, &keys.free, "venue_b", "EV1", json!("lots")).await.error(
            400,
            "invalid_parameter",
            Some("whale_threshold_usd"),
        );
        send_json(
            &app,
            Method::POST,
            "/whales/user/events/by-ticker",
            &keys.free,
            json!({"event_ticker": "EV1"}),
        )
        .await
        .error(400, "missing_parameter", Some("exchange"));
        send_json(
            &app,
            Method::POST,
            "/whales/user/events/by-ticker",
            &keys.free,
            json!({"exchange": "venue_b"}),
        )
        .await
        .error(400, "missing_parameter", Some("event_ticker"));
        send_json(
            &app,
            Method::POST,
            "/whales/user/events/by-ticker",
            &keys.free,
            json!([1]),
        )
        .await
        .error(400, "invalid_parameter", None);
        app.send(
            Method::POST,
            "/whales/user/events/by-ticker",
            &[("x-api-key", keys.free.as_str()), ("content-type", "application/json")],
            Body::from("{not json"),
        )
        .await
        .error(400, "invalid_parameter", None);
        let r = track(&app, &keys.free, "venue_b", "EV1", json!(250.5)).await;
        assert_eq!(r.status, 201, "{}", r.text);
        let id_b = r.json()["id"].as_i64().unwrap();
        // Another customer may track the same event.
        assert_eq!(
            track(&app, &keys.builder, "venue_a", "EV0", Value::Null).await.status,
            201
        );

        let v = app.get_key("/whales/user/events", &keys.free).await.ok();
        let list = v["tracked_events"].as_array().unwrap();
        assert_eq!(list.len(), 2);
        assert_eq!(list[0]["id"], id);
        assert_eq!(list[1]["whale_threshold_usd"], 250.5);

        // PATCH: the caller's own entry only.
        let r = send_json(
            &app,
            Method::PATCH,
            &format!("/whales/user/events/{id}"),
            &keys.free,
            json!({"whale_threshold_usd": 800}),
        )
        .await;
        let v = r.ok();
        assert_eq!(v["success"], true);
        assert_eq!(v["id"], id);
        assert_eq!(v["whale_threshold_usd"], 800.0);
        assert_eq!(v["whale_count_24h"], 2, "800 now counts");
        send_json(
            &app,
            Method::PATCH,
            &format!("/whales/user/events/{id}"),
            &keys.trader,
            json!({"whale_threshold_usd": 1}),
        )
        .await
        .error(404, "not_found", None);
        send_json(
            &app,
            Method::PATCH,
            &format!("/whales/user/events/{id}"),
            &keys.free,
            json!({}),
        )
        .await
        .error(400, "missing_parameter", Some("whale_threshold_usd"));
        send_json(
            &app,
            Method::PATCH,
            "/whales/user/events/abc",
            &keys.free,
            json!({"whale_threshold_usd": 1}),
        )
        .await
        .error(400, "invalid_parameter", Some("id"));

        // DELETE by id and by ticker.
        app.send(
            Method::DELETE,
            &format!("/whales/user/events/{id}"),
            &[("x-api-key", keys.trader.as_str())],
            Body::empty(),
        )
        .await
        .error(404, "not_found", None);
        let r = app
            .send(
                Method::DELETE,
                &format!("/whales/user/events/{id}"),
                &[("x-api-key", keys.free.as_str())],
                Body::empty(),
            )
            .await;
        assert_eq!(
            r.ok(),
            json!({"success": true, "id": id, "exchange": "venue_a", "event_ticker": "EV0"})
        );
        app.send(
            Method::DELETE,
            &format!("/whales/user/events/{id}"),
            &[("x-api-key", keys.free.as_str())],
            Body::empty(),
        )
        .await
        .error(404, "not_found", None);
        let r = app
            .send(
                Method::DELETE,
                "/whales/user/events/by-ticker/venue_b/EV1",
                &[("x-api-key", keys.free.as_str())],
                Body::empty(),
            )
            .await;
        assert_eq!(
            r.ok(),
            json!({"success": true, "id": id_b, "exchange": "venue_b", "event_ticker": "EV1"})
        );
        app.send(
            Method::DELETE,
            "/whales/user/events/by-ticker/venue_b/EV1",
            &[("x-api-key", keys.free.as_str())],
            Body::empty(),
        )
        .await
        .error(404, "not_found", None);
        app.send(
            Method::DELETE,
            "/whales/user/events/by-ticker/venue_z/EV1",
            &[("x-api-key", keys.free.as_str())],
            Body::empty(),
        )
        .await
        .error(400, "invalid_parameter", Some("exchange"));
        let v = app.get_key("/whales/user/events", &keys.free).await.ok();
        assert_eq!(v, json!({"tracked_events": []}));
        // The other customer's entry is untouched.
        let v = app.get_key("/whales/user/events", &keys.builder).await.ok();
        assert_eq!(v["tracked_events"].as_array().unwrap().len(), 1);
        app.send(Method::POST, "/whales/user/events/by-ticker", &[], Body::empty())
            .await
            .error(401, "unauthorized", None);
    })
    .await;
}

#[tokio::test]
async fn stats_per_period() {
    for_each_backend(async |db| {
        seed_events(&db.store, 3).await;
        let keys = create_keys(&db.store).await;
        let app = TestApp::new(db, |_| {});
        let id0 = track(&app, &keys.free, "venue_a", "EV0", json!(1000)).await.json()["id"].clone();
        track(&app, &keys.free, "venue_a", "EV2", json!(1000)).await;
        let mut second = Market::new(A, "M0b", "EV0", "SER", "Second?");
        second.title = Some("Second".into());
        db.store.upsert_markets(&[second], Timestamp::now()).await.unwrap();
        db.store
            .insert_trades(&[
                trade(A, "h1", "EV0", "M0", ago(60), usd(1000)),
                trade(A, "h1b", "EV0", "M0b", ago(61), usd(3000)),
                trade(A, "small", "EV0", "M0", ago(62), usd(10)),
                trade(A, "d3", "EV0", "M0", ago(3 * 24 * 60), usd(2000)),
                trade(A, "d30", "EV0", "M0", ago(30 * 24 * 60), usd(5000)),
            ])
            .await
            .unwrap();
        let stats = |v: &Value| v["events"][0]["stats"].clone();

        let v = app.get_key("/whales/user/stats", &keys.free).await.ok();
        assert_eq!(v["period"], "24h");
        assert_eq!(v["events"][0]["id"], id0);
        assert_eq!(v["events"][0]["event_title"], "Event 0");
        assert_eq!(
            stats(&v),
            json!({"trade_count": 2, "total_volume": 4000.0, "avg_trade_size": 2000.0, "market_count": 2})
        );
        // Every watchlist event appears, with zero stats when it has no whale trades.
        assert_eq!(v["events"][1]["event_id"], "EV2");
        assert_eq!(
            v["events"][1]["stats"],
            json!({"trade_count": 0, "total_volume": 0.0, "avg_trade_size": 0.0, "market_count": 0})
        );
        let v = app.get_key("/whales/user/stats?period=7d", &keys.free).await.ok();
        assert_eq!(v["period"], "7d");
        assert_eq!(stats(&v)["trade_count"], 3);
        assert_eq!(stats(&v)["total_volume"], 6000.0);
        let v = app.get_key("/whales/user/stats?period=all", &keys.free).await.ok();
        assert_eq!(stats(&v)["trade_count"], 4);
        assert_eq!(stats(&v)["avg_trade_size"], 2750.0);
        app.get_key("/whales/user/stats?period=1y", &keys.free)
            .await
            .error(400, "invalid_parameter", Some("period"));
        app.get("/whales/user/stats").await.error(401, "unauthorized", None);
    })
    .await;
}

#[tokio::test]
async fn the_pool_is_fixed_for_a_day_and_rotates_across_days() {
    for_each_backend(async |db| {
        seed_events(&db.store, 50).await;
        let app = TestApp::new(db, |_| {});

        let day1 = daily_pool(&*app.state.store, app.state.config.whale_pool_size, "2026-11-21")
            .await
            .unwrap();
        assert_eq!(day1.len(), 20);
        // Drawn from the 40 events with the most volume; never the closed one.
        for (_, id) in &day1 {
            let i: usize = id.trim_start_matches("EV").parse().unwrap();
            assert!(i < 40, "{id}");
        }
        assert_eq!(
            daily_pool(&*app.state.store, app.state.config.whale_pool_size, "2026-11-21")
                .await
                .unwrap(),
            day1
        );
        let day2 = daily_pool(&*app.state.store, app.state.config.whale_pool_size, "2026-11-22")
            .await
            .unwrap();
        assert_eq!(day2.len(), 20);
        assert_ne!(day1, day2);
        // Once drawn, a day's pool no longer depends on the data.
        let mut e = Event::new(A, "EV0", "SER", "Event 0");
        e.status = Status::Closed;
        db.store.upsert_events(&[e], Timestamp::now()).await.unwrap();
        assert_eq!(
            daily_pool(&*app.state.store, app.state.config.whale_pool_size, "2026-11-21")
                .await
                .unwrap(),
            day1
        );

        // Through HTTP: two calls on one day agree, and name today's pool.
        let a = app.get("/v1/whales/public/events").await.ok();
        let b = app.get("/v1/whales/public/events").await.ok();
        assert_eq!(a, b);
        assert_eq!(a["pool_date"], utc_day(Timestamp::now()));
        assert_eq!(a["events"].as_array().unwrap().len(), 20);
    })
    .await;
}

#[tokio::test]
async fn public_preview_per_plan_and_locked_catalog() {
    for_each_backend(async |db| {
        seed_events(&db.store, 6).await;
        let keys = create_keys(&db.store).await;
        let app = TestApp::new(db, |_| {});

        // The full catalog (Builder) gives the pool order.
        let full = app.get_key("/v1/whales/public/events", &keys.builder).await.ok();
        assert_eq!(full["unlocked_events"], 6);
        let order: Vec<String> = ids(&full["events"], "event_id");
        assert_eq!(order.len(), 6);
        let ex_of = |id: &str| {
            if id.trim_start_matches("EV").parse::<usize>().unwrap() % 2 == 0 {
                A
            } else {
                B
            }
        };
        let market_of = |id: &str| id.replacen("EV", "M", 1);
        // One whale (1000 ≥ 500), one trade below the public minimum, per pool event.
        let mut trades = Vec::new();
        for (i, id) in order.iter().enumerate() {
            trades.push(trade(
                ex_of(id),
                &format!("w-{id}"),
                id,
                &market_of(id),
                ago(10 + i as i64),
                usd(1000),
            ));
            trades.push(trade(
                ex_of(id),
                &format!("s-{id}"),
                id,
                &market_of(id),
                ago(30),
                usd(499),
            ));
        }
        db.store.insert_trades(&trades).await.unwrap();

        for key in [None, Some(UNKNOWN_KEY), Some(keys.free.as_str())] {
            let cat = get_as(&app, key, "/v1/whales/public/events").await.ok();
            assert_eq!(cat["unlocked_events"], 3, "{key:?}");
            let events = cat["events"].as_array().unwrap();
            assert_eq!(events.len(), 6);
            for (i, e) in events.iter().enumerate() {
                assert!(e["title"].as_str().unwrap().starts_with("Event "), "{e}");
                assert!(e["exchange"].is_string());
                if i < 3 {
                    assert_eq!(e["locked"], false);
                    assert_eq!(e["event_id"], order[i]);
                    assert_eq!(e["trades_24h"], 2);
                    assert_eq!(e["volume_24h"], 1499.0);
                    assert_eq!(e["whale_trades_24h"], 1);
                } else {
                    assert_eq!(
                        e,
                        &json!({"exchange": e["exchange"], "event_id": null, "title": e["title"], "trades_24h": null,
                                "volume_24h": null, "whale_trades_24h": null, "locked": true})
                    );
                }
            }
            let feed = get_as(&app, key, "/v1/whales/public/feed").await.ok();
            assert_eq!(feed["preview_only"], true);
            assert_eq!(feed["unlocked_events"], 3);
            // Newest first: the whales of the first three events; none of the locked ones.
            let want: Vec<String> = order[..3].iter().map(|id| format!("w-{id}")).collect();
            assert_eq!(trade_ids(&feed), want);
            assert_eq!(feed["pagination"]["total"], 3);
            // The three locked events' whales exist and are counted, not shown (their 499 trades are below
            // the minimum and not counted).
            assert_eq!(feed["locked_trades"], 3);
            assert_eq!(feed["stats"]["total_trades_24h"], 3);
            assert_eq!(feed["stats"]["total_volume_24h"], 3000.0);
        }
        // The count follows the request's filters: above every whale, nothing is locked either.
        let feed = app.get("/v1/whales/public/feed?min_trade_size=1000.01").await.ok();
        assert_eq!(
            (feed["pagination"]["total"].clone(), feed["locked_trades"].clone()),
            (json!(0), json!(0))
        );
        for key in [&keys.builder, &keys.trader] {
            let feed = app.get_key("/v1/whales/public/feed", key).await.ok();
            assert_eq!(feed["preview_only"], false);
            assert_eq!(feed["unlocked_events"], 6);
            assert_eq!(feed["pagination"]["total"], 6);
            assert_eq!(feed["locked_trades"], 0, "a paid key sees the whole pool");
            let cat = app.get_key("/v1/whales/public/events", key).await.ok();
            assert!(cat["events"].as_array().unwrap().iter().all(|e| e["locked"] == false));
        }
        // Filters.
        let feed = app
            .get_key("/v1/whales/public/feed?min_trade_size=1000.01", &keys.trader)
            .await
            .ok();
        assert_eq!(feed["pagination"]["total"], 0);
        let feed = app
            .get_key("/v1/whales/public/feed?platform=venue_b&limit=1", &keys.trader)
            .await
            .ok();
        assert_eq!(feed["pagination"], json!({"limit": 1, "offset": 0, "total": 3}));
        assert_eq!(feed["trades"][0]["exchange"], "venue_b");
        let cat = app
            .get_key("/v1/whales/public/events?platform=venue_a", &keys.trader)
            .await
            .ok();
        assert!(
            cat["events"]
                .as_array()
                .unwrap()
                .iter()
                .all(|e| e["exchange"] == "venue_a")
        );
        assert_eq!(cat["events"].as_array().unwrap().len(), 3);
        for (q, param) in [
            ("min_trade_size=499.99", "min_trade_size"),
            ("limit=0", "limit"),
            ("limit=501", "limit"),
            ("platform=x", "platform"),
            ("start_date=2026-11-22&end_date=2026-11-21", "start_date"),
        ] {
            app.get(&format!("/v1/whales/public/feed?{q}"))
                .await
                .error(400, "invalid_parameter", Some(param));
        }
        app.get("/v1/whales/public/events?platform=")
            .await
            .error(400, "invalid_parameter", Some("platform"));
        // `/v1` only.
        app.get("/whales/public/feed").await.error(404, "not_found", None);
    })
    .await;
}

#[tokio::test]
async fn a_whale_reaches_the_bus_and_the_feeds() {
    for_each_backend(async |db| {
        seed_events(&db.store, 2).await;
        let keys = create_keys(&db.store).await;
        let app = TestApp::new(db, |c| c.whale_preview_events = 3);
        assert_eq!(track(&app, &keys.free, "venue_b", "EV1", json!(1000)).await.status, 201);
        let tracker = TaskTracker::new();
        let cancel = CancellationToken::new();
        let mut rx = app.state.bus.subscribe();
        crossbook_server::workers::whales::spawn(&app.state, &tracker, &cancel);

        // As ingestion does: store, then publish the new trades.
        let small = trade(B, "small", "EV1", "M1", ago(2), usd(999));
        let whale = trade(B, "whale", "EV1", "M1", ago(1), usd(1000));
        let new = db.store.insert_trades(&[small, whale.clone()]).await.unwrap();
        for t in new {
            app.state.bus.publish(DomainEvent::TradeIngested(t));
        }
        let data = tokio::time::timeout(Duration::from_secs(10), async {
            loop {
                if let DomainEvent::WhaleEntry(d) = rx.recv().await.unwrap() {
                    return d;
                }
            }
        })
        .await
        .expect("whale.entry within 10 s");
        assert_eq!(data.trade, whale, "the 1000 USD trade, with its market");
        assert_eq!(
            data.event_title.as_deref(),
            Some("Event 1"),
            "the event's title from the catalog"
        );
        assert_eq!(
            crossbook_server::whales::whale_entry_data(&data),
            json!({
                "exchange": "venue_b", "event_id": "EV1", "event_title": "Event 1", "market_id": "M1",
                "market_ticker": "market-1", "market_title": "Market 1", "source_trade_id": "whale",
                "executed_at": whale.executed_at.to_iso(), "taker_side": "sell", "outcome": "NO",
                "price": 0.4, "size": 2500.0, "notional_usd": 1000.0
            }),
            "the 999 USD trade is not a whale; the 1000 USD one is"
        );
        cancel.cancel();
        tracker.close();
        tracker.wait().await;

        let v = app.get_key("/whales/user/feed", &keys.free).await.ok();
        assert_eq!(trade_ids(&v), ["whale"]);
        // The feed row says the same as the webhook: which event, and which outcome the whale sold.
        let row = &v["trades"][0];
        assert_eq!(
            (&row["event_title"], &row["outcome"], &row["taker_side"]),
            (&json!("Event 1"), &json!("NO"), &json!("sell"))
        );
        let v = app.get_key("/v1/whales/public/feed", &keys.trader).await.ok();
        assert!(trade_ids(&v).contains(&"whale".to_string()), "{v}");
    })
    .await;
}

/// Both whale feeds page by offset: the OpenAPI document describes `pagination` as the `{limit, offset, total}`
/// the routes send (not the historical routes' cursor object), and the public feed's `locked_trades`.
#[tokio::test]
async fn whale_feed_schemas_match_the_bytes_sent() {
    for_each_backend(async |db| {
        seed_events(&db.store, 6).await;
        let keys = create_keys(&db.store).await;
        let app = TestApp::new(db, |_| {});
        let doc = app.get("/openapi.json").await.ok();
        let schemas = &doc["components"]["schemas"];
        let resolve = |v: &Value| -> Value {
            let name = v["$ref"].as_str().unwrap_or_else(|| panic!("not a $ref: {v}"));
            schemas[name.rsplit('/').next().unwrap()].clone()
        };
        let sorted = |v: &Value| -> Vec<String> {
            let mut k: Vec<String> = v.as_object().unwrap().keys().cloned().collect();
            k.sort();
            k
        };
        for (path, key) in [
            ("/whales/user/feed", Some(keys.trader.as_str())),
            ("/v1/whales/public/feed", None),
        ] {
            let op = &doc["paths"][path]["get"];
            let envelope = resolve(&op["responses"]["200"]["content"]["application/json"]["schema"]);
            let pagination = resolve(&envelope["properties"]["pagination"]);
            assert_eq!(
                sorted(&pagination["properties"]),
                ["limit", "offset", "total"],
                "{path}: {pagination}"
            );
            let mut required: Vec<&str> = pagination["required"]
                .as_array()
                .unwrap()
                .iter()
                .map(|r| r.as_str().unwrap())
                .collect();
            required.sort_unstable();
            assert_eq!(required, ["limit", "offset", "total"], "{path}");

            let body = get_as(&app, key, path).await.ok();
            assert_eq!(
                sorted(&body["pagination"]),
                ["limit", "offset", "total"],
                "{path}: {body}"
            );
            // Every field sent is documented, and every documented field is sent.
            assert_eq!(sorted(&body), sorted(&envelope["properties"]), "{path}");
        }
        let public = resolve(
            &doc["paths"]["/v1/whales/public/feed"]["get"]["responses"]["200"]["content"]["application/json"]["schema"],
        );
        assert_eq!(public["properties"]["locked_trades"]["type"], "integer");
        assert!(
            public["properties"]["locked_trades"]["description"]
                .as_str()
                .is_some_and(|d| d.contains("cannot see")),
            "{public}"
        );
    })
    .await;
}

/// With the default seed, the simulator's whales land on the events the anonymous preview unlocks: the
/// public feed shows whale trades soon after start, not only a count of locked ones.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_simulated_preview_shows_whales_soon_after_start() {
    for_each_backend(async |db| {
        let config = crossbook_server::config::Config {
            simulate: true,
            sim_seed: 42,
            catalog_sync_seconds: 5,
            ..crossbook_server::config::Config::for_tests(&db.url)
        };
        let server = Server::start_simulated(config).await;
        let url = server.url("/v1/whales/public/feed");
        let started = std::time::Instant::now();
        let feed = eventually("a whale in the anonymous public feed", 120, async || {
            let (status, v) = get_json(&url).await?;
            match v["trades"].as_array() {
                Some(t) if status == 200 && !t.is_empty() => Ok(v),
                _ => Err(format!("{status} {v}")),
            }
        })
        .await;
        eprintln!("first preview whale after {:?}", started.elapsed());
        assert_eq!(feed["preview_only"], true);
        assert_eq!(feed["unlocked_events"], 3);
        assert!(feed["locked_trades"].is_i64(), "{feed}");
        server.stop().await.unwrap();
    })
    .await;
}

/// One event's and one market's whale trades and stats, at the threshold the request, the watchlist or the
/// default gives (and saying which), the watchlist's markets ranked by whale volume, and the refusals.
#[tokio::test]
async fn event_and_market_views_and_the_watchlists_markets() {
    for_each_backend(async |db| {
        seed_events(&db.store, 3).await;
        let keys = create_keys(&db.store).await;
        let app = TestApp::new(db, |_| {});
        assert_eq!(
            track(&app, &keys.free, "venue_a", "EV0", json!(1000))
                .await
                .status
                .as_u16(),
            201
        );
        let mut second = Market::new(A, "M0b", "EV0", "SER", "Second?");
        second.title = Some("Second".into());
        db.store.upsert_markets(&[second], Timestamp::now()).await.unwrap();
        db.store
            .insert_trades(&[
                trade(A, "h1", "EV0", "M0", ago(60), usd(1000)),
                trade(A, "h1b", "EV0", "M0b", ago(61), usd(3000)),
                trade(A, "small", "EV0", "M0", ago(62), usd(10)),
                trade(A, "d3", "EV0", "M0", ago(3 * 24 * 60), usd(2500)),
                trade(B, "b1", "EV1", "M1", ago(30), usd(1500)),
            ])
            .await
            .unwrap();
        let get = async |uri: &str| app.get_key(uri, &keys.free).await.ok();

        let v = get("/whales/user/event/EV0").await;
        assert_eq!(
            trade_ids(&v),
            ["h1", "h1b", "d3"],
            "newest first, at the watchlist threshold"
        );
        assert_eq!(
            (&v["exchange"], &v["event_id"], &v["event_title"]),
            (&json!("venue_a"), &json!("EV0"), &json!("Event 0"))
        );
        assert_eq!(
            (&v["threshold_usd"], &v["threshold_source"], &v["on_watchlist"]),
            (&json!(1000.0), &json!("watchlist"), &json!(true))
        );
        assert_eq!(v["pagination"], json!({"limit": 50, "offset": 0, "total": 3}));
        assert_eq!(v["stats"]["total_trades_24h"], 2);
        assert!(v.get("market_id").is_none(), "an event view names no market");
        let v = get("/whales/user/event/EV0?min_trade_size=2500&limit=1").await;
        assert_eq!(trade_ids(&v), ["h1b"]);
        assert_eq!(
            (&v["threshold_source"], &v["pagination"]["total"]),
            (&json!("request"), &json!(2))
        );
        let v = get("/whales/user/event/EV1").await;
        assert_eq!(
            trade_ids(&v),
            ["b1"],
            "an event off the watchlist, at the default threshold"
        );
        assert_eq!(
            (&v["threshold_usd"], &v["threshold_source"], &v["on_watchlist"]),
            (&json!(1000.0), &json!("default"), &json!(false))
        );

        let v = get("/whales/user/event/EV0/stats?period=7d").await;
        assert_eq!(v["period"], "7d");
        assert_eq!(
            v["stats"],
            json!({"trade_count": 3, "total_volume": 6500.0, "avg_trade_size": 2166.67})
        );
        let markets: Vec<(&Value, &Value)> = v["markets"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| (&m["market_id"], &m["stats"]["total_volume"]))
            .collect();
        assert_eq!(
            markets,
            [(&json!("M0"), &json!(3500.0)), (&json!("M0b"), &json!(3000.0))]
        );
        assert_eq!(v["markets"][1]["market_title"], "Second");

        // The watchlist's markets: EV1 is not on it.
        let v = get("/whales/user/markets").await;
        let market_ids = |v: &Value| ids(&v["markets"], "market_id");
        assert_eq!(
            market_ids(&v),
            ["M0b", "M0"],
            "the last 24 hours, highest whale volume first"
        );
        assert_eq!(v["pagination"]["total"], 2);
        assert_eq!(v["markets"][0]["stats"]["trade_count"], 1);
        assert_eq!(market_ids(&get("/whales/user/markets?period=7d").await), ["M0", "M0b"]);
        assert_eq!(
            market_ids(&get("/whales/user/markets?period=7d&limit=1&offset=1").await),
            ["M0b"]
        );
        let none = get("/whales/user/markets?platform=venue_b").await;
        assert_eq!((market_ids(&none).len(), &none["pagination"]["total"]), (0, &json!(0)));

        let v = get("/whales/user/market/M0/trades").await;
        assert_eq!(trade_ids(&v), ["h1", "d3"]);
        assert_eq!(
            (
                &v["market_id"],
                &v["market_title"],
                &v["event_id"],
                &v["threshold_source"]
            ),
            (&json!("M0"), &json!("Market 0"), &json!("EV0"), &json!("watchlist"))
        );
        let v = get("/whales/user/market/M0/stats?period=all").await;
        assert_eq!(v["stats"]["trade_count"], 2);
        assert!(v.get("markets").is_none(), "a market view ranks no markets");

        for uri in [
            "/whales/user/event/NOPE",
            "/whales/user/event/NOPE/stats",
            "/whales/user/market/NOPE/trades",
            "/whales/user/market/M1/stats?exchange=venue_a",
            "/whales/user/event/EV1?exchange=venue_a",
        ] {
            app.get_key(uri, &keys.free).await.error(404, "not_found", None);
        }
        app.get_key("/whales/user/event/EV0?min_trade_size=-1", &keys.free)
            .await
            .error(400, "invalid_parameter", Some("min_trade_size"));
        app.get_key("/whales/user/markets?period=1y", &keys.free)
            .await
            .error(400, "invalid_parameter", Some("period"));
        app.get("/whales/user/event/EV0").await.error(401, "unauthorized", None);
    })
    .await;
}

/// `POST /whales/user/events/by-url`: an event page of either venue adds its event; other addresses are a 400
/// naming `url`, an event no one knows a 404.
#[tokio::test]
async fn an_event_is_added_by_its_web_address() {
    for_each_backend(async |db| {
        let now = Timestamp::now();
        let mut b = Event::new(B, "90001", "rain-series", "Will it rain?");
        b.slug = Some("will-it-rain".into());
        let mut closed = Event::new(A, "KXW-CLOSED", "KXW", "Closed");
        closed.status = Status::Closed;
        db.store
            .upsert_events(
                &[
                    Event::new(A, "KXW-26NOV25", "KXW", "Weather"),
                    Event::new(A, "KXW-26NOV26", "KXW", "Weather"),
                    b,
                    closed,
                ],
                now,
            )
            .await
            .unwrap();
        let keys = create_keys(&db.store).await;
        let app = TestApp::new(db, |_| {});
        let add =
            async |body: Value| send_json(&app, Method::POST, "/whales/user/events/by-url", &keys.free, body).await;

        // A null threshold is the default one, here and on by-ticker.
        let v = add(
            json!({"url": "https://kalshi.com/markets/kxw/weather-in-nyc/kxw-26nov25", "whale_threshold_usd": null}),
        )
        .await;
        assert_eq!(v.status.as_u16(), 201, "{}", v.text);
        let t = track(&app, &keys.free, "venue_a", "KXW-26NOV26", Value::Null).await;
        assert_eq!(t.status.as_u16(), 201, "{}", t.text);
        assert_eq!(t.json()["whale_threshold_usd"], 1000.0, "{}", t.text);
        let v = v.json();
        assert_eq!(
            (&v["exchange"], &v["event_id"]),
            (&json!("venue_a"), &json!("KXW-26NOV25"))
        );
        assert_eq!(v["whale_threshold_usd"], 1000.0);
        let v = add(json!({"url": "https://polymarket.com/event/will-it-rain", "whale_threshold_usd": 5000})).await;
        assert_eq!(v.status.as_u16(), 201, "{}", v.text);
        let v = v.json();
        assert_eq!(
            (&v["exchange"], &v["event_id"]),
            (&json!("venue_b"), &json!("90001")),
            "found by its slug"
        );
        assert_eq!(v["whale_threshold_usd"], 5000.0);
        add(json!({"url": "https://polymarket.com/event/will-it-rain"}))
            .await
            .error(409, "conflict", None);

        for bad in [
            "https://kalshi.com/markets/kxw",
            "https://example.com/event/will-it-rain",
            "not an address",
            "https://kalshi.com/markets/kxw/kxw-closed",
        ] {
            add(json!({ "url": bad }))
                .await
                .error(400, "invalid_parameter", Some("url"));
        }
        add(json!({})).await.error(400, "missing_parameter", Some("url"));
        add(json!({"url": "https://polymarket.com/event/no-such-event"}))
            .await
            .error(404, "not_found", None);
        let listed = app.get_key("/whales/user/events", &keys.free).await.ok();
        assert_eq!(listed["tracked_events"].as_array().unwrap().len(), 3);
    })
    .await;
}
