//! `/v1/backtests` on both backends, over a recorded window pair: the worked book (YES on venue_a at 0.45 × 10,
//! NO on venue_b at 0.50 × 12: 1.25 c net on 10 contracts) recorded for a minute, both markets settled YES.
//! A run is started (202), polled until done, and its report, trades and CSV checked against the hand-worked
//! figures; bad requests are refused before a run starts.

use std::sync::Arc;

use axum::{body::Body, http::Method};
use crossbook_core::{
    Amount, Event, Exchange, IntervalCode, Level, Market, Plan, Price, Status, Timestamp,
    book::{BookChange, BookEvent, BookKey, GapCause},
};
use crossbook_store::{LogRun, Store, testing::for_each_backend};
use serde_json::{Value, json};

use crate::util::*;

/// 2026-11-21T19:00:00Z: the window's start.
const START: i64 = 1_795_287_600_000;
const A_WIN: &str = "KXBTC15M-26NOV211915-BT";
const B_WIN: &str = "0xbacktest";

fn lv(cents_x100: i64, units: i64) -> Level {
    Level {
        price: Price::from_micros(cents_x100 * 100),
        size: Amount::from_units(units),
    }
}

fn window(ex: Exchange, id: &str) -> Market {
    let series = if ex == Exchange::VenueA {
        "KXBTC"
    } else {
        "btc-up-or-down"
    };
    let mut m = Market::new(ex, id, &format!("EV-{id}"), series, "Bitcoin up or down?");
    m.interval_code = Some(IntervalCode::M15);
    m.window_start = Some(Timestamp::from_millis(START));
    m.window_end = Some(Timestamp::from_millis(START + 900_000));
    // Settled YES on both venues.
    m.status = Status::Closed;
    m.last_yes_price = Some(Price::ONE);
    m.last_no_price = Some(Price::ZERO);
    m.settled_at = Some(Timestamp::from_millis(START + 960_000));
    if ex == Exchange::VenueB {
        m.yes_token_id = Some(format!("{id}-up"));
        m.no_token_id = Some(format!("{id}-down"));
    }
    m
}

fn snapshot(seq: u64, offset_ms: i64, bids: Vec<Level>, asks: Vec<Level>, no_bids: Vec<Level>) -> BookEvent {
    BookEvent {
        seq,
        venue_seq: None,
        venue_ts: None,
        received_at: Timestamp::from_millis(START + offset_ms),
        change: BookChange::Snapshot { bids, asks, no_bids },
    }
}

/// The pair, and its books from 1 s into the window.
async fn seed(store: &Arc<dyn Store>) {
    let markets = [window(Exchange::VenueA, A_WIN), window(Exchange::VenueB, B_WIN)];
    let events: Vec<Event> = markets
        .iter()
        .map(|m| {
            let mut e = Event::new(m.exchange, &m.event_id, &m.series_id, "Bitcoin Up or Down");
            if m.exchange == Exchange::VenueB {
                e.slug = Some(format!("btc-updown-15m-{}", START / 1000));
            }
            e
        })
        .collect();
    let at = Timestamp::from_millis(START);
    store.upsert_events(&events, at).await.unwrap();
    store.upsert_markets(&markets, at).await.unwrap();
    let keys = [
        BookKey::venue_a(A_WIN),
        BookKey::venue_b(B_WIN, &format!("{B_WIN}-up")),
        BookKey::venue_b(B_WIN, &format!("{B_WIN}-down")),
    ];
    let heads = store.register_log_books(&keys).await.unwrap();
    let books = [
        snapshot(1, 1_000, vec![lv(4400, 50)], vec![], vec![lv(5500, 10), lv(5400, 5)]),
        snapshot(1, 1_000, vec![], vec![lv(4000, 30)], vec![]),
        snapshot(1, 1_000, vec![], vec![lv(5000, 12), lv(5100, 100)], vec![]),
    ];
    let runs: Vec<LogRun> = heads
        .iter()
        .zip(books)
        .map(|(h, e)| LogRun {
            book_id: h.id,
            events: vec![e],
        })
        .collect();
    store.append_log(&runs).await.unwrap();
}

