//! Model-level guarantees (contracts §11), driven in model time: no test waits for the clock.

use crossbook_core::{Amount, Exchange, IntervalCode, Outcome, TakerSide, Timestamp};

use super::{Model, STEP_MS, types::Phase};

/// 2026-05-12T11:07:31.412Z, inside a 15-minute window.
const T0: i64 = 1_778_584_051_412;

fn at(ms: i64) -> Timestamp {
    Timestamp::from_millis(T0 + ms)
}

/// Steps `model` every [`STEP_MS`] from its current time up to `until`, calling `each` after every step.
fn run(model: &mut Model, until: Timestamp, mut each: impl FnMut(&Model)) {
    let mut t = model.now().millis();
    while t < until.millis() {
        t += STEP_MS;
        model.step(Timestamp::from_millis(t));
        each(model);
    }
}

/// Best fee-adjusted net edge (in 1e-5 dollars) over every open BTC window pair, using the service's fee
/// rules: venue_a `ceil(7 p (1 − p))` cents per contract, venue_b `round(0.07 p (1 − p), 5)` dollars (min
/// 0.00001). Integer arithmetic on whole-cent prices.
fn best_net_e5(model: &Model) -> Option<i64> {
    let fee_a = |p: i64| (7 * p * (100 - p) + 9_999) / 10_000 * 1_000;
    let fee_b = |p: i64| ((7 * p * (100 - p) + 5) / 10).max(1);
    let mut best = None;
    for code in IntervalCode::ALL {
        let Some((a, b)) = model.open_window_pair(code) else {
            continue;
        };
        let (Some(ba), Some(bb)) = (
            model.yes_book(Exchange::VenueA, &a.market_id),
            model.yes_book(Exchange::VenueB, &b.market_id),
        ) else {
            continue;
        };
        let legs = [
            // YES on venue_a (its YES ask), NO on venue_b (Down ask = 1 − Up bid).
            (ba.best_ask().map(|l| l.0), bb.best_bid().map(|l| 100 - l.0), true),
            // YES on venue_b (Up ask), NO on venue_a (NO ask = 1 − YES bid).
            (bb.best_ask().map(|l| l.0), ba.best_bid().map(|l| 100 - l.0), false),
        ];
        for (yes, no, yes_on_a) in legs {
            let (Some(y), Some(n)) = (yes, no) else { continue };
            let gross = (100 - y - n) * 1_000;
            let fees = if yes_on_a {
                fee_a(y) + fee_b(n)
            } else {
                fee_b(y) + fee_a(n)
            };
            let net = gross - fees;
            best = Some(best.map_or(net, |b: i64| b.max(net)));
        }
    }
    best
}

#[test]
fn same_seed_same_world() {
    let mut a = Model::new(42, at(0));
    let mut b = Model::new(42, at(0));
    run(&mut a, at(30_000), |_| {});
    run(&mut b, at(30_000), |_| {});
    let ids = |m: &Model, ex| m.markets(ex).map(|m| m.market_id.clone()).collect::<Vec<_>>();
    for ex in Exchange::ALL {
        assert_eq!(ids(&a, ex), ids(&b, ex));
        assert!(a.markets(ex).eq(b.markets(ex)));
        assert_eq!(a.trades(ex), b.trades(ex));
        for m in a.markets(ex) {
            assert_eq!(a.yes_book(ex, &m.market_id), b.yes_book(ex, &m.market_id));
        }
    }
    // Another seed lists the same products under different ids.
    let c = Model::new(43, at(0));
    assert_ne!(ids(&a, Exchange::VenueB), ids(&c, Exchange::VenueB));
    assert_eq!(ids(&a, Exchange::VenueA).len(), ids(&c, Exchange::VenueA).len());
    // A model started later agrees on the ids of the windows both list.
    let late = Model::new(42, at(60_000));
    let (a15, b15) = a.open_window_pair(IntervalCode::M15).unwrap();
    assert!(late.market(Exchange::VenueA, &a15.market_id).is_some());
    assert_eq!(
        late.market(Exchange::VenueB, &b15.market_id).unwrap().tokens,
        b15.tokens
    );
}

