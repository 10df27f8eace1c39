//! venue_a (Kalshi Trade API v2) wire types, as the venue sends them (PROTOCOLS part A).
//!
//! Every type accepts the current fixed-point shape (`*_dollars` price strings, `*_fp` count strings) and
//! the older ones still found in archives and in the Jan–Mar 2026 dual-format period (integer cents and
//! integer counts), with `null`, absent and empty treated alike. Values stay as text ([`Num`]) here; the
//! `normalise` module turns them into exact micro-units and reports what does not parse.

use crossbook_core::Timestamp;
use serde::Deserialize;

use crate::wire::{Lenient, Num, de_null_default, de_opt_time};

/// `GET /series` (the v3.13 spec has no cursor; some deployments send one).
#[derive(Debug, Clone, Deserialize)]
pub struct SeriesList {
    #[serde(default, deserialize_with = "de_null_default")]
    pub series: Vec<Lenient<Series>>,
    #[serde(default)]
    pub cursor: Option<String>,
}

/// `GET /series/{series_ticker}`.
#[derive(Debug, Clone, Deserialize)]
pub struct SeriesOne {
    pub series: Series,
}

/// A series (`KXBTC15M`).
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Series {
    pub ticker: String,
    #[serde(default, deserialize_with = "de_null_default")]
    pub title: String,
    /// Free text ("daily", "weekly", "one-off", …); not an enum.
    #[serde(default)]
    pub frequency: Option<String>,
    /// The canonical category ("Crypto", "Sports", …).
    #[serde(default)]
    pub category: Option<String>,
    #[serde(default, deserialize_with = "de_null_default")]
    pub tags: Vec<String>,
    #[serde(default)]
    pub fee_type: Option<String>,
    /// A number in the spec, a string in some fixtures.
    #[serde(default)]
    pub fee_multiplier: Option<Num>,
    /// Where the series' markets settle (`[{name, url}]`).
    #[serde(default, deserialize_with = "de_null_default")]
    pub settlement_sources: Vec<SettlementSource>,
}

/// One entry of a series' `settlement_sources`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct SettlementSource {
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub url: Option<String>,
}

/// `GET /events` page.
#[derive(Debug, Clone, Deserialize)]
pub struct EventsPage {
    #[serde(default, deserialize_with = "de_null_default")]
    pub events: Vec<Lenient<EventData>>,
    /// Empty (or `null`) on the last page.
    #[serde(default)]
    pub cursor: Option<String>,
}

/// `GET /events/{event_ticker}` (top-level `markets` is deprecated in favour of the nested ones).
#[derive(Debug, Clone, Deserialize)]
pub struct EventOne {
    pub event: EventData,
    #[serde(default, deserialize_with = "de_null_default")]
    pub markets: Vec<Lenient<Market>>,
}

/// An event (`KXBTC15M-26MAY120715`).
#[derive(Debug, Clone, Deserialize)]
pub struct EventData {
    pub event_ticker: String,
    #[serde(default, deserialize_with = "de_null_default")]
    pub series_ticker: String,
    #[serde(default, deserialize_with = "de_null_default")]
    pub title: String,
    #[serde(default)]
    pub sub_title: Option<String>,
    /// Deprecated in favour of the series category.
    #[serde(default)]
    pub category: Option<String>,
    #[serde(default)]
    pub mutually_exclusive: Option<bool>,
    #[serde(default, deserialize_with = "de_opt_time")]
    pub strike_date: Option<Timestamp>,
    /// Present with `with_nested_markets=true`.
    #[serde(default, deserialize_with = "de_null_default")]
    pub markets: Vec<Lenient<Market>>,
}

/// `GET /markets` page.
#[derive(Debug, Clone, Deserialize)]
pub struct MarketsPage {
    #[serde(default, deserialize_with = "de_null_default")]
    pub markets: Vec<Lenient<Market>>,
    #[serde(default)]
    pub cursor: Option<String>,
}

