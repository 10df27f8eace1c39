//! Hand-worked trades and the engine's properties.
//!
//! The worked book (the arbitrage fixtures'): venue_a YES asks 0.45 × 10 and 0.46 × 5 (NO bids 0.55, 0.54),
//! YES bids 0.44 × 50; venue_b YES token 0.40 × 30, NO token 0.50 × 12 then 0.51 × 100. YES on venue_a and
//! NO on venue_b nets 1.25 c on 10 contracts (fees: venue_a ceil(7 × 0.45 × 0.55) = 2 c, venue_b
//! 0.07 × 0.5 × 0.5 = 1.75 c), then 0.25 c on 2 more, so at a 1-cent threshold the walk takes 10.

use proptest::prelude::*;

use super::*;
use crate::{
    Amount, Exchange, IntervalCode, Level, Timestamp,
    arb::{
        Listing, MicroUsd,
        fixtures::{T0, lvl, window},
        pair_markets,
    },
    book::{BookKey, Ladders},
};

const A: &str = "KXBTC15M-26NOV211415-15";
const B: &str = "0xb1";
const UP: &str = "0xb1-up";
const DOWN: &str = "0xb1-down";

fn listings() -> Vec<Listing> {
    vec![
        window(Exchange::VenueA, A, IntervalCode::M15, 0, 0),
        window(Exchange::VenueB, B, IntervalCode::M15, 2_000, 2_000),
    ]
}

fn a_key() -> BookKey {
    BookKey::venue_a(A)
}
fn up_key() -> BookKey {
    BookKey::venue_b(B, UP)
}
fn down_key() -> BookKey {
    BookKey::venue_b(B, DOWN)
}

fn a_ladders(yes_bids: Vec<Level>, no_bids: Vec<Level>) -> Ladders {
    Ladders {
        bids: yes_bids,
        asks: vec![],
        no_bids,
    }
}

fn b_ladders(bids: Vec<Level>, asks: Vec<Level>) -> Ladders {
    Ladders {
        bids,
        asks,
        no_bids: vec![],
    }
}

/// Milliseconds after T0.
fn at(ms: i64) -> Timestamp {
    Timestamp(T0 + ms)
}

/// Whole cents as money (`450` is 4.50 dollars).
fn dollars(cents: i64) -> MicroUsd {
    MicroUsd::from_cents(cents)
}

/// The worked books at `t`.
fn worked(bt: &mut Backtest<'_>, t: Timestamp) {
    bt.apply(
        &a_key(),
        t,
        Update::Snapshot(&a_ladders(vec![lvl(4400, 50)], vec![lvl(5500, 10), lvl(5400, 5)])),
    );
    bt.apply(&up_key(), t, Update::Snapshot(&b_ladders(vec![], vec![lvl(4000, 30)])));
    bt.apply(
        &down_key(),
        t,
        Update::Snapshot(&b_ladders(vec![], vec![lvl(5000, 12), lvl(5100, 100)])),
    );
}

fn params(latency_ms: i64) -> BacktestParams {
    BacktestParams {
        latency_ms,
        ..BacktestParams::new(at(0), at(600_000))
    }
}

fn settled(a_yes: bool, b_yes: bool) -> Settlements {
    [
        (
            (Exchange::VenueA, A.to_string()),
            Settlement {
                yes_won: a_yes,
                at: at(900_000),
            },
        ),
        (
            (Exchange::VenueB, B.to_string()),
            Settlement {
                yes_won: b_yes,
                at: at(902_000),
            },
        ),
    ]
    .into_iter()
    .collect()
}