#[test]
fn every_interval_on_both_venues_with_small_skew() {
    let mut model = Model::new(7, at(0));
    run(&mut model, at(1_000), |_| {});
    for code in IntervalCode::ALL {
        let (a, b) = model
            .open_window_pair(code)
            .unwrap_or_else(|| panic!("{code} open on both venues"));
        let skew_start = (a.open_time.millis() - b.open_time.millis()).abs();
        let skew_end = (a.close_time.millis() - b.close_time.millis()).abs();
        assert!(
            skew_start <= 5_000 && skew_end <= 5_000,
            "{code}: {skew_start} {skew_end}"
        );
        assert!(skew_start > 0 && skew_end > 0, "{code}: the venues are skewed");
        // The next window is listed too.
        for (ex, m) in [(Exchange::VenueA, a), (Exchange::VenueB, b)] {
            let next = model
                .markets(ex)
                .find(|n| n.interval == Some(code) && n.phase == Phase::Upcoming && n.series_id == m.series_id)
                .unwrap_or_else(|| panic!("{code} next window on {ex}"));
            assert_eq!(next.open_time, m.close_time);
            assert!(
                model.yes_book(ex, &m.market_id).is_some_and(|b| !b.is_empty()),
                "{code} {ex} book"
            );
        }
        assert!(a.market_id.starts_with(super::venue_a_btc_series(code)));
        assert_eq!(b.series_id, super::venue_b_btc_series(code));
    }
    let (a, b) = model.open_window_pair(IntervalCode::M15).unwrap();
    assert_eq!(a.market_id, "KXBTC15M-26MAY120715-15");
    assert!(b.slug.as_deref().unwrap().starts_with("btc-updown-15m-17785836"));
    let tokens = b.tokens.as_ref().unwrap();
    assert!(
        tokens
            .iter()
            .all(|t| t.len() == 78 && t.bytes().all(|c| c.is_ascii_digit()))
    );
    assert!(b.market_id.starts_with("0x") && b.market_id.len() == 66);
    let (_, h1) = model.open_window_pair(IntervalCode::H1).unwrap();
    assert_eq!(
        h1.slug.as_deref(),
        Some("bitcoin-up-or-down-may-12-2026-7am-et"),
        "{:?}",
        h1.open_time
    );
    let (_, d1) = model.open_window_pair(IntervalCode::H24).unwrap();
    assert_eq!(d1.slug.as_deref(), Some("bitcoin-up-or-down-on-may-12-2026"));
}

#[test]
fn matched_games_and_single_venue_markets_exist() {
    let model = Model::new(3, at(0));
    let games_a: Vec<_> = model
        .events(Exchange::VenueA)
        .filter(|e| e.category == "Sports")
        .collect();
    let games_b: Vec<_> = model
        .events(Exchange::VenueB)
        .filter(|e| e.category == "Sports")
        .collect();
    assert!(games_a.len() >= 2 && games_a.len() == games_b.len());
    for ea in &games_a {
        // KXNBAGAME-26MAY12DENAUS ↔ nba-den-aus-2026-05-12: same teams, same ET date.
        let code = ea.event_id.rsplit('-').next().unwrap();
        let (away, home) = code[7..].split_at(3);
        let twin = games_b.iter().find(|eb| {
            let slug = eb.slug.as_deref().unwrap();
            slug.contains(&format!("-{}-{}-", away.to_lowercase(), home.to_lowercase()))
        });
        let twin = twin.unwrap_or_else(|| panic!("{} has a twin", ea.event_id));
        assert_eq!(ea.start, twin.start);
        assert_eq!(ea.markets.len(), 2);
        assert_ne!(ea.title, twin.title, "naming differs per venue");
    }
    for ex in Exchange::ALL {
        assert!(model.markets(ex).any(|m| m.category == crossbook_core::Category::Other));
    }
    assert!(
        model
            .markets(Exchange::VenueB)
            .any(|m| m.series_id == "eth-up-or-down-15m")
    );
    for ex in Exchange::ALL {
        for m in model.markets(ex).filter(|m| m.trading()) {
            let book = model.yes_book(ex, &m.market_id).unwrap();
            assert!(!book.is_empty(), "{} has a book", m.market_id);
            let (bid, ask) = (book.best_bid().unwrap().0, book.best_ask().unwrap().0);
            assert!(bid < ask, "{} not crossed within the venue", m.market_id);
        }
    }
}

