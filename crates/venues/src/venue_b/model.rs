//! venue_b (Polymarket) wire types: Gamma metadata, CLOB books, the Data API tape and the market
//! WebSocket (PROTOCOLS part B).
//!
//! Gamma mixes strings and numbers for the same kind of value and nests JSON arrays inside strings; token
//! ids are 78-digit integers kept as text. Every numeric field is a [`Num`], every stringified array a
//! [`JsonList`], and nearly every field is optional (as in the venue's own SDK types).

use crossbook_core::Timestamp;
use serde::Deserialize;

use crate::wire::{JsonList, Lenient, Millis, Num, de_null_default, de_opt_time};

/// A Gamma listing page: a bare array (offset paging) or `{"events"|"markets": [...], "next_cursor": …}`
/// (keyset paging). Elements decode one by one.
#[derive(Debug, Clone)]
pub struct GammaPage<T> {
    pub items: Vec<Lenient<T>>,
    /// Keyset cursor of the next page; absent on the last page and on offset pages.
    pub next_cursor: Option<String>,
}

impl<'de, T: serde::de::DeserializeOwned> Deserialize<'de> for GammaPage<T> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged, bound(deserialize = "T: serde::de::DeserializeOwned"))]
        enum Shape<T> {
            Bare(Vec<Lenient<T>>),
            Keyed {
                #[serde(alias = "markets", alias = "data", default = "Vec::new")]
                events: Vec<Lenient<T>>,
                #[serde(default)]
                next_cursor: Option<String>,
            },
        }
        Ok(match Shape::<T>::deserialize(d)? {
            Shape::Bare(items) => GammaPage {
                items,
                next_cursor: None,
            },
            Shape::Keyed { events, next_cursor } => GammaPage {
                items: events,
                next_cursor: next_cursor.filter(|c| !c.is_empty()),
            },
        })
    }
}

/// A Gamma tag.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Tag {
    #[serde(default)]
    pub id: Option<Num>,
    #[serde(default)]
    pub label: Option<String>,
    #[serde(default)]
    pub slug: Option<String>,
}

/// A Gamma series (nested in events).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GammaSeries {
    /// Numeric string (`"10192"`).
    pub id: Num,
    #[serde(default)]
    pub ticker: Option<String>,
    #[serde(default)]
    pub slug: Option<String>,
    #[serde(default)]
    pub title: Option<String>,
    /// `5m`, `15m`, `hourly`, `4h`, `daily`, …
    #[serde(default)]
    pub recurrence: Option<String>,
    #[serde(default)]
    pub active: Option<bool>,
    #[serde(default)]
    pub closed: Option<bool>,
}

/// `eventMetadata` of up/down events.
#[derive(Debug, Clone, PartialEq, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EventMetadata {
    #[serde(default)]
    pub price_to_beat: Option<Num>,
    #[serde(default)]
    pub final_price: Option<Num>,
}

/// A Gamma event.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GammaEvent {
    /// Numeric string (`"473201"`).
    pub id: Num,
    #[serde(default)]
    pub ticker: Option<String>,
    #[serde(default)]
    pub slug: Option<String>,
    #[serde(default)]
    pub title: Option<String>,
    #[serde(default)]
    pub subtitle: Option<String>,
    #[serde(default)]
    pub description: Option<String>,
    /// What the market settles on, as the venue states it (usually a URL).
    #[serde(default)]
    pub resolution_source: Option<String>,
    /// Listing time, **not** the window start.
    #[serde(default, deserialize_with = "de_opt_time")]
    pub start_date: Option<Timestamp>,
    /// Window end of up/down events.
    #[serde(default, deserialize_with = "de_opt_time")]
    pub end_date: Option<Timestamp>,
    /// Window start of up/down events.
    #[serde(default, deserialize_with = "de_opt_time")]
    pub start_time: Option<Timestamp>,
    #[serde(default)]
    pub image: Option<String>,
    #[serde(default)]
    pub icon: Option<String>,
    #[serde(default)]
    pub active: Option<bool>,
    #[serde(default)]
    pub closed: Option<bool>,
    #[serde(default)]
    pub archived: Option<bool>,
    /// Numbers at event level.
    #[serde(default)]
    pub liquidity: Option<Num>,
    #[serde(default)]
    pub volume: Option<Num>,
    #[serde(default)]
    pub volume24hr: Option<Num>,
    #[serde(default)]
    pub category: Option<String>,
    #[serde(default)]
    pub subcategory: Option<String>,
    #[serde(default, deserialize_with = "de_null_default")]
    pub tags: Vec<Tag>,
    #[serde(default, deserialize_with = "de_null_default")]
    pub series: Vec<GammaSeries>,
    #[serde(default)]
    pub series_slug: Option<String>,
    #[serde(default, deserialize_with = "de_null_default")]
    pub markets: Vec<Lenient<GammaMarket>>,
    #[serde(default)]
    pub event_metadata: Option<EventMetadata>,
    #[serde(default, deserialize_with = "de_opt_time")]
    pub closed_time: Option<Timestamp>,
}