async fn post(app: &TestApp, key: &str, body: Value) -> Resp {
    app.send(
        Method::POST,
        "/v1/backtests",
        &[("x-api-key", key), ("content-type", "application/json")],
        Body::from(body.to_string()),
    )
    .await
}

/// Polls a run until it is no longer running.
async fn finished(app: &TestApp, key: &str, id: &str) -> Value {
    eventually("the backtest to end", 60, async || {
        let v = app.get_key(&format!("/v1/backtests/{id}"), key).await.ok();
        match v["status"].as_str() {
            Some("running") => Err(format!("still running: {v}")),
            _ => Ok(v),
        }
    })
    .await
}

fn range() -> Value {
    json!({"from": START, "to": START + 60_000})
}

#[tokio::test]
async fn a_backtest_runs_in_the_background_and_reports_the_hand_worked_trade() {
    for_each_backend(async |db| {
        seed(&db.store).await;
        let app = TestApp::new(db, |_| {});
        let k = create_keys(&db.store).await;

        let r = post(&app, &k.trader, range()).await;
        assert_eq!(r.status, 202, "{}", r.text);
        let started = r.json();
        let id = started["id"].as_str().unwrap().to_string();
        assert_eq!(r.header("location"), Some(format!("/v1/backtests/{id}").as_str()));
        assert_eq!(started["status"], "running");
        assert_eq!(
            started["params"],
            json!({
                "from": START, "to": START + 60_000, "min_net_cents": 1.0, "capital_per_trade_dollars": 100.0,
                "capital_total_dollars": 1000.0, "latency_ms": 250, "leg_order": "simultaneous",
                "missing_leg": "unwind", "venue_b_fee_rate": "crypto=0.07,sports=0.07,other=0.07",
                "interval_code": null
            })
        );

        let v = finished(&app, &k.trader, &id).await;
        assert_eq!(v["status"], "done", "{v}");
        assert_eq!(v["progress"], 1.0);
        assert_eq!((v["pairs"].as_u64(), v["books"].as_u64()), (Some(1), Some(3)));
        assert_eq!(v["opportunities_seen"], 1);
        assert_eq!(v["opportunities_taken"], 1);
        // 10 × (1 − 0.45 − 0.50) = 0.50 gross; fees 10 × 2 c + 10 × 1.75 c = 0.375; settled YES: 0.125 net.
        assert_eq!(v["pnl_gross_dollars"], 0.5);
        assert_eq!(v["pnl_net_dollars"], 0.125);
        assert_eq!(v["latency_cost_dollars"], 0.0);
        assert_eq!(v["summary"]["fills"], 1);
        assert_eq!(v["summary"]["fees_dollars"], 0.375);
        assert_eq!(v["summary"]["capital_used_dollars"], 9.875);
        assert_eq!(v["zero_latency"]["pnl_net_dollars"], 0.125);
        assert_eq!(v["marked_markets"], json!([]));
        assert_eq!(
            v["by_interval"],
            json!([{"key": "15m", "trades": 1, "pnl_gross_dollars": 0.5, "pnl_net_dollars": 0.125}])
        );
        assert_eq!(
            v["equity"],
            json!([{"at": "2026-11-21T19:16:00.000Z", "pnl_net_dollars": 0.125}])
        );
        let t = &v["trades"][0];
        assert_eq!(t["kind"], "filled");
        assert_eq!(t["valuation"], "settled");
        assert_eq!(t["detected_at"], "2026-11-21T19:00:01.000Z");
        assert_eq!(t["yes_leg"]["market"], "venue_a");
        assert_eq!(t["yes_leg"]["at"], "2026-11-21T19:00:01.250Z");
        assert_eq!(t["yes_leg"]["average_price"], 0.45);
        assert_eq!(t["no_leg"]["identifier"], format!("{B_WIN}-down"));
        assert_eq!(t["no_leg"]["fee_dollars"], 0.175);
        assert_eq!(v["opportunities"][0]["max_profit_dollars"], 0.125);

        // The trades as CSV: one row, the nested legs' fields prefixed.
        let csv = app.get_key(&format!("/v1/backtests/{id}/trades"), &k.trader).await;
        assert_eq!(csv.status, 200);
        assert_eq!(csv.header("content-type"), Some("text/csv; charset=utf-8"));
        let lines: Vec<&str> = csv.text.lines().collect();
        assert_eq!(lines.len(), 2, "{}", csv.text);
        let header: Vec<&str> = lines[0].split(',').collect();
        let row: Vec<&str> = lines[1].split(',').collect();
        let cell = |name: &str| {
            row[header
                .iter()
                .position(|h| *h == name)
                .unwrap_or_else(|| panic!("{name}"))]
        };
        assert_eq!(
            (cell("pnl_net_dollars"), cell("yes_leg_filled"), cell("unwind_sold")),
            ("0.125", "10.0", "")
        );
        let as_json = app
            .get_key(&format!("/v1/backtests/{id}/trades?format=json"), &k.trader)
            .await
            .ok();
        assert_eq!(as_json["trades"], v["trades"]);

        // The same database, range and parameters give the same report, byte for byte.
        let again = post(&app, &k.trader, range()).await.json();
        let again_id = again["id"].as_str().unwrap();
        finished(&app, &k.trader, again_id).await;
        let report = |id: String| {
            let s = db.store.clone();
            async move { s.backtest(&id).await.unwrap().unwrap().report.unwrap() }
        };
        assert_eq!(report(id.clone()).await, report(again_id.to_string()).await);

        // Deleted: gone from the list and from reads; another customer cannot delete one.
        let other_run = post(&app, &k.trader, range()).await.json()["id"]
            .as_str()
            .unwrap()
            .to_string();
        finished(&app, &k.trader, &other_run).await;
        let delete = |id: String, key: String| {
            let app = &app;
            async move {
                app.send(
                    Method::DELETE,
                    &format!("/v1/backtests/{id}"),
                    &[("x-api-key", key.as_str())],
                    Body::empty(),
                )
                .await
            }
        };
        let stranger = db.store.create_key("a-stranger", Plan::Trader).await.unwrap().key;
        delete(other_run.clone(), stranger).await.error(404, "not_found", None);
        assert_eq!(delete(other_run.clone(), k.trader.clone()).await.status, 204);
        app.get_key(&format!("/v1/backtests/{other_run}"), &k.trader)
            .await
            .error(404, "not_found", None);
        delete(other_run, k.trader.clone()).await.error(404, "not_found", None);

        // Listed newest first; another customer does not see them.
        let list = app.get_key("/v1/backtests", &k.trader).await.ok();
        assert_eq!(ids(&list["backtests"], "id"), vec![again_id.to_string(), id.clone()]);
        let other = db.store.create_key("another-trader", Plan::Trader).await.unwrap().key;
        app.get_key(&format!("/v1/backtests/{id}"), &other)
            .await
            .error(404, "not_found", None);
        assert_eq!(app.get_key("/v1/backtests", &other).await.ok()["backtests"], json!([]));
    })
    .await;
}

