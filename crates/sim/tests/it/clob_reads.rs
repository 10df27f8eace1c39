//! venue_b CLOB read routes over a real socket: every figure answered from the simulator's own book.

use std::time::Duration;

use crossbook_core::{Exchange, IntervalCode, Price};
use serde_json::{Value, json};

use crate::util::{client, get, get_ok, start};

fn micros(v: &Value) -> i64 {
    let s = v.as_str().unwrap_or_else(|| panic!("a decimal string: {v}"));
    s.parse::<Price>().unwrap_or_else(|_| panic!("a price: {s}")).micros()
}

async fn post(url: &str, body: Value) -> (u16, Value) {
    let resp = client().post(url).json(&body).send().await.expect("request sent");
    let status = resp.status().as_u16();
    (status, resp.json().await.expect("JSON body"))
}

#[tokio::test]
async fn clob_read_routes_answer_from_the_book() {
    let sim = start(17).await;
    sim.advance(Duration::from_secs(3));
    let clob = sim.venue_b_clob_url().to_string();
    let m = sim.with_model(|m| m.open_window_pair(IntervalCode::M15).unwrap().1.clone());
    let [up, down] = m.tokens.clone().unwrap();
    let book = sim.book(Exchange::VenueB, &up).unwrap();
    let (bid, ask) = (book.bids[0].price.micros(), book.asks[0].price.micros());

    let buy = get_ok(&format!("{clob}/price?token_id={up}&side=BUY")).await;
    assert_eq!(micros(&buy["price"]), bid, "BUY answers the best bid");
    let sell = get_ok(&format!("{clob}/price?token_id={up}&side=SELL")).await;
    assert_eq!(micros(&sell["price"]), ask, "SELL answers the best ask");

    let mid = get_ok(&format!("{clob}/midpoint?token_id={up}")).await;
    assert_eq!(
        micros(&mid["mid"]) * 2,
        bid + ask,
        "midpoint is exactly (bid + ask) / 2: {mid}"
    );
    let spread = get_ok(&format!("{clob}/spread?token_id={up}")).await;
    assert_eq!(micros(&spread["spread"]), ask - bid);

    // The second token is the mirror: its midpoint is 1 − the first's.
    let (status, mids) = post(
        &format!("{clob}/midpoints"),
        json!([{"token_id": up}, {"token_id": down}]),
    )
    .await;
    assert_eq!(status, 200, "{mids}");
    assert_eq!(micros(&mids[&up]) + micros(&mids[&down]), 1_000_000);
    let got = get_ok(&format!("{clob}/midpoints?token_ids={up},{down}")).await;
    assert_eq!(got, mids, "GET and POST answer alike");
    let (_, spreads) = post(&format!("{clob}/spreads"), json!([{"token_id": up}])).await;
    assert_eq!(micros(&spreads[&up]), ask - bid);

    let (status, prices) = post(
        &format!("{clob}/prices"),
        json!([{"token_id": up, "side": "BUY"}, {"token_id": up, "side": "SELL"}, {"token_id": down, "side": "BUY"}]),
    )
    .await;
    assert_eq!(status, 200, "{prices}");
    assert_eq!(micros(&prices[&up]["BUY"]), bid);
    assert_eq!(micros(&prices[&up]["SELL"]), ask);
    assert_eq!(micros(&prices[&down]["BUY"]), 1_000_000 - ask);
    let got = get_ok(&format!("{clob}/prices?token_ids={up},{down}&sides=BUY,BUY")).await;
    assert_eq!(micros(&got[&up]["BUY"]), bid);

    // A trade on the first token sets the last trade price of both.
    let trade = sim
        .inject_trade(
            Exchange::VenueB,
            &m.market_id,
            crossbook_core::Outcome::Yes,
            crossbook_core::TakerSide::Buy,
            crossbook_core::Amount::from_units(10),
        )
        .expect("trade");
    let last = get_ok(&format!("{clob}/last-trade-price?token_id={up}")).await;
    assert_eq!(micros(&last["price"]), trade.price.micros());
    assert_eq!(last["side"], "BUY");
    let (_, lasts) = post(
        &format!("{clob}/last-trades-prices"),
        json!([{"token_id": up}, {"token_id": down}]),
    )
    .await;
    assert_eq!(lasts.as_array().unwrap().len(), 2);
    assert_eq!(lasts[1]["token_id"], down.as_str());
    assert_eq!(micros(&lasts[1]["price"]), 1_000_000 - trade.price.micros());
    assert_eq!(lasts[1]["side"], "SELL", "buying the first token is selling its mirror");

    let tick = get_ok(&format!("{clob}/tick-size?token_id={up}")).await;
    assert!(tick["minimum_tick_size"].is_number(), "{tick}");
    assert_eq!(
        get_ok(&format!("{clob}/neg-risk?token_id={up}")).await,
        json!({"neg_risk": false})
    );
    assert_eq!(
        get_ok(&format!("{clob}/fee-rate?token_id={up}")).await,
        json!({"base_fee": 1000})
    );
    assert_eq!(
        get_ok(&format!("{clob}/fee-rate/{up}")).await,
        json!({"base_fee": 1000})
    );
    assert_eq!(get_ok(&format!("{clob}/ok")).await, json!("OK"));
    assert_eq!(get_ok(&format!("{clob}/")).await, json!("OK"));
    let now = sim.with_model(|m| m.now().secs());
    assert_eq!(get_ok(&format!("{clob}/time")).await, json!(now));

    // The market list pages through every venue_b market and ends with the venue's end marker.
    let mut cursor = String::new();
    let mut seen = 0;
    loop {
        let page = get_ok(&format!("{clob}/markets?next_cursor={cursor}")).await;
        seen += page["data"].as_array().unwrap().len();
        cursor = page["next_cursor"].as_str().unwrap().to_string();
        if cursor == "LTE=" {
            break;
        }
    }
    assert_eq!(seen, sim.markets(Exchange::VenueB).len());
    let one = get_ok(&format!("{clob}/markets/{}", m.market_id)).await;
    assert_eq!(one["condition_id"], m.market_id.as_str());
    assert_eq!(one["tokens"][0]["token_id"], up.as_str());
    assert_eq!(micros(&json!(one["tokens"][0]["price"].to_string())) * 2, bid + ask);
}

