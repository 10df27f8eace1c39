use std::collections::BTreeMap;

use super::*;
use crossbook_core::{Category, Price};

use crate::model::{book::YesSide, types::Top};

/// 2026-05-12T11:07:31.412Z.
const T0: i64 = 1_778_584_051_412;

fn full(rates: SimRates) -> Model {
    Model::with_scale(7, Timestamp::from_millis(T0), SimScale::Full, rates)
}

/// Rates small enough to step a debug build through minutes quickly, with a burst inside the run.
fn small_rates() -> SimRates {
    SimRates {
        venue_a_per_sec: 200,
        venue_b_per_sec: 1_000,
        burst_multiple: 10,
        burst_secs: 5,
        burst_every_secs: 60,
        ..SimRates::default()
    }
}

/// The generator's changes in `updates`: bulk-market book updates of one level (opening and closing a
/// book changes every level at once).
fn generated<'a>(m: &'a Model, updates: &'a [Update], ex: Exchange) -> impl Iterator<Item = &'a Update> {
    updates.iter().filter(move |u| match u {
        Update::Book {
            exchange,
            market_id,
            changes,
            ..
        } => *exchange == ex && changes.len() == 1 && m.market(ex, market_id).is_some_and(SimMarket::is_bulk),
        _ => false,
    })
}

#[test]
fn full_scale_lists_a_venue_sized_catalog_deterministically() {
    let m = full(SimRates::default());
    let a = m.markets(Exchange::VenueA).count();
    let tokens = m.markets(Exchange::VenueB).filter_map(|m| m.tokens.as_ref()).count() * 2;
    assert!(a >= 5_000, "venue_a markets: {a}");
    assert!(tokens >= 20_000, "venue_b tokens: {tokens}");
    let b: Vec<&SimMarket> = m.markets(Exchange::VenueB).filter(|m| m.is_bulk()).collect();
    for code in [IntervalCode::M5, IntervalCode::M15, IntervalCode::H1] {
        let n = b.iter().filter(|m| m.interval == Some(code)).count();
        // A day of windows pre-listed for each of four coins.
        assert!(n >= 4 * (86_400 / code.seconds() as usize), "{code}: {n} windows");
    }
    assert!(b.iter().filter(|m| m.category == Category::Sports).count() >= 500);
    let far = T0 + 30 * 86_400_000;
    assert!(b.iter().filter(|m| m.close_time.millis() >= far).count() >= 8_000);
    assert!(
        b.iter().filter(|m| m.protocol_v2()).count() >= 1_000,
        "a share of V2 markets"
    );
    // venue_b's BTC windows quote in 0.001 at this scale; the demo scale keeps 0.01 inside the range.
    let btc: Vec<&SimMarket> = m
        .markets(Exchange::VenueB)
        .filter(|m| m.series_id.starts_with("btc-up-or-down") && m.trading())
        .collect();
    assert!(!btc.is_empty() && btc.iter().all(|m| m.tick == Price::from_micros(1_000)));
    // Same seed, same catalog.
    let again = full(SimRates::default());
    let ids = |m: &Model| {
        m.markets(Exchange::VenueB)
            .map(|m| m.market_id.clone())
            .collect::<Vec<_>>()
    };
    assert_eq!(ids(&m), ids(&again));
    // Every bulk book that trades is filled and uncrossed.
    for mk in b.iter().filter(|m| m.trading()) {
        let book = m.yes_book(Exchange::VenueB, &mk.market_id).expect("book");
        assert!(book.best_bid().unwrap().0 < book.best_ask().unwrap().0);
    }
}

#[test]
fn demo_scale_is_the_demo_model() {
    let now = Timestamp::from_millis(T0);
    let mut a = Model::new(7, now);
    let mut b = Model::with_scale(7, now, SimScale::Demo, SimRates::default());
    assert_eq!(b.scale(), SimScale::Demo);
    for i in 1..=50 {
        let t = Timestamp::from_millis(T0 + i * 200);
        assert_eq!(a.step(t), b.step(t));
    }
    assert_eq!(b.generated_changes(Exchange::VenueB), 0);
}

