//! OHLCV candles through HTTP, on both backends: YES prices from both tokens' trades, empty intervals closed at
//! the book's mid (and said so), weeks rolled up from days, the last price and its changes, several markets in
//! the order asked, the event route, and every refusal.

use crossbook_core::{
    Amount, BookSnapshot, Event, Exchange, Level, Market, Outcome, Price, TakerSide, Timestamp, Trade,
};
use crossbook_store::testing::for_each_backend;
use serde_json::{Value, json};

use crate::util::*;

/// 2025-11-17T00:00:00Z, a Monday.
const DAY0: i64 = 1_763_337_600_000;
const DAY: i64 = 86_400_000;
const HOUR: i64 = 3_600_000;
const B_COND: &str = "0xc0ffee0000000000000000000000000000000000000000000000000000000001";
const YES_TOKEN: &str = "31111111111111111111";
const NO_TOKEN: &str = "32222222222222222222";
const A_ID: &str = "KXOHLC-A";

fn trade(ex: Exchange, market: &str, id: &str, at: i64, outcome: Outcome, cents: i64, size: i64) -> Trade {
    Trade {
        exchange: ex,
        source_trade_id: id.into(),
        market_id: market.into(),
        event_id: if ex == Exchange::VenueB { "ohlc-event" } else { "KXOHLC" }.into(),
        executed_at: Timestamp::from_millis(at),
        taker_side: TakerSide::Buy,
        outcome,
        price: Price::from_cents(cents),
        size: Amount::from_units(size),
    }
}

fn level(cents: i64) -> Level {
    Level {
        price: Price::from_cents(cents),
        size: Amount::from_units(10),
    }
}

async fn seed(db: &crossbook_store::testing::TestDb) {
    let now = Timestamp::from_millis(DAY0);
    let event = Event::new(Exchange::VenueB, "ohlc-event", "ohlc-series", "OHLC event");
    db.store.upsert_events(&[event], now).await.unwrap();
    let mut b = Market::new(Exchange::VenueB, B_COND, "ohlc-event", "ohlc-series", "Will B?");
    b.yes_token_id = Some(YES_TOKEN.into());
    b.no_token_id = Some(NO_TOKEN.into());
    let a = Market {
        title: Some("A market".into()),
        ..Market::new(Exchange::VenueA, A_ID, "KXOHLC", "KXOHLC", "Will A?")
    };
    db.store.upsert_markets(&[b, a], now).await.unwrap();
    let b = |id, at, outcome, cents, size| trade(Exchange::VenueB, B_COND, id, at, outcome, cents, size);
    db.store
        .insert_trades(&[
            b("b1", DAY0 + 10 * HOUR, Outcome::Yes, 40, 10),
            // NO at 0.55 is YES at 0.45.
            b("b2", DAY0 + 11 * HOUR, Outcome::No, 55, 4),
            // Day 1 has no trade. Day 2:
            b("b3", DAY0 + 2 * DAY + HOUR, Outcome::Yes, 50, 2),
            trade(Exchange::VenueA, A_ID, "a1", DAY0 + 2 * DAY, Outcome::Yes, 70, 1),
        ])
        .await
        .unwrap();
    // The YES book: one quote on day 0 (superseded by day 1's before any empty interval uses it) and one on
    // day 1 at 0.47 / 0.49, mid 0.48. The NO token's book must not be read.
    let snap = |token: &str, at: i64, bid: i64, ask: i64| BookSnapshot {
        exchange: Exchange::VenueB,
        market_id: B_COND.into(),
        asset_id: Some(token.into()),
        timestamp: Timestamp::from_millis(at),
        bids: vec![level(bid)],
        asks: vec![level(ask)],
        no_bids: vec![],
    };
    db.store
        .insert_snapshots(&[
            snap(YES_TOKEN, DAY0 + 9 * HOUR, 30, 34),
            snap(YES_TOKEN, DAY0 + DAY + 12 * HOUR, 47, 49),
            snap(NO_TOKEN, DAY0 + DAY + 13 * HOUR, 10, 90),
        ])
        .await
        .unwrap();
}

