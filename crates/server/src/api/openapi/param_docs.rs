//! What the parameter types cannot say of themselves: an example of every parameter, and the bounds of the
//! request body fields that are documented apart from their parser.
//!
//! The range, default, spellings and text rules of each query and path parameter come from its type
//! ([`crate::params`]), so nothing here states a rule of a parameter.

use serde_json::{Map, Value};

use crate::api::whales::MAX_THRESHOLD_USD;
use crate::params::amount_step;

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
        "id" if path.starts_with("/v1/backtests") => Some("bt_3f2a9c1e7b5d4e0f8a6b2c4d1e9f7a3b"),
        "format" if path.starts_with("/v1/backtests") => Some("csv"),
        "exchange" | "platform" => Some("venue_a"),
        _ => None,
    };
    if let Some(t) = text {
        let is_array = schema.get("type").and_then(Value::as_str) == Some("array");
        return if is_array { Value::from(vec![t]) } else { Value::from(t) };
    }
    match name {
        "start_time" | "time" => return Value::from(1_763_748_000_000_i64),
        "size" => return Value::from(250),
        "end_time" => return Value::from(1_763_751_600_000_i64),
        "from" | "start_date" | "discovered_after" | "settled_after" => return Value::from("2026-11-21T00:00:00Z"),
        "to" | "end_date" | "settled_before" => return Value::from("2026-11-22T00:00:00Z"),
        "min_net_cents" => return Value::from(0.5),
        "min_trade_size" => return Value::from(1000),
        "min_volume" | "min_liquidity" => return Value::from(1000),
        "resume_from" => return Value::from(1042),
        "resume_pos" => return Value::from(1_764_210_000_123_042_u64),
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

/// Gives every parameter of `doc`'s operations an example ([`example_of`]).
pub(super) fn apply(doc: &mut Value) {
    let Some(paths) = doc.get_mut("paths").and_then(Value::as_object_mut) else {
        return;
    };
    for (path, item) in paths.iter_mut() {
        let Some(item) = item.as_object_mut() else { continue };
        for op in item.values_mut().filter(|op| op.is_object()) {
            for param in op
                .get_mut("parameters")
                .and_then(Value::as_array_mut)
                .into_iter()
                .flatten()
                .filter_map(Value::as_object_mut)
            {
                let name = param.get("name").and_then(Value::as_str).unwrap_or("").to_string();
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

    /// The served document carries the body bounds, and an example on every parameter.
    #[test]
    fn bodies_are_bounded_and_parameters_have_examples() {
        let doc = crate::api::openapi();
        // Both ways of adding an event, and the patch, bound the threshold alike.
        for body in ["AddEventIn", "AddByUrlIn", "PatchEventIn"] {
            let field = &doc["components"]["schemas"][body]["properties"]["whale_threshold_usd"];
            assert_eq!(field["maximum"], Value::from(MAX_THRESHOLD_USD), "{body}");
        }
        for (path, item) in doc["paths"].as_object().into_iter().flatten() {
            for op in item.as_object().into_iter().flat_map(|o| o.values()) {
                for p in op["parameters"].as_array().into_iter().flatten() {
                    assert!(p.get("example").is_some(), "{path} {}: no example", p["name"]);
                }
            }
        }
    }
}