/// A Gamma market.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GammaMarket {
    #[serde(default)]
    pub id: Option<Num>,
    #[serde(default)]
    pub question: Option<String>,
    /// `0x` + 64 hex; the CLOB's `market`.
    #[serde(default)]
    pub condition_id: Option<String>,
    #[serde(default)]
    pub slug: Option<String>,
    #[serde(default)]
    pub description: Option<String>,
    /// What the market settles on, as the venue states it (usually a URL).
    #[serde(default)]
    pub resolution_source: Option<String>,
    #[serde(default)]
    pub group_item_title: Option<String>,
    /// `"[\"Up\", \"Down\"]"`.
    #[serde(default)]
    pub outcomes: JsonList,
    #[serde(default)]
    pub outcome_prices: JsonList,
    /// `clobTokenIds[i]` belongs to `outcomes[i]`; null for non-CLOB markets. The outcome ids of a
    /// protocol v1 market (see [`GammaMarket::outcome_ids`]).
    #[serde(default)]
    pub clob_token_ids: JsonList,
    /// The protocol the market trades on: absent or `"v1"`, or `"v2"`.
    #[serde(default)]
    pub version: Option<String>,
    /// `positionIds[i]` belongs to `outcomes[i]`: the outcome ids of a `"v2"` market, which may list
    /// `clobTokenIds` too (ids that no longer trade).
    #[serde(default)]
    pub position_ids: JsonList,
    /// Listing time.
    #[serde(default, deserialize_with = "de_opt_time")]
    pub start_date: Option<Timestamp>,
    #[serde(default, deserialize_with = "de_opt_time")]
    pub end_date: Option<Timestamp>,
    /// Window start of up/down markets.
    #[serde(default, deserialize_with = "de_opt_time")]
    pub event_start_time: Option<Timestamp>,
    #[serde(default)]
    pub active: Option<bool>,
    #[serde(default)]
    pub closed: Option<bool>,
    #[serde(default)]
    pub archived: Option<bool>,
    #[serde(default)]
    pub accepting_orders: Option<bool>,
    #[serde(default)]
    pub enable_order_book: Option<bool>,
    /// Strings at market level (`"48211.4471"`), numbers in the `*Num` twins.
    #[serde(default)]
    pub liquidity: Option<Num>,
    #[serde(default)]
    pub volume: Option<Num>,
    #[serde(default)]
    pub liquidity_num: Option<Num>,
    #[serde(default)]
    pub volume_num: Option<Num>,
    #[serde(default)]
    pub volume24hr: Option<Num>,
    #[serde(default)]
    pub best_bid: Option<Num>,
    #[serde(default)]
    pub best_ask: Option<Num>,
    #[serde(default)]
    pub last_trade_price: Option<Num>,
    #[serde(default)]
    pub order_price_min_tick_size: Option<Num>,
    #[serde(default, deserialize_with = "de_opt_time")]
    pub closed_time: Option<Timestamp>,
    #[serde(default, deserialize_with = "de_opt_time")]
    pub updated_at: Option<Timestamp>,
    /// Parent events, when read through `/markets`.
    #[serde(default, deserialize_with = "de_null_default")]
    pub events: Vec<Lenient<GammaEvent>>,
}

impl GammaMarket {
    /// Whether the market is marked as a protocol v2 market.
    pub fn is_v2(&self) -> bool {
        self.version
            .as_deref()
            .is_some_and(|v| v.trim().eq_ignore_ascii_case("v2"))
    }

