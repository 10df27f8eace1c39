//! A report's trades as a CSV file, one row per trade: the columns are the trade object's fields, a nested
//! object's fields prefixed with its name (`yes_leg_filled`, `unwind_sold`), in the order the object lists
//! them, so the file and the JSON cannot drift apart.

use serde_json::Value;

use super::render::UNWIND_FIELDS;

/// The rows of `trades` (the report's `trades` array) as CSV with a header line.
pub fn csv(trades: &[Value]) -> String {
    let mut header = Vec::new();
    let mut rows = Vec::with_capacity(trades.len());
    for t in trades {
        let mut cells = Vec::new();
        flatten("", t, &mut cells);
        if header.is_empty() {
            header = cells.iter().map(|(k, _)| k.clone()).collect();
        }
        rows.push(cells);
    }
    if header.is_empty() {
        header = EMPTY_HEADER.iter().map(|s| s.to_string()).collect();
    }
    let mut out = header.join(",");
    out.push('\n');
    for row in rows {
        // A trade without an unwind has a null where others have the unwind's fields: each named column
        // takes its cell, or stays empty.
        let line: Vec<String> = header
            .iter()
            .map(|h| {
                row.iter()
                    .find(|(k, _)| k == h)
                    .map(|(_, v)| v.clone())
                    .unwrap_or_default()
            })
            .collect();
        out.push_str(&line.join(","));
        out.push('\n');
    }
    out
}

/// The columns of a file with no trade.
const EMPTY_HEADER: &[&str] = &["id", "event_id", "kind", "pnl_net_dollars"];

fn flatten(prefix: &str, v: &Value, out: &mut Vec<(String, String)>) {
    match v {
        Value::Object(map) => {
            for (k, v) in map {
                let name = if prefix.is_empty() {
                    k.clone()
                } else {
                    format!("{prefix}_{k}")
                };
                match v {
                    // A trade without an unwind: its columns come from the unwind's shape.
                    Value::Null if k == "unwind" => {
                        for f in UNWIND_FIELDS {
                            out.push((format!("{name}_{f}"), String::new()));
                        }
                    }
                    _ => flatten(&name, v, out),
                }
            }
        }
        Value::Null => out.push((prefix.to_string(), String::new())),
        Value::String(s) => out.push((prefix.to_string(), quote(s))),
        other => out.push((prefix.to_string(), other.to_string())),
    }
}

fn quote(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}