/// `GET /markets/{ticker}`.
#[derive(Debug, Clone, Deserialize)]
pub struct MarketOne {
    pub market: Market,
}

/// A market (`KXBTC15M-26MAY120715-15`). Current fields first, then the legacy integer ones.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Market {
    pub ticker: String,
    #[serde(default, deserialize_with = "de_null_default")]
    pub event_ticker: String,
    #[serde(default)]
    pub market_type: Option<String>,
    /// Deprecated; may be absent or empty.
    #[serde(default)]
    pub title: Option<String>,
    #[serde(default)]
    pub subtitle: Option<String>,
    #[serde(default)]
    pub yes_sub_title: Option<String>,
    #[serde(default)]
    pub no_sub_title: Option<String>,
    #[serde(default, deserialize_with = "de_opt_time")]
    pub open_time: Option<Timestamp>,
    #[serde(default, deserialize_with = "de_opt_time")]
    pub close_time: Option<Timestamp>,
    #[serde(default, deserialize_with = "de_opt_time")]
    pub expected_expiration_time: Option<Timestamp>,
    #[serde(default, deserialize_with = "de_opt_time")]
    pub settlement_ts: Option<Timestamp>,
    /// Open string enum (`initialized, inactive, active, closed, determined, disputed, amended,
    /// finalized`, older `open`, `settled`).
    #[serde(default, deserialize_with = "de_null_default")]
    pub status: String,
    #[serde(default)]
    pub yes_bid_dollars: Option<Num>,
    #[serde(default)]
    pub yes_ask_dollars: Option<Num>,
    #[serde(default)]
    pub no_bid_dollars: Option<Num>,
    #[serde(default)]
    pub no_ask_dollars: Option<Num>,
    #[serde(default)]
    pub last_price_dollars: Option<Num>,
    #[serde(default)]
    pub volume_fp: Option<Num>,
    #[serde(default)]
    pub volume_24h_fp: Option<Num>,
    #[serde(default)]
    pub open_interest_fp: Option<Num>,
    /// Deprecated, always `"0.0000"`.
    #[serde(default)]
    pub liquidity_dollars: Option<Num>,
    #[serde(default)]
    pub notional_value_dollars: Option<Num>,
    /// `yes`, `no`, `scalar`, `""`.
    #[serde(default)]
    pub result: Option<String>,
    #[serde(default)]
    pub strike_type: Option<String>,
    /// A JSON number (not a string) in the spec.
    #[serde(default)]
    pub floor_strike: Option<Num>,
    #[serde(default)]
    pub cap_strike: Option<Num>,
    #[serde(default)]
    pub rules_primary: Option<String>,
    /// Legacy (pre-March-2026) integer cents and counts.
    #[serde(default)]
    pub last_price: Option<Num>,
    #[serde(default)]
    pub volume: Option<Num>,
    #[serde(default)]
    pub volume_24h: Option<Num>,
    #[serde(default)]
    pub open_interest: Option<Num>,
    #[serde(default)]
    pub liquidity: Option<Num>,
    #[serde(default)]
    pub category: Option<String>,
}

/// One book level: a two-element array `[price, count]`. Which unit the price is in (dollars or cents)
/// depends on the field the level sits in, not on its JSON type.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct WireLevel(pub Num, pub Num);

/// `GET /markets/{ticker}/orderbook`: `orderbook_fp` since March 2026, `orderbook` before, both during the
/// transition.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct OrderbookResponse {
    #[serde(default)]
    pub orderbook_fp: Option<OrderbookFp>,
    #[serde(default)]
    pub orderbook: Option<LegacyOrderbook>,
}

/// Current book: dollar strings and count strings, bids only, ascending (best last).
#[derive(Debug, Clone, Default, Deserialize)]
pub struct OrderbookFp {
    #[serde(default, deserialize_with = "de_null_default")]
    pub yes_dollars: Vec<WireLevel>,
    #[serde(default, deserialize_with = "de_null_default")]
    pub no_dollars: Vec<WireLevel>,
}