    /// The outcome ids the CLOB, the market channel and the Data API know the market's outcomes by, in the
    /// order of `outcomes`: chosen by `version` even when both lists are present (`positionIds` for a
    /// `"v2"` market, `clobTokenIds` otherwise); the other list only when the chosen one is empty.
    pub fn outcome_ids(&self) -> &[String] {
        let (chosen, other) = if self.is_v2() {
            (&self.position_ids, &self.clob_token_ids)
        } else {
            (&self.clob_token_ids, &self.position_ids)
        };
        if chosen.0.is_empty() { &other.0 } else { &chosen.0 }
    }
}

/// One `{price, size}` level of a CLOB book.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct BookLevel {
    pub price: Num,
    pub size: Num,
}

/// `GET /book` / `POST /books` element (`OrderBookSummary`), also the WS `book` event.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct OrderBookSummary {
    /// Condition id.
    pub market: String,
    pub asset_id: String,
    #[serde(default)]
    pub timestamp: Option<Millis>,
    #[serde(default)]
    pub hash: Option<String>,
    /// May be `null`; very old docs called them `buys`/`sells`.
    #[serde(default, alias = "buys", deserialize_with = "de_null_default")]
    pub bids: Vec<BookLevel>,
    #[serde(default, alias = "sells", deserialize_with = "de_null_default")]
    pub asks: Vec<BookLevel>,
    #[serde(default)]
    pub tick_size: Option<Num>,
    #[serde(default)]
    pub min_order_size: Option<Num>,
    #[serde(default)]
    pub last_trade_price: Option<Num>,
}

/// A Data API `/trades` answer, newest first: the v1 bare array of camelCase rows, or the v2 envelope
/// `{"data": [snake_case rows], "pagination": {"next_cursor", "has_more"}}` (`data` may be `null`). Rows
/// decode one by one, so one the parser cannot read is reported and skipped, not the whole answer.
#[derive(Debug, Clone, Default)]
pub struct DataTradesPage {
    pub rows: Vec<Lenient<DataTrade>>,
    /// v2: the cursor of the next (older) page, while there is one.
    pub next_cursor: Option<String>,
}

/// v2 `pagination`.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct DataPagination {
    #[serde(default)]
    pub next_cursor: Option<String>,
    #[serde(default)]
    pub has_more: Option<bool>,
}

impl<'de> Deserialize<'de> for DataTradesPage {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Shape {
            V1(Vec<Lenient<DataTrade>>),
            V2 {
                #[serde(deserialize_with = "de_null_default")]
                data: Vec<Lenient<DataTrade>>,
                #[serde(default)]
                pagination: Option<DataPagination>,
            },
        }
        Ok(match Shape::deserialize(d)? {
            Shape::V1(rows) => DataTradesPage {
                rows,
                next_cursor: None,
            },
            Shape::V2 { data, pagination } => {
                let p = pagination.unwrap_or_default();
                DataTradesPage {
                    rows: data,
                    next_cursor: p.next_cursor.filter(|c| !c.is_empty() && p.has_more != Some(false)),
                }
            }
        })
    }
}

/// A Data API trade: a v1 camelCase row (`proxyWallet`, `conditionId`, numbers for `size`/`price`, Unix
/// seconds) or a v2 snake_case row (`proxy_wallet`, `condition_id`, decimal strings, Unix milliseconds).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DataTrade {
    #[serde(default, alias = "proxy_wallet", alias = "wallet")]
    pub proxy_wallet: Option<String>,
    /// `BUY` | `SELL`, of this trader in `asset`.
    pub side: String,
    /// Token id.
    #[serde(alias = "asset_id")]
    pub asset: String,
    #[serde(alias = "condition_id")]
    pub condition_id: String,
    /// A number (v1) or a decimal string (v2).
    pub size: Num,
    /// A number (v1) or a decimal string (v2).
    pub price: Num,
    /// Integer Unix seconds (v1) or milliseconds (v2).
    #[serde(alias = "block_timestamp")]
    pub timestamp: Num,
    #[serde(default)]
    pub outcome: Option<String>,
    #[serde(default, alias = "outcome_index")]
    pub outcome_index: Option<i64>,
    #[serde(default, alias = "event_slug")]
    pub event_slug: Option<String>,
    #[serde(default, alias = "transaction_hash")]
    pub transaction_hash: Option<String>,
}

