//! Arbitrage routes and the scanner (spec 4.3, 2.9–2.12, 5.3; contracts §6): parameters and validation,
//! gating, results from books put into `state.live`, preview masking per plan, history filters and paging,
//! the scanner's episodes and bus publications, and the simulator end to end.

use std::{
    sync::{
        Arc,
        atomic::{AtomicI64, Ordering},
    },
    time::Duration,
};

use crossbook_core::book::GapCause;
use crossbook_core::{
    Amount, BookSnapshot, Event, Exchange, IntervalCode, Level, Market, Price, Timestamp,
    arb::{ChangeKind, Episode, MicroUsd, OpportunityChange, PairOverride},
};
use crossbook_live::{BookKey, DomainEvent};
use crossbook_server::workers::scanner::{Scanner, Settings};
use crossbook_store::{
    Store,
    testing::{self, for_each_backend},
};
use serde_json::{Value, json};

use crate::util::*;

const A_WIN: &str = "KXBTC15M-ARB-15";
const B_WIN: &str = "0xbwin";
const A_HOUR: &str = "KXBTC1H-ARB-00";
const B_HOUR: &str = "0xbhour";
const A_OVR: &str = "KXELECT-OVR";
const B_OVR: &str = "0xbovr";

fn lvl(cents_x100: i64, units: i64) -> Level {
    Level {
        price: Price::from_micros(cents_x100 * 100),
        size: Amount::from_units(units),
    }
}

/// The start of the windows: the current minute, so they are open for 14+ minutes of test time.
fn window_start() -> Timestamp {
    let now = Timestamp::now().millis();
    Timestamp::from_millis(now - now.rem_euclid(60_000))
}

fn window(ex: Exchange, id: &str, ic: IntervalCode, start: Timestamp, skew_ms: i64) -> Market {
    let series = if ex == Exchange::VenueA {
        "KXBTC"
    } else {
        "btc-up-or-down"
    };
    let mut m = Market::new(ex, id, &format!("EV-{id}"), series, "Bitcoin up or down?");
    m.interval_code = Some(ic);
    m.window_start = Some(Timestamp::from_millis(start.millis() + skew_ms));
    m.window_end = Some(Timestamp::from_millis(start.millis() + ic.seconds() * 1000 + skew_ms));
    m.volume = Amount::from_units(1_000);
    if ex == Exchange::VenueB {
        m.yes_token_id = Some(format!("{id}-up"));
        m.no_token_id = Some(format!("{id}-down"));
    }
    m
}

fn other(ex: Exchange, id: &str, question: &str) -> Market {
    let mut m = Market::new(ex, id, &format!("EV-{id}"), "POLITICS", question);
    if ex == Exchange::VenueB {
        m.yes_token_id = Some(format!("{id}-yes"));
        m.no_token_id = Some(format!("{id}-no"));
    }
    m
}

/// Seeds: a 15m window pair (the worked example, net 1.25 c), a 1h window pair (net 0.25 c), and two
/// unrelated markets paired by an operator override (net 14.32 c: YES 0.40 on venue_b, NO 0.42 on venue_a).
/// `b_skew_ms` moves the venue_b 15m window.
async fn seed(store: &Arc<dyn Store>, b_skew_ms: i64) -> Timestamp {
    let start = window_start();
    let markets = vec![
        window(Exchange::VenueA, A_WIN, IntervalCode::M15, start, 0),
        window(Exchange::VenueB, B_WIN, IntervalCode::M15, start, b_skew_ms),
        window(Exchange::VenueA, A_HOUR, IntervalCode::H1, start, 0),
        window(Exchange::VenueB, B_HOUR, IntervalCode::H1, start, 0),
        other(Exchange::VenueA, A_OVR, "Will the measure pass?"),
        other(Exchange::VenueB, B_OVR, "Measure passes?"),
    ];
    let events: Vec<Event> = markets
        .iter()
        .map(|m| {
            let mut e = Event::new(
                m.exchange,
                &m.event_id,
                &m.series_id,
                &format!("Event of {}", m.market_id),
            );
            if m.exchange == Exchange::VenueB {
                e.slug = Some(format!("slug-{}", m.market_id));
            }
            e
        })
        .collect();
    store.upsert_events(&events, start).await.unwrap();
    store.upsert_markets(&markets, start).await.unwrap();
    store
        .add_pair_override(
            &PairOverride {
                venue_a_market_id: A_OVR.into(),
                venue_b_market_id: B_OVR.into(),
            },
            start,
        )
        .await
        .unwrap();
    start
}

fn a_book(id: &str, ts: Timestamp, yes_bids: Vec<Level>, no_bids: Vec<Level>) -> BookSnapshot {
    BookSnapshot {
        exchange: Exchange::VenueA,
        market_id: id.into(),
        asset_id: None,
        timestamp: ts,
        bids: yes_bids,
        asks: vec![],
        no_bids,
    }
}

fn b_book(condition: &str, token: &str, ts: Timestamp, asks: Vec<Level>) -> BookSnapshot {
    BookSnapshot {
        exchange: Exchange::VenueB,
        market_id: condition.into(),
        asset_id: Some(token.into()),
        timestamp: ts,
        bids: vec![],
        asks,
        no_bids: vec![],
    }
}

/// The books of [`seed`], time-stamped `ts`.
fn put_books(app: &TestApp, ts: Timestamp) {
    let live = &app.state.live;
    // 15m: YES ask 0.45 × 10 then 0.46 × 5 on venue_a; NO 0.50 × 12 then 0.51 on venue_b → 1.25 c.
    live.upsert(a_book(
        A_WIN,
        ts,
        vec![lvl(4400, 50)],
        vec![lvl(5500, 10), lvl(5400, 5)],
    ));
    live.upsert(b_book(B_WIN, &format!("{B_WIN}-up"), ts, vec![lvl(4000, 30)]));
    live.upsert(b_book(
        B_WIN,
        &format!("{B_WIN}-down"),
        ts,
        vec![lvl(5000, 12), lvl(5100, 100)],
    ));
    // 1h: YES 0.46 on venue_a + NO 0.50 on venue_b: gross 4 c, fees 2 + 1.75 → 0.25 c.
    live.upsert(a_book(A_HOUR, ts, vec![], vec![lvl(5400, 20)]));
    live.upsert(b_book(B_HOUR, &format!("{B_HOUR}-up"), ts, vec![lvl(9000, 5)]));
    live.upsert(b_book(B_HOUR, &format!("{B_HOUR}-down"), ts, vec![lvl(5000, 20)]));
    // Override pair: YES 0.40 on venue_b + NO 1 − 0.58 = 0.42 on venue_a → 18 c − (1.68 + 2) = 14.32 c.
    live.upsert(a_book(A_OVR, ts, vec![lvl(5800, 10)], vec![lvl(3000, 10)]));
    live.upsert(b_book(B_OVR, &format!("{B_OVR}-yes"), ts, vec![lvl(4000, 3)]));
    live.upsert(b_book(B_OVR, &format!("{B_OVR}-no"), ts, vec![lvl(9000, 3)]));
}

fn event_ids(v: &Value) -> Vec<String> {
    v.as_array()
        .unwrap_or_else(|| panic!("not an array: {v}"))
        .iter()
        .map(|o| o["event_id"].as_str().unwrap().to_string())
        .collect()
}

fn window_id(code: &str, start: Timestamp) -> String {
    format!("BTC-{}-{}Z", code.to_uppercase(), &start.to_iso()[..16])
}

