//! venue_a REST: shapes against the samples, filters, cursor paging, errors and REST faults.

use std::{collections::BTreeSet, time::Duration};

use crossbook_core::{Exchange, IntervalCode, Price};
use serde_json::Value;

use crate::util::{assert_shape, get, get_ok, sample, start};

/// Fields that are null before settlement or on non-window markets and set otherwise.
const NULLABLE: &[&str] = &["settlement_value_dollars", "settlement_ts", "floor_strike"];

#[tokio::test]
async fn market_event_and_series_match_the_documented_shapes() {
    let sim = start(1).await;
    sim.advance(Duration::from_secs(5));
    let base = sim.venue_a_rest_url();
    let (ticker, _) = sim.with_model(|m| {
        let (a, b) = m.open_window_pair(IntervalCode::M15).unwrap();
        (a.market_id.clone(), b.market_id.clone())
    });
    assert_eq!(ticker, "KXBTC15M-26MAY120715-15");
    let body = get_ok(&format!("{base}/markets/{ticker}")).await;
    let market = &body["market"];
    assert_shape("market", &sample("kalshi_market.json")["market"], market, NULLABLE);
    assert_eq!(market["status"], "active");
    assert_eq!(market["event_ticker"], "KXBTC15M-26MAY120715");
    assert_eq!(market["open_time"], "2026-05-12T11:00:00Z");
    assert_eq!(market["close_time"], "2026-05-12T11:15:00Z");
    assert!(market["floor_strike"].is_number());
    assert!(market["yes_sub_title"].as_str().unwrap().starts_with("Target Price: $"));
    for f in [
        "yes_bid_dollars",
        "yes_ask_dollars",
        "no_bid_dollars",
        "no_ask_dollars",
        "last_price_dollars",
    ] {
        let s = market[f].as_str().unwrap();
        assert!(
            s.len() == 6 && s.as_bytes()[1] == b'.',
            "{f} = {s:?} is a 4-decimal dollar string"
        );
    }
    // Top of book agrees with the book: YES ask = 1 − best NO bid.
    let book = sim.book(Exchange::VenueA, &ticker).unwrap();
    assert_eq!(market["yes_bid_dollars"], book.bids[0].price.to_string4());
    assert_eq!(
        market["yes_ask_dollars"],
        book.no_bids[0].price.complement().to_string4()
    );
    assert!(
        market["volume_fp"]
            .as_str()
            .unwrap()
            .ends_with(|c: char| c.is_ascii_digit())
    );

    let body = get_ok(&format!("{base}/events/KXBTC15M-26MAY120715?with_nested_markets=true")).await;
    assert_eq!(body["event"]["series_ticker"], "KXBTC15M");
    assert_eq!(body["event"]["markets"][0]["ticker"], ticker.as_str());
    assert_eq!(body["markets"][0]["ticker"], ticker.as_str());
    assert!(body["event"]["mutually_exclusive"].is_boolean());

    let body = get_ok(&format!("{base}/series/KXBTC15M")).await;
    assert_eq!(body["series"]["ticker"], "KXBTC15M");
    assert!(body["series"]["fee_multiplier"].is_number());
    let body = get_ok(&format!("{base}/series")).await;
    let tickers: BTreeSet<&str> = body["series"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["ticker"].as_str().unwrap())
        .collect();
    for s in [
        "KXBTC5M",
        "KXBTC15M",
        "KXBTC1H",
        "KXBTC24H",
        "KXBTCW",
        "KXNBAGAME",
        "KXNHLGAME",
        "KXFEDDECISION",
    ] {
        assert!(tickers.contains(s), "{s} listed");
    }
    assert_eq!(get(&format!("{base}/markets/KXNOPE-1")).await.0, 404);
    assert_eq!(get(&format!("{base}/events/KXNOPE-1")).await.0, 404);
}

