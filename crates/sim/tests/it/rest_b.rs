//! venue_b REST (Gamma, CLOB, Data API): shapes against the samples, both paging regimes, filters, errors.

use std::time::Duration;

use crossbook_core::{Exchange, IntervalCode};
use serde_json::{Value, json};

use crate::util::{assert_shape, client, get, get_ok, sample, start};

/// Fields whose value may legitimately be null on one side (no trade yet, empty side).
const NULLABLE: &[&str] = &["bestBid", "bestAsk", "spread"];

/// `"[\"a\", \"b\"]"` → `["a", "b"]`: Gamma's JSON-in-a-string arrays.
fn inner_array(v: &Value) -> Vec<String> {
    let s = v.as_str().unwrap_or_else(|| panic!("a string holding an array: {v}"));
    serde_json::from_str(s).unwrap()
}

#[tokio::test]
async fn gamma_event_matches_the_sample_shape() {
    let sim = start(11).await;
    sim.advance(Duration::from_secs(5));
    let gamma = sim.venue_b_gamma_url();
    let slug = sim.with_model(|m| m.open_window_pair(IntervalCode::M15).unwrap().1.slug.clone().unwrap());
    assert_eq!(slug, "btc-updown-15m-1778583600");
    let body = get_ok(&format!("{gamma}/events?slug={slug}")).await;
    assert!(body.is_array(), "offset listing answers a bare array");
    let sample = sample("polymarket_gamma_event.json");
    assert_shape("events", &sample, &body, NULLABLE);
    let event = &body[0];
    let market = &event["markets"][0];
    assert_eq!(inner_array(&market["outcomes"]), ["Up", "Down"]);
    let tokens = inner_array(&market["clobTokenIds"]);
    assert!(
        tokens
            .iter()
            .all(|t| t.len() == 78 && t.bytes().all(|b| b.is_ascii_digit()))
    );
    let prices = inner_array(&market["outcomePrices"]);
    let sum: i64 = prices
        .iter()
        .map(|p| p.parse::<crossbook_core::Price>().unwrap().micros())
        .sum();
    assert_eq!(sum, 1_000_000);
    assert!(market["volume"].is_string() && market["volumeNum"].is_number() && event["volume"].is_number());
    assert_eq!(market["conditionId"].as_str().unwrap().len(), 66);
    assert_eq!(event["seriesSlug"], "btc-up-or-down-15m");
    assert!(event["eventMetadata"]["priceToBeat"].is_number());
    // eventStartTime and endDate carry venue_b's own (skewed) window, within 5 s of venue_a's.
    let (a, b) = sim.with_model(|m| {
        let (a, b) = m.open_window_pair(IntervalCode::M15).unwrap();
        (a.clone(), b.clone())
    });
    assert_eq!(market["eventStartTime"], json!(iso(b.open_time.millis())));
    assert_eq!(event["startTime"], json!(iso(b.open_time.millis())));
    assert_eq!(market["endDate"], json!(iso(b.close_time.millis())));
    assert!((a.open_time.millis() - b.open_time.millis()).abs() <= 5_000);

    let same = get_ok(&format!("{gamma}/events/{}", event["id"].as_str().unwrap())).await;
    assert_eq!(same["slug"], slug.as_str());
    let same = get_ok(&format!("{gamma}/events/slug/{slug}")).await;
    assert_eq!(same["id"], event["id"]);
    let m = get_ok(&format!("{gamma}/markets/slug/{slug}")).await;
    assert_eq!(m["events"][0]["id"], event["id"]);
    assert_eq!(get(&format!("{gamma}/events/1")).await.0, 404);
}

fn iso(ms: i64) -> String {
    let s = crossbook_core::Timestamp::from_millis(ms).to_iso();
    format!("{}Z", &s[..19])
}

#[tokio::test]
async fn gamma_pages_by_offset_and_by_keyset() {
    let sim = start(12).await;
    let gamma = sim.venue_b_gamma_url();
    let all = get_ok(&format!("{gamma}/events?limit=500")).await;
    let all: Vec<Value> = all.as_array().unwrap().iter().map(|e| e["id"].clone()).collect();
    assert!(all.len() > 10);
    let mut by_offset = Vec::new();
    for offset in (0..).step_by(4) {
        let page = get_ok(&format!("{gamma}/events?limit=4&offset={offset}")).await;
        let page = page.as_array().unwrap();
        by_offset.extend(page.iter().map(|e| e["id"].clone()));
        if page.len() < 4 {
            break;
        }
    }
    assert_eq!(by_offset, all);
    let mut by_keyset = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let url = match &cursor {
            None => format!("{gamma}/events/keyset?limit=3"),
            Some(c) => format!("{gamma}/events/keyset?limit=3&after_cursor={c}"),
        };
        let body = get_ok(&url).await;
        by_keyset.extend(body["events"].as_array().unwrap().iter().map(|e| e["id"].clone()));
        match body.get("next_cursor") {
            Some(c) => cursor = Some(c.as_str().unwrap().to_string()),
            None => break,
        }
    }
    assert_eq!(by_keyset, all);
    let mk = get_ok(&format!("{gamma}/markets/keyset?limit=2")).await;
    assert_eq!(mk["markets"].as_array().unwrap().len(), 2);
    assert!(mk["next_cursor"].is_string());
    assert_eq!(get(&format!("{gamma}/events?offset=2001")).await.0, 422);
    assert_eq!(get(&format!("{gamma}/events/keyset?offset=0")).await.0, 422);
    assert_eq!(get(&format!("{gamma}/markets/keyset?limit=101")).await.0, 422);

    // Discovery by series, ordered by end date.
    let windows = get_ok(&format!(
        "{gamma}/events?series_slug=btc-up-or-down-15m&closed=false&order=endDate&ascending=true"
    ))
    .await;
    let windows = windows.as_array().unwrap();
    assert_eq!(windows.len(), 2, "current and next 15m window");
    assert!(windows[0]["endDate"].as_str() < windows[1]["endDate"].as_str());
    for series in [
        "btc-up-or-down-5m",
        "btc-up-or-down-hourly",
        "btc-up-or-down-daily",
        "btc-up-or-down-weekly",
    ] {
        let list = get_ok(&format!("{gamma}/events?series_slug={series}&closed=false")).await;
        assert_eq!(list.as_array().unwrap().len(), 2, "{series}");
    }
    let sports = get_ok(&format!("{gamma}/events?tag_slug=sports&limit=100")).await;
    assert!(sports.as_array().unwrap().len() >= 2);
    let token = sim.markets(Exchange::VenueB)[0].tokens.clone().unwrap()[1].clone();
    let by_token = get_ok(&format!("{gamma}/markets?clob_token_ids={token}")).await;
    assert_eq!(by_token.as_array().unwrap().len(), 1);
}

