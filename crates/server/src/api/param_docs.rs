//! The documented range and default of query parameters, taken from the constants that enforce them.
//!
//! `#[param(maximum = .., default = ..)]` accepts only literals, which would repeat every limit once per route
//! and drift from the parser. Instead [`apply`] writes them into the generated document from [`table`]; the
//! tests below fail when an entry names a path or parameter the document does not have, so the table cannot
//! silently stop applying. Every free-text parameter also gets the text rules as schema keywords, and every
//! parameter an example.

use serde::Serialize;
use serde_json::{Map, Value};

use super::{
    arbitrage::{
        ARB_LIMIT, DEFAULT_MIN_NET, DEFAULT_MINUTES, DEFAULT_ORDERBOOK, MINUTES_RANGE, STALENESS_RANGE, TOLERANCE_RANGE,
    },
    historical::{DEFAULT_GRANULARITY, HISTORY_LIMIT},
    ohlcv::{DEFAULT_INTERVAL, EVENT_MARKETS, IntervalName, MAX_MARKETS},
    search::{
        COMBINED_LIMIT, DEFAULT_SERIES_SORT, DEFAULT_STATUS, EVENT_MARKETS_LIMIT, RECENT_LIMIT, SEARCH_LIMIT,
        SERIES_LIMIT,
    },
    whales::{DEFAULT_PERIOD, FEED_LIMIT, MAX_THRESHOLD_USD},
};
use crate::{
    arbitrage::{DEFAULT_MAX_STALENESS_SECONDS, DEFAULT_WINDOW_TOLERANCE_SECONDS},
    config::Config,
    params::{DEFAULT_OFFSET, IntRange, Limit, OFFSET_RANGE, amount_step, text_keywords},
};
use crossbook_core::arb::MicroUsd;

/// The schema keywords the table sets on one parameter; `None` leaves the generated value alone.
#[derive(Debug, Clone, Default)]
struct Facts {
    minimum: Option<Value>,
    maximum: Option<Value>,
    default: Option<Value>,
    /// Other schema keywords, written as they are (`type`, `exclusiveMaximum`, ...).
    keywords: Vec<(&'static str, Value)>,
    /// A rule no schema keyword can state, appended to the parameter's description.
    rule: Option<&'static str>,
}

impl Facts {
    /// `limit` of a paged route, as [`crate::params::QueryMap::limit`] enforces it.
    fn limit(l: Limit) -> Self {
        Facts {
            minimum: Some(Value::from(Limit::MIN)),
            maximum: Some(Value::from(l.max)),
            default: Some(Value::from(l.default)),
            ..Facts::default()
        }
    }

    /// `offset`, as [`crate::params::QueryMap::offset`] enforces it.
    fn offset() -> Self {
        Facts::range(OFFSET_RANGE, i64::from(DEFAULT_OFFSET))
    }

    /// An integer parameter read with [`crate::params::QueryMap::int`] and defaulted when absent.
    fn range(r: IntRange, default: i64) -> Self {
        Facts {
            minimum: Some(Value::from(r.min)),
            maximum: Some(Value::from(r.max)),
            default: Some(Value::from(default)),
            ..Facts::default()
        }
    }

    /// Only a default, in its wire spelling.
    fn with_default(v: impl Serialize) -> Self {
        Facts {
            default: Some(serde_json::to_value(v).expect("a parameter default serialises")),
            ..Facts::default()
        }
    }