/// One market-channel event. Frames carry one event or an array of them.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(tag = "event_type", rename_all = "snake_case")]
pub enum WsEvent {
    /// Full snapshot of one token's book.
    Book(OrderBookSummary),
    /// Level updates: current `price_changes[]` (one or more assets) or pre-2025-09-15 `changes[]` with a
    /// top-level `asset_id`.
    PriceChange(PriceChange),
    /// A fill.
    LastTradePrice(LastTradePrice),
    TickSizeChange(TickSizeChange),
    BestBidAsk(BestBidAsk),
    NewMarket(NewMarket),
    MarketResolved(MarketResolved),
    #[serde(other)]
    Unknown,
}

/// `price_change`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct PriceChange {
    pub market: String,
    #[serde(default)]
    pub timestamp: Option<Millis>,
    /// Current schema.
    #[serde(default)]
    pub price_changes: Option<Vec<PriceChangeItem>>,
    /// Legacy schema (before 2025-09-15): one asset, its levels in `changes`.
    #[serde(default)]
    pub asset_id: Option<String>,
    #[serde(default)]
    pub changes: Option<Vec<LegacyChange>>,
    /// The flat schema of 2024: one asset and one level, its fields beside `asset_id` with no list. Plain
    /// optional fields rather than a flattened struct: `flatten` buffers the whole frame, and this is the
    /// venue's most frequent message.
    #[serde(default)]
    pub price: Option<Num>,
    #[serde(default)]
    pub size: Option<Num>,
    #[serde(default)]
    pub side: Option<String>,
}

/// One level of a current `price_change`: `size` is the new absolute size ("0" removes the level).
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct PriceChangeItem {
    pub asset_id: String,
    pub price: Num,
    pub size: Num,
    /// `BUY` = bid side, `SELL` = ask side.
    pub side: String,
    #[serde(default)]
    pub hash: Option<String>,
    #[serde(default)]
    pub best_bid: Option<Num>,
    #[serde(default)]
    pub best_ask: Option<Num>,
}

/// One level of a legacy `price_change`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct LegacyChange {
    pub price: Num,
    pub size: Num,
    pub side: String,
}

/// `new_market` (custom features): a market the venue just listed, broadcast for every market of the venue.
/// Only what the session needs to tell a followed market from the rest; the catalog reads the rest from
/// Gamma.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct NewMarket {
    /// Gamma market id.
    #[serde(default)]
    pub id: Option<Num>,
    /// Condition id (also sent as `condition_id`).
    #[serde(default)]
    pub market: Option<String>,
    #[serde(default)]
    pub condition_id: Option<String>,
    /// The market's slug.
    #[serde(default)]
    pub slug: Option<String>,
    /// The parent event.
    #[serde(default)]
    pub event_message: Option<EventMessage>,
    #[serde(default)]
    pub timestamp: Option<Millis>,
}

/// The event a `new_market` or `market_resolved` belongs to.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct EventMessage {
    /// Gamma event id.
    #[serde(default)]
    pub id: Option<Num>,
    #[serde(default)]
    pub ticker: Option<String>,
    #[serde(default)]
    pub slug: Option<String>,
}

/// `market_resolved` (custom features): a market the venue resolved, broadcast for every market.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct MarketResolved {
    /// Condition id (also sent as `condition_id`).
    #[serde(default)]
    pub market: Option<String>,
    #[serde(default)]
    pub condition_id: Option<String>,
    #[serde(default)]
    pub winning_asset_id: Option<String>,
    #[serde(default)]
    pub timestamp: Option<Millis>,
}

/// `last_trade_price`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct LastTradePrice {
    pub asset_id: String,
    pub market: String,
    pub price: Num,
    #[serde(default)]
    pub size: Option<Num>,
    #[serde(default)]
    pub side: Option<String>,
    #[serde(default)]
    pub timestamp: Option<Millis>,
    /// Taker fee rate applied to the fill, basis points as a string (`"0"` on fee-free markets). Optional:
    /// older frames lack it, and the service prices fees from the market's fee schedule, not from fills.
    #[serde(default)]
    pub fee_rate_bps: Option<String>,
}