/// Older book: `yes`/`no` in integer cents (a side could be `null`), later with `yes_dollars`/`no_dollars`
/// dollar strings beside integer counts.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct LegacyOrderbook {
    #[serde(default, deserialize_with = "de_null_default")]
    pub yes: Vec<WireLevel>,
    #[serde(default, deserialize_with = "de_null_default")]
    pub no: Vec<WireLevel>,
    #[serde(default)]
    pub yes_dollars: Option<Vec<WireLevel>>,
    #[serde(default)]
    pub no_dollars: Option<Vec<WireLevel>>,
}

/// `GET /markets/orderbooks?tickers=…`.
#[derive(Debug, Clone, Deserialize)]
pub struct OrderbooksResponse {
    #[serde(default, deserialize_with = "de_null_default")]
    pub orderbooks: Vec<TickerOrderbook>,
}

/// One book of the batch endpoint.
#[derive(Debug, Clone, Deserialize)]
pub struct TickerOrderbook {
    pub ticker: String,
    #[serde(flatten)]
    pub book: OrderbookResponse,
}

/// `GET /markets/trades` page (newest first).
#[derive(Debug, Clone, Deserialize)]
pub struct TradesPage {
    #[serde(default, deserialize_with = "de_null_default")]
    pub trades: Vec<Lenient<Trade>>,
    #[serde(default)]
    pub cursor: Option<String>,
}

/// A trade, from REST (`ticker`, `created_time`) or the WebSocket `trade` channel (`market_ticker`,
/// `ts_ms`).
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Trade {
    pub trade_id: String,
    #[serde(alias = "market_ticker")]
    pub ticker: String,
    #[serde(default)]
    pub count_fp: Option<Num>,
    #[serde(default)]
    pub yes_price_dollars: Option<Num>,
    #[serde(default)]
    pub no_price_dollars: Option<Num>,
    /// Deprecated in favour of `taker_outcome_side`.
    #[serde(default)]
    pub taker_side: Option<String>,
    #[serde(default)]
    pub taker_outcome_side: Option<String>,
    /// `bid` ≡ yes, `ask` ≡ no.
    #[serde(default)]
    pub taker_book_side: Option<String>,
    #[serde(default)]
    pub is_block_trade: Option<bool>,
    #[serde(default, deserialize_with = "de_opt_time")]
    pub created_time: Option<Timestamp>,
    #[serde(default)]
    pub ts_ms: Option<i64>,
    /// Deprecated integer seconds (WS); kept as text because other frames use RFC 3339 here.
    #[serde(default)]
    pub ts: Option<Num>,
    /// Legacy integer count and cent prices.
    #[serde(default)]
    pub count: Option<Num>,
    #[serde(default)]
    pub yes_price: Option<Num>,
    #[serde(default)]
    pub no_price: Option<Num>,
}

/// A WebSocket frame from the server. Unknown `type`s (ticker, lifecycle, …) decode as [`WsMessage::Other`]
/// and are ignored.
#[derive(Debug, Clone, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum WsMessage {
    Subscribed {
        #[serde(default)]
        id: Option<u64>,
        msg: SubscribedMsg,
    },
    Unsubscribed {
        #[serde(default)]
        sid: Option<u64>,
    },
    Ok {
        #[serde(default)]
        id: Option<u64>,
    },
    Error {
        #[serde(default)]
        id: Option<u64>,
        #[serde(default)]
        sid: Option<u64>,
        msg: ErrorMsg,
    },
    OrderbookSnapshot {
        sid: u64,
        #[serde(default)]
        seq: Option<u64>,
        msg: SnapshotMsg,
    },
    OrderbookDelta {
        sid: u64,
        #[serde(default)]
        seq: Option<u64>,
        msg: DeltaMsg,
    },
    Trade {
        sid: u64,
        #[serde(default)]
        seq: Option<u64>,
        msg: Trade,
    },
    #[serde(other)]
    Other,
}