#[tokio::test]
async fn clob_books_are_mirrors_in_venue_order() {
    let sim = start(13).await;
    sim.advance(Duration::from_secs(3));
    let clob = sim.venue_b_clob_url();
    let m = sim.with_model(|m| m.open_window_pair(IntervalCode::M5).unwrap().1.clone());
    let [up, down] = m.tokens.clone().unwrap();
    let book = get_ok(&format!("{clob}/book?token_id={up}")).await;
    assert_shape("book", &sample("polymarket_clob_book.json"), &book, &[]);
    assert_eq!(book["market"], m.market_id.as_str());
    assert_eq!(book["asset_id"], up.as_str());
    let prices = |side: &str| -> Vec<i64> {
        book[side]
            .as_array()
            .unwrap()
            .iter()
            .map(|l| {
                l["price"]
                    .as_str()
                    .unwrap()
                    .parse::<crossbook_core::Price>()
                    .unwrap()
                    .micros()
            })
            .collect()
    };
    let (bids, asks) = (prices("bids"), prices("asks"));
    assert!(bids.windows(2).all(|w| w[0] < w[1]), "bids ascending, best last");
    assert!(asks.windows(2).all(|w| w[0] > w[1]), "asks descending, best last");
    let model = sim.book(Exchange::VenueB, &up).unwrap();
    assert_eq!(*bids.last().unwrap(), model.bids[0].price.micros());
    assert_eq!(*asks.last().unwrap(), model.asks[0].price.micros());
    let down_book = sim.book(Exchange::VenueB, &down).unwrap();
    assert_eq!(
        down_book.bids[0].price.micros(),
        1_000_000 - model.asks[0].price.micros()
    );

    let resp = client()
        .post(format!("{clob}/books"))
        .json(&json!([{"token_id": up}, {"token_id": down, "side": "BUY"}, {"token_id": "123"}]))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    let books: Value = resp.json().await.unwrap();
    assert_eq!(books.as_array().unwrap().len(), 2);
    assert_eq!(books[0]["bids"], book["bids"]);
    assert_eq!(get(&format!("{clob}/book?token_id=abc")).await.0, 400);
    assert_eq!(get(&format!("{clob}/book")).await.0, 400);
    let (status, body) = get(&format!("{clob}/book?token_id=123")).await;
    assert_eq!(
        (status, body),
        (404, json!({"error": "No orderbook exists for the requested token id"}))
    );
}

#[tokio::test]
async fn data_api_trades_are_a_bare_array_with_numbers() {
    let sim = start(14).await;
    sim.advance(Duration::from_secs(90));
    let data = sim.venue_b_data_url();
    let body = get_ok(&format!("{data}/trades?limit=20")).await;
    assert_shape(
        "trades",
        &sample("polymarket_data_api_trades.json"),
        &body,
        &["name", "bio"],
    );
    let trades = body.as_array().unwrap();
    assert!(!trades.is_empty());
    let t = &trades[0];
    assert!(t["size"].is_number() && t["price"].is_number() && t["timestamp"].is_i64());
    assert!(["BUY", "SELL"].contains(&t["side"].as_str().unwrap()));
    let cid = t["conditionId"].as_str().unwrap();
    let only = get_ok(&format!("{data}/trades?market={cid}&limit=500")).await;
    assert!(only.as_array().unwrap().iter().all(|x| x["conditionId"] == cid));
    let stamps: Vec<i64> = trades.iter().map(|x| x["timestamp"].as_i64().unwrap()).collect();
    assert!(stamps.windows(2).all(|w| w[0] >= w[1]), "newest first");
    assert_eq!(get(&format!("{data}/trades?market={cid}&eventId=1")).await.0, 400);
    sim.faults().fail_rest(Exchange::VenueB, 500, 1);
    assert_eq!(get(&format!("{data}/trades")).await.0, 500);
    assert_eq!(get(&format!("{data}/trades")).await.0, 200);
}