fn candle(v: &Value, i: usize) -> Value {
    let mut c = v["candles"][i].clone();
    // Checked once below; the rest compare on prices and volumes.
    c.as_object_mut().unwrap().remove("start");
    c
}

#[tokio::test]
async fn candles_are_yes_prices_with_mid_closes_for_empty_intervals() {
    for_each_backend(async |db| {
        seed(db).await;
        let app = TestApp::new(db, |_| {});
        let k = create_keys(&db.store).await;
        let uri = format!(
            "/v1/markets/ohlcv?market_ids={B_COND}&interval=1d&from={}&to={}",
            DAY0 - DAY,
            DAY0 + 3 * DAY
        );
        let v = app.get_key(&uri, &k.free).await.ok();
        assert_eq!(v["interval"], "1d");
        assert_eq!(v["from"], "2025-11-16T00:00:00.000Z");
        assert_eq!(v["to"], "2025-11-20T00:00:00.000Z");
        let m = &v["markets"][0];
        assert_eq!(m["exchange"], "venue_b");
        assert_eq!(m["event_id"], "ohlc-event");
        assert_eq!(m["title"], "Will B?", "the question when the venue gives no title");
        assert_eq!(m["candles"].as_array().unwrap().len(), 4);
        assert_eq!(m["candles"][1]["start"], "2025-11-17T00:00:00.000Z");
        let empty = json!({
            "timestamp": DAY0 - DAY, "open": null, "high": null, "low": null, "close": null,
            "close_source": null, "volume": 0.0, "volume_usd": 0.0, "trade_count": 0,
        });
        assert_eq!(candle(m, 0), empty, "before any trade or book: nothing to close at");
        assert_eq!(
            candle(m, 1),
            json!({
                "timestamp": DAY0, "open": 0.4, "high": 0.45, "low": 0.4, "close": 0.45,
                "close_source": "trade", "volume": 14.0, "volume_usd": 6.2, "trade_count": 2,
            })
        );
        assert_eq!(
            candle(m, 2),
            json!({
                "timestamp": DAY0 + DAY, "open": null, "high": null, "low": null, "close": 0.48,
                "close_source": "mid", "volume": 0.0, "volume_usd": 0.0, "trade_count": 0,
            }),
            "no trade: the YES book's mid at the end of the day"
        );
        assert_eq!(candle(m, 3)["close"], 0.5);
        assert_eq!(m["last_price"], 0.5);
        assert_eq!(
            m["change_1d"], 0.05,
            "0.50 now, 0.45 at the last trade a day before `to`"
        );
        assert_eq!(m["change_7d"], Value::Null, "no trade a week before");
        assert_eq!(m["change_30d"], Value::Null);

        // A week rolls up its days; an hour bucket sees one trade; several markets come in the order asked.
        let weeks = app
            .get_key(
                &format!(
                    "/v1/markets/ohlcv?market_ids={A_ID},{B_COND}&interval=1w&from={DAY0}&to={}",
                    DAY0 + 7 * DAY
                ),
                &k.free,
            )
            .await
            .ok();
        let ids: Vec<&str> = weeks["markets"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["market_id"].as_str().unwrap())
            .collect();
        assert_eq!(ids, [A_ID, B_COND]);
        // The list may also repeat the parameter, as generated clients send it.
        let repeated = app
            .get_key(
                &format!(
                    "/v1/markets/ohlcv?market_ids={A_ID}&market_ids={B_COND}&interval=1w&from={DAY0}&to={}",
                    DAY0 + 7 * DAY
                ),
                &k.free,
            )
            .await
            .ok();
        assert_eq!(repeated, weeks);
        assert_eq!(weeks["markets"][0]["title"], "A market");
        assert_eq!(
            candle(&weeks["markets"][1], 0),
            json!({
                "timestamp": DAY0, "open": 0.4, "high": 0.5, "low": 0.4, "close": 0.5,
                "close_source": "trade", "volume": 16.0, "volume_usd": 7.2, "trade_count": 3,
            })
        );
        let hours = app
            .get_key(
                &format!(
                    "/v1/markets/ohlcv?market_ids={B_COND}&exchange=venue_b&interval=1h&from={}&to={}",
                    DAY0 + 10 * HOUR,
                    DAY0 + 12 * HOUR
                ),
                &k.free,
            )
            .await
            .ok();
        let closes: Vec<&Value> = hours["markets"][0]["candles"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| &c["close"])
            .collect();
        assert_eq!(closes, [&json!(0.4), &json!(0.45)]);

        // The event route: its markets, highest volume first.
        let ev = app
            .get_key(
                &format!("/v1/events/ohlc-event/ohlcv?interval=1d&from={DAY0}&to={}", DAY0 + DAY),
                &k.free,
            )
            .await
            .ok();
        assert_eq!(
            (&ev["exchange"], &ev["event_id"]),
            (&json!("venue_b"), &json!("ohlc-event"))
        );
        assert_eq!(ev["markets"].as_array().unwrap().len(), 1);
        assert_eq!(ev["markets"][0]["candles"][0]["close"], 0.45);
    })
    .await;
}