fn run(p: BacktestParams, settlements: Settlements, feed: impl FnOnce(&mut Backtest<'_>)) -> Report {
    let l = listings();
    let pairs = pair_markets(&l, &[], 60);
    assert_eq!(pairs.len(), 1);
    let mut bt = Backtest::new(pairs, settlements, p);
    feed(&mut bt);
    bt.finish()
}

#[test]
fn a_pair_whose_legs_fill_fully_settles_to_the_walks_profit_either_way() {
    for (a_yes, b_yes) in [(true, true), (false, false)] {
        let r = run(params(250), settled(a_yes, b_yes), |bt| worked(bt, at(1_000)));
        assert_eq!(r.opportunities_seen, 1);
        assert_eq!(r.summary.trades, 1);
        let t = &r.trades[0];
        assert_eq!(t.kind, TradeKind::Filled);
        assert_eq!((t.yes.venue, t.no.venue), (Exchange::VenueA, Exchange::VenueB));
        assert_eq!(t.matched, Amount::from_units(10));
        // YES: 10 × 0.45 = 4.50 + 10 × 2 c; NO: 10 × 0.50 = 5.00 + 10 × 1.75 c.
        assert_eq!((t.yes.cost, t.yes.fee), (dollars(450), dollars(20)));
        assert_eq!((t.no.cost, t.no.fee), (dollars(500), MicroUsd(175_000)));
        assert_eq!(t.yes.at, at(1_250), "filled latency after detection");
        assert_eq!(t.capital, MicroUsd(9_875_000));
        // One leg pays 10 dollars whichever way the two markets settle together.
        assert_eq!(t.payout, dollars(1_000));
        assert_eq!(t.pnl_gross, dollars(50));
        assert_eq!(t.fees, MicroUsd(375_000));
        assert_eq!(t.pnl_net, MicroUsd(125_000));
        assert_eq!(t.pnl_net, t.expected_pnl);
        assert_eq!(t.valuation, Valuation::Settled);
        assert_eq!(t.closed_at, at(902_000), "the later settlement");
        assert_eq!(r.summary.pnl_net, MicroUsd(125_000));
        assert_eq!(r.latency_cost, MicroUsd::ZERO);
    }
    // The venues settle apart: neither leg pays.
    let r = run(params(250), settled(false, true), |bt| worked(bt, at(1_000)));
    assert_eq!(r.trades[0].payout, MicroUsd::ZERO);
    assert_eq!(r.trades[0].pnl_net, MicroUsd(-9_875_000));
    assert_eq!(r.summary.max_drawdown, MicroUsd(9_875_000));
}

#[test]
fn both_legs_short_is_a_partial_fill() {
    let r = run(params(250), settled(true, true), |bt| {
        worked(bt, at(1_000));
        // Before the orders arrive, both legs keep only 7 at the detected prices.
        bt.apply(
            &a_key(),
            at(1_100),
            Update::Change(&[
                crate::book::LevelChange {
                    side: crate::book::Side::NoBid,
                    price: lvl(5500, 7).price,
                    size: Amount::from_units(7),
                },
                crate::book::LevelChange {
                    side: crate::book::Side::NoBid,
                    price: lvl(5400, 0).price,
                    size: Amount::ZERO,
                },
            ]),
        );
        bt.apply(
            &down_key(),
            at(1_100),
            Update::Snapshot(&b_ladders(vec![], vec![lvl(5000, 7), lvl(5100, 100)])),
        );
    });
    let t = &r.trades[0];
    assert_eq!(t.kind, TradeKind::Partial);
    assert_eq!(
        (t.yes.filled, t.no.filled),
        (Amount::from_units(7), Amount::from_units(7))
    );
    // 7 × (0.45 + 0.50) = 6.65; fees 7 × 2 c + 7 × 1.75 c = 0.2625; payout 7.
    assert_eq!(t.pnl_gross, dollars(35));
    assert_eq!(t.fees, MicroUsd(262_500));
    assert_eq!(t.pnl_net, MicroUsd(87_500));
    assert_eq!(r.summary.partial, 1);
    // The twin with no latency took all 10 at detection.
    assert_eq!(r.zero_latency.pnl_net, MicroUsd(125_000));
    assert_eq!(r.latency_cost, MicroUsd(37_500));
}

#[test]
fn a_missing_second_leg_is_unwound_into_the_bids() {
    let r = run(params(250), settled(true, true), |bt| {
        worked(bt, at(1_000));
        // venue_b's NO asks at 0.50 fall to 4 before the orders arrive.
        bt.apply(
            &down_key(),
            at(1_100),
            Update::Snapshot(&b_ladders(vec![], vec![lvl(5000, 4), lvl(5100, 100)])),
        );
    });
    let t = &r.trades[0];
    assert_eq!(t.kind, TradeKind::SecondLegMissed);
    assert_eq!(
        (t.yes.filled, t.no.filled, t.matched),
        (Amount::from_units(10), Amount::from_units(4), Amount::from_units(4))
    );
    let u = t.unwind.as_ref().expect("unwound");
    // 6 YES sold at the 0.44 bid: 2.64, fee ceil(7 × 0.44 × 0.56 = 1.7248) = 2 c each.
    assert_eq!((u.unmatched, u.sold), (Amount::from_units(6), Amount::from_units(6)));
    assert_eq!((u.proceeds, u.fee), (dollars(264), dollars(12)));
    // Payout 4 (YES won), + 2.64 − (4.50 + 2.00) = 0.14 gross; fees 0.20 + 0.07 + 0.12 = 0.39.
    assert_eq!(t.payout, dollars(400));
    assert_eq!(t.pnl_gross, dollars(14));
    assert_eq!(t.fees, dollars(39));
    assert_eq!(t.pnl_net, dollars(-25));
    assert_eq!(r.summary.second_legs_missed, 1);
}

#[test]
fn venue_a_first_holds_a_first_leg_whose_second_is_gone() {
    let p = BacktestParams {
        leg_order: LegOrder::VenueAFirst,
        missing_leg: MissingLeg::Hold,
        ..params(100)
    };
    for (yes_won, net) in [(true, dollars(530)), (false, dollars(-470))] {
        let r = run(p, settled(yes_won, yes_won), |bt| {
            worked(bt, at(1_000));
            // venue_a's leg fills at 1.1 s; venue_b's NO asks are gone at 1.15 s, before its leg at 1.2 s.
            bt.apply(&down_key(), at(1_150), Update::Snapshot(&b_ladders(vec![], vec![])));
        });
        let t = &r.trades[0];
        assert_eq!((t.yes.at, t.no.at), (at(1_100), at(1_200)));
        assert_eq!((t.yes.filled, t.no.filled), (Amount::from_units(10), Amount::ZERO));
        assert!(t.unwind.is_none());
        // 10 YES held: 10 − 4.50 − 0.20 if YES won, − 4.70 if not.
        assert_eq!(t.pnl_net, net);
    }
}

#[test]
fn no_trade_across_a_capture_gap() {
    let r = run(params(250), settled(true, true), |bt| {
        worked(bt, at(1_000));
        bt.apply(&down_key(), at(1_100), Update::Gap);
        bt.apply(
            &down_key(),
            at(1_200),
            Update::Snapshot(&b_ladders(vec![], vec![lvl(5000, 12), lvl(5100, 100)])),
        );
    });
    assert_eq!(r.summary.trades, 0);
    assert_eq!(r.summary.skipped_gap, 1);
    assert_eq!(r.summary.opportunities_taken, 0);
    assert!(
        !r.opportunities[0].taken,
        "an opportunity abandoned at a gap is not taken"
    );
    assert_eq!(r.zero_latency.trades, 1, "the twin filled at detection, before the gap");
    // The book came back within the episode gap: the same opportunity goes on, as in the recorded history,
    // and it is not taken twice.
    assert_eq!(r.opportunities_seen, 1);
}

#[test]
fn open_markets_are_marked_to_the_book_at_the_end() {
    let r = run(params(0), Settlements::new(), |bt| worked(bt, at(1_000)));
    let t = &r.trades[0];
    assert_eq!(t.valuation, Valuation::Marked);
    // YES on venue_a marked at its mid, (0.44 bid + 0.45 ask) / 2 = 0.445; NO on venue_b has no bid: nothing.
    // 4.45 − 9.50.
    assert_eq!(t.payout, MicroUsd(4_450_000));
    assert_eq!(t.pnl_gross, dollars(-505));
    assert_eq!(t.closed_at, at(600_000));
    assert_eq!(r.marked_markets, vec![format!("venue_a:{A}"), format!("venue_b:{B}")]);
    assert_eq!(r.summary.marked_trades, 1);
}

#[test]
fn capital_limits_the_size_and_comes_back_at_settlement() {
    // 0.9875 dollars a contract: 5 dollars buy 5 contracts.
    let p = BacktestParams {
        capital_per_trade: Some(dollars(500)),
        capital_total: Some(dollars(500)),
        ..params(0)
    };
    let r = run(p, settled(true, true), |bt| {
        worked(bt, at(1_000));
        // The opportunity ends, and comes back after the episode gap: a second one, with no capital left.
        bt.apply(
            &down_key(),
            at(2_000),
            Update::Snapshot(&b_ladders(vec![], vec![lvl(6000, 12)])),
        );
        bt.apply(
            &down_key(),
            at(200_000),
            Update::Snapshot(&b_ladders(vec![], vec![lvl(5000, 12)])),
        );
    });
    assert_eq!(r.opportunities_seen, 2);
    assert_eq!(r.trades.len(), 1);
    assert_eq!(r.trades[0].matched, Amount::from_units(5));
    assert_eq!(r.summary.skipped_capital, 1);
    assert_eq!(r.summary.capital_used, MicroUsd(4_937_500));
}

#[test]
fn the_same_events_give_the_same_report() {
    let feed = |bt: &mut Backtest<'_>| {
        worked(bt, at(1_000));
        bt.apply(
            &down_key(),
            at(1_100),
            Update::Snapshot(&b_ladders(vec![], vec![lvl(5000, 4)])),
        );
    };
    let a = serde_json::to_string(&run(params(250), settled(true, true), feed)).unwrap();
    let b = serde_json::to_string(&run(params(250), settled(true, true), feed)).unwrap();
    assert_eq!(a, b);
}