#[tokio::test]
async fn markets_and_events_page_with_cursors_and_filter() {
    let sim = start(2).await;
    let base = sim.venue_a_rest_url();
    let all = get_ok(&format!("{base}/markets?limit=1000")).await;
    assert_eq!(all["cursor"], "");
    let all: Vec<String> = all["markets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["ticker"].as_str().unwrap().to_string())
        .collect();
    assert!(all.len() > 10);
    let mut paged = Vec::new();
    let mut cursor = String::new();
    for _ in 0..100 {
        let body = get_ok(&format!("{base}/markets?limit=3&cursor={cursor}")).await;
        let page = body["markets"].as_array().unwrap();
        assert!(page.len() <= 3);
        paged.extend(page.iter().map(|m| m["ticker"].as_str().unwrap().to_string()));
        cursor = body["cursor"].as_str().unwrap().to_string();
        if cursor.is_empty() {
            break;
        }
    }
    assert_eq!(paged, all, "cursor pages cover the listing once, in order");

    let open = get_ok(&format!("{base}/markets?series_ticker=KXBTC15M&status=open")).await;
    let open = open["markets"].as_array().unwrap();
    assert_eq!(open.len(), 1);
    assert_eq!(open[0]["status"], "active");
    let next = get_ok(&format!("{base}/markets?series_ticker=KXBTC15M&status=unopened")).await;
    assert_eq!(next["markets"][0]["status"], "initialized");
    assert_eq!(next["markets"][0]["open_time"], open[0]["close_time"]);

    let events = get_ok(&format!(
        "{base}/events?series_ticker=KXBTC1H&status=open&with_nested_markets=true"
    ))
    .await;
    let events = events["events"].as_array().unwrap();
    assert_eq!(events.len(), 1);
    assert_eq!(events[0]["markets"].as_array().unwrap().len(), 1);
    let games = get_ok(&format!("{base}/events?series_ticker=KXNBAGAME&limit=1")).await;
    assert_eq!(games["events"].as_array().unwrap().len(), 1);
    assert_ne!(games["cursor"], "", "more games follow");

    for bad in ["limit=0", "limit=1001", "status=active", "cursor=zz"] {
        assert_eq!(get(&format!("{base}/markets?{bad}")).await.0, 400, "{bad}");
    }
    assert_eq!(get(&format!("{base}/events?limit=201")).await.0, 400);
}

#[tokio::test]
async fn orderbook_is_bids_only_ascending_and_matches_the_model() {
    let sim = start(3).await;
    sim.advance(Duration::from_secs(2));
    let base = sim.venue_a_rest_url();
    let ticker = sim.with_model(|m| m.open_window_pair(IntervalCode::H1).unwrap().0.market_id.clone());
    let body = get_ok(&format!("{base}/markets/{ticker}/orderbook")).await;
    assert_shape("orderbook", &sample("kalshi_orderbook.json"), &body, &[]);
    let book = sim.book(Exchange::VenueA, &ticker).unwrap();
    let ladder = |v: &Value| -> Vec<(String, String)> {
        v.as_array()
            .unwrap()
            .iter()
            .map(|l| (l[0].as_str().unwrap().to_string(), l[1].as_str().unwrap().to_string()))
            .collect()
    };
    let yes = ladder(&body["orderbook_fp"]["yes_dollars"]);
    let no = ladder(&body["orderbook_fp"]["no_dollars"]);
    // Best first in the model; ascending with the best last on the wire.
    let expect = |levels: &[crossbook_core::Level]| -> Vec<(String, String)> {
        let size = |m: i64| format!("{}.{:02}", m / 1_000_000, m / 10_000 % 100);
        levels
            .iter()
            .rev()
            .map(|l| (l.price.to_string4(), size(l.size.micros())))
            .collect()
    };
    assert_eq!(yes, expect(&book.bids));
    assert_eq!(no, expect(&book.no_bids));
    assert!(yes.windows(2).all(|w| w[0].0 < w[1].0), "ascending");
    let best_yes: Price = yes.last().unwrap().0.parse().unwrap();
    let best_no: Price = no.last().unwrap().0.parse().unwrap();
    assert!(
        best_yes.micros() + best_no.micros() < 1_000_000,
        "not crossed within the venue"
    );

    let top = get_ok(&format!("{base}/markets/{ticker}/orderbook?depth=1")).await;
    assert_eq!(top["orderbook_fp"]["yes_dollars"].as_array().unwrap().len(), 1);
    assert_eq!(top["orderbook_fp"]["yes_dollars"][0][0], yes.last().unwrap().0.as_str());
    let unknown = get_ok(&format!("{base}/markets/KXNOPE-1/orderbook")).await;
    assert_eq!(
        unknown,
        serde_json::json!({"orderbook_fp": {"yes_dollars": [], "no_dollars": []}})
    );
    let batch = get_ok(&format!("{base}/markets/orderbooks?tickers={ticker}&tickers=KXNOPE-1")).await;
    assert_eq!(batch["orderbooks"][0]["orderbook_fp"], body["orderbook_fp"]);
}

#[tokio::test]
async fn trades_page_newest_first() {
    let sim = start(4).await;
    sim.advance(Duration::from_secs(90));
    let base = sim.venue_a_rest_url();
    let total = sim.trades(Exchange::VenueA).len();
    assert!(total > 5, "{total} trades in 90 s");
    let first = get_ok(&format!("{base}/markets/trades?limit=5")).await;
    assert_shape("trades", &sample("kalshi_trades.json"), &first, &[]);
    let mut seen = Vec::new();
    let mut cursor = String::new();
    loop {
        let body = get_ok(&format!("{base}/markets/trades?limit=7&cursor={cursor}")).await;
        seen.extend(
            body["trades"]
                .as_array()
                .unwrap()
                .iter()
                .map(|t| t["trade_id"].as_str().unwrap().to_string()),
        );
        cursor = body["cursor"].as_str().unwrap().to_string();
        if cursor.is_empty() {
            break;
        }
    }
    let expected: Vec<String> = sim.trades(Exchange::VenueA).into_iter().map(|t| t.trade_id).collect();
    assert_eq!(seen, expected);
    let t = &first["trades"][0];
    let yes: Price = t["yes_price_dollars"].as_str().unwrap().parse().unwrap();
    let no: Price = t["no_price_dollars"].as_str().unwrap().parse().unwrap();
    assert_eq!(yes.micros() + no.micros(), 1_000_000);
    let ticker = t["ticker"].as_str().unwrap();
    let only = get_ok(&format!("{base}/markets/trades?ticker={ticker}&limit=1000")).await;
    assert!(only["trades"].as_array().unwrap().iter().all(|x| x["ticker"] == ticker));
}

#[tokio::test]
async fn armed_rest_failures_answer_then_clear() {
    let sim = start(5).await;
    let base = sim.venue_a_rest_url();
    sim.faults().fail_rest(Exchange::VenueA, 429, 2);
    let (s1, b1) = get(&format!("{base}/markets")).await;
    assert_eq!((s1, b1), (429, serde_json::json!({"error": "too many requests"})));
    assert_eq!(get(&format!("{base}/series")).await.0, 429);
    assert_eq!(get(&format!("{base}/series")).await.0, 200);
    sim.faults().fail_rest(Exchange::VenueA, 500, 1);
    assert_eq!(get(&format!("{base}/series")).await.0, 500);
    // The other venue is unaffected.
    sim.faults().fail_rest(Exchange::VenueA, 429, 1);
    assert_eq!(get(&format!("{}/events", sim.venue_b_gamma_url())).await.0, 200);
}