#[tokio::test]
async fn current_answers_from_the_live_books_with_every_parameter() {
    for_each_backend(async |db| {
        let app = TestApp::new(db, |_| {});
        let keys = create_keys(&db.store).await;
        let start = seed(&db.store, 0).await;
        put_books(&app, Timestamp::now());
        let win = window_id("15m", start);
        let hour = window_id("1h", start);
        let pair = format!("PAIR-{A_OVR}");

        let v = app.get_key("/v1/arbitrage/current", &keys.free).await.ok();
        assert_eq!(
            event_ids(&v),
            [pair.clone(), win.clone(), hour.clone()],
            "net_cents descending"
        );
        let nets: Vec<f64> = v
            .as_array()
            .unwrap()
            .iter()
            .map(|o| o["net_cents"].as_f64().unwrap())
            .collect();
        assert_eq!(nets, [14.32, 1.25, 0.25]);

        let o = &v[1];
        assert_eq!(o["gross_cents"], 5.0);
        assert_eq!(o["fee_cents"], 3.75);
        assert_eq!(o["roi_percent"], 1.27);
        assert_eq!(o["executable_size"], 12.0);
        assert_eq!(o["max_profit_dollars"], 0.13);
        assert_eq!(o["buy_yes_market"], "venue_a");
        assert_eq!(o["buy_no_market"], "venue_b");
        assert_eq!(o["interval_code"], "15m");
        assert_eq!(o["outcome_key"], "up");
        assert_eq!(o["market_type"], "binary");
        assert_eq!(o["venue_a"]["yes_ask"], 0.45);
        assert_eq!(o["venue_a"]["market_ticker"], A_WIN);
        assert_eq!(o["venue_b"]["no_ask"], 0.5);
        assert_eq!(o["venue_b"]["yes_token_id"], format!("{B_WIN}-up"));
        assert_eq!(o["venue_b_event_slug"], format!("slug-{B_WIN}"));
        assert_eq!(o["venue_a_event_ticker"], format!("EV-{A_WIN}"));
        // Each leg says which order to place: venue_a buys YES with a bid on its one YES book; venue_b buys
        // NO with a bid on the NO token's own book.
        assert_eq!(
            o["yes_leg"],
            json!({"market": "venue_a", "identifier": A_WIN, "book_side": "bid", "action": "buy_yes", "fee_cents": 2.0})
        );
        // Each leg's fee at its ask: ceil(7 × 0.45 × 0.55) = 2 c on venue_a, 0.07 × 0.50 × 0.50 = 1.75 c on
        // venue_b; together the opportunity's fee.
        assert_eq!(
            o["no_leg"],
            json!({"market": "venue_b", "identifier": format!("{B_WIN}-down"), "book_side": "bid", "action": "buy_no", "fee_cents": 1.75})
        );
        assert_eq!(o["fee_cents"], 3.75);
        assert!(o.get("opinion").is_some_and(Value::is_null));
        assert!(o.get("locked").is_none());
        assert!(o.get("orderbook").is_none(), "only with orderbook=true");
        assert_eq!(v[0]["interval_code"], Value::Null);
        assert_eq!(v[0]["buy_yes_market"], "venue_b");
        // The other direction: venue_b buys YES on its YES token; venue_a buys NO by an ask on its YES book.
        let without_fee = |leg: &Value| {
            let mut leg = leg.clone();
            leg.as_object_mut().unwrap().remove("fee_cents");
            leg
        };
        assert_eq!(
            without_fee(&v[0]["yes_leg"]),
            json!({"market": "venue_b", "identifier": format!("{B_OVR}-yes"), "book_side": "bid", "action": "buy_yes"})
        );
        assert_eq!(
            without_fee(&v[0]["no_leg"]),
            json!({"market": "venue_a", "identifier": A_OVR, "book_side": "ask", "action": "buy_no"})
        );
        let leg_fees = v[0]["yes_leg"]["fee_cents"].as_f64().unwrap() + v[0]["no_leg"]["fee_cents"].as_f64().unwrap();
        assert!((leg_fees - v[0]["fee_cents"].as_f64().unwrap()).abs() < 0.011, "{}", v[0]);

        // min_net_cents is inclusive and exact.
        let v = app
            .get_key("/v1/arbitrage/current?min_net_cents=1.25", &keys.free)
            .await
            .ok();
        assert_eq!(event_ids(&v), [pair.clone(), win.clone()]);
        assert_eq!(
            v[1]["executable_size"], 10.0,
            "the depth walk stops below the threshold"
        );
        let v = app
            .get_key("/v1/arbitrage/current?min_net_cents=1.2501", &keys.free)
            .await
            .ok();
        assert_eq!(event_ids(&v), std::slice::from_ref(&pair));

        let v = app
            .get_key("/v1/arbitrage/current?interval_code=1h", &keys.free)
            .await
            .ok();
        assert_eq!(event_ids(&v), std::slice::from_ref(&hour));
        let v = app.get_key("/v1/arbitrage/current?limit=1", &keys.free).await.ok();
        assert_eq!(event_ids(&v), std::slice::from_ref(&pair));

        let v = app
            .get_key("/v1/arbitrage/current?orderbook=true&interval_code=15m", &keys.free)
            .await
            .ok();
        let ob = &v[0]["orderbook"];
        assert_eq!(ob["yes"]["market"], "venue_a");
        assert_eq!(ob["yes"]["asks"][0]["price"], "0.4500");
        assert_eq!(ob["yes"]["asks"][0]["size"], 10.0);
        assert_eq!(ob["no"]["market"], "venue_b");
        assert_eq!(ob["no"]["asks"].as_array().unwrap().len(), 2);

        // Without /v1, the same answer.
        let a = app.get_key("/arbitrage/current?limit=2", &keys.trader).await.ok();
        assert_eq!(event_ids(&a), [pair.clone(), win.clone()]);

        // Staleness: books 40 s old are dropped at the default 30 s, kept at 60 s.
        put_books(&app, Timestamp::from_millis(Timestamp::now().millis() - 40_000));
        let v = app.get_key("/v1/arbitrage/current", &keys.free).await.ok();
        assert!(v.as_array().unwrap().is_empty(), "{v}");
        let v = app
            .get_key("/v1/arbitrage/current?max_staleness_seconds=60", &keys.free)
            .await
            .ok();
        assert_eq!(v.as_array().unwrap().len(), 3);
    })
    .await;
}

const A_GAME: &str = "KXNBAGAME-26NOV21AUSPOR-AUS";
const B_GAME: &str = "0xbgame";

/// A game paired by an operator override whose YES outcomes are inverted: venue_a's YES backs Austin (its
/// subtitle), venue_b's YES token is its first-named team, Portland. Its books would net 14.32 c if it were
/// (wrongly) scanned.
async fn seed_inverted_game(app: &TestApp, store: &Arc<dyn Store>, start: Timestamp) {
    let game = |ex: Exchange, id: &str, title: &str, subtitle: Option<&str>| {
        let mut m = Market::new(ex, id, &format!("EV-{id}"), "NBA", title);
        m.title = Some(title.into());
        m.subtitle = subtitle.map(Into::into);
        m.category = Some("Sports".into());
        m.window_start = Some(start);
        m.window_end = Some(Timestamp::from_millis(start.millis() + 3 * 3_600_000));
        if ex == Exchange::VenueB {
            m.yes_token_id = Some(format!("{id}-yes"));
            m.no_token_id = Some(format!("{id}-no"));
        }
        m
    };
    store
        .upsert_markets(
            &[
                game(Exchange::VenueA, A_GAME, "Austin at Portland", Some("Austin")),
                game(Exchange::VenueB, B_GAME, "Portland vs Austin", None),
            ],
            start,
        )
        .await
        .unwrap();
    store
        .add_pair_override(
            &PairOverride {
                venue_a_market_id: A_GAME.into(),
                venue_b_market_id: B_GAME.into(),
            },
            start,
        )
        .await
        .unwrap();
    let (live, ts) = (&app.state.live, Timestamp::now());
    live.upsert(a_book(A_GAME, ts, vec![lvl(5800, 10)], vec![lvl(3000, 10)]));
    live.upsert(b_book(B_GAME, &format!("{B_GAME}-yes"), ts, vec![lvl(4000, 3)]));
    live.upsert(b_book(B_GAME, &format!("{B_GAME}-no"), ts, vec![lvl(9000, 3)]));
}

/// States the venues' resolution sources on the window legs of [`seed`]: the 15m legs name one index (with
/// different case and a trailing slash), the 1h legs two different ones.
async fn seed_sources(store: &Arc<dyn Store>, start: Timestamp) {
    let sourced = |ex, id, ic, src: &str| Market {
        resolution_source: Some(src.into()),
        ..window(ex, id, ic, start, 0)
    };
    store
        .upsert_markets(
            &[
                sourced(
                    Exchange::VenueA,
                    A_WIN,
                    IntervalCode::M15,
                    "https://www.cfbenchmarks.com/data/indices/BRTI",
                ),
                sourced(
                    Exchange::VenueB,
                    B_WIN,
                    IntervalCode::M15,
                    " https://www.cfbenchmarks.com/data/indices/brti/",
                ),
                sourced(Exchange::VenueA, A_HOUR, IntervalCode::H1, "CF Benchmarks BRTI"),
                sourced(
                    Exchange::VenueB,
                    B_HOUR,
                    IntervalCode::H1,
                    "https://data.chain.link/streams/btc-usd",
                ),
            ],
            start,
        )
        .await
        .unwrap();
}

fn pair_ids(v: &Value) -> Vec<String> {
    v["items"]
        .as_array()
        .unwrap_or_else(|| panic!("no items: {v}"))
        .iter()
        .map(|p| p["pair_id"].as_str().unwrap().to_string())
        .collect()
}