#[test]
fn bad_assumptions_are_refused_by_name() {
    let p = params(0);
    assert!(p.check().is_ok());
    let bad = [
        (
            BacktestParams {
                from: at(10),
                to: at(0),
                ..p
            },
            "from",
        ),
        (
            BacktestParams {
                capital_per_trade: Some(MicroUsd::ZERO),
                ..p
            },
            "capital_per_trade_dollars",
        ),
        (
            BacktestParams {
                capital_total: Some(MicroUsd(-1)),
                ..p
            },
            "capital_total_dollars",
        ),
        (BacktestParams { latency_ms: -1, ..p }, "latency_ms"),
        (
            BacktestParams {
                latency_ms: MAX_LATENCY_MS + 1,
                ..p
            },
            "latency_ms",
        ),
        (
            BacktestParams {
                min_net: MicroUsd(-1),
                ..p
            },
            "min_net_cents",
        ),
    ];
    for (p, field) in bad {
        assert_eq!(p.check().unwrap_err().0, field);
    }
}

/// Whole-contract ladders of up to 4 levels at whole-cent prices.
fn ladder() -> impl Strategy<Value = Vec<Level>> {
    proptest::collection::vec((1i64..=99, 1i64..=30), 0..4).prop_map(|v| {
        let mut v: Vec<Level> = v.into_iter().map(|(c, n)| lvl(c * 100, n)).collect();
        v.sort_by_key(|l| l.price);
        v.dedup_by_key(|l| l.price);
        v
    })
}