#[tokio::test]
async fn clob_read_routes_refuse_bad_input_like_the_venue() {
    let sim = start(17).await;
    let clob = sim.venue_b_clob_url().to_string();
    let up = sim.with_model(|m| m.open_window_pair(IntervalCode::M15).unwrap().1.tokens.clone().unwrap()[0].clone());
    for url in [
        format!("{clob}/midpoint"),
        format!("{clob}/midpoint?token_id=abc"),
        format!("{clob}/price?token_id={up}&side=UP"),
        format!("{clob}/price?token_id={up}"),
        format!("{clob}/tick-size?token_id=0x12"),
        format!("{clob}/markets?next_cursor=%%%"),
        format!("{clob}/prices?token_ids={up}&sides=BUY,SELL"),
    ] {
        let (status, body) = get(&url).await;
        assert_eq!(status, 400, "{url}: {body}");
        assert!(body["error"].is_string(), "{url}: {body}");
    }
    let (status, body) = get(&format!("{clob}/spread?token_id=123")).await;
    assert_eq!(status, 404, "{body}");
    assert_eq!(body["error"], "No orderbook exists for the requested token id");
    let (status, _) = post(&format!("{clob}/midpoints"), json!({"token_id": up})).await;
    assert_eq!(status, 400, "a body that is not an array");
    let many: Vec<Value> = (0..501).map(|_| json!({"token_id": up})).collect();
    let (status, _) = post(&format!("{clob}/last-trades-prices"), Value::Array(many)).await;
    assert_eq!(status, 400, "more than 500 tokens");
    let (status, _) = get(&format!("{clob}/markets/0xdead")).await;
    assert_eq!(status, 404);
}