/// `{"channel": "orderbook_delta", "sid": 2}`.
#[derive(Debug, Clone, Deserialize)]
pub struct SubscribedMsg {
    #[serde(default)]
    pub channel: Option<String>,
    pub sid: u64,
}

/// `{"code": 10, "msg": "..."}`.
#[derive(Debug, Clone, Deserialize)]
pub struct ErrorMsg {
    #[serde(default)]
    pub code: Option<i64>,
    #[serde(default)]
    pub msg: Option<String>,
}

/// `orderbook_snapshot`: each side omitted when empty. Current `*_dollars_fp`, older `yes`/`no` in cents
/// and `yes_dollars`/`no_dollars` with integer counts.
#[derive(Debug, Clone, Deserialize)]
pub struct SnapshotMsg {
    pub market_ticker: String,
    #[serde(default, deserialize_with = "de_null_default")]
    pub yes_dollars_fp: Vec<WireLevel>,
    #[serde(default, deserialize_with = "de_null_default")]
    pub no_dollars_fp: Vec<WireLevel>,
    #[serde(default)]
    pub yes_dollars: Option<Vec<WireLevel>>,
    #[serde(default)]
    pub no_dollars: Option<Vec<WireLevel>>,
    #[serde(default)]
    pub yes: Option<Vec<WireLevel>>,
    #[serde(default)]
    pub no: Option<Vec<WireLevel>>,
}

/// `orderbook_delta`: a signed change of one level.
#[derive(Debug, Clone, Deserialize)]
pub struct DeltaMsg {
    pub market_ticker: String,
    #[serde(default)]
    pub price_dollars: Option<Num>,
    /// Signed change (`"-12.00"`).
    #[serde(default)]
    pub delta_fp: Option<Num>,
    /// `yes` or `no`.
    pub side: String,
    #[serde(default)]
    pub ts_ms: Option<i64>,
    /// Legacy integer cents and integer delta.
    #[serde(default)]
    pub price: Option<Num>,
    #[serde(default)]
    pub delta: Option<Num>,
}

#[cfg(test)]
mod tests {
    //! Deserialisation tables over the sample payloads (`tests/fixtures/`) and the shapes PROTOCOLS part A
    //! says a parser meets: current, transition-era and legacy, nulls, missing fields, string-encoded
    //! numbers, and malformed input.
    use super::*;

    const MARKET: &str = include_str!("../../tests/fixtures/kalshi_market.json");
    const ORDERBOOK: &str = include_str!("../../tests/fixtures/kalshi_orderbook.json");
    const ORDERBOOK_TRANSITION: &str =
        include_str!("../../tests/fixtures/variants/kalshi_orderbook_transition_era.json");
    const TRADES: &str = include_str!("../../tests/fixtures/kalshi_trades.json");
    const WS_DELTA: &str = include_str!("../../tests/fixtures/kalshi_ws_orderbook_delta.json");
    const WS_SNAPSHOT: &str = include_str!("../../tests/fixtures/variants/kalshi_ws_orderbook_snapshot.json");

    struct TestCase<T> {
        label: &'static str,
        input: &'static str,
        /// `None`: must fail to parse.
        check: Option<fn(&T)>,
    }

    fn run<T: serde::de::DeserializeOwned + std::fmt::Debug>(cases: Vec<TestCase<T>>) {
        for case in cases {
            let parsed = serde_json::from_str::<T>(case.input);
            match (parsed, case.check) {
                (Ok(v), Some(check)) => check(&v),
                (Err(_), None) => {}
                (Ok(v), None) => panic!("{}: expected an error, parsed {v:?}", case.label),
                (Err(e), Some(_)) => panic!("{}: {e}", case.label),
            }
        }
    }

    fn num(s: &str) -> Option<Num> {
        Some(Num(s.to_string()))
    }