#[tokio::test]
async fn pairs_list_settlement_facts_and_skipped_pairs_are_not_scanned() {
    for_each_backend(async |db| {
        let app = TestApp::new(db, |_| {});
        let keys = create_keys(&db.store).await;
        let start = seed(&db.store, 0).await;
        seed_sources(&db.store, start).await;
        put_books(&app, Timestamp::now());
        seed_inverted_game(&app, &db.store, start).await;
        let hour_pair = PairOverride {
            venue_a_market_id: A_HOUR.into(),
            venue_b_market_id: B_HOUR.into(),
        };
        assert!(
            db.store
                .reject_pair(&hour_pair, Some("sources differ"), start)
                .await
                .unwrap()
        );
        let (win, hour) = (window_id("15m", start), window_id("1h", start));
        let (ovr, game) = (format!("PAIR-{A_OVR}"), format!("PAIR-{A_GAME}"));

        // The rejected 1h pair and the inverted game are not scanned, though both net above zero.
        let v = app.get_key("/v1/arbitrage/current", &keys.free).await.ok();
        assert_eq!(event_ids(&v), [ovr.clone(), win.clone()]);
        for o in v.as_array().unwrap() {
            assert_eq!(o["pair_id"], o["event_id"], "a current row links to its pair");
        }

        // Every pair is listed, in pair_id order, with why it is not scanned.
        let v = app.get_key("/v1/arbitrage/pairs", &keys.free).await.ok();
        assert_eq!(pair_ids(&v), [win.clone(), hour.clone(), ovr.clone(), game.clone()]);
        assert_eq!((v["total"].as_i64(), v["has_more"].as_bool()), (Some(4), Some(false)));
        let by_id = |id: &str| {
            v["items"]
                .as_array()
                .unwrap()
                .iter()
                .find(|p| p["pair_id"] == id)
                .unwrap()
                .clone()
        };

        let w = by_id(&win);
        assert_eq!(
            (&w["kind"], &w["match_source"], &w["interval_code"]),
            (&json!("window"), &json!("window"), &json!("15m"))
        );
        assert_eq!(
            w["settlement_basis"], "identical",
            "case, spaces and the trailing slash do not count"
        );
        assert_eq!(
            (&w["status"], &w["scanned"], &w["skip_reason"]),
            (&json!("active"), &json!(true), &Value::Null)
        );
        assert_eq!(
            w["venue_a"],
            json!({
                "exchange": "venue_a", "market_id": A_WIN, "title": "Bitcoin up or down?",
                "close_time": Timestamp::from_millis(start.millis() + 900_000).to_iso(),
                "window_start": start.to_iso(),
                "window_end": Timestamp::from_millis(start.millis() + 900_000).to_iso(),
                "yes_outcome": "Up",
                "resolution_source": "https://www.cfbenchmarks.com/data/indices/BRTI",
            })
        );
        assert_eq!(w["venue_b"]["market_id"], B_WIN);
        assert_eq!(
            w["venue_b"]["resolution_source"], " https://www.cfbenchmarks.com/data/indices/brti/",
            "as the venue states it"
        );

        let h = by_id(&hour);
        assert_eq!(h["settlement_basis"], "same_window_different_source");
        assert_eq!(
            (&h["status"], &h["scanned"], &h["skip_reason"]),
            (&json!("rejected"), &json!(false), &json!("rejected"))
        );
        assert_eq!(h["rejection_reason"], "sources differ");

        let g = by_id(&game);
        assert_eq!(
            (&g["kind"], &g["match_source"]),
            (&json!("matched"), &json!("operator"))
        );
        assert_eq!(
            (&g["venue_a"]["yes_outcome"], &g["venue_b"]["yes_outcome"]),
            (&json!("Austin"), &json!("portland"))
        );
        assert_eq!(g["yes_outcomes_differ"], true);
        assert_eq!(
            (&g["status"], &g["scanned"], &g["skip_reason"]),
            (&json!("active"), &json!(false), &json!("yes_outcomes_differ"))
        );
        assert_eq!(g["settlement_basis"], "unverified", "no venue stated a source");

        let o = by_id(&ovr);
        assert_eq!(
            (&o["match_source"], &o["interval_code"], &o["scanned"]),
            (&json!("operator"), &Value::Null, &json!(true))
        );
        assert_eq!(
            (&o["venue_a"]["close_time"], &o["venue_a"]["yes_outcome"]),
            (&Value::Null, &Value::Null)
        );

        // Filters and paging, with and without /v1.
        let v = app.get_key("/v1/arbitrage/pairs?kind=window", &keys.free).await.ok();
        assert_eq!(pair_ids(&v), [win.clone(), hour.clone()]);
        let v = app.get_key("/arbitrage/pairs?kind=matched", &keys.trader).await.ok();
        assert_eq!(pair_ids(&v), [ovr.clone(), game.clone()]);
        let v = app
            .get_key("/v1/arbitrage/pairs?interval_code=1h", &keys.free)
            .await
            .ok();
        assert_eq!(pair_ids(&v), std::slice::from_ref(&hour));
        let v = app
            .get_key("/v1/arbitrage/pairs?limit=2&offset=1", &keys.free)
            .await
            .ok();
        assert_eq!(pair_ids(&v), [hour.clone(), ovr.clone()]);
        assert_eq!(
            (
                v["total"].as_i64(),
                v["has_more"].as_bool(),
                v["limit"].as_i64(),
                v["offset"].as_i64()
            ),
            (Some(4), Some(true), Some(2), Some(1))
        );

        // Lifting the rejection: the pair is scanned again once the catalog is read again.
        assert_eq!(db.store.unreject_pair(&hour_pair).await.unwrap(), 1);
        app.state.arb.invalidate();
        let v = app
            .get_key("/v1/arbitrage/current?min_net_cents=0", &keys.free)
            .await
            .ok();
        assert_eq!(event_ids(&v), [ovr.clone(), win.clone(), hour.clone()]);
        let v = app
            .get_key("/v1/arbitrage/pairs?interval_code=1h", &keys.free)
            .await
            .ok();
        assert_eq!(
            (&v["items"][0]["status"], &v["items"][0]["scanned"]),
            (&json!("active"), &json!(true))
        );
    })
    .await;
}

#[tokio::test]
async fn inverted_pairs_are_scanned_only_when_the_operator_asks() {
    for_each_backend(async |db| {
        let app = TestApp::new(db, |c| c.arbitrage_scan_inverted_pairs = true);
        let keys = create_keys(&db.store).await;
        let start = seed(&db.store, 0).await;
        put_books(&app, Timestamp::now());
        seed_inverted_game(&app, &db.store, start).await;
        let game = format!("PAIR-{A_GAME}");
        let v = app.get_key("/v1/arbitrage/current", &keys.free).await.ok();
        assert!(event_ids(&v).contains(&game), "{v}");
        let v = app.get_key("/v1/arbitrage/pairs?kind=matched", &keys.free).await.ok();
        let g = v["items"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["pair_id"] == game.as_str())
            .unwrap();
        // Still flagged, so a client can tell.
        assert_eq!(
            (&g["yes_outcomes_differ"], &g["scanned"], &g["skip_reason"]),
            (&json!(true), &json!(true), &Value::Null)
        );
    })
    .await;
}

#[tokio::test]
async fn window_tolerance_decides_the_pairing() {
    for_each_backend(async |db| {
        let app = TestApp::new(db, |_| {});
        let keys = create_keys(&db.store).await;
        let start = seed(&db.store, 90_000).await;
        put_books(&app, Timestamp::now());
        let win = window_id("15m", start);
        let get = async |q: &str| {
            event_ids(
                &app.get_key(&format!("/v1/arbitrage/current?interval_code=15m&{q}"), &keys.free)
                    .await
                    .ok(),
            )
        };
        assert!(get("").await.is_empty(), "a 90 s skew is outside the default 60 s");
        assert!(get("window_tolerance_seconds=89").await.is_empty());
        assert_eq!(
            get("window_tolerance_seconds=90").await,
            std::slice::from_ref(&win),
            "inclusive"
        );
        assert_eq!(get("window_tolerance_seconds=3600").await, [win]);
    })
    .await;
}