/// venue_a's NO bids and YES bids, venue_b's YES asks and NO asks.
type BookSet = (Vec<Level>, Vec<Level>, Vec<Level>, Vec<Level>);

fn book_set() -> impl Strategy<Value = BookSet> {
    (ladder(), ladder(), ladder(), ladder())
}

fn desc(mut v: Vec<Level>) -> Vec<Level> {
    v.reverse();
    v
}

fn apply_set(bt: &mut Backtest<'_>, t: Timestamp, s: &BookSet) {
    bt.apply(
        &a_key(),
        t,
        Update::Snapshot(&a_ladders(desc(s.1.clone()), desc(s.0.clone()))),
    );
    bt.apply(&up_key(), t, Update::Snapshot(&b_ladders(vec![], s.2.clone())));
    bt.apply(&down_key(), t, Update::Snapshot(&b_ladders(vec![], s.3.clone())));
}

/// The ladder with some size removed from each level (what competing takers do between detection and an
/// order).
fn thinned(v: &[Level], cut: &[i64]) -> Vec<Level> {
    v.iter()
        .zip(cut.iter().chain(std::iter::repeat(&0)))
        .filter_map(|(l, &c)| {
            let left = l.size.micros() - Amount::from_units(c).micros().min(l.size.micros());
            (left > 0).then_some(Level {
                price: l.price,
                size: Amount(left),
            })
        })
        .collect()
}

