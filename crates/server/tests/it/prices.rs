//! One rule for prices in every JSON answer, checked on the answers themselves over the simulated venues: a
//! price is a JSON number, except the prices of book levels (`{"price": "0.5300", "size": 120.0}`) and the
//! `last_*_price` fields, which are four-decimal strings. Walked: top of book, the trade tape, OHLCV, a replay
//! and the stream's trade messages.

use std::collections::BTreeSet;

use futures_util::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::{Message, client::IntoClientRequest};

use crate::util::*;

/// The arrays whose objects are book levels or level changes: their `price` is a string.
const LADDERS: [&str; 4] = ["bids", "asks", "no_bids", "changes"];

/// Fields that hold a price (besides `*_price`), wherever they appear.
const PRICE_FIELDS: [&str; 12] = [
    "price",
    "best_bid",
    "best_ask",
    "mid",
    "spread",
    "open",
    "high",
    "low",
    "close",
    "change_1d",
    "change_7d",
    "change_30d",
];

fn is_price_field(k: &str) -> bool {
    PRICE_FIELDS.contains(&k) || k.ends_with("_price")
}

/// `last_yes_price`, `last_no_price`: `last_` and `_price` around a name (`last_price` is not one).
fn is_last_named_price(k: &str) -> bool {
    k.len() > "last__price".len() && k.starts_with("last_") && k.ends_with("_price")
}

fn is_four_decimal_string(v: &Value) -> bool {
    v.as_str().is_some_and(|s| {
        let (whole, frac) = s.trim_start_matches('-').split_once('.').unwrap_or(("", ""));
        !whole.is_empty() && whole.bytes().all(|b| b.is_ascii_digit()) && frac.len() == 4
    })
}

/// What the walk found: each non-null price field seen, as `answer field kind`, and every breach of the rule.
#[derive(Default)]
struct Walk {
    seen: BTreeSet<String>,
    failures: Vec<String>,
}

impl Walk {
    fn answer(&mut self, name: &str, v: &Value) {
        self.value(name, "", v, false);
    }

    fn value(&mut self, name: &str, path: &str, v: &Value, level: bool) {
        match v {
            Value::Object(o) => {
                for (k, x) in o {
                    let here = format!("{path}/{k}");
                    if is_price_field(k) && !x.is_null() {
                        let string = (level && k == "price") || is_last_named_price(k);
                        let (ok, kind) = if string {
                            (is_four_decimal_string(x), "string")
                        } else {
                            (x.is_number(), "number")
                        };
                        self.seen.insert(format!("{name} {k} {kind}"));
                        if !ok {
                            self.failures.push(format!("{name} {here}: {x} should be a {kind}"));
                        }
                    }
                    if x.is_object() || x.is_array() {
                        let ladder = LADDERS.contains(&k.as_str());
                        self.value(name, &here, x, ladder);
                    }
                }
            }
            Value::Array(a) => {
                for (i, x) in a.iter().enumerate() {
                    self.value(name, &format!("{path}/{i}"), x, level);
                }
            }
            _ => {}
        }
    }
}