#[tokio::test]
async fn latency_and_the_leg_order_change_the_fills() {
    for_each_backend(async |db| {
        seed(&db.store).await;
        // venue_b's NO asks at 0.50 fall to 4 at 1.1 s: an order arriving after that misses 6 contracts.
        let down = db
            .store
            .register_log_books(&[BookKey::venue_b(B_WIN, &format!("{B_WIN}-down"))])
            .await
            .unwrap();
        let change = snapshot(2, 1_100, vec![], vec![lv(5000, 4), lv(5100, 100)], vec![]);
        db.store
            .append_log(&[LogRun {
                book_id: down[0].id,
                events: vec![change],
            }])
            .await
            .unwrap();
        let app = TestApp::new(db, |_| {});
        let k = create_keys(&db.store).await;
        let mut body = range();
        body["missing_leg"] = json!("hold");
        let id = post(&app, &k.trader, body).await.json()["id"]
            .as_str()
            .unwrap()
            .to_string();
        let v = finished(&app, &k.trader, &id).await;
        let t = &v["trades"][0];
        assert_eq!(
            (t["kind"].as_str(), t["matched"].as_f64()),
            (Some("second_leg_missed"), Some(4.0))
        );
        // 10 YES held (all pay 1), 4 NO: payout 10 − 4.50 − 2.00 = 3.50 gross; fees 0.20 + 0.07.
        assert_eq!(t["pnl_gross_dollars"], 3.5);
        assert_eq!(t["pnl_net_dollars"], 3.23);
        assert_eq!(v["summary"]["second_legs_missed"], 1);
        // With no latency the whole 10 filled at detection.
        assert_eq!(v["zero_latency"]["pnl_net_dollars"], 0.125);
        assert_eq!(v["latency_cost_dollars"], -3.105);
    })
    .await;
}