/// `tick_size_change`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct TickSizeChange {
    pub asset_id: String,
    #[serde(default)]
    pub market: Option<String>,
    #[serde(default)]
    pub old_tick_size: Option<Num>,
    #[serde(default)]
    pub new_tick_size: Option<Num>,
}

/// `best_bid_ask`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct BestBidAsk {
    pub asset_id: String,
    #[serde(default)]
    pub market: Option<String>,
    #[serde(default)]
    pub best_bid: Option<Num>,
    #[serde(default)]
    pub best_ask: Option<Num>,
}

#[cfg(test)]
mod tests {
    //! Deserialisation tables over the sample payloads (`tests/fixtures/`) and the shapes PROTOCOLS part B
    //! says a parser meets: both paging shapes, stringified arrays, 78-digit token ids, numbers as strings
    //! and strings as numbers, nulls, legacy WebSocket frames, and malformed input.
    use super::*;

    const GAMMA_EVENT: &str = include_str!("../../tests/fixtures/polymarket_gamma_event.json");
    const CLOB_BOOK: &str = include_str!("../../tests/fixtures/polymarket_clob_book.json");
    const DATA_TRADES: &str = include_str!("../../tests/fixtures/polymarket_data_api_trades.json");
    const WS_PRICE_CHANGE: &str = include_str!("../../tests/fixtures/polymarket_ws_price_change.json");
    const WS_PRICE_CHANGE_LEGACY: &str =
        include_str!("../../tests/fixtures/variants/polymarket_ws_price_change_legacy_pre_2025-09-15.json");
    const UP_TOKEN: &str = "48418917734180607831833027288777571190488909295977497623601373906809754084036";
    const DOWN_TOKEN: &str = "14943202171143669362180565155331992758433128192256190594100236888666963607938";

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

    fn ok<T: std::fmt::Debug>(l: &Lenient<T>) -> &T {
        match l {
            Lenient::Ok(t) => t,
            Lenient::Bad { error, raw } => panic!("{error}: {raw}"),
        }
    }

    fn num(s: &str) -> Option<Num> {
        Some(Num(s.to_string()))
    }