#[tokio::test]
async fn bad_candle_requests_name_the_parameter() {
    for_each_backend(async |db| {
        seed(db).await;
        let app = TestApp::new(db, |_| {});
        let k = create_keys(&db.store).await;
        let refused = [
            ("/v1/markets/ohlcv", 400, "missing_parameter", Some("market_ids")),
            (
                "/v1/markets/ohlcv?market_ids=a,,b",
                400,
                "invalid_parameter",
                Some("market_ids"),
            ),
            (
                "/v1/markets/ohlcv?market_ids=a&interval=2h",
                400,
                "invalid_parameter",
                Some("interval"),
            ),
            (
                "/v1/markets/ohlcv?market_ids=a&exchange=venue_c",
                400,
                "invalid_parameter",
                Some("exchange"),
            ),
            (
                "/v1/markets/ohlcv?market_ids=a&from=soon",
                400,
                "invalid_parameter",
                Some("from"),
            ),
            (
                "/v1/markets/ohlcv?market_ids=a&from=2026-01-02&to=2026-01-01",
                400,
                "invalid_parameter",
                Some("from"),
            ),
            // Six years of days is more than 1,500 candles.
            (
                "/v1/markets/ohlcv?market_ids=a&interval=1d&from=2020-01-01&to=2026-01-01",
                400,
                "invalid_parameter",
                Some("from"),
            ),
            ("/v1/markets/ohlcv?market_ids=nope", 404, "not_found", None),
            // venue_b ids are not looked up on venue_a when the request says venue_a.
            (
                &*format!("/v1/markets/ohlcv?market_ids={B_COND}&exchange=venue_a"),
                404,
                "not_found",
                None,
            ),
            ("/v1/events/no-such-event/ohlcv", 404, "not_found", None),
            (
                "/v1/events/ohlc-event/ohlcv?limit=51",
                400,
                "invalid_parameter",
                Some("limit"),
            ),
        ];
        for (uri, status, code, param) in refused {
            app.get_key(uri, &k.free).await.error(status, code, param);
        }
        let many: Vec<String> = (0..51).map(|i| format!("m{i}")).collect();
        app.get_key(&format!("/v1/markets/ohlcv?market_ids={}", many.join(",")), &k.free)
            .await
            .error(400, "invalid_parameter", Some("market_ids"));
        app.get(&format!("/v1/markets/ohlcv?market_ids={B_COND}"))
            .await
            .error(401, "unauthorized", None);
    })
    .await;
}