#[test]
fn the_walk_tells_the_kinds_apart() {
    let mut w = Walk::default();
    w.answer(
        "a",
        &json!({"best_bid": 0.53, "mid": "0.5400", "last_yes_price": "0.5300", "last_price": "0.5300",
            "bids": [{"price": "0.5300", "size": 1.0}], "changes": [{"price": 0.53}], "trade": {"price": 0.5},
            "close": null}),
    );
    assert_eq!(
        w.failures,
        [
            "a /changes/0/price: 0.53 should be a string",
            "a /last_price: \"0.5300\" should be a number",
            "a /mid: \"0.5400\" should be a number",
        ]
    );
    assert!(w.seen.contains("a price string") && w.seen.contains("a price number"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prices_are_numbers_except_book_levels_and_last_prices() {
    let (db, keys, server) = simulated_on_sqlite(11, |_| {}).await;
    let key = keys.free.as_str();
    let mut walk = Walk::default();

    // The first trade the stream sends names the market the routes are then asked about.
    let mut req = format!("ws://{}/v1/stream", server.addr).into_client_request().unwrap();
    req.headers_mut().insert("x-api-key", key.parse().unwrap());
    let (mut ws, _) = tokio_tungstenite::connect_async(req).await.unwrap();
    ws.send(Message::text(
        json!({"op": "subscribe", "channel": "trades"}).to_string(),
    ))
    .await
    .unwrap();
    let trade = tokio::time::timeout(std::time::Duration::from_secs(120), async {
        loop {
            if let Some(Ok(Message::Text(t))) = ws.next().await {
                let m: Value = serde_json::from_str(t.as_str()).unwrap();
                if m["type"] == "trade" {
                    return m;
                }
            }
        }
    })
    .await
    .expect("a trade on the stream within 120 s");
    drop(ws);
    walk.answer("stream trade", &trade);
    let exchange = trade["exchange"].as_str().unwrap().to_string();
    let market = trade["market_id"].as_str().unwrap().to_string();
    let executed = trade["timestamp"]
        .as_i64()
        .or_else(|| {
            crossbook_core::Timestamp::parse_iso(trade["executed_at"].as_str()?)
                .ok()
                .map(|t| t.millis())
        })
        .unwrap();

    let ask = |path: String| {
        let url = server.url(&path);
        async move { get_json_key(&url, key).await }
    };
    let tape = eventually("the trade on the tape", 60, async || {
        let v = ask(format!("/v1/historical/{exchange}/trades?market_id={market}&limit=5")).await?;
        (!v["trades"].as_array().is_none_or(Vec::is_empty))
            .then_some(v)
            .ok_or("no trade yet".to_string())
    })
    .await;
    walk.answer("trades", &tape);
    let top = eventually("a two-sided top of book", 60, async || {
        let v = ask(format!(
            "/v1/historical/{exchange}/top-of-book?market_id={market}&limit=20"
        ))
        .await?;
        let two_sided = v["rows"]
            .as_array()
            .is_some_and(|r| r.iter().any(|r| !r["mid"].is_null()));
        two_sided.then_some(v).ok_or("no row with both sides yet".to_string())
    })
    .await;
    walk.answer("top-of-book", &top);
    let candles = eventually("candles with the trade", 60, async || {
        let v = ask(format!(
            "/v1/markets/ohlcv?market_ids={market}&exchange={exchange}&interval=1m"
        ))
        .await?;
        let traded = v["markets"][0]["candles"]
            .as_array()
            .is_some_and(|c| c.iter().any(|c| !c["open"].is_null()));
        traded.then_some(v).ok_or("no traded candle yet".to_string())
    })
    .await;
    walk.answer("ohlcv", &candles);
    let replay = eventually("a replay with a trade and a book", 60, async || {
        let now = crossbook_core::Timestamp::now().millis();
        let url = server.url(&format!(
            "/v1/replay?market_id={exchange}:{market}&start_time={}&end_time={now}",
            executed - 1_000
        ));
        let r = client()
            .get(&url)
            .header("x-api-key", key)
            .send()
            .await
            .map_err(|e| e.to_string())?;
        let text = r.text().await.map_err(|e| e.to_string())?;
        let lines: Vec<Value> = text.lines().filter_map(|l| serde_json::from_str(l).ok()).collect();
        let has = |kind: &str| lines.iter().any(|m| m["type"] == kind);
        (has("trade") && has("book_snapshot"))
            .then_some(lines)
            .ok_or(format!("not yet: {}", text.chars().take(300).collect::<String>()))
    })
    .await;
    for m in &replay {
        walk.answer(&format!("replay {}", m["type"].as_str().unwrap_or("?")), m);
    }
    server.stop().await.unwrap();
    db.cleanup().await;

    for want in [
        "stream trade price number",
        "trades price number",
        "top-of-book best_bid number",
        "top-of-book best_ask number",
        "top-of-book mid number",
        "top-of-book spread number",
        "ohlcv open number",
        "ohlcv high number",
        "ohlcv low number",
        "ohlcv close number",
        "ohlcv last_price number",
        "replay trade price number",
    ] {
        assert!(walk.seen.contains(want), "never saw {want:?}; saw {:?}", walk.seen);
    }
    assert!(
        walk.seen
            .iter()
            .any(|s| s.starts_with("replay book_snapshot price string")),
        "no book level in the replay: {:?}",
        walk.seen
    );
    assert!(walk.failures.is_empty(), "{}", walk.failures.join("\n"));
}
