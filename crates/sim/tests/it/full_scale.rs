//! The full scale over real sockets: catalog paging at a venue's size, matches as several `price_change`
//! frames with one timestamp, and the platform-wide `new_market` broadcast.

use std::{collections::BTreeMap, time::Duration};

use crossbook_core::{Exchange, Timestamp};
use crossbook_sim::{SimClock, SimConfig, SimHandle, SimRates, SimScale, Simulator};
use serde_json::{Value, json};

use crate::util::{T0_MS, connect_b, get, get_ok, next_json, send};

async fn start_full(rates: SimRates) -> SimHandle {
    let cfg = SimConfig {
        scale: SimScale::Full,
        rates,
        ..SimConfig::new(
            5,
            SimClock::Manual {
                start: Timestamp::from_millis(T0_MS),
            },
        )
    };
    Simulator::start(cfg).await.expect("simulator starts")
}

fn slow() -> SimRates {
    SimRates {
        venue_a_per_sec: 100,
        venue_b_per_sec: 2_000,
        burst_multiple: 1,
        match_percent: 100,
        ..SimRates::default()
    }
}

#[tokio::test]
async fn catalog_pages_to_the_end_at_full_size() {
    let sim = start_full(slow()).await;
    let rest = sim.venue_a_rest_url().to_string();
    let mut cursor = String::new();
    let mut seen = 0;
    loop {
        let page = get_ok(&format!("{rest}/markets?limit=1000&cursor={cursor}")).await;
        let n = page["markets"].as_array().unwrap().len();
        assert!(n <= 1000);
        seen += n;
        cursor = page["cursor"].as_str().unwrap().to_string();
        if cursor.is_empty() {
            break;
        }
    }
    assert_eq!(seen, sim.markets(Exchange::VenueA).len());
    assert!(seen >= 5_000, "venue_a lists {seen} markets");
    let (status, _) = get(&format!("{rest}/markets?limit=1001")).await;
    assert_eq!(status, 400, "venue_a pages at most 1,000 markets");

    let gamma = sim.venue_b_gamma_url().to_string();
    let mut after = String::new();
    let mut seen = 0;
    loop {
        let page = get_ok(&format!("{gamma}/markets/keyset?limit=100&after_cursor={after}")).await;
        seen += page["markets"].as_array().unwrap().len();
        match page["next_cursor"].as_str() {
            Some(c) => after = c.to_string(),
            None => break,
        }
    }
    assert_eq!(seen, sim.markets(Exchange::VenueB).len());
    assert!(seen >= 10_000, "venue_b lists {seen} markets");
    let first = get_ok(&format!("{gamma}/markets?limit=500&offset=2000")).await;
    assert_eq!(
        first.as_array().unwrap().len(),
        500,
        "offset paging answers up to offset 2,000"
    );
}

#[tokio::test]
async fn a_match_is_several_price_change_frames_with_one_timestamp_and_the_final_top() {
    let sim = start_full(slow()).await;
    // 250 bulk markets, both tokens: 500 assets, the venue's per-connection figure.
    let tokens: Vec<String> = sim.with_model(|m| {
        m.markets(Exchange::VenueB)
            .filter(|mk| mk.trading() && mk.series_id.starts_with("long-"))
            .take(250)
            .flat_map(|mk| mk.tokens.clone().unwrap())
            .collect()
    });
    let mut ws = connect_b(&sim).await;
    send(
        &mut ws,
        json!({"assets_ids": tokens, "type": "market", "initial_dump": true}),
    )
    .await;
    let dump = next_json(&mut ws).await;
    assert_eq!(
        dump.as_array().map(Vec::len),
        Some(500),
        "the initial dump: one book per asset"
    );
    sim.advance(Duration::from_secs(2));
    // (market, timestamp) → the price_change frames sent for it, until one match shows up (each read is
    // bounded by the deadline).
    let mut groups: BTreeMap<(String, String), Vec<Value>> = BTreeMap::new();
    let found = loop {
        let v = next_json(&mut ws).await;
        if v["event_type"] != "price_change" {
            continue;
        }
        let key = (
            v["market"].as_str().unwrap().to_string(),
            v["timestamp"].as_str().unwrap().to_string(),
        );
        let group = groups.entry(key).or_default();
        group.push(v);
        if group.len() >= 2 {
            // The rest of the match is in the next frames of the same step.
            let g = group.clone();
            break g;
        }
    };
    for asset in 0..found[0]["price_changes"].as_array().unwrap().len() {
        let top = |f: &Value| {
            let item = &f["price_changes"][asset];
            (
                item["asset_id"].clone(),
                item["best_bid"].clone(),
                item["best_ask"].clone(),
            )
        };
        assert!(
            found.iter().all(|f| top(f) == top(&found[0])),
            "every frame of the match carries the top after the whole match: {found:?}"
        );
    }
    let item = &found[0]["price_changes"][0];
    let price = |k: &str| item[k].as_str().unwrap().parse::<crossbook_core::Price>().unwrap();
    assert!(
        price("best_bid") < price("best_ask"),
        "the top after a match is not crossed: {item}"
    );
}

#[tokio::test]
async fn new_markets_are_broadcast_to_every_custom_session() {
    let sim = start_full(SimRates {
        venue_a_per_sec: 1,
        venue_b_per_sec: 1,
        ..slow()
    })
    .await;
    let token = sim.with_model(|m| {
        m.markets(Exchange::VenueB)
            .find(|mk| mk.trading() && mk.series_id.starts_with("long-"))
            .and_then(|mk| mk.tokens.clone())
            .unwrap()[0]
            .clone()
    });
    let mut ws = connect_b(&sim).await;
    send(
        &mut ws,
        json!({"assets_ids": [token], "type": "market", "initial_dump": true, "custom_feature_enabled": true}),
    )
    .await;
    next_json(&mut ws).await;
    // The next 5-minute windows are listed a day ahead as each boundary passes (11:10 UTC, 149 s after start),
    // and the session may fall at most 1,024 steps behind at this scale.
    sim.advance(Duration::from_secs(155));
    let frame = loop {
        let v = next_json(&mut ws).await;
        if v["event_type"] == "new_market" {
            break v;
        }
    };
    let cid = frame["market"].as_str().unwrap().to_string();
    let listed = sim
        .with_model(|m| m.market(Exchange::VenueB, &cid).cloned())
        .expect("a listed market");
    assert_eq!(frame["assets_ids"], json!(listed.tokens.unwrap()));
    assert!(
        !frame["assets_ids"].as_array().unwrap().contains(&json!(token)),
        "a market nobody subscribed to"
    );
    assert_eq!(frame["slug"], json!(listed.slug));
}