#[tokio::test]
async fn difference_is_for_traders_and_sorted_by_absolute_diff() {
    for_each_backend(async |db| {
        let app = TestApp::new(db, |c| c.venue_a_display_name = "Alpha".into());
        let keys = create_keys(&db.store).await;
        let start = seed(&db.store, 0).await;
        put_books(&app, Timestamp::now());
        app.get("/v1/arbitrage/current/difference")
            .await
            .error(401, "unauthorized", None);
        app.get_key("/v1/arbitrage/current/difference", UNKNOWN_KEY)
            .await
            .error(401, "unauthorized", None);
        for k in [&keys.free, &keys.builder] {
            let b = app
                .get_key("/v1/arbitrage/current/difference", k)
                .await
                .error(403, "entitlement_required", None);
            assert_eq!(b["required_plan"], "trader");
        }
        let v = app.get_key("/v1/arbitrage/current/difference", &keys.trader).await.ok();
        let rows = v.as_array().unwrap();
        assert!(!rows.is_empty());
        let diffs: Vec<f64> = rows.iter().map(|r| r["diff"].as_f64().unwrap()).collect();
        assert!(diffs.windows(2).all(|w| w[0].abs() >= w[1].abs()), "{diffs:?}");
        for r in rows {
            assert_eq!(r["side1"], "Alpha");
            assert_eq!(r["side2"], "Venue B");
            assert!(r["side"] == "YES" || r["side"] == "NO");
            let d = r["side1_price"].as_f64().unwrap() - r["side2_price"].as_f64().unwrap();
            assert!((d - r["diff"].as_f64().unwrap()).abs() < 1e-9, "{r}");
        }
        // The 15m YES row: venue_a 0.45 vs venue_b 0.40.
        assert!(
            rows.iter()
                .any(|r| r["side"] == "YES" && r["side1_price"] == 0.45 && r["side2_price"] == 0.4)
        );
        // Every row names its pair: both markets, the label, the interval and venue_a's window.
        let win = rows
            .iter()
            .find(|r| r["venue_a_market_id"] == A_WIN && r["side"] == "YES")
            .expect("the 15m YES row");
        let end = Timestamp::from_millis(start.millis() + 900_000);
        let (start_iso, end_iso) = (start.to_iso(), end.to_iso());
        // Within a day the label shows both times; a window across midnight shows its start date and time.
        let label = if start_iso[..10] == end_iso[..10] {
            format!("BTC 15m Up {}-{} UTC", &start_iso[11..16], &end_iso[11..16])
        } else {
            format!("BTC 15m Up {} {} UTC", &start_iso[..10], &start_iso[11..16])
        };
        assert_eq!(win["venue_b_market_id"], B_WIN);
        assert_eq!(win["interval_code"], "15m");
        assert_eq!(win["event_id"], format!("BTC-15M-{}Z", &start_iso[..16]));
        assert_eq!(win["label"], label);
        assert_eq!(win["window_start"], start.to_iso());
        assert_eq!(win["window_end"], end.to_iso());
        let ovr = rows
            .iter()
            .find(|r| r["venue_a_market_id"] == A_OVR)
            .expect("a row of the override pair");
        assert_eq!(ovr["venue_b_market_id"], B_OVR);
        assert_eq!(ovr["event_id"], format!("PAIR-{A_OVR}"));
        assert_eq!(
            ovr["label"], "Will the measure pass?",
            "venue_a's question, as it has no title"
        );
        for k in ["interval_code", "window_start", "window_end"] {
            assert!(ovr.get(k).is_some_and(Value::is_null), "{k} of a matched pair: {ovr}");
        }
        let v = app
            .get_key("/arbitrage/current/difference?interval_code=1h&limit=1", &keys.trader)
            .await
            .ok();
        assert_eq!(v.as_array().unwrap().len(), 1);
        // Books older than the lookback are ignored.
        put_books(&app, Timestamp::from_millis(Timestamp::now().millis() - 120_000));
        let v = app
            .get_key("/v1/arbitrage/current/difference?minutes=1", &keys.trader)
            .await
            .ok();
        assert!(v.as_array().unwrap().is_empty());
        let v = app
            .get_key("/v1/arbitrage/current/difference?minutes=3", &keys.trader)
            .await
            .ok();
        assert!(!v.as_array().unwrap().is_empty());
    })
    .await;
}