#[tokio::test]
async fn bad_requests_are_refused_before_a_run_starts() {
    for_each_backend(async |db| {
        let app = TestApp::new(db, |_| {});
        let k = create_keys(&db.store).await;
        let with = |patch: Value| {
            let mut b = range();
            for (key, v) in patch.as_object().unwrap() {
                b[key] = v.clone();
            }
            b
        };
        post(&app, &k.builder, range())
            .await
            .error(403, "entitlement_required", None);
        app.send(
            Method::POST,
            "/v1/backtests",
            &[("content-type", "application/json")],
            Body::from(range().to_string()),
        )
        .await
        .error(401, "unauthorized", None);
        let cases = [
            (with(json!({"from": START + 1, "to": START})), "from"),
            (with(json!({"to": START + 32 * 86_400_000i64})), "to"),
            (
                with(json!({"capital_per_trade_dollars": 0})),
                "capital_per_trade_dollars",
            ),
            (with(json!({"capital_total_dollars": -5})), "capital_total_dollars"),
            (with(json!({"latency_ms": 60_001})), "latency_ms"),
            (with(json!({"leg_order": "venue_b_first"})), "leg_order"),
            (with(json!({"missing_leg": "pray"})), "missing_leg"),
            (with(json!({"venue_b_fee_rate": "bananas=0.1"})), "venue_b_fee_rate"),
            (with(json!({"interval_code": "7m"})), "interval_code"),
            (with(json!({"from": 1_795_287_600})), "from"),
            (with(json!({"min_net_cents": "one"})), "min_net_cents"),
            (with(json!({"market": "x"})), "market"),
        ];
        for (body, param) in cases {
            post(&app, &k.trader, body)
                .await
                .error(400, "invalid_parameter", Some(param));
        }
        post(&app, &k.trader, json!({"from": START}))
            .await
            .error(400, "missing_parameter", Some("to"));
        app.get_key("/v1/backtests/bt_nope", &k.trader)
            .await
            .error(400, "invalid_parameter", Some("id"));
        let missing = format!("/v1/backtests/bt_{}", "0".repeat(32));
        app.get_key(&missing, &k.trader).await.error(404, "not_found", None);

        // Two runs at once per customer: a third is refused until one ends.
        let owner = db.store.create_key("busy-trader", Plan::Trader).await.unwrap();
        let now = Timestamp::now();
        let busy = [format!("bt_{:032x}", 1), format!("bt_{:032x}", 2)];
        for id in &busy {
            db.store
                .create_backtest(id, owner.info.customer_id, "{}", now)
                .await
                .unwrap();
        }
        post(&app, &owner.key, range()).await.error(429, "rate_limited", None);
        db.store.finish_backtest(&busy[0], Err("stopped"), now).await.unwrap();
        assert_eq!(post(&app, &owner.key, range()).await.status, 202);
        // A run not done has no trades yet.
        let trades = format!("/v1/backtests/{}/trades", busy[1]);
        app.get_key(&trades, &owner.key).await.error(409, "conflict", None);
    })
    .await;
}