    #[test]
    fn markets() {
        run::<MarketOne>(vec![
            TestCase {
                label: "TC0: sample market, fixed-point shape",
                input: MARKET,
                check: Some(|m| {
                    let m = &m.market;
                    assert_eq!(m.ticker, "KXBTC15M-26MAY120715-15");
                    assert_eq!(m.event_ticker, "KXBTC15M-26MAY120715");
                    assert_eq!(m.status, "active");
                    assert_eq!(m.yes_bid_dollars, num("0.4700"));
                    assert_eq!(m.volume_fp, num("18452.00"));
                    assert_eq!(m.floor_strike, num("80712.34"), "a JSON number");
                    assert_eq!(m.cap_strike, None, "null");
                    assert_eq!(m.settlement_ts, None);
                    assert_eq!(m.strike_type.as_deref(), Some("greater_or_equal"));
                    assert_eq!(
                        m.open_time.map(|t| t.to_iso()).as_deref(),
                        Some("2026-05-12T11:00:00.000Z")
                    );
                    assert_eq!(
                        m.close_time.map(|t| t.to_iso()).as_deref(),
                        Some("2026-05-12T11:15:00.000Z")
                    );
                    assert_eq!(m.last_price, None, "no legacy fields");
                }),
            },
            TestCase {
                label: "TC1: legacy integer cents and counts (before March 2026)",
                input: r#"{"market": {"ticker": "KXBTC15M-25DEC010915-15", "event_ticker": "KXBTC15M-25DEC010915",
                    "status": "open", "yes_bid": 47, "last_price": 48, "volume": 18452, "open_interest": 9120,
                    "liquidity": 1250000, "category": "Crypto"}}"#,
                check: Some(|m| {
                    let m = &m.market;
                    assert_eq!(m.last_price, num("48"));
                    assert_eq!(m.volume, num("18452"));
                    assert_eq!(m.last_price_dollars, None);
                    assert_eq!(m.status, "open");
                }),
            },
            TestCase {
                label: "TC2: initialized market with null prices and missing optional fields",
                input: r#"{"market": {"ticker": "KXBTC15M-26MAY120730-30", "event_ticker": "KXBTC15M-26MAY120730",
                    "status": "initialized", "yes_bid_dollars": null, "last_price_dollars": null,
                    "open_time": null, "floor_strike": null, "title": null}}"#,
                check: Some(|m| {
                    let m = &m.market;
                    assert_eq!(m.yes_bid_dollars, None);
                    assert_eq!(m.open_time, None);
                    assert_eq!(m.title, None);
                    assert_eq!(m.volume_fp, None);
                }),
            },
            TestCase {
                label: "TC3: number fields sent as strings and string fields as null",
                input: r#"{"market": {"ticker": "T", "event_ticker": null, "status": null, "floor_strike": "97749.99",
                    "volume_fp": 12, "close_time": "2026-05-12T11:15:00.5Z"}}"#,
                check: Some(|m| {
                    let m = &m.market;
                    assert_eq!(m.floor_strike, num("97749.99"));
                    assert_eq!(m.volume_fp, num("12"));
                    assert_eq!(m.event_ticker, "");
                    assert_eq!(m.status, "");
                    assert_eq!(m.close_time.map(|t| t.millis() % 1000), Some(500));
                }),
            },
            TestCase {
                label: "TC4: unparsable time is absent, not fatal",
                input: r#"{"market": {"ticker": "T", "close_time": "next tuesday"}}"#,
                check: Some(|m| assert_eq!(m.market.close_time, None)),
            },
            TestCase {
                label: "TC5: malformed, no ticker",
                input: r#"{"market": {"event_ticker": "E"}}"#,
                check: None,
            },
            TestCase {
                label: "TC6: malformed, price is an object",
                input: r#"{"market": {"ticker": "T", "yes_bid_dollars": {"v": 1}}}"#,
                check: None,
            },
        ]);
    }

    #[test]
    fn orderbooks() {
        run::<OrderbookResponse>(vec![
            TestCase {
                label: "TC0: current orderbook_fp, ascending, best last",
                input: ORDERBOOK,
                check: Some(|b| {
                    let fp = b.orderbook_fp.as_ref().expect("orderbook_fp");
                    assert_eq!(fp.yes_dollars.len(), 4);
                    assert_eq!(fp.yes_dollars[3], WireLevel(Num("0.4700".into()), Num("312.00".into())));
                    assert_eq!(fp.no_dollars[3], WireLevel(Num("0.5200".into()), Num("95.50".into())));
                    assert!(b.orderbook.is_none());
                }),
            },
            TestCase {
                label: "TC1: transition era, legacy cents beside fixed point; integer counts in orderbook.yes_dollars",
                input: ORDERBOOK_TRANSITION,
                check: Some(|b| {
                    let legacy = b.orderbook.as_ref().expect("orderbook");
                    assert_eq!(legacy.yes[0], WireLevel(Num("43".into()), Num("500".into())));
                    let yd = legacy.yes_dollars.as_ref().expect("yes_dollars");
                    assert_eq!(yd[0], WireLevel(Num("0.4300".into()), Num("500".into())));
                    let fp = b.orderbook_fp.as_ref().expect("orderbook_fp");
                    assert_eq!(fp.no_dollars[3].1, Num("95.00".into()));
                }),
            },
            TestCase {
                label: "TC2: legacy, a side null (2023 SDK issue)",
                input: r#"{"orderbook": {"yes": [[47, 10]], "no": null}}"#,
                check: Some(|b| {
                    let legacy = b.orderbook.as_ref().expect("orderbook");
                    assert_eq!(legacy.yes.len(), 1);
                    assert!(legacy.no.is_empty());
                    assert!(legacy.yes_dollars.is_none());
                }),
            },
            TestCase {
                label: "TC3: unknown ticker answers 200 with two empty ladders",
                input: r#"{"orderbook_fp": {"yes_dollars": [], "no_dollars": []}}"#,
                check: Some(|b| {
                    let fp = b.orderbook_fp.as_ref().expect("orderbook_fp");
                    assert!(fp.yes_dollars.is_empty() && fp.no_dollars.is_empty());
                }),
            },
            TestCase {
                label: "TC4: side absent entirely",
                input: r#"{"orderbook_fp": {"yes_dollars": [["0.01", "1.00"]]}}"#,
                check: Some(|b| assert!(b.orderbook_fp.as_ref().is_some_and(|f| f.no_dollars.is_empty()))),
            },
            TestCase {
                label: "TC5: malformed level, one element",
                input: r#"{"orderbook_fp": {"yes_dollars": [["0.47"]], "no_dollars": []}}"#,
                check: None,
            },
        ]);
    }

    #[test]
    fn trades() {
        run::<TradesPage>(vec![
            TestCase {
                label: "TC0: sample page, newest first, with cursor",
                input: TRADES,
                check: Some(|p| {
                    assert_eq!(p.trades.len(), 2);
                    let Lenient::Ok(t) = &p.trades[0] else {
                        panic!("first trade decodes")
                    };
                    assert_eq!(t.trade_id, "d91bc706-ee49-470d-82d8-11418bda6fed");
                    assert_eq!(t.count_fp, num("12.00"));
                    assert_eq!(t.taker_outcome_side.as_deref(), Some("yes"));
                    assert_eq!(t.created_time.map(|t| t.millis()), Some(1_778_584_051_412));
                    assert!(p.cursor.as_deref().is_some_and(|c| !c.is_empty()));
                }),
            },
            TestCase {
                label: "TC1: legacy trade, integer count and cents, deprecated taker_side only",
                input: r#"{"trades": [{"trade_id": "a", "ticker": "T", "count": 12, "yes_price": 48, "no_price": 52,
                    "taker_side": "yes", "created_time": "2025-12-01T14:07:31Z"}], "cursor": ""}"#,
                check: Some(|p| {
                    let Lenient::Ok(t) = &p.trades[0] else {
                        panic!("decodes")
                    };
                    assert_eq!(t.count, num("12"));
                    assert_eq!(t.yes_price, num("48"));
                    assert_eq!(t.taker_outcome_side, None);
                    assert_eq!(p.cursor.as_deref(), Some(""));
                }),
            },
            TestCase {
                label: "TC2: one malformed trade among good ones is kept apart, with its payload",
                input: r#"{"trades": [{"ticker": "T"}, {"trade_id": "b", "ticker": "T", "count_fp": "1.00",
                    "yes_price_dollars": "0.5000", "taker_outcome_side": "no", "created_time": "2026-05-12T11:00:00Z"}],
                    "cursor": null}"#,
                check: Some(|p| {
                    assert!(matches!(&p.trades[0], Lenient::Bad { raw, .. } if raw.contains(r#""ticker":"T""#)));
                    assert!(matches!(&p.trades[1], Lenient::Ok(t) if t.trade_id == "b"));
                    assert_eq!(p.cursor, None);
                }),
            },
            TestCase {
                label: "TC3: trades null",
                input: r#"{"trades": null, "cursor": ""}"#,
                check: Some(|p| assert!(p.trades.is_empty())),
            },
        ]);
    }

    #[test]
    fn websocket_frames() {
        run::<WsMessage>(vec![
            TestCase {
                label: "TC0: sample orderbook_delta",
                input: WS_DELTA,
                check: Some(|m| match m {
                    WsMessage::OrderbookDelta { sid, seq, msg } => {
                        assert_eq!((*sid, *seq), (2, Some(2)));
                        assert_eq!(msg.delta_fp, num("-12.00"));
                        assert_eq!(msg.price_dollars, num("0.4700"));
                        assert_eq!(msg.side, "yes");
                        assert_eq!(msg.ts_ms, Some(1_778_584_051_412));
                    }
                    other => panic!("{other:?}"),
                }),
            },
            TestCase {
                label: "TC1: sample orderbook_snapshot",
                input: WS_SNAPSHOT,
                check: Some(|m| match m {
                    WsMessage::OrderbookSnapshot { sid, seq, msg } => {
                        assert_eq!((*sid, *seq), (2, Some(1)));
                        assert_eq!(msg.yes_dollars_fp.len(), 4);
                        assert_eq!(msg.no_dollars_fp.len(), 4);
                    }
                    other => panic!("{other:?}"),
                }),
            },
            TestCase {
                label: "TC2: snapshot with an empty side omitted",
                input: r#"{"type": "orderbook_snapshot", "sid": 3, "seq": 1,
                    "msg": {"market_ticker": "T", "market_id": "u", "yes_dollars_fp": [["0.1000", "5.00"]]}}"#,
                check: Some(|m| {
                    assert!(matches!(m, WsMessage::OrderbookSnapshot { msg, .. } if msg.no_dollars_fp.is_empty()))
                }),
            },
            TestCase {
                label: "TC3: pre-2026 delta with integer cents, 3-decimal dollars and integer delta",
                input: r#"{"type": "orderbook_delta", "sid": 1, "seq": 9, "msg": {"market_ticker": "T",
                    "price": 96, "price_dollars": "0.960", "delta": -5, "side": "no", "ts": "2025-11-01T10:00:00Z"}}"#,
                check: Some(|m| match m {
                    WsMessage::OrderbookDelta { msg, .. } => {
                        assert_eq!(msg.price, num("96"));
                        assert_eq!(msg.delta, num("-5"));
                        assert_eq!(msg.delta_fp, None);
                    }
                    other => panic!("{other:?}"),
                }),
            },
            TestCase {
                label: "TC4: subscribed reply",
                input: r#"{"id": 1, "type": "subscribed", "msg": {"channel": "orderbook_delta", "sid": 2}}"#,
                check: Some(|m| assert!(matches!(m, WsMessage::Subscribed { id: Some(1), msg } if msg.sid == 2))),
            },
            TestCase {
                label: "TC5: error reply",
                input: r#"{"id": 4, "type": "error", "msg": {"code": 9, "msg": "Authentication required"}}"#,
                check: Some(|m| assert!(matches!(m, WsMessage::Error { msg, .. } if msg.code == Some(9)))),
            },
            TestCase {
                label: "TC6: unsequenced ticker frame (a type we do not use)",
                input: r#"{"type": "ticker", "sid": 5, "msg": {"market_ticker": "T", "ts": 1778584051}}"#,
                check: Some(|m| assert!(matches!(m, WsMessage::Other))),
            },
            TestCase {
                label: "TC7: trade frame with market_ticker, ts int seconds and ts_ms",
                input: r#"{"type": "trade", "sid": 7, "seq": 3, "msg": {"trade_id": "x", "market_ticker": "T",
                    "yes_price_dollars": "0.4800", "no_price_dollars": "0.5200", "count_fp": "2.00",
                    "taker_outcome_side": "yes", "taker_book_side": "bid", "ts": 1778584051, "ts_ms": 1778584051412}}"#,
                check: Some(|m| match m {
                    WsMessage::Trade { msg, seq, .. } => {
                        assert_eq!(msg.ticker, "T");
                        assert_eq!(*seq, Some(3));
                        assert_eq!(msg.ts_ms, Some(1_778_584_051_412));
                    }
                    other => panic!("{other:?}"),
                }),
            },
            TestCase {
                label: "TC8: malformed, delta without msg",
                input: r#"{"type": "orderbook_delta", "sid": 2, "seq": 3}"#,
                check: None,
            },
            TestCase {
                label: "TC9: malformed, not JSON",
                input: "heartbeat",
                check: None,
            },
        ]);
    }

    #[test]
    fn catalog_pages() {
        run::<EventsPage>(vec![
            TestCase {
                label: "TC0: events with nested markets, empty cursor on the last page",
                input: r#"{"events": [{"event_ticker": "KXBTC15M-26MAY120715", "series_ticker": "KXBTC15M",
                    "title": "BTC 15 min", "sub_title": "", "mutually_exclusive": false, "strike_date": null,
                    "markets": [{"ticker": "KXBTC15M-26MAY120715-15", "event_ticker": "KXBTC15M-26MAY120715",
                    "status": "active"}]}], "cursor": ""}"#,
                check: Some(|p| {
                    let Lenient::Ok(e) = &p.events[0] else {
                        panic!("event decodes")
                    };
                    assert_eq!(e.markets.len(), 1);
                    assert_eq!(e.strike_date, None);
                }),
            },
            TestCase {
                label: "TC1: cursor null, markets null",
                input: r#"{"events": [{"event_ticker": "E", "markets": null}], "cursor": null}"#,
                check: Some(|p| {
                    assert!(matches!(&p.events[0], Lenient::Ok(e) if e.markets.is_empty()));
                    assert_eq!(p.cursor, None);
                }),
            },
        ]);
        run::<SeriesOne>(vec![
            TestCase {
                label: "TC2: series with fee_multiplier as a string and null tags",
                input: r#"{"series": {"ticker": "KXBTC15M", "title": "BTC 15 min", "frequency": "fifteen_min",
                    "category": "Crypto", "tags": null, "fee_type": "quadratic", "fee_multiplier": "0.07"}}"#,
                check: Some(|s| {
                    assert_eq!(s.series.fee_multiplier, num("0.07"));
                    assert!(s.series.tags.is_empty());
                }),
            },
            TestCase {
                label: "TC3: series with fee_multiplier as a number",
                input: r#"{"series": {"ticker": "KXBTCD", "category": "Crypto", "fee_multiplier": 1}}"#,
                check: Some(|s| assert_eq!(s.series.fee_multiplier, num("1"))),
            },
        ]);
    }
}