#[tokio::test]
async fn every_invalid_parameter_is_a_400_naming_it() {
    for_each_backend(async |db| {
        let app = TestApp::new(db, |_| {});
        let keys = create_keys(&db.store).await;
        // (route, [(parameter, [invalid values])]).
        type Cases<'a> = &'a [(&'a str, &'a [(&'a str, &'a [&'a str])])];
        let cases: Cases = &[
            (
                "/v1/arbitrage/current",
                &[
                    ("min_net_cents", &["", "-1", "x", "1e", "1e2.5", "1..2"]),
                    ("interval_code", &["", "2m", "15M"]),
                    ("orderbook", &["", "yes", "2"]),
                    ("max_staleness_seconds", &["", "0", "86401", "1.5", "-3"]),
                    ("window_tolerance_seconds", &["", "-1", "3601", "x"]),
                    ("limit", &["", "0", "101", "ten"]),
                ],
            ),
            (
                "/v1/arbitrage/current/difference",
                &[
                    ("minutes", &["", "0", "525601", "x"]),
                    ("interval_code", &["", "1d"]),
                    ("limit", &["", "0", "101"]),
                ],
            ),
            (
                "/v1/arbitrage/history",
                &[
                    ("limit", &["", "0", "101"]),
                    ("offset", &["", "-1", "1000001", "x"]),
                    ("interval_code", &["", "1m"]),
                    ("category", &["", "other", "Crypto"]),
                    ("min_net_cents", &["", "-0.5", "abc"]),
                    ("from", &["", "yesterday", "2026-13-01"]),
                    ("to", &["", "noon"]),
                ],
            ),
            (
                "/v1/arbitrage/pairs",
                &[
                    ("kind", &["", "game", "Window"]),
                    ("interval_code", &["", "2m"]),
                    ("limit", &["", "0", "101", "x"]),
                    ("offset", &["", "-1", "1000001"]),
                ],
            ),
        ];
        for (route, params) in cases {
            for (name, values) in *params {
                for v in *values {
                    let enc: String = url::form_urlencoded::byte_serialize(v.as_bytes()).collect();
                    for prefix in ["", "/v1"] {
                        let path = route.strip_prefix("/v1").unwrap();
                        let uri = format!("{prefix}{path}?{name}={enc}");
                        app.get_key(&uri, &keys.trader)
                            .await
                            .error(400, "invalid_parameter", Some(name));
                    }
                }
            }
            // Valid extremes pass.
        }
        for uri in [
            "/v1/arbitrage/current?min_net_cents=0&max_staleness_seconds=86400&window_tolerance_seconds=0&limit=100&orderbook=false",
            "/v1/arbitrage/current/difference?minutes=525600&limit=100&interval_code=1w",
            "/v1/arbitrage/history?offset=1000000&limit=100&category=sports&from=2026-11-21&to=2026-11-21T19:15:00%2B01:00",
            "/v1/arbitrage/pairs?kind=matched&interval_code=1w&limit=100&offset=1000000",
        ] {
            app.get_key(uri, &keys.trader).await.ok();
        }
        // Keyed routes: 401 without a key, whatever the parameters.
        app.get("/v1/arbitrage/current").await.error(401, "unauthorized", None);
        app.get_key("/arbitrage/current", UNKNOWN_KEY).await.error(401, "unauthorized", None);
        app.get("/v1/arbitrage/pairs").await.error(401, "unauthorized", None);
        app.get_key("/arbitrage/pairs", UNKNOWN_KEY).await.error(401, "unauthorized", None);
    })
    .await;
}

/// A history of `n` BTC 15m episodes one minute apart (net 1, 2, … cents), recorded through the store.
async fn build_history(store: &Arc<dyn Store>, app: &TestApp, n: i64) -> Vec<Episode> {
    seed(store, 0).await;
    put_books(app, Timestamp::now());
    let catalog = app.state.arb.catalog(store).await.unwrap();
    let base = crossbook_server::arbitrage::scan_live(
        &catalog,
        &app.state.live,
        &crossbook_core::arb::ScanParams {
            include_orderbook: true,
            interval_code: Some(IntervalCode::M15),
            ..crossbook_core::arb::ScanParams::new(Timestamp::now())
        },
    )
    .remove(0);
    let t0 = Timestamp::parse_iso("2026-11-21T10:00:00Z").unwrap().millis();
    let mut eps = Vec::new();
    for i in 0..n {
        let mut o = base.clone();
        o.event_id = format!("BTC-15M-EP{i:02}");
        o.net = crossbook_core::arb::MicroUsd::from_cents(i + 1);
        o.peak_net = o.net;
        o.timestamp = Timestamp::from_millis(t0 + i * 60_000 + 30_000);
        if i % 3 == 0 {
            o.interval_code = Some(IntervalCode::H1);
        }
        if i % 5 == 0 {
            o.category = crossbook_core::Category::Sports;
            o.interval_code = None;
        }
        eps.push(Episode {
            key: o.episode_key(),
            first_seen_at: Timestamp::from_millis(t0 + i * 60_000),
            last_seen_at: o.timestamp,
            opportunity: o,
        });
    }
    store.record_episodes(&eps).await.unwrap();
    eps
}

#[tokio::test]
async fn history_pages_filters_and_masks_per_plan() {
    for_each_backend(async |db| {
        let app = TestApp::new(db, |_| {});
        let keys = create_keys(&db.store).await;
        build_history(&db.store, &app, 12).await;

        // Trader: everything unlocked, newest first, paged.
        let v = app.get_key("/v1/arbitrage/history?limit=5", &keys.trader).await.ok();
        assert_eq!(
            (v["total"].as_i64(), v["offset"].as_i64(), v["limit"].as_i64()),
            (Some(12), Some(0), Some(5))
        );
        assert_eq!(v["has_more"], true);
        let items = v["items"].as_array().unwrap();
        assert_eq!(items.len(), 5);
        assert_eq!(items[0]["opportunity"]["event_id"], "BTC-15M-EP11");
        for i in items {
            // Locked rows too: the link to the pair is not a price.
            assert_eq!(
                i["opportunity"]["pair_id"], i["opportunity"]["event_id"],
                "a history row links to its pair"
            );
        }
        assert_eq!(items[0]["first_seen_at"], "2026-11-21T10:11:00.000Z");
        assert_eq!(items[0]["last_seen_at"], "2026-11-21T10:11:30.000Z");
        assert!(
            items
                .iter()
                .all(|i| i["opportunity"]["locked"] == false && i["opportunity"]["net_cents"].is_number())
        );
        assert!(
            items[0]["opportunity"]["orderbook"].is_object(),
            "captured depth is shown"
        );
        assert!(items[0]["opportunity"].get("opinion").is_none());
        let last = app
            .get_key("/arbitrage/history?limit=5&offset=10", &keys.trader)
            .await
            .ok();
        assert_eq!(last["items"].as_array().unwrap().len(), 2);
        assert_eq!(last["has_more"], false);
        assert_eq!(last["items"][1]["opportunity"]["event_id"], "BTC-15M-EP00");

        // Preview for anonymous, invalid keys, free and builder: only the first row of offset 0 is open.
        let previews: [(&str, Option<&str>); 4] = [
            ("anonymous", None),
            ("invalid", Some(UNKNOWN_KEY)),
            ("free", Some(keys.free.as_str())),
            ("builder", Some(keys.builder.as_str())),
        ];
        for (who, key) in previews {
            let get = async |uri: &str| match key {
                Some(k) => app.get_key(uri, k).await.ok(),
                None => app.get(uri).await.ok(),
            };
            let v = get("/v1/arbitrage/history?limit=4").await;
            assert_eq!(v["total"], 12, "{who}");
            let items = v["items"].as_array().unwrap();
            let first = &items[0]["opportunity"];
            assert_eq!(first["locked"], false, "{who}");
            assert_eq!(first["net_cents"], 12.0, "{who}");
            assert!(first["venue_a"]["yes_ask"].is_number());
            for it in &items[1..] {
                let o = &it["opportunity"];
                assert_eq!(o["locked"], true, "{who}");
                for k in [
                    "gross_cents",
                    "fee_cents",
                    "net_cents",
                    "roi_percent",
                    "executable_size",
                    "max_profit_dollars",
                    "peak_net_cents",
                ] {
                    assert!(o[k].is_null() && o.get(k).is_some(), "{who} {k}");
                }
                for leg in ["venue_a", "venue_b"] {
                    assert!(o[leg]["yes_ask"].is_null() && o[leg]["no_ask"].is_null(), "{who}");
                }
                assert!(o.get("orderbook").is_none(), "{who}");
                assert!(o["event_id"].is_string() && it["first_seen_at"].is_string());
            }
            let v = get("/v1/arbitrage/history?limit=4&offset=4").await;
            assert!(
                v["items"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .all(|i| i["opportunity"]["locked"] == true),
                "{who}: later pages are all locked"
            );
            // The filtered result's first row is the one unlocked.
            let v = get("/v1/arbitrage/history?category=sports").await;
            assert_eq!(v["items"][0]["opportunity"]["locked"], false);
            assert_eq!(v["items"][1]["opportunity"]["locked"], true);
        }

        // Filters, over the full history.
        let ids = |v: &Value| -> Vec<String> {
            v["items"]
                .as_array()
                .unwrap()
                .iter()
                .map(|i| i["opportunity"]["event_id"].as_str().unwrap().to_string())
                .collect()
        };
        let t = &keys.trader;
        let v = app.get_key("/v1/arbitrage/history?category=sports", t).await.ok();
        assert_eq!(ids(&v), ["BTC-15M-EP10", "BTC-15M-EP05", "BTC-15M-EP00"]);
        let v = app.get_key("/v1/arbitrage/history?category=crypto", t).await.ok();
        assert_eq!(v["total"], 9);
        let v = app.get_key("/v1/arbitrage/history?interval_code=1h", t).await.ok();
        assert_eq!(ids(&v), ["BTC-15M-EP09", "BTC-15M-EP06", "BTC-15M-EP03"]);
        let v = app.get_key("/v1/arbitrage/history?min_net_cents=10", t).await.ok();
        assert_eq!(ids(&v), ["BTC-15M-EP11", "BTC-15M-EP10", "BTC-15M-EP09"], "inclusive");
        let v = app
            .get_key("/v1/arbitrage/history?min_net_cents=10&limit=1&offset=1", t)
            .await
            .ok();
        assert_eq!(
            (ids(&v), v["total"].as_i64(), v["has_more"].as_bool()),
            (vec!["BTC-15M-EP10".to_string()], Some(3), Some(true))
        );
        let v = app
            .get_key(
                "/v1/arbitrage/history?from=2026-11-21T10:09:30Z&to=2026-11-21T10:10:00Z",
                t,
            )
            .await
            .ok();
        assert_eq!(ids(&v), ["BTC-15M-EP10", "BTC-15M-EP09"]);
        let v = app.get_key("/v1/arbitrage/history?to=2026-11-21", t).await.ok();
        assert_eq!(v["total"], 0);
        let v = app
            .get_key("/v1/arbitrage/history?from=2026-11-21T11:10:30%2B01:00", t)
            .await
            .ok();
        assert_eq!(ids(&v), ["BTC-15M-EP11", "BTC-15M-EP10"]);
    })
    .await;
}

/// The operator's venue_b rate for a category prices that category's opportunities: a lower sports rate
/// raises the net edge of a sports pair and leaves the crypto windows alone, and every surface (current,
/// history, webhook data) names the rates in `fee_model`. An episode keeps the label it was priced at after
/// the rate changes back.
#[tokio::test]
async fn a_category_fee_rate_prices_its_opportunities_and_is_named() {
    for_each_backend(async |db| {
        let keys = create_keys(&db.store).await;
        let start = seed(&db.store, 0).await;
        // The override pair's venue_b market is a sports market, its category spelled as the venue spells it.
        let mut sports = other(Exchange::VenueB, B_OVR, "Measure passes?");
        sports.category = Some("Sports".into());
        db.store.upsert_markets(&[sports], start).await.unwrap();
        let pair = format!("PAIR-{A_OVR}");
        let win = window_id("15m", start);
        let find = |v: &Value, id: &str| -> Value {
            v.as_array()
                .unwrap_or_else(|| panic!("not an array: {v}"))
                .iter()
                .find(|o| o["event_id"] == id || o["opportunity"]["event_id"] == id)
                .cloned()
                .unwrap_or_else(|| panic!("{id} not in {v}"))
        };
        let figures = |o: &Value| {
            [
                "gross_cents",
                "fee_cents",
                "net_cents",
                "roi_percent",
                "max_profit_dollars",
            ]
            .map(|k| o[k].as_f64().unwrap_or_else(|| panic!("{k} of {o}")))
        };

        // Default rates: YES on venue_b at 0.40 pays 0.07 × 0.4 × 0.6 = 1.68 c, NO on venue_a at 0.42 pays
        // ceil(1.7052) = 2 c: 18 − 3.68 = 14.32 c; ROI 14.32 / 85.68 = 16.71 %; 3 contracts → 0.43 $.
        let default = TestApp::new(db, |_| {});
        put_books(&default, Timestamp::now());
        let v = default.get_key("/v1/arbitrage/current", &keys.free).await.ok();
        let o = find(&v, &pair);
        assert_eq!(figures(&o), [18.0, 3.68, 14.32, 16.71, 0.43]);
        assert_eq!(o["fee_model"], "venue_a:0.07;venue_b:sports=0.07");

        // Sports at 0.02: the venue_b leg pays 0.02 × 0.4 × 0.6 = 0.48 c: 18 − 2.48 = 15.52 c;
        // ROI 15.52 / 84.48 = 18.37 %; 3 × 15.52 c = 0.4656 → 0.47 $.
        let app = TestApp::new(db, |c| c.venue_b_fee_rate = "sports=0.02".parse().unwrap());
        put_books(&app, Timestamp::now());
        let v = app.get_key("/v1/arbitrage/current", &keys.free).await.ok();
        let o = find(&v, &pair);
        assert_eq!(figures(&o), [18.0, 2.48, 15.52, 18.37, 0.47]);
        assert_eq!(o["fee_model"], "venue_a:0.07;venue_b:sports=0.02");
        let w = find(&v, &win);
        assert_eq!(
            (&w["net_cents"], &w["fee_model"]),
            (&json!(1.25), &json!("venue_a:0.07;venue_b:crypto=0.07"))
        );

        // The scanner prices at the same rates: the webhook data and the recorded episode carry them.
        let mut rx = app.state.bus.subscribe();
        let mut scanner = Scanner::new(app.state.clone(), Settings::from_config(&app.state.config));
        assert_eq!(scanner.pass().await.opportunities, 3);
        let data = find(&Value::Array(drain(&mut rx)), &pair);
        assert_eq!(figures(&data), [18.0, 2.48, 15.52, 18.37, 0.47]);
        assert_eq!(data["fee_model"], "venue_a:0.07;venue_b:sports=0.02");
        let h = app.get_key("/v1/arbitrage/history", &keys.trader).await.ok();
        let ep = find(&h["items"], &pair);
        assert_eq!(ep["opportunity"]["net_cents"], 15.52);
        assert_eq!(ep["opportunity"]["fee_model"], "venue_a:0.07;venue_b:sports=0.02");
        // Preview rows are masked, but still say which rates their (hidden) figures used.
        let preview = app.get("/v1/arbitrage/history").await.ok();
        let locked = &preview["items"][1]["opportunity"];
        assert_eq!(locked["locked"], true);
        assert!(locked["net_cents"].is_null());
        assert!(
            locked["fee_model"]
                .as_str()
                .is_some_and(|m| m.starts_with("venue_a:0.07;venue_b:"))
        );

        // Back at the default rate: current prices at 0.07 again, and the recorded episode still names the
        // rate its figures were computed at.
        let v = default.get_key("/v1/arbitrage/current", &keys.free).await.ok();
        assert_eq!(find(&v, &pair)["fee_model"], "venue_a:0.07;venue_b:sports=0.07");
        let h = default.get_key("/v1/arbitrage/history", &keys.trader).await.ok();
        let ep = find(&h["items"], &pair);
        assert_eq!(figures(&ep["opportunity"])[2], 15.52);
        assert_eq!(ep["opportunity"]["fee_model"], "venue_a:0.07;venue_b:sports=0.02");
    })
    .await;
}

/// A clock the test moves by hand.
fn manual_clock(start: Timestamp) -> (Arc<AtomicI64>, Arc<dyn Fn() -> Timestamp + Send + Sync>) {
    let t = Arc::new(AtomicI64::new(start.millis()));
    let r = t.clone();
    (t, Arc::new(move || Timestamp::from_millis(r.load(Ordering::SeqCst))))
}

/// The opportunities published on the bus, rendered as the webhook dispatcher renders them.
fn drain(rx: &mut tokio::sync::broadcast::Receiver<DomainEvent>) -> Vec<Value> {
    let mut out = Vec::new();
    while let Ok(ev) = rx.try_recv() {
        if let DomainEvent::ArbitrageOpportunity(o) = ev {
            out.push(crossbook_server::arbitrage::render::webhook_data(&o));
        }
    }
    out
}

#[tokio::test]
async fn scanner_records_episodes_and_publishes_outside_the_cooldown() {
    for_each_backend(async |db| {
        let app = TestApp::new(db, |_| {});
        let keys = create_keys(&db.store).await;
        let start = seed(&db.store, 0).await;
        let now = Timestamp::now();
        put_books(&app, now);
        let (clock, clock_fn) = manual_clock(now);
        let mut rx = app.state.bus.subscribe();
        let mut scanner = Scanner::new(
            app.state.clone(),
            Settings {
                interval: Duration::from_secs(1),
                webhook_min_net: crossbook_core::arb::MicroUsd::from_cents(1),
                cooldown_seconds: 300,
                clock: clock_fn,
            },
        );
        let r = scanner.pass().await;
        assert_eq!((r.opportunities, r.opened, r.extended, r.published), (3, 3, 0, 2));
        let published = drain(&mut rx);
        let ids: Vec<_> = published
            .iter()
            .map(|v| v["event_id"].as_str().unwrap().to_string())
            .collect();
        assert_eq!(
            ids,
            [format!("PAIR-{A_OVR}"), window_id("15m", start)],
            "at or above 1 c only"
        );
        let data = &published[1];
        assert_eq!(data["net_cents"], 1.25);
        assert!(data.get("opinion").is_some() && data.get("orderbook").is_none() && data.get("locked").is_none());

        // A second pass a second later extends the episodes and publishes nothing (cooldown).
        clock.fetch_add(1_000, Ordering::SeqCst);
        put_books(&app, Timestamp::from_millis(clock.load(Ordering::SeqCst)));
        let r = scanner.pass().await;
        assert_eq!((r.opened, r.extended, r.published), (0, 3, 0));
        assert!(drain(&mut rx).is_empty());

        let h = app.get_key("/v1/arbitrage/history", &keys.trader).await.ok();
        assert_eq!(h["total"], 3);
        let first = &h["items"][0];
        assert_eq!(first["first_seen_at"], now.to_iso());
        assert_eq!(
            first["last_seen_at"],
            Timestamp::from_millis(now.millis() + 1_000).to_iso()
        );
        assert!(
            first["opportunity"]["orderbook"].is_object(),
            "the scanner captures depth"
        );

        // After the cooldown the opportunities are published again; after a gap of more than 120 s the
        // episodes are new ones.
        clock.fetch_add(300_000, Ordering::SeqCst);
        put_books(&app, Timestamp::from_millis(clock.load(Ordering::SeqCst)));
        app.state.arb.invalidate(); // the manual clock ran ahead of the catalog TTL's real time
        let r = scanner.pass().await;
        assert_eq!((r.opened, r.published), (3, 2));
        assert_eq!(drain(&mut rx).len(), 2);
        let h = app.get_key("/v1/arbitrage/history", &keys.trader).await.ok();
        assert_eq!(h["total"], 6);

        // A restarted scanner resumes the episodes in progress instead of opening new ones.
        clock.fetch_add(5_000, Ordering::SeqCst);
        put_books(&app, Timestamp::from_millis(clock.load(Ordering::SeqCst)));
        let mut restarted = Scanner::new(
            app.state.clone(),
            Settings {
                interval: Duration::from_secs(1),
                webhook_min_net: crossbook_core::arb::MicroUsd::from_cents(1),
                cooldown_seconds: 300,
                clock: {
                    let c = clock.clone();
                    Arc::new(move || Timestamp::from_millis(c.load(Ordering::SeqCst)))
                },
            },
        );
        assert_eq!(restarted.restore().await.unwrap(), 3);
        let r = restarted.pass().await;
        assert_eq!((r.opened, r.extended), (0, 3));
        let h = app.get_key("/v1/arbitrage/history", &keys.trader).await.ok();
        assert_eq!(h["total"], 6);

        // Removing the override removes the pair from the next catalog.
        assert_eq!(db.store.remove_pair_override(A_OVR).await.unwrap(), 1);
        app.state.arb.invalidate();
        let v = app.get_key("/v1/arbitrage/current", &keys.free).await.ok();
        assert_eq!(event_ids(&v).len(), 2);
    })
    .await;
}

/// The run loop on the real clock with a short interval. The cooldown and episode timing are covered with a
/// manual clock above; tokio's paused clock is not used here because the store's connection pools time their
/// waits on the same clock, and an auto-advanced clock would time them out while SQLite works.
#[tokio::test]
async fn scanner_runs_every_interval_until_cancelled() {
    let db = crossbook_store::testing::sqlite_database().await;
    db.store.migrate().await.unwrap();
    let app = TestApp::new(&db, |c| c.scan_interval_ms = 50);
    seed(&db.store, 0).await;
    put_books(&app, Timestamp::now());
    let mut rx = app.state.bus.subscribe();
    let tracker = tokio_util::task::TaskTracker::new();
    let cancel = tokio_util::sync::CancellationToken::new();
    crossbook_server::workers::scanner::spawn(&app.state, &tracker, &cancel);
    // The first pass publishes the two opportunities of 1 c or more.
    let mut seen = 0;
    while seen < 2 {
        match tokio::time::timeout(Duration::from_secs(30), rx.recv()).await {
            Ok(Ok(DomainEvent::ArbitrageOpportunity(_))) => seen += 1,
            Ok(Ok(_)) => {}
            other => panic!("no publication: {other:?}"),
        }
    }
    // Later passes extend the episodes (last_seen_at moves on).
    let q = crossbook_store::HistoryQuery {
        limit: 10,
        ..Default::default()
    };
    let first = db.store.episode_history(&q).await.unwrap();
    assert_eq!(first.total, 3);
    let h = testing::eventually("a later pass", Duration::from_secs(30), async || {
        let h = db.store.episode_history(&q).await.unwrap();
        (h.items[0].last_seen_at > first.items[0].last_seen_at).then_some(h)
    })
    .await;
    assert_eq!(h.total, 3);
    // No second publication within the cooldown.
    assert!(drain(&mut rx).is_empty());
    stop_scanner(&cancel, &tracker).await;
    db.cleanup().await;
}

/// The next `ArbitrageChanged` on the bus that satisfies `pred` (others are skipped), within 30 s.
async fn next_change(
    rx: &mut tokio::sync::broadcast::Receiver<DomainEvent>,
    what: &str,
    pred: impl Fn(&OpportunityChange) -> bool,
) -> OpportunityChange {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    loop {
        match tokio::time::timeout_at(deadline, rx.recv()).await {
            Ok(Ok(DomainEvent::ArbitrageChanged(c))) if pred(&c) => return (*c).clone(),
            Ok(Ok(_)) => {}
            other => panic!("{what}: no such change ({other:?})"),
        }
    }
}

/// Writes a book into the live books and announces it as the feed does.
fn feed_book(app: &TestApp, b: BookSnapshot) {
    let (key, timestamp) = (BookKey::of(&b), b.timestamp);
    app.state.live.upsert(b);
    app.state.bus.publish(DomainEvent::book_touched(key, timestamp));
}

/// The running scanner re-prices the pairs of a changed book at once: with an hour between passes, the
/// opportunity, its episode, its publication and its opened/closed changes all come from book events.
#[tokio::test]
async fn a_book_change_reprices_its_pairs_without_waiting_for_the_pass() {
    let db = testing::sqlite_database().await;
    db.store.migrate().await.unwrap();
    let app = TestApp::new(&db, |c| c.scan_interval_ms = 3_600_000);
    let start = seed(&db.store, 0).await;
    let ts = Timestamp::now();
    // Only the 1h pair has books at start: the first pass (at once) opens it, which tells the test that
    // the only periodic pass of the test is over.
    let live = &app.state.live;
    live.upsert(a_book(A_HOUR, ts, vec![], vec![lvl(5400, 20)]));
    live.upsert(b_book(B_HOUR, &format!("{B_HOUR}-up"), ts, vec![lvl(9000, 5)]));
    live.upsert(b_book(B_HOUR, &format!("{B_HOUR}-down"), ts, vec![lvl(5000, 20)]));
    let mut rx = app.state.bus.subscribe();
    let tracker = tokio_util::task::TaskTracker::new();
    let cancel = tokio_util::sync::CancellationToken::new();
    crossbook_server::workers::scanner::spawn(&app.state, &tracker, &cancel);
    let hour = window_id("1h", start);
    let c = next_change(&mut rx, "the first pass", |c| c.key.event_id == hour).await;
    assert_eq!(c.kind, ChangeKind::Opened);
    assert_eq!(c.opportunity.net, MicroUsd(2_500));

    // The 15m pair's books arrive: it crosses at 1.25 c.
    let m15 = window_id("15m", start);
    let mut published = app.state.bus.subscribe();
    feed_book(
        &app,
        a_book(A_WIN, ts, vec![lvl(4400, 50)], vec![lvl(5500, 10), lvl(5400, 5)]),
    );
    feed_book(&app, b_book(B_WIN, &format!("{B_WIN}-up"), ts, vec![lvl(4000, 30)]));
    feed_book(
        &app,
        b_book(B_WIN, &format!("{B_WIN}-down"), ts, vec![lvl(5000, 12), lvl(5100, 100)]),
    );
    let opened = next_change(&mut rx, "the 15m pair opens", |c| c.key.event_id == m15).await;
    assert_eq!(opened.kind, ChangeKind::Opened);
    assert_eq!(opened.opportunity.net, MicroUsd(12_500));
    assert!(opened.opportunity.orderbook.is_some(), "the scanner captures depth");
    // Published for the webhooks (1.25 c ≥ 1 c), ahead of the change.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    loop {
        match tokio::time::timeout_at(deadline, published.recv()).await {
            Ok(Ok(DomainEvent::ArbitrageOpportunity(o))) => {
                assert_eq!(o.event_id, m15, "only the 15m pair reaches 1 c");
                break;
            }
            Ok(Ok(_)) => {}
            other => panic!("no publication: {other:?}"),
        }
    }
    // The episode is written within the flush interval, not at the next pass an hour away.
    let q = crossbook_store::HistoryQuery {
        limit: 10,
        ..Default::default()
    };
    let h = testing::eventually("the 15m episode recorded", Duration::from_secs(30), async || {
        let h = db.store.episode_history(&q).await.unwrap();
        h.items.iter().any(|e| e.key.event_id == m15).then_some(h)
    })
    .await;
    let ep = h.items.iter().find(|e| e.key.event_id == m15).unwrap();
    assert_eq!(ep.first_seen_at, opened.first_seen_at);

    // The NO book moves to 0.60: the pair no longer crosses and its opportunity closes.
    feed_book(&app, b_book(B_WIN, &format!("{B_WIN}-down"), ts, vec![lvl(6000, 12)]));
    let closed = next_change(&mut rx, "the 15m pair closes", |c| c.key.event_id == m15).await;
    assert_eq!(closed.kind, ChangeKind::Closed);
    assert_eq!(
        (closed.key.clone(), closed.first_seen_at),
        (opened.key.clone(), opened.first_seen_at),
        "the same episode"
    );

    // A book that goes stale closes its pair's opportunity too.
    let stale = BookKey::venue_a(A_HOUR);
    let marked = live.mark_stale([&stale]);
    app.state.bus.publish(DomainEvent::BooksStale {
        exchange: Exchange::VenueA,
        keys: vec![stale],
        book_seqs: marked.iter().map(|(_, n)| *n).collect(),
        cause: GapCause::Silence,
        at: Timestamp::now(),
    });
    let c = next_change(&mut rx, "the 1h pair closes", |c| c.key.event_id == hour).await;
    assert_eq!(c.kind, ChangeKind::Closed);

    stop_scanner(&cancel, &tracker).await;
    db.cleanup().await;
}

/// Cancels the scanner and waits (30 s at most) until its task has ended.
async fn stop_scanner(cancel: &tokio_util::sync::CancellationToken, tracker: &tokio_util::task::TaskTracker) {
    cancel.cancel();
    tracker.close();
    tokio::time::timeout(Duration::from_secs(30), tracker.wait())
        .await
        .expect("the scanner stops when cancelled");
}

fn real_clock_settings() -> Settings {
    Settings {
        interval: Duration::from_secs(3_600),
        webhook_min_net: MicroUsd::from_cents(1),
        cooldown_seconds: 300,
        clock: Arc::new(Timestamp::now),
    }
}

/// A receiver that lagged lost book changes: the drain runs a full pass, which finds what the lost events
/// announced. A catalog sync runs one too.
#[tokio::test]
async fn a_lagged_bus_or_a_catalog_sync_runs_a_full_pass() {
    let db = testing::sqlite_database().await;
    db.store.migrate().await.unwrap();
    let mut app = TestApp::new(&db, |_| {});
    app.state.bus = crossbook_live::Bus::new(4);
    seed(&db.store, 0).await;
    // Books written with no event: only a full pass can see them.
    put_books(&app, Timestamp::now());
    let mut scanner = Scanner::new(app.state.clone(), real_clock_settings());
    let mut rx = app.state.bus.subscribe();
    assert_eq!(scanner.drain_bus(&mut rx).await, None, "nothing queued");

    let elsewhere = || DomainEvent::book_touched(BookKey::venue_a("ELSEWHERE"), Timestamp::now());
    app.state.bus.publish(elsewhere());
    let r = scanner.drain_bus(&mut rx).await.unwrap();
    assert!(!r.full);
    assert_eq!((r.pairs, r.opportunities), (0, 0), "no pair reads that book");

    for _ in 0..10 {
        app.state.bus.publish(elsewhere());
    }
    let r = scanner.drain_bus(&mut rx).await.unwrap();
    assert!(r.full, "lagged: a full pass");
    assert_eq!((r.pairs, r.opportunities, r.opened, r.changes), (3, 3, 3, 3));
    // The full pass wrote its episodes before returning.
    let q = crossbook_store::HistoryQuery {
        limit: 10,
        ..Default::default()
    };
    assert_eq!(db.store.episode_history(&q).await.unwrap().total, 3);
    assert_eq!(scanner.pending_writes(), 0);

    let mut rx = app.state.bus.subscribe();
    app.state.bus.publish(DomainEvent::CatalogSynced {
        exchange: Exchange::VenueA,
        markets: 3,
    });
    let r = scanner.drain_bus(&mut rx).await.unwrap();
    assert!(r.full, "a catalog sync: a full pass");
    assert_eq!((r.opportunities, r.extended, r.changes), (3, 3, 0));
    db.cleanup().await;
}

/// The book → pairs index is the catalog's: a reloaded catalog re-prices its own pairs.
#[tokio::test]
async fn the_book_index_follows_the_catalog() {
    let db = testing::sqlite_database().await;
    db.store.migrate().await.unwrap();
    let app = TestApp::new(&db, |_| {});
    let start = seed(&db.store, 0).await;
    let ts = Timestamp::now();
    put_books(&app, ts);
    let mut scanner = Scanner::new(app.state.clone(), real_clock_settings());
    let mut rx = app.state.bus.subscribe();
    let ovr = BookKey::venue_a(A_OVR);
    let r = scanner.reprice_books(std::slice::from_ref(&ovr)).await;
    assert_eq!((r.pairs, r.opportunities, r.changes), (1, 1, 1));

    // The override removed: the next catalog's index sends that book to no pair.
    assert_eq!(db.store.remove_pair_override(A_OVR).await.unwrap(), 1);
    app.state.arb.invalidate();
    let r = scanner.reprice_books(std::slice::from_ref(&ovr)).await;
    assert_eq!((r.pairs, r.opportunities), (0, 0));
    // The next full pass closes what the pair showed.
    let r = scanner.pass().await;
    assert_eq!(r.opportunities, 2);
    let c = next_change(&mut rx, "the override pair closes", |c| c.kind == ChangeKind::Closed).await;
    assert_eq!(c.key.event_id, format!("PAIR-{A_OVR}"));

    // A new 5m window pair, with crossing books: not in the cached catalog's index, then in the reloaded
    // one's.
    let (a5, b5) = ("KXBTC5M-NEW-05", "0xbnew5");
    let markets = vec![
        window(Exchange::VenueA, a5, IntervalCode::M5, start, 0),
        window(Exchange::VenueB, b5, IntervalCode::M5, start, 0),
    ];
    let events: Vec<Event> = markets
        .iter()
        .map(|m| Event::new(m.exchange, &m.event_id, &m.series_id, "Bitcoin"))
        .collect();
    db.store.upsert_events(&events, start).await.unwrap();
    db.store.upsert_markets(&markets, start).await.unwrap();
    app.state
        .live
        .upsert(a_book(a5, ts, vec![lvl(4400, 50)], vec![lvl(5500, 10)]));
    app.state
        .live
        .upsert(b_book(b5, &format!("{b5}-up"), ts, vec![lvl(4000, 30)]));
    let no = b_book(b5, &format!("{b5}-down"), ts, vec![lvl(5000, 12)]);
    let no_key = BookKey::of(&no);
    app.state.live.upsert(no);
    let r = scanner.reprice_books(std::slice::from_ref(&no_key)).await;
    assert_eq!(r.pairs, 0, "the cached catalog does not know the new pair");
    app.state.arb.invalidate();
    let r = scanner.reprice_books(std::slice::from_ref(&no_key)).await;
    assert_eq!((r.pairs, r.opportunities, r.opened), (1, 1, 1));
    let m5 = window_id("5m", start);
    let c = next_change(&mut rx, "the new pair opens", |c| c.key.event_id == m5).await;
    assert_eq!(c.kind, ChangeKind::Opened);
    db.cleanup().await;
}

#[test]
fn every_rendered_field_is_documented() {
    let doc = crossbook_server::api::openapi();
    let schemas = &doc["components"]["schemas"];
    let props = |name: &str| -> Vec<String> {
        let s = &schemas[name];
        let mut out: Vec<String> = s["properties"]
            .as_object()
            .map(|m| m.keys().cloned().collect())
            .unwrap_or_default();
        for part in s["allOf"].as_array().into_iter().flatten() {
            let part = match part.get("$ref").and_then(Value::as_str) {
                Some(r) => &schemas[r.rsplit('/').next().unwrap()],
                None => part,
            };
            out.extend(
                part["properties"]
                    .as_object()
                    .into_iter()
                    .flat_map(|m| m.keys().cloned()),
            );
        }
        out
    };
    let current = props("CurrentOut");
    for k in [
        "event_id",
        "event_title",
        "outcome_key",
        "label",
        "timestamp",
        "market_type",
        "interval_code",
        "resolution_time",
        "venue_a_event_ticker",
        "venue_b_event_slug",
        "venue_a",
        "venue_b",
        "buy_yes_market",
        "buy_no_market",
        "gross_cents",
        "fee_cents",
        "net_cents",
        "roi_percent",
        "executable_size",
        "max_profit_dollars",
        "peak_net_cents",
        "fee_model",
        "yes_leg",
        "no_leg",
        "orderbook",
        "opinion",
    ] {
        assert!(current.contains(&k.to_string()), "{k} not in {current:?}");
    }
    assert!(props("HistoryOpportunityOut").contains(&"locked".to_string()));
    assert_eq!(props("HistoryPageOut").len(), 5);
    // A spread row documents the pair it names, and a leg its plain-words action.
    let spread = props("SpreadOut");
    for k in [
        "event_id",
        "label",
        "interval_code",
        "venue_a_market_id",
        "venue_b_market_id",
        "window_start",
        "window_end",
        "side",
        "side1",
        "side2",
        "side1_price",
        "side2_price",
        "diff",
    ] {
        assert!(spread.contains(&k.to_string()), "{k} not in {spread:?}");
    }
    let mut leg_props = props("ExecutionLegOut");
    leg_props.sort();
    assert_eq!(leg_props, ["action", "book_side", "fee_cents", "identifier", "market"]);
    let leg = &schemas["ExecutionLegOut"]["properties"];
    let book_side = leg["book_side"]["description"].as_str().unwrap();
    assert!(
        book_side.contains("placed") && !book_side.contains("takes"),
        "book_side says where the order is placed: {book_side}"
    );
    assert_eq!(schemas["LegAction"]["enum"], json!(["buy_yes", "buy_no"]));
    for path in [
        "/v1/arbitrage/current",
        "/v1/arbitrage/current/difference",
        "/v1/arbitrage/history",
    ] {
        let op = &doc["paths"][path]["get"];
        assert!(op.is_object(), "{path} not documented");
        // The unprefixed alias is documented on the operation, not as one of its own.
        let bare = path.trim_start_matches("/v1");
        assert_eq!(op["x-also-at"], bare, "{path}");
        assert!(doc["paths"].get(bare).is_none(), "{bare} documented twice");
    }
}

/// End to end: the simulated venues (driven through their wire protocols), ingestion into the live books,
/// the scanner and the routes in one real server. An opportunity forced on the simulator appears in
/// `current`, then as an episode in `history`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_simulated_opportunity_appears_in_current_then_in_history() {
    for_each_backend(async |db| {
        let sim = crossbook_sim::Simulator::start(crossbook_sim::SimConfig::new(7, crossbook_sim::SimClock::default()))
            .await
            .unwrap();
        let mut config = crossbook_server::config::Config {
            catalog_sync_seconds: 5,
            scan_interval_ms: 200,
            ..crossbook_server::config::Config::for_tests(&db.url)
        };
        point_at(&mut config, &sim);
        let server = Server::start(config).await;
        let trader = db
            .store
            .create_key("e2e-trader", crossbook_core::Plan::Trader)
            .await
            .unwrap()
            .key;
        let http = client();
        let get = async |path: &str| -> Result<Value, String> {
            let r = http
                .get(server.url(path))
                .header("x-api-key", &trader)
                .send()
                .await
                .map_err(|e| e.to_string())?;
            let status = r.status();
            let v: Value = r.json().await.map_err(|e| e.to_string())?;
            if status.is_success() {
                Ok(v)
            } else {
                Err(format!("{status} {v}"))
            }
        };

        // Force a cross on the current 15m window: YES cheap on venue_a.
        let (ticker, condition) = testing::eventually(
            "an open 15m window pair on the simulator",
            Duration::from_secs(60),
            async || sim.force_cross(IntervalCode::M15, Exchange::VenueA, Duration::from_secs(600)),
        )
        .await;

        // It appears in current (from the live books)...
        let found = testing::eventually_seen("the opportunity in current", Duration::from_secs(120), async || {
            let v = get("/v1/arbitrage/current?interval_code=15m&orderbook=true").await?;
            let hit = v.as_array().and_then(|a| {
                a.iter()
                    .find(|o| {
                        o["venue_a"]["market_ticker"] == ticker.as_str()
                            && o["venue_b"]["condition_id"] == condition.as_str()
                    })
                    .cloned()
            });
            hit.ok_or_else(|| v.to_string())
        })
        .await;
        assert_eq!(found["buy_yes_market"], "venue_a", "{found}");
        assert_eq!(found["buy_no_market"], "venue_b");
        assert!(found["net_cents"].as_f64().unwrap() >= 1.0, "{found}");
        assert!(
            found["orderbook"]["yes"]["asks"]
                .as_array()
                .is_some_and(|a| !a.is_empty())
        );
        let event_id = found["event_id"].as_str().unwrap().to_string();
        assert!(event_id.starts_with("BTC-15M-"), "{event_id}");
        assert_eq!(found["pair_id"], event_id.as_str());

        // The pair is listed with the sources the simulated venues state: venue_a's series names the CF
        // Benchmarks index, venue_b's market a Chainlink stream, so the legs do not settle on the same source.
        let v = get("/v1/arbitrage/pairs?kind=window&interval_code=15m&limit=100")
            .await
            .unwrap();
        let pair = v["items"]
            .as_array()
            .and_then(|a| a.iter().find(|p| p["pair_id"] == event_id.as_str()))
            .unwrap_or_else(|| panic!("{event_id} not listed: {v}"));
        assert_eq!(
            pair["venue_a"]["resolution_source"], "https://www.cfbenchmarks.com/data/indices/BRTI",
            "{pair}"
        );
        assert!(
            pair["venue_b"]["resolution_source"]
                .as_str()
                .is_some_and(|s| s.starts_with("https://data.chain.link/")),
            "{pair}"
        );
        assert_ne!(pair["settlement_basis"], "identical", "{pair}");
        assert_eq!(
            (&pair["scanned"], &pair["match_source"]),
            (&json!(true), &json!("window"))
        );

        // ... and then in the history the scanner records.
        let episode = testing::eventually_seen("the episode in history", Duration::from_secs(90), async || {
            let v = get("/v1/arbitrage/history?interval_code=15m&category=crypto").await?;
            let hit = v["items"].as_array().and_then(|a| {
                a.iter()
                    .find(|e| e["opportunity"]["event_id"] == event_id.as_str())
                    .cloned()
            });
            hit.ok_or_else(|| v.to_string())
        })
        .await;
        let o = &episode["opportunity"];
        assert_eq!(o["locked"], false);
        assert_eq!(o["buy_yes_market"], "venue_a");
        assert!(o["net_cents"].as_f64().unwrap() >= 1.0);
        assert!(o["peak_net_cents"].as_f64().unwrap() >= o["net_cents"].as_f64().unwrap());
        assert!(episode["first_seen_at"].as_str().unwrap() <= episode["last_seen_at"].as_str().unwrap());

        server.stop().await.unwrap();
        sim.shutdown().await;
    })
    .await;
}