#[test]
fn a_fee_adjusted_opportunity_appears_within_a_minute() {
    for seed in [1, 2, 42, 1234] {
        let mut model = Model::new(seed, at(0));
        let mut first = None;
        run(&mut model, at(60_000), |m| {
            if first.is_none() && best_net_e5(m).is_some_and(|n| n >= 1_000) {
                first = Some(m.now());
            }
        });
        assert!(first.is_some(), "seed {seed}: net ≥ 1 cent within 60 s");
    }
}

#[test]
fn a_whale_trades_every_minute() {
    let mut model = Model::new(9, at(0));
    run(&mut model, at(5 * 60_000), |_| {});
    let mut whales: Vec<i64> = Exchange::ALL
        .iter()
        .flat_map(|ex| model.trades(*ex).iter())
        .filter(|t| t.notional() >= Amount::from_units(1_000))
        .map(|t| t.at.millis())
        .collect();
    whales.sort_unstable();
    assert!(
        whales.first().is_some_and(|t| *t <= T0 + 60_000),
        "first whale within a minute"
    );
    for w in whales.windows(2) {
        assert!(w[1] - w[0] <= 60_000, "gap between whales {} ms", w[1] - w[0]);
    }
    assert!(whales.last().is_some_and(|t| *t >= T0 + 4 * 60_000));
    for ex in Exchange::ALL {
        assert!(
            model
                .trades(ex)
                .iter()
                .any(|t| t.notional() >= Amount::from_units(1_000)),
            "{ex} has whales"
        );
    }
    // Heavy tail: most trades are small.
    let all: Vec<_> = model.trades(Exchange::VenueA).iter().collect();
    let small = all.iter().filter(|t| t.size <= Amount::from_units(30)).count();
    assert!(small * 2 > all.len(), "{small} of {}", all.len());
}

#[test]
fn windows_close_settle_and_roll() {
    let mut model = Model::new(5, at(0));
    let (a, b) = model.open_window_pair(IntervalCode::M5).unwrap();
    let (a_id, b_id, end) = (a.market_id.clone(), b.market_id.clone(), a.close_time);
    run(&mut model, Timestamp::from_millis(end.millis() + 2 * 60_000), |_| {});
    for (ex, id) in [(Exchange::VenueA, &a_id), (Exchange::VenueB, &b_id)] {
        let m = model.market(ex, id).unwrap();
        assert_eq!(m.phase, Phase::Settled, "{id}");
        assert!(m.result.is_some() && m.settled_at.is_some() && m.final_cents.is_some());
        assert!(model.yes_book(ex, id).is_none(), "no book after close");
    }
    let (a2, _) = model.open_window_pair(IntervalCode::M5).unwrap();
    assert_ne!(a2.market_id, a_id, "a new window opened");
    // Much later the old window is pruned, and ids stay unique.
    run(&mut model, Timestamp::from_millis(end.millis() + 40 * 60_000), |_| {});
    assert!(model.market(Exchange::VenueA, &a_id).is_none());
    assert!(model.markets(Exchange::VenueA).count() < 60);
}

#[test]
fn injected_trades_and_forced_crosses() {
    let mut model = Model::new(11, at(0));
    let (a, _) = model.open_window_pair(IntervalCode::H1).unwrap();
    let ticker = a.market_id.clone();
    let ask = model.yes_book(Exchange::VenueA, &ticker).unwrap().best_ask().unwrap();
    let ups = model
        .inject_trade(
            Exchange::VenueA,
            &ticker,
            Outcome::Yes,
            TakerSide::Buy,
            Amount::from_units(5),
        )
        .unwrap();
    let trade = model.trades(Exchange::VenueA).front().unwrap();
    assert_eq!(trade.price.micros(), ask.0 * 10_000);
    assert_eq!(trade.size, Amount::from_units(5));
    assert_eq!(ups.len(), 1);
    let (ta, tb) = model.force_cross(IntervalCode::W1, Exchange::VenueB, 30_000).unwrap();
    run(&mut model, at(1_000), |_| {});
    let ba = model.yes_book(Exchange::VenueA, &ta).unwrap();
    let bb = model.yes_book(Exchange::VenueB, &tb).unwrap();
    // YES on venue_b and NO on venue_a cost 94 cents.
    assert_eq!(bb.best_ask().unwrap().0 + (100 - ba.best_bid().unwrap().0), 94);
    assert!(best_net_e5(&model).unwrap() >= 1_000);
}