#[test]
fn change_rates_hold_their_average_and_burst_to_the_multiple() {
    let rates = small_rates();
    let mut m = full(rates);
    let secs = 120;
    let mut per_sec: [BTreeMap<i64, u64>; 2] = [BTreeMap::new(), BTreeMap::new()];
    let mut per_market: BTreeMap<(Exchange, String), u64> = BTreeMap::new();
    for i in 1..=secs * 5 {
        let t = T0 + i * 200;
        let out = m.step(Timestamp::from_millis(t));
        for ex in Exchange::ALL {
            let n = generated(&m, &out, ex).count() as u64;
            *per_sec[ex_index(ex)].entry((t - 1) / 1000).or_default() += n;
            // Every level change of a bulk book counts: the generator's, a book opening, trades.
            for u in &out {
                let (id, n) = match u {
                    Update::Book {
                        exchange,
                        market_id,
                        changes,
                        ..
                    } if *exchange == ex => (market_id, changes.len() as u64),
                    Update::Trade { trade, .. } if trade.exchange == ex => (&trade.market_id, 1),
                    _ => continue,
                };
                if m.market(ex, id).is_some_and(SimMarket::is_bulk) {
                    *per_market.entry((ex, id.clone())).or_default() += n;
                }
            }
        }
    }
    for ((ex, id), n) in &per_market {
        assert_eq!(m.generated_changes_of(*ex, id), *n, "{ex} {id}: the per-book counter");
    }
    for ex in Exchange::ALL {
        let avg = rates.per_sec(ex);
        let total: u64 = per_sec[ex_index(ex)].values().sum();
        let want = avg * secs as u64;
        assert!(
            total.abs_diff(want) * 100 <= want,
            "{ex}: {total} changes in {secs} s, want {want} ± 1 %"
        );
        assert_eq!(
            m.generated_changes(ex),
            total,
            "{ex}: the counter matches what was emitted"
        );
        let bulk = m.bulk().unwrap();
        let (mut burst, mut calm) = (Vec::new(), Vec::new());
        let buckets = &per_sec[ex_index(ex)];
        // The first and last seconds are partly outside the run.
        for (s, n) in buckets.iter().skip(1).take(buckets.len() - 2) {
            let whole = (0..1000).step_by(100).all(|ms| bulk.in_burst(ex, s * 1000 + ms));
            let none = (0..1000).step_by(100).all(|ms| !bulk.in_burst(ex, s * 1000 + ms));
            if whole {
                burst.push(*n);
            } else if none {
                calm.push(*n);
            }
        }
        assert!(
            burst.len() >= 6,
            "{ex}: two periods hold at least 6 whole burst seconds"
        );
        for n in &burst {
            assert!(
                n.abs_diff(avg * 10) * 50 <= avg * 10,
                "{ex}: a burst second has {n}, want {}",
                avg * 10
            );
        }
        let base = avg * (60 - 50) / (60 - 5);
        for n in &calm {
            assert!(
                n.abs_diff(base) <= base / 20 + 2,
                "{ex}: a calm second has {n}, want {base}"
            );
        }
    }
}