/// A stretch of the simulated venues recorded by the real server, with a venue_b disconnect inside it: a
/// backtest of the stretch (threshold 0, as the history records) finds the opportunities the live scanner
/// recorded as episodes, each overlapping its recorded episode in time, and none the scanner did not; and no
/// trade's orders cross a capture gap of their books.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_backtest_of_a_recorded_stretch_finds_the_episodes_the_scanner_recorded() {
    use crossbook_core::{arb::MicroUsd, backtest::BacktestParams};
    use crossbook_server::config::Config;
    use crossbook_sim::{SimClock, SimConfig, Simulator};
    use crossbook_store::HistoryQuery;

    let db = crossbook_store::testing::sqlite_database().await;
    db.store.migrate().await.unwrap();
    let sim = Simulator::start(SimConfig::new(11, SimClock::default())).await.unwrap();
    let mut config = Config::for_tests(&db.url);
    point_at(&mut config, &sim);
    let from = Timestamp::now();
    let server = Server::start(config).await;
    let episodes = async || {
        let q = HistoryQuery {
            from: Some(from),
            limit: 500,
            ..HistoryQuery::default()
        };
        let page = db.store.episode_history(&q).await.map_err(|e| e.to_string())?;
        Ok::<_, String>(page.items)
    };
    // The scanner reads the catalog every few seconds, and both ends of the stretch cut episodes: the test
    // compares the episodes and opportunities that begin at least 10 s inside it.
    let settled = from.millis() + 10_000;
    eventually("two episodes recorded 10 s into the stretch", 240, async || {
        let n = episodes()
            .await?
            .iter()
            .filter(|e| e.first_seen_at.millis() > settled)
            .count();
        if n >= 2 { Ok(()) } else { Err(format!("{n} episodes")) }
    })
    .await;
    // A disconnect of venue_b: every venue_b book has a gap until it is captured again.
    sim.faults().drop_sockets_of(Exchange::VenueB);
    let readyz = server.url("/readyz");
    eventually("venue_b captured again", 60, async || {
        let (_, v) = get_json(&readyz).await?;
        let reconnects = v["venues"]["venue_b"]["reconnects"].as_u64().unwrap_or(0);
        if v["venues"]["venue_b"]["status"] == "fresh" && reconnects > 0 {
            Ok(())
        } else {
            Err(v.to_string())
        }
    })
    .await;
    // Until an episode opens after the reconnect, so the stretch has trading on both sides of the gap, and the
    // log holds 15 s of books after it, so it begins well inside the stretch.
    let reconnected = Timestamp::now();
    let last = eventually("an episode after the reconnect", 240, async || {
        let items = episodes().await?;
        items
            .iter()
            .map(|e| e.first_seen_at)
            .filter(|t| *t > reconnected)
            .max()
            .ok_or(format!("{} episodes, none after the reconnect", items.len()))
    })
    .await;
    eventually("the log 15 s past the last episode", 60, async || {
        let heads = db.store.log_heads(Exchange::VenueA).await.map_err(|e| e.to_string())?;
        let newest = heads.iter().filter_map(|h| h.last_ts).max();
        match newest {
            Some(t) if t.millis() > last.millis() + 15_000 => Ok(()),
            other => Err(format!("the log reaches {other:?}")),
        }
    })
    .await;
    let to = Timestamp::now();
    server.stop().await.unwrap();

    let params = BacktestParams {
        min_net: MicroUsd::ZERO,
        capital_per_trade: None,
        capital_total: None,
        latency_ms: 500,
        ..BacktestParams::new(from, to)
    };
    let report = crossbook_server::backtests::run(db.store.clone(), params, None)
        .await
        .unwrap();
    let recorded = episodes().await.unwrap();
    assert!(report.events > 1_000, "{} events", report.events);

    let inside = |t: Timestamp| t.millis() > settled && t.millis() < to.millis() - 10_000;
    let overlaps = |a: (Timestamp, Timestamp), b: (Timestamp, Timestamp)| {
        a.0.millis() <= b.1.millis() + 2_000 && b.0.millis() <= a.1.millis() + 2_000
    };
    let compared = recorded.iter().filter(|e| inside(e.first_seen_at)).count();
    assert!(
        compared >= 3,
        "no recorded episode began inside the stretch: {recorded:#?}"
    );
    for e in recorded.iter().filter(|e| inside(e.first_seen_at)) {
        let found = report.opportunities.iter().any(|o| {
            o.event_id == e.key.event_id
                && o.buy_yes_market == e.key.buy_yes_market
                && overlaps((o.first_seen_at, o.last_seen_at), (e.first_seen_at, e.last_seen_at))
        });
        assert!(
            found,
            "recorded episode {:?} from {} to {} not found: {:#?}",
            e.key,
            e.first_seen_at.to_iso(),
            e.last_seen_at.to_iso(),
            report.opportunities
        );
    }
    for o in report.opportunities.iter().filter(|o| inside(o.first_seen_at)) {
        let found = recorded.iter().any(|e| {
            o.event_id == e.key.event_id
                && o.buy_yes_market == e.key.buy_yes_market
                && overlaps((o.first_seen_at, o.last_seen_at), (e.first_seen_at, e.last_seen_at))
        });
        assert!(found, "the backtest found {o:?}, which the scanner did not record");
    }
    assert!(report.opportunities_seen >= 2);

    // The disconnect is on record, and no trade's orders met a book that had lost continuity since detection.
    for t in &report.trades {
        for leg in [&t.yes, &t.no] {
            let key = match leg.venue {
                Exchange::VenueA => BookKey::venue_a(&leg.market_id),
                Exchange::VenueB => BookKey::venue_b(&leg.market_id, &leg.identifier),
            };
            let on_book = db.store.log_gaps(&key, from, to).await.unwrap();
            for g in on_book {
                assert!(
                    !(g.start > t.detected_at && g.start <= leg.at),
                    "trade {} met {key:?} after its gap at {}",
                    t.id,
                    g.start.to_iso()
                );
            }
        }
    }
    // The disconnect is in the log: every venue_b book then open has a gap of that cause.
    let mut disconnects = 0;
    for head in db.store.log_heads(Exchange::VenueB).await.unwrap() {
        let on_book = db.store.log_gaps(&head.book, from, to).await.unwrap();
        disconnects += on_book.iter().filter(|g| g.cause == GapCause::Disconnect).count();
    }
    assert!(disconnects > 0, "no disconnect gap recorded");
    db.cleanup().await;
}

/// A run deleted while it runs stops and writes nothing: its end finds no row, and none appears.
#[tokio::test]
async fn a_run_deleted_part_way_writes_nothing() {
    for_each_backend(async |db| {
        seed(&db.store).await;
        let params = crossbook_core::backtest::BacktestParams::new(
            Timestamp::from_millis(START),
            Timestamp::from_millis(START + 60_000),
        );
        let id = format!("bt_{:032x}", 7);
        db.store.create_backtest(&id, 1, "{}", Timestamp::now()).await.unwrap();
        assert!(db.store.delete_backtest(&id).await.unwrap());
        crossbook_server::backtests::spawn(db.store.clone(), id.clone(), params)
            .await
            .unwrap();
        assert!(db.store.backtest(&id).await.unwrap().is_none());
    })
    .await;
}