proptest! {
    /// With no latency and no capital limit, every opportunity taken fills as the depth walk priced it, so
    /// the run's net result is the sum of the scanner's `max_profit_dollars` over them (already after fees).
    #[test]
    fn zero_latency_nets_the_walks_profit(
        sets in proptest::collection::vec(book_set(), 1..6),
        yes_won in any::<bool>(),
        min_net_cents in 0i64..3,
    ) {
        let p = BacktestParams {
            capital_per_trade: None,
            capital_total: None,
            min_net: MicroUsd::from_cents(min_net_cents),
            ..params(0)
        };
        let r = run(p, settled(yes_won, yes_won), |bt| {
            for (k, s) in sets.iter().enumerate() {
                apply_set(bt, at(1_000 + 200_000 * k as i64), s);
            }
        });
        let promised: i64 = r.opportunities.iter().filter(|o| o.taken).map(|o| o.max_profit.micros()).sum();
        prop_assert_eq!(r.summary.pnl_net.micros(), promised);
        prop_assert_eq!(r.summary.second_legs_missed + r.summary.partial, 0);
        prop_assert_eq!(&r.summary, &Summary { ..r.zero_latency.clone() });
    }

    /// When liquidity only goes away between detection and the order, latency never fills more or at a
    /// better average price on either leg.
    #[test]
    fn latency_never_improves_a_fill(
        s in book_set(),
        cuts in proptest::collection::vec(0i64..30, 16),
        latency in 1i64..5_000,
    ) {
        let later: BookSet = (
            thinned(&s.0, &cuts[0..4]),
            s.1.clone(),
            thinned(&s.2, &cuts[4..8]),
            thinned(&s.3, &cuts[8..12]),
        );
        let p = BacktestParams { capital_per_trade: None, capital_total: None, ..params(latency) };
        let r = run(p, settled(true, true), |bt| {
            apply_set(bt, at(1_000), &s);
            apply_set(bt, at(1_000 + latency / 2), &later);
        });
        prop_assert!(r.summary.trades <= r.zero_latency.trades);
        let detected = |venue: Exchange, outcome: crate::Outcome| -> Vec<Level> {
            match venue {
                Exchange::VenueA => crate::arb::AskLadders::from_venue_a(&crate::BookSnapshot {
                    exchange: venue,
                    market_id: A.into(),
                    asset_id: None,
                    timestamp: at(0),
                    bids: desc(s.1.clone()),
                    asks: vec![],
                    no_bids: desc(s.0.clone()),
                })
                .side(outcome)
                .to_vec(),
                Exchange::VenueB => if outcome == crate::Outcome::Yes { s.2.clone() } else { s.3.clone() },
            }
        };
        if let Some(slow) = r.trades.first() {
            for leg in [&slow.yes, &slow.no] {
                // The cheapest contracts the detected book offered under the limit cost no more than what the
                // later order paid for as many.
                let mut asks = detected(leg.venue, leg.outcome);
                asks.retain(|l| l.price <= leg.limit);
                let best = crate::arb::execute(&asks, leg.filled, |_| MicroUsd::ZERO);
                prop_assert_eq!(best.filled, leg.filled, "the later book holds no contract the detected one did not");
                prop_assert!(leg.cost >= best.cost);
                // And it fills no more than the detected book held for the order.
                let all = crate::arb::execute(&asks, leg.requested, |_| MicroUsd::ZERO);
                prop_assert!(leg.filled <= all.filled);
            }
        }
    }
}