    /// Schema keywords only.
    fn keywords(keywords: Vec<(&'static str, Value)>) -> Self {
        Facts {
            keywords,
            ..Facts::default()
        }
    }

    /// A rule in words only.
    fn rule(rule: &'static str) -> Self {
        Facts {
            rule: Some(rule),
            ..Facts::default()
        }
    }

    fn write_into(&self, param: &mut Map<String, Value>) {
        if let Some(schema) = param.get_mut("schema").and_then(Value::as_object_mut) {
            for (key, value) in [
                ("minimum", &self.minimum),
                ("maximum", &self.maximum),
                ("default", &self.default),
            ] {
                if let Some(v) = value {
                    schema.insert(key.to_string(), v.clone());
                }
            }
            for (key, value) in &self.keywords {
                schema.insert(key.to_string(), value.clone());
            }
        }
        if let Some(rule) = self.rule {
            let description = param.get("description").and_then(Value::as_str).unwrap_or("");
            if !description.contains(rule) {
                let joined = if description.is_empty() {
                    rule.to_string()
                } else {
                    format!("{description} {rule}")
                };
                param.insert("description".into(), Value::from(joined));
            }
        }
    }
}

/// Whole cents, as the `min_net_cents` parameters take them.
fn cents(m: MicroUsd) -> Value {
    Value::from(m.micros() / MicroUsd::from_cents(1).micros())
}

/// (path as documented, query parameter, facts).
fn table() -> Vec<(&'static str, &'static str, Facts)> {
    let mut t = Vec::new();
    let paged = [
        ("/v1/search", COMBINED_LIMIT, false),
        ("/v1/search/series", SERIES_LIMIT, true),
        ("/v1/search/events", SEARCH_LIMIT, true),
        ("/v1/search/markets", SEARCH_LIMIT, true),
        ("/v1/search/recent/events", RECENT_LIMIT, true),
        ("/v1/search/recent/markets", RECENT_LIMIT, true),
        ("/v1/search/events/{event_id}/markets", EVENT_MARKETS_LIMIT, true),
        ("/v1/historical/venue_a/orderbook", HISTORY_LIMIT, false),
        ("/v1/historical/venue_b/orderbook", HISTORY_LIMIT, false),
        ("/v1/historical/orderbook", HISTORY_LIMIT, false),
        ("/v1/historical/gaps", HISTORY_LIMIT, false),
        ("/v1/historical/venue_a/trades", HISTORY_LIMIT, false),
        ("/v1/historical/venue_b/trades", HISTORY_LIMIT, false),
        ("/v1/historical/venue_a/top-of-book", HISTORY_LIMIT, false),
        ("/v1/historical/venue_b/top-of-book", HISTORY_LIMIT, false),
        ("/whales/user/feed", FEED_LIMIT, true),
        ("/whales/user/event/{event_id}", FEED_LIMIT, true),
        ("/whales/user/market/{market_id}/trades", FEED_LIMIT, true),
        ("/whales/user/markets", FEED_LIMIT, true),
        ("/v1/whales/public/feed", FEED_LIMIT, true),
        ("/v1/arbitrage/current", ARB_LIMIT, false),
        ("/v1/arbitrage/current/difference", ARB_LIMIT, false),
        ("/v1/arbitrage/history", ARB_LIMIT, true),
        ("/v1/arbitrage/pairs", ARB_LIMIT, true),
        ("/v1/events/{event_id}/ohlcv", EVENT_MARKETS, true),
    ];
    for (path, limit, has_offset) in paged {
        t.push((path, "limit", Facts::limit(limit)));
        if has_offset {
            t.push((path, "offset", Facts::offset()));
        }
        // Every search route filters on `status`, every historical route buckets by `granularity`.
        if path.starts_with("/v1/search") {
            t.push((path, "status", Facts::with_default(DEFAULT_STATUS)));
        }
        if path.starts_with("/v1/historical/") && (path.ends_with("/orderbook") || path.ends_with("/top-of-book")) {
            t.push((path, "granularity", Facts::with_default(DEFAULT_GRANULARITY)));
        }
    }
    t.push(("/v1/search/series", "sort_by", Facts::with_default(DEFAULT_SERIES_SORT)));
    t.push((
        "/v1/events/{event_id}/ohlcv",
        "status",
        Facts::with_default(DEFAULT_STATUS),
    ));
    t.push((
        "/v1/markets/ohlcv",
        "market_ids",
        Facts::keywords(vec![
            ("minItems", Value::from(1)),
            ("maxItems", Value::from(MAX_MARKETS)),
        ]),
    ));
    for path in ["/v1/markets/ohlcv", "/v1/events/{event_id}/ohlcv"] {
        let spellings: Vec<&str> = <IntervalName as crate::params::ParamEnum>::VALUES
            .iter()
            .map(|(s, _)| *s)
            .collect();
        t.push((
            path,
            "interval",
            Facts {
                default: Some(Value::from(DEFAULT_INTERVAL.0.as_str())),
                keywords: vec![("enum", Value::from(spellings))],
                ..Facts::default()
            },
        ));
        t.push((path, "from", Facts::rule(FROM_BEFORE_TO)));
    }
    for path in [
        "/whales/user/stats",
        "/whales/user/event/{event_id}/stats",
        "/whales/user/market/{market_id}/stats",
        "/whales/user/markets",
    ] {
        t.push((path, "period", Facts::with_default(DEFAULT_PERIOD)));
    }
    let current = "/v1/arbitrage/current";
    t.push((
        current,
        "max_staleness_seconds",
        Facts::range(STALENESS_RANGE, DEFAULT_MAX_STALENESS_SECONDS),
    ));
    t.push((
        current,
        "window_tolerance_seconds",
        Facts::range(TOLERANCE_RANGE, DEFAULT_WINDOW_TOLERANCE_SECONDS),
    ));
    t.push((current, "orderbook", Facts::with_default(DEFAULT_ORDERBOOK)));
    // No floor on the history route behaves as a floor of the current route's default.
    for path in [current, "/v1/arbitrage/history"] {
        t.push((path, "min_net_cents", Facts::with_default(cents(DEFAULT_MIN_NET))));
    }
    t.push((
        "/v1/arbitrage/current/difference",
        "minutes",
        Facts::range(MINUTES_RANGE, DEFAULT_MINUTES),
    ));
    // The two searches without a required `q` need it or `series_id`: a rule across parameters.
    for path in ["/v1/search/events", "/v1/search/markets"] {
        for name in ["q", "series_id"] {
            t.push((path, name, Facts::rule(Q_OR_SERIES)));
        }
    }
    // The historical routes' times: their forms are `InstantQuery`'s; `end_time` alone is refused.
    for path in [
        "/v1/historical/venue_a/orderbook",
        "/v1/historical/venue_b/orderbook",
        "/v1/historical/orderbook",
        "/v1/historical/gaps",
        "/v1/historical/venue_a/trades",
        "/v1/historical/venue_b/trades",
        "/v1/historical/venue_a/top-of-book",
        "/v1/historical/venue_b/top-of-book",
    ] {
        t.push((path, "end_time", Facts::rule(END_NEEDS_START)));
    }
    // The platform minimum is a setting (`whale_public_min_usd`); the document states its default.
    let public_min = Value::from(Config::default().whale_public_min_usd);
    t.push((
        "/v1/whales/public/feed",
        "min_trade_size",
        Facts {
            minimum: Some(public_min.clone()),
            default: Some(public_min),
            ..Facts::default()
        },
    ));
    for path in [
        "/v1/whales/public/feed",
        "/whales/user/feed",
        "/whales/user/event/{event_id}",
        "/whales/user/event/{event_id}/stats",
        "/whales/user/market/{market_id}/trades",
        "/whales/user/market/{market_id}/stats",
    ] {
        t.push((
            path,
            "min_trade_size",
            Facts::keywords(vec![("maximum", Value::from(MAX_THRESHOLD_USD))]),
        ));
    }
    t
}

const Q_OR_SERIES: &str = "Either `q` or `series_id` is required.";
const FROM_BEFORE_TO: &str = "`from` must be earlier than `to`, and the two may span at most 1,500 intervals.";
const END_NEEDS_START: &str = "`end_time` without `start_time` is refused.";

/// The rules every free-text parameter is held to ([`crate::params::text_value`]).
fn text_rules(schema: &mut Map<String, Value>) {
    schema.extend(text_keywords());
}

/// Whether a parameter schema is free text: a plain string, no enum, no format.
fn is_free_text(schema: &Map<String, Value>) -> bool {
    let string = match schema.get("type") {
        Some(Value::String(t)) => t == "string",
        Some(Value::Array(ts)) => ts.iter().any(|t| t == "string"),
        _ => false,
    };
    string && !schema.contains_key("enum") && !schema.contains_key("format") && !schema.contains_key("$ref")
}

/// An example of every parameter: its free-text value by name (ids of the kind each venue uses), else its
/// default, its first allowed value or its minimum.
fn example_of(path: &str, name: &str, schema: &Map<String, Value>) -> Value {
    let text = match name {
        "q" => Some("bitcoin"),
        "market_id" if path.contains("venue_b") => Some(EXAMPLE_CONDITION_ID),
        "market_id" => Some("KXBTC15M-26NOV211915-15"),
        "asset_id" => Some(EXAMPLE_ASSET_ID),
        "event_id" | "event_ticker" => Some("KXBTC15M-26NOV211915"),
        "series_id" => Some("KXBTC15M"),
        "category" => Some("crypto"),
        "pagination_key" => Some("eyJ0IjoxNzYzNzUyNTAwMDAwLCJrIjoiYSJ9"),
        "session" => Some("3f2a9c1e7b5d4e0f"),
        "date" => Some("2026-11-21"),
        "market_ids" => Some("KXBTC15M-26NOV211915-15"),
        // Enums behind a `$ref`, whose values this function cannot read.
        "type" => Some("whale"),
        "exchange" | "platform" => Some("venue_a"),
        _ => None,
    };
    if let Some(t) = text {
        let is_array = schema.get("type").and_then(Value::as_str) == Some("array");
        return if is_array { Value::from(vec![t]) } else { Value::from(t) };
    }
    match name {
        "start_time" => return Value::from(1_763_748_000_000_i64),
        "end_time" => return Value::from(1_763_751_600_000_i64),
        "from" | "start_date" | "discovered_after" | "settled_after" => return Value::from("2026-11-21T00:00:00Z"),
        "to" | "end_date" | "settled_before" => return Value::from("2026-11-22T00:00:00Z"),
        "min_net_cents" => return Value::from(0.5),
        "min_trade_size" => return Value::from(1000),
        "min_volume" | "min_liquidity" => return Value::from(1000),
        "resume_from" => return Value::from(1042),
        "id" => return Value::from(1),
        _ => {}
    }
    if let Some(d) = schema.get("default") {
        return d.clone();
    }
    if let Some(first) = schema.get("enum").and_then(|e| e.get(0)) {
        return first.clone();
    }
    schema.get("minimum").cloned().unwrap_or(Value::Null)
}

const EXAMPLE_CONDITION_ID: &str = "0x5f1c2e9a7b3d4c6e8f0a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f6a";
const EXAMPLE_ASSET_ID: &str = "71321045679252212594626385532706912750332728571942532289631379312455583992563";

/// Writes [`table`] into the query parameters of `doc`'s operations; returns how many
/// parameters each entry reached, in table order, for the tests.
pub(super) fn apply(doc: &mut Value) -> Vec<usize> {
    let table = table();
    let mut reached = vec![0; table.len()];
    let Some(paths) = doc.get_mut("paths").and_then(Value::as_object_mut) else {
        return reached;
    };
    for (path, item) in paths.iter_mut() {
        let Some(item) = item.as_object_mut() else { continue };
        for op in item.values_mut().filter(|op| op.is_object()) {
            for param in op
                .get_mut("parameters")
                .and_then(Value::as_array_mut)
                .into_iter()
                .flatten()
            {
                for (i, (entry_path, name, facts)) in table.iter().enumerate() {
                    if entry_path != path || param["name"] != *name || param["in"] != "query" {
                        continue;
                    }
                    if let Some(param) = param.as_object_mut() {
                        facts.write_into(param);
                        reached[i] += 1;
                    }
                }
                let Some(param) = param.as_object_mut() else { continue };
                let name = param.get("name").and_then(Value::as_str).unwrap_or("").to_string();
                if let Some(schema) = param.get_mut("schema").and_then(Value::as_object_mut) {
                    if is_free_text(schema) {
                        text_rules(schema);
                    }
                    // A repeatable parameter: each value is held to the text rules.
                    if let Some(items) = schema.get_mut("items").and_then(Value::as_object_mut)
                        && is_free_text(items)
                    {
                        text_rules(items);
                    }
                    // Watchlist ids are positive ([`super::whales`] refuses 0 and below).
                    if name == "id" {
                        schema.insert("minimum".into(), Value::from(1));
                    }
                }
                let schema = param
                    .get("schema")
                    .and_then(Value::as_object)
                    .cloned()
                    .unwrap_or_default();
                param.insert("example".into(), example_of(path, &name, &schema));
            }
        }
    }
    apply_to_bodies(doc);
    reached
}

/// The bounds of request body fields that their derive cannot take from a constant: every body with a
/// `whale_threshold_usd` (each one is read by the same parser) gets the same maximum and step.
fn apply_to_bodies(doc: &mut Value) {
    let Some(schemas) = doc["components"]["schemas"].as_object_mut() else {
        return;
    };
    for schema in schemas.values_mut() {
        // `get_mut`, not indexing: indexing a missing key would insert a null property into every schema.
        let field = schema
            .get_mut("properties")
            .and_then(|p| p.get_mut("whale_threshold_usd"))
            .and_then(Value::as_object_mut);
        if let Some(field) = field {
            field.insert("maximum".into(), Value::from(MAX_THRESHOLD_USD));
            field.insert("multipleOf".into(), amount_step());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::MAX_OFFSET;

    fn param<'a>(doc: &'a Value, path: &str, name: &str) -> &'a Value {
        let params = doc["paths"][path]["get"]["parameters"]
            .as_array()
            .unwrap_or_else(|| panic!("{path} has no parameters"));
        &params
            .iter()
            .find(|p| p["name"] == name)
            .unwrap_or_else(|| panic!("{path} has no {name}"))["schema"]
    }

    /// Every entry names an existing path and query parameter, so a renamed route or field fails here
    /// instead of losing its documented range.
    #[test]
    fn every_entry_reaches_a_parameter() {
        // Applying the table again changes nothing and counts what each entry reaches.
        let mut doc = crate::api::openapi().clone();
        let reached = apply(&mut doc);
        for ((path, name, _), n) in table().iter().zip(reached) {
            assert!(n > 0, "{path} {name}: no such query parameter in the document");
        }
    }

    /// The served document carries the constants.
    #[test]
    fn documented_values_are_the_enforced_ones() {
        let doc = crate::api::openapi();
        // Both ways of adding an event, and the patch, bound the threshold alike.
        for body in ["AddEventIn", "AddByUrlIn", "PatchEventIn"] {
            let field = &doc["components"]["schemas"][body]["properties"]["whale_threshold_usd"];
            assert_eq!(field["maximum"], Value::from(MAX_THRESHOLD_USD), "{body}");
        }
        let path = "/v1/search/series";
        let limit = param(doc, path, "limit");
        assert_eq!(limit["minimum"], Value::from(Limit::MIN), "{path}");
        assert_eq!(limit["maximum"], Value::from(SERIES_LIMIT.max), "{path}");
        assert_eq!(limit["default"], Value::from(SERIES_LIMIT.default), "{path}");
        assert_eq!(param(doc, path, "offset")["maximum"], Value::from(MAX_OFFSET), "{path}");
        assert_eq!(param(doc, path, "status")["default"], "active", "{path}");
        let staleness = param(doc, "/v1/arbitrage/current", "max_staleness_seconds");
        assert_eq!(staleness["maximum"], Value::from(STALENESS_RANGE.max));
        assert_eq!(staleness["default"], Value::from(DEFAULT_MAX_STALENESS_SECONDS));
        assert_eq!(
            param(doc, "/v1/whales/public/feed", "limit")["maximum"],
            Value::from(FEED_LIMIT.max)
        );
        assert_eq!(param(doc, "/whales/user/stats", "period")["default"], "24h");
    }
}