    #[test]
    fn gamma_event_pages() {
        run::<GammaPage<GammaEvent>>(vec![
            TestCase {
                label: "TC0: sample offset page (bare array) with nested market, series and tags",
                input: GAMMA_EVENT,
                check: Some(|p| {
                    assert_eq!(p.items.len(), 1);
                    assert_eq!(p.next_cursor, None);
                    let e = ok(&p.items[0]);
                    assert_eq!(e.id.0, "473201");
                    assert_eq!(e.slug.as_deref(), Some("btc-updown-15m-1778583600"));
                    assert_eq!(e.liquidity, num("48211.4471"), "a number at event level");
                    assert_eq!(e.start_time.map(|t| t.secs()), Some(1_778_583_600));
                    assert_eq!(
                        e.start_date.map(|t| t.to_iso()).as_deref(),
                        Some("2026-05-11T11:06:12.481Z")
                    );
                    assert_eq!(e.series[0].id.0, "10192");
                    assert_eq!(e.series[0].recurrence.as_deref(), Some("15m"));
                    assert_eq!(e.tags.len(), 3);
                    assert_eq!(
                        e.event_metadata.as_ref().and_then(|m| m.price_to_beat.clone()),
                        num("80712.34")
                    );
                    let m = ok(&e.markets[0]);
                    assert_eq!(m.outcomes.0, vec!["Up", "Down"], "a string holding JSON");
                    assert_eq!(m.outcome_prices.0, vec!["0.515", "0.485"]);
                    assert_eq!(m.clob_token_ids.0, vec![UP_TOKEN, DOWN_TOKEN], "78 digits kept exactly");
                    assert_eq!(m.liquidity, num("48211.4471"), "a string at market level");
                    assert_eq!(m.volume_num, num("15230.552104"));
                    assert_eq!(m.event_start_time.map(|t| t.secs()), Some(1_778_583_600));
                    assert_eq!(m.order_price_min_tick_size, num("0.01"));
                }),
            },
            TestCase {
                label: "TC1: keyset page with next_cursor",
                input: r#"{"events": [{"id": "1", "title": "A"}, {"id": 2, "title": "B"}], "next_cursor": "MTAw"}"#,
                check: Some(|p| {
                    assert_eq!(p.items.len(), 2);
                    assert_eq!(ok(&p.items[1]).id.0, "2", "numeric id as a number");
                    assert_eq!(p.next_cursor.as_deref(), Some("MTAw"));
                }),
            },
            TestCase {
                label: "TC2: last keyset page: next_cursor absent",
                input: r#"{"events": []}"#,
                check: Some(|p| assert!(p.items.is_empty() && p.next_cursor.is_none())),
            },
            TestCase {
                label: "TC3: nulls everywhere a list may be",
                input: r#"[{"id": "9", "tags": null, "series": null, "markets": [{"conditionId": "0xab",
                    "outcomes": null, "clobTokenIds": null, "outcomePrices": "", "eventStartTime": null}]}]"#,
                check: Some(|p| {
                    let e = ok(&p.items[0]);
                    assert!(e.tags.is_empty() && e.series.is_empty());
                    let m = ok(&e.markets[0]);
                    assert!(m.outcomes.0.is_empty() && m.clob_token_ids.0.is_empty() && m.outcome_prices.0.is_empty());
                }),
            },
            TestCase {
                label: "TC4: one malformed event (no id) and one malformed market are kept apart",
                input: r#"[{"title": "no id"}, {"id": "3", "markets": [{"conditionId": "0x1", "outcomes": "not json"}]}]"#,
                check: Some(|p| {
                    assert!(matches!(&p.items[0], Lenient::Bad { raw, .. } if raw.contains("no id")));
                    let e = ok(&p.items[1]);
                    assert!(matches!(&e.markets[0], Lenient::Bad { raw, .. } if raw.contains("not json")));
                }),
            },
            TestCase {
                label: "TC5: Gamma's space-separated time with a short offset",
                input: r#"[{"id": "4", "closedTime": "2026-05-12 11:16:30+00", "endDate": "2026-05-12T11:15:00Z"}]"#,
                check: Some(|p| {
                    let e = ok(&p.items[0]);
                    assert_eq!(
                        e.closed_time.map(|t| t.to_iso()).as_deref(),
                        Some("2026-05-12T11:16:30.000Z")
                    );
                }),
            },
            TestCase {
                label: "TC6: malformed, not a list or page",
                input: r#""events""#,
                check: None,
            },
        ]);
        run::<GammaPage<GammaMarket>>(vec![TestCase {
            label: "TC7: markets keyset page",
            input: r#"{"markets": [{"conditionId": "0xab", "clobTokenIds": ["1", "2"]}], "next_cursor": "x"}"#,
            check: Some(|p| {
                assert_eq!(
                    ok(&p.items[0]).clob_token_ids.0,
                    vec!["1", "2"],
                    "a real array also works"
                );
                assert_eq!(p.next_cursor.as_deref(), Some("x"));
            }),
        }]);
    }

    #[test]
    fn clob_books() {
        run::<OrderBookSummary>(vec![
            TestCase {
                label: "TC0: sample book: string ms timestamp, hash without 0x, best level last",
                input: CLOB_BOOK,
                check: Some(|b| {
                    assert_eq!(b.asset_id, UP_TOKEN);
                    assert_eq!(b.timestamp, Some(crate::wire::Millis(1_778_584_051_466)));
                    assert_eq!(b.bids.len(), 6);
                    assert_eq!(b.asks[5].price, Num("0.52".into()));
                    assert_eq!(b.tick_size, num("0.01"));
                    assert_eq!(b.last_trade_price, num("0.520"));
                }),
            },
            TestCase {
                label: "TC1: bids null, asks absent",
                input: r#"{"market": "0x1", "asset_id": "2", "bids": null, "timestamp": 1778584051466}"#,
                check: Some(|b| assert!(b.bids.is_empty() && b.asks.is_empty())),
            },
            TestCase {
                label: "TC2: very old buys/sells names",
                input: r#"{"market": "0x1", "asset_id": "2", "buys": [{"price": "0.4", "size": "1"}], "sells": []}"#,
                check: Some(|b| assert_eq!(b.bids.len(), 1)),
            },
            TestCase {
                label: "TC3: malformed level",
                input: r#"{"market": "0x1", "asset_id": "2", "bids": [{"price": {"x": 1}, "size": "1"}]}"#,
                check: None,
            },
            TestCase {
                label: "TC4: malformed timestamp",
                input: r#"{"market": "0x1", "asset_id": "2", "timestamp": "yesterday"}"#,
                check: None,
            },
        ]);
    }

    #[test]
    fn data_api_trades() {
        run::<DataTradesPage>(vec![
            TestCase {
                label: "TC0: sample tape: numbers for size, price and seconds; null profile fields",
                input: DATA_TRADES,
                check: Some(|p| {
                    let ts = &p.rows;
                    assert_eq!(p.next_cursor, None);
                    let t = ok(&ts[0]);
                    assert_eq!((t.size.0.as_str(), t.price.0.as_str()), ("21.3", "0.52"));
                    assert_eq!(t.timestamp.integer(), Some(1_778_584_051));
                    assert_eq!(t.asset, UP_TOKEN);
                    assert_eq!(t.outcome_index, Some(0));
                    let t = ok(&ts[1]);
                    assert_eq!((t.side.as_str(), t.size.0.as_str()), ("SELL", "8"));
                }),
            },
            TestCase {
                label: "TC1: a trade without an asset among good ones",
                input: r#"[{"side": "BUY", "conditionId": "0x1", "size": 1, "price": 0.5, "timestamp": 1},
                    {"side": "BUY", "asset": "7", "conditionId": "0x1", "size": "2.5", "price": "0.5", "timestamp": 2}]"#,
                check: Some(|p| {
                    assert!(matches!(p.rows[0], Lenient::Bad { .. }));
                    assert_eq!(ok(&p.rows[1]).size.0, "2.5", "strings accepted too");
                }),
            },
            TestCase {
                label: "TC2: v2 envelope, snake_case rows with decimal strings, a bad row kept apart",
                input: r#"{"data": [
                    {"proxy_wallet": "0xab", "side": "SELL", "asset": "7", "condition_id": "0x1", "size": "12.5",
                     "price": "0.4375", "timestamp": 1778584051123, "outcome": "Down", "outcome_index": 1,
                     "event_slug": "btc-updown-15m-1778583600", "transaction_hash": "0xfe"},
                    {"side": "BUY", "condition_id": "0x1", "size": "1", "price": "0.5", "timestamp": 1}],
                    "pagination": {"next_cursor": "eyJ0IjoxfQ", "has_more": true}}"#,
                check: Some(|p| {
                    let t = ok(&p.rows[0]);
                    assert_eq!(t.proxy_wallet.as_deref(), Some("0xab"));
                    assert_eq!((t.condition_id.as_str(), t.asset.as_str()), ("0x1", "7"));
                    assert_eq!((t.size.0.as_str(), t.price.0.as_str()), ("12.5", "0.4375"));
                    assert_eq!(t.timestamp.integer(), Some(1_778_584_051_123));
                    assert_eq!(t.outcome_index, Some(1));
                    assert_eq!(t.transaction_hash.as_deref(), Some("0xfe"));
                    assert!(matches!(p.rows[1], Lenient::Bad { .. }), "no asset");
                    assert_eq!(p.next_cursor.as_deref(), Some("eyJ0IjoxfQ"));
                }),
            },
            TestCase {
                label: "TC3: v2 last page and an empty answer",
                input: r#"{"data": null, "pagination": {"next_cursor": null, "has_more": false}}"#,
                check: Some(|p| assert!(p.rows.is_empty() && p.next_cursor.is_none())),
            },
            TestCase {
                label: "TC4: has_more false wins over a stray cursor",
                input: r#"{"data": [], "pagination": {"next_cursor": "x", "has_more": false}}"#,
                check: Some(|p| assert!(p.next_cursor.is_none())),
            },
            TestCase {
                label: "TC5: neither shape",
                input: r#"{"trades": []}"#,
                check: None,
            },
        ]);
    }

    #[test]
    fn websocket_events() {
        run::<WsEvent>(vec![
            TestCase {
                label: "TC0: current price_change, two assets in one frame",
                input: WS_PRICE_CHANGE,
                check: Some(|e| match e {
                    WsEvent::PriceChange(pc) => {
                        let items = pc.price_changes.as_ref().expect("price_changes");
                        assert_eq!(items.len(), 2);
                        assert_eq!((items[0].asset_id.as_str(), items[0].side.as_str()), (UP_TOKEN, "BUY"));
                        assert_eq!(items[1].best_ask, num("0.49"));
                        assert_eq!(pc.timestamp, Some(crate::wire::Millis(1_778_584_051_512)));
                        assert!(pc.changes.is_none() && pc.asset_id.is_none());
                    }
                    other => panic!("{other:?}"),
                }),
            },
            TestCase {
                label: "TC1: legacy price_change (before 2025-09-15): top-level asset_id, changes[]",
                input: WS_PRICE_CHANGE_LEGACY,
                check: Some(|e| match e {
                    WsEvent::PriceChange(pc) => {
                        assert_eq!(pc.asset_id.as_deref(), Some(UP_TOKEN));
                        assert_eq!(pc.changes.as_ref().map(Vec::len), Some(1));
                        assert!(pc.price_changes.is_none());
                    }
                    other => panic!("{other:?}"),
                }),
            },
            TestCase {
                label: "TC2: book event",
                input: r#"{"event_type": "book", "asset_id": "1", "market": "0x1", "timestamp": "1778584051466",
                    "hash": "0xab", "bids": [{"price": "0.5", "size": "10"}], "asks": null, "tick_size": "0.01"}"#,
                check: Some(|e| assert!(matches!(e, WsEvent::Book(b) if b.bids.len() == 1 && b.asks.is_empty()))),
            },
            TestCase {
                label: "TC3: last_trade_price with optional fields missing",
                input: r#"{"event_type": "last_trade_price", "asset_id": "1", "market": "0x1", "price": "0.52",
                    "size": "219.217767", "side": "BUY", "timestamp": "1778584051512"}"#,
                check: Some(|e| {
                    assert!(matches!(e, WsEvent::LastTradePrice(t) if t.size == num("219.217767")
                        && t.fee_rate_bps.is_none()))
                }),
            },
            TestCase {
                label: "TC3b: last_trade_price with fee_rate_bps, as the live feed sends it",
                input: r#"{"event_type": "last_trade_price", "asset_id": "1", "market": "0x1", "price": "0.52",
                    "size": "10", "side": "SELL", "fee_rate_bps": "0", "timestamp": "1778584051512",
                    "transaction_hash": "0xab"}"#,
                check: Some(|e| {
                    assert!(matches!(e, WsEvent::LastTradePrice(t) if t.fee_rate_bps.as_deref() == Some("0")))
                }),
            },
            TestCase {
                label: "TC4: tick_size_change",
                input: r#"{"event_type": "tick_size_change", "asset_id": "1", "market": "0x1",
                    "old_tick_size": "0.01", "new_tick_size": "0.001", "timestamp": "1"}"#,
                check: Some(|e| assert!(matches!(e, WsEvent::TickSizeChange(t) if t.new_tick_size == num("0.001")))),
            },
            TestCase {
                label: "TC5: best_bid_ask",
                input: r#"{"event_type": "best_bid_ask", "asset_id": "1", "market": "0x1", "best_bid": "0.51",
                    "best_ask": "0.52", "spread": "0.01", "timestamp": "1"}"#,
                check: Some(|e| assert!(matches!(e, WsEvent::BestBidAsk(b) if b.best_bid == num("0.51")))),
            },
            TestCase {
                label: "TC6: an event type we do not know",
                input: r#"{"event_type": "something_new", "x": 1}"#,
                check: Some(|e| assert_eq!(e, &WsEvent::Unknown)),
            },
            TestCase {
                label: "TC7: new_market",
                input: r#"{"event_type": "new_market", "id": "1", "slug": "btc-updown-15m-1778584500", "assets_ids": ["1", "2"]}"#,
                check: Some(|e| assert!(matches!(e, WsEvent::NewMarket(_)))),
            },
            TestCase {
                label: "TC8: malformed price_change without market",
                input: r#"{"event_type": "price_change", "price_changes": []}"#,
                check: None,
            },
            TestCase {
                label: "TC9: malformed, no event_type",
                input: r#"{"asset_id": "1"}"#,
                check: None,
            },
        ]);
    }
}
