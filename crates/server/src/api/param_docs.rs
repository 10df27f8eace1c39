//! The documented range and default of query parameters, taken from the constants that enforce them.
//!
//! `#[param(maximum = .., default = ..)]` accepts only literals, which would repeat every limit once per route
//! and drift from the parser. Instead [`apply`] writes them into the generated document from [`table`]; the
//! tests below fail when an entry names a path or parameter the document does not have, so the table cannot
//! silently stop applying.

use serde::Serialize;
use serde_json::{Map, Value};

use super::{
    arbitrage::{
        ARB_LIMIT, DEFAULT_MIN_NET, DEFAULT_MINUTES, DEFAULT_ORDERBOOK, MINUTES_RANGE, STALENESS_RANGE, TOLERANCE_RANGE,
    },
    historical::{DEFAULT_GRANULARITY, HISTORY_LIMIT},
    search::{
        COMBINED_LIMIT, DEFAULT_SERIES_SORT, DEFAULT_STATUS, EVENT_MARKETS_LIMIT, RECENT_LIMIT, SEARCH_LIMIT,
        SERIES_LIMIT,
    },
    whales::{DEFAULT_PERIOD, FEED_LIMIT},
};
use crate::{
    arbitrage::{DEFAULT_MAX_STALENESS_SECONDS, DEFAULT_WINDOW_TOLERANCE_SECONDS},
    params::{DEFAULT_OFFSET, IntRange, Limit, OFFSET_RANGE},
};
use crossbook_core::arb::MicroUsd;

/// The schema keywords the table sets on one parameter; `None` leaves the generated value alone.
#[derive(Debug, Clone, Default)]
struct Facts {
    minimum: Option<Value>,
    maximum: Option<Value>,
    default: Option<Value>,
}

impl Facts {
    /// `limit` of a paged route, as [`crate::params::QueryMap::limit`] enforces it.
    fn limit(l: Limit) -> Self {
        Facts {
            minimum: Some(Value::from(Limit::MIN)),
            maximum: Some(Value::from(l.max)),
            default: Some(Value::from(l.default)),
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
        }
    }

    /// Only a default, in its wire spelling.
    fn with_default(v: impl Serialize) -> Self {
        Facts {
            default: Some(serde_json::to_value(v).expect("a parameter default serialises")),
            ..Facts::default()
        }
    }

    fn write_into(&self, schema: &mut Map<String, Value>) {
        for (key, value) in [
            ("minimum", &self.minimum),
            ("maximum", &self.maximum),
            ("default", &self.default),
        ] {
            if let Some(v) = value {
                schema.insert(key.to_string(), v.clone());
            }
        }
    }
}

/// Whole cents, as the `min_net_cents` parameters take them.
fn cents(m: MicroUsd) -> Value {
    Value::from(m.micros() / MicroUsd::from_cents(1).micros())
}

/// (path as documented, query parameter, facts). An unversioned alias of a path (`x-alias-of`) gets the facts
/// of its original, so only the `/v1` spelling is listed.
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
        ("/whales/user/feed", FEED_LIMIT, true),
        ("/v1/whales/public/feed", FEED_LIMIT, true),
        ("/v1/arbitrage/current", ARB_LIMIT, false),
        ("/v1/arbitrage/current/difference", ARB_LIMIT, false),
        ("/v1/arbitrage/history", ARB_LIMIT, true),
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
        if path.starts_with("/v1/historical/") && path.ends_with("/orderbook") {
            t.push((path, "granularity", Facts::with_default(DEFAULT_GRANULARITY)));
        }
    }
    t.push(("/v1/search/series", "sort_by", Facts::with_default(DEFAULT_SERIES_SORT)));
    t.push(("/whales/user/stats", "period", Facts::with_default(DEFAULT_PERIOD)));
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
    t
}

/// Writes [`table`] into the query parameters of `doc`'s operations, aliases included; returns how many
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
            let original = op.get("x-alias-of").and_then(Value::as_str).unwrap_or(path).to_string();
            for param in op
                .get_mut("parameters")
                .and_then(Value::as_array_mut)
                .into_iter()
                .flatten()
            {
                if param["in"] != "query" {
                    continue;
                }
                for (i, (entry_path, name, facts)) in table.iter().enumerate() {
                    if *entry_path != original || param["name"] != *name {
                        continue;
                    }
                    if let Some(schema) = param.get_mut("schema").and_then(Value::as_object_mut) {
                        facts.write_into(schema);
                        reached[i] += 1;
                    }
                }
            }
        }
    }
    reached
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

    /// The served document carries the constants, on the `/v1` path and on its unversioned alias.
    #[test]
    fn documented_values_are_the_enforced_ones() {
        let doc = crate::api::openapi();
        for path in ["/v1/search/series", "/search/series"] {
            let limit = param(doc, path, "limit");
            assert_eq!(limit["minimum"], Value::from(Limit::MIN), "{path}");
            assert_eq!(limit["maximum"], Value::from(SERIES_LIMIT.max), "{path}");
            assert_eq!(limit["default"], Value::from(SERIES_LIMIT.default), "{path}");
            assert_eq!(param(doc, path, "offset")["maximum"], Value::from(MAX_OFFSET), "{path}");
            assert_eq!(param(doc, path, "status")["default"], "active", "{path}");
        }
        let staleness = param(doc, "/arbitrage/current", "max_staleness_seconds");
        assert_eq!(staleness["maximum"], Value::from(STALENESS_RANGE.max));
        assert_eq!(staleness["default"], Value::from(DEFAULT_MAX_STALENESS_SECONDS));
        assert_eq!(
            param(doc, "/v1/whales/public/feed", "limit")["maximum"],
            Value::from(FEED_LIMIT.max)
        );
        assert_eq!(param(doc, "/whales/user/stats", "period")["default"], "24h");
    }
}