#[test]
fn matches_are_several_level_updates_with_the_top_after_the_whole_match() {
    let rates = SimRates {
        match_percent: 100,
        ..small_rates()
    };
    let mut m = full(rates);
    let out = m.step(Timestamp::from_millis(T0 + 200));
    let changed: Vec<&Update> = generated(&m, &out, Exchange::VenueB).collect();
    assert!(!changed.is_empty());
    // Group consecutive updates of one market: each group is one match of 2–4 levels.
    let mut groups: Vec<Vec<&Update>> = Vec::new();
    for u in changed {
        let Update::Book { market_id, .. } = u else {
            unreachable!()
        };
        match groups.last_mut() {
            Some(g) if matches!(g[0], Update::Book { market_id: id, .. } if id == market_id) => g.push(u),
            _ => groups.push(vec![u]),
        }
    }
    let multi: Vec<&Vec<&Update>> = groups.iter().filter(|g| g.len() >= 2).collect();
    assert!(
        multi.len() * 2 >= groups.len(),
        "most changes belong to multi-level matches"
    );
    for g in multi {
        let tops: Vec<Top> = g
            .iter()
            .map(|u| match u {
                Update::Book { top, .. } => *top,
                _ => unreachable!(),
            })
            .collect();
        assert!(tops.windows(2).all(|w| w[0] == w[1]), "one top for the whole match");
        let sides: Vec<YesSide> = g
            .iter()
            .map(|u| match u {
                Update::Book { changes, .. } => changes[0].side,
                _ => unreachable!(),
            })
            .collect();
        assert!(sides.windows(2).all(|w| w[0] == w[1]), "a sweep takes one side");
        if let (Some((bid, _)), Some((ask, _))) = (tops[0].bid, tops[0].ask) {
            assert!(bid < ask, "the top after a match is not crossed");
        }
    }
}

#[test]
fn quiet_books_get_no_changes_for_their_period() {
    let mut m = full(small_rates());
    let quiet: Vec<String> = m
        .markets(Exchange::VenueB)
        .filter(|mk| mk.is_bulk() && mk.trading() && m.is_quiet(&mk.market_id))
        .map(|mk| mk.market_id.clone())
        .collect();
    let share = quiet.len() * 100 / m.markets(Exchange::VenueB).filter(|mk| mk.is_bulk()).count();
    assert!((10..=30).contains(&share), "about 20 % of books are quiet: {share} %");
    // Stay inside the current quiet period (300 s periods; T0 is 251.412 s into one).
    let mut touched = 0;
    for i in 1..=200 {
        let out = m.step(Timestamp::from_millis(T0 + i * 200));
        touched += generated(&m, &out, Exchange::VenueB)
            .filter(|u| matches!(u, Update::Book { market_id, .. } if quiet.contains(market_id)))
            .count();
    }
    assert_eq!(touched, 0, "quiet books stayed quiet");
    assert!(m.generated_changes(Exchange::VenueB) > 0);
}

#[test]
fn windows_roll_with_new_listings_and_settle_on_schedule() {
    let mut m = full(small_rates());
    let before = m.markets(Exchange::VenueB).filter(|mk| mk.is_bulk()).count();
    let mut listed = 0;
    let mut settled = 0;
    // 6 minutes: at least one 5-minute window per coin opens, closes and settles.
    for i in 1..=6 * 60 {
        let out = m.step(Timestamp::from_millis(T0 + i * 1000));
        listed += out.iter().filter(|u| matches!(u, Update::Listed { .. })).count();
        settled += out
            .iter()
            .filter(|u| {
                matches!(
                    u,
                    Update::Phase {
                        phase: Phase::Settled,
                        exchange: Exchange::VenueB,
                        ..
                    }
                )
            })
            .count();
    }
    assert!(listed >= 4, "new windows were listed: {listed}");
    assert!(settled >= 4, "windows settled: {settled}");
    let after = m.markets(Exchange::VenueB).filter(|mk| mk.is_bulk()).count();
    assert!(
        after.abs_diff(before) < 50,
        "the catalog keeps its size as windows roll"
    );
}

#[test]
fn rates_that_cannot_hold_their_average_are_refused() {
    let r = SimRates {
        burst_multiple: 10,
        burst_secs: 10,
        burst_every_secs: 60,
        ..SimRates::default()
    };
    assert!(r.validate().unwrap_err().contains("at least 100 s"));
    assert!(SimRates::default().validate().is_ok());
    assert_eq!("full".parse::<SimScale>(), Ok(SimScale::Full));
    assert!("huge".parse::<SimScale>().is_err());
}
