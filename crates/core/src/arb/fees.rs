//! Taker fee per contract on each venue (spec 2.12, contracts §6), in exact integer arithmetic.
//!
//! Both venues charge `0.07 × p × (1 − p)` dollars per contract for a taker buying at price `p`; they differ
//! in rounding:
//!
//! | Venue | Rounding | Exact integer form (`m` = price in micro-dollars, `S` = 1,000,000) |
//! |---|---|---|
//! | venue_a | up to the next cent | `ceil(7·m·(S−m) / S²)` cents |
//! | venue_b | half-up to 5 decimals of a dollar, at least 0.00001 | `round(7·m·(S−m) / 10⁹)` units of 1e-5 dollar, at least 1 |
//!
//! `7·m·(S−m)` is at most `7 × 2.5·10¹¹`, far inside `i64`, so no step ever leaves the integers: p = 0.50
//! gives exactly 2 cents on venue_a, where `0.07 × 0.5 × 0.5` in floating point is `0.017500000000000002`.
//!
//! Modelling choices, all documented in the contracts or taken here:
//! - The fee is per contract (contracts §6). venue_a really rounds the order total up to the cent
//!   (PROTOCOLS A.8: 100 @ 0.35 costs 1.60, not 100 × 2 cents); the per-contract model is the contract's
//!   conservative estimate and is what the depth walk's "marginal contract" needs.
//! - Fee multipliers, maker fees and venue_b's non-crypto category rates are out of scope: the scanner covers
//!   BTC windows and matched binaries at the crypto rate 0.07, as spec 2.12 states.
//! - venue_b minimum: PROTOCOLS B.7 notes that on the live venue "tiny fees round to 0", but the contracts
//!   say "at least 0.00001", and the contracts are what clients rely on. The minimum therefore applies to
//!   every price strictly between 0 and 1. On 4-decimal prices it never binds (p = 0.0001 already rounds up
//!   to 0.00001); it only matters for micro-prices below about 0.0000715.
//! - At p = 0 or p = 1 (and outside `[0, 1]`, which no valid ask reaches) both fees are 0: `p × (1 − p)` is
//!   0, there is nothing to round up, and a contract at 0 or 1 moves no money at risk.

use crate::{Exchange, Price, money::SCALE};

use super::units::MicroUsd;

/// `7 × m × (S − m)`, the fee numerator shared by both venues; 0 outside the open interval (0, 1).
fn numerator(price: Price) -> i64 {
    let m = price.micros();
    if m <= 0 || m >= SCALE {
        return 0;
    }
    7 * m * (SCALE - m)
}

/// venue_a taker fee per contract: `ceil(7 × p × (1 − p))` cents.
pub fn venue_a_fee(price: Price) -> MicroUsd {
    let num = numerator(price);
    // 7·p·(1−p) cents = 7·m·(S−m)/S² cents with p = m/S.
    let den = SCALE * SCALE;
    let cents = (num + den - 1) / den;
    MicroUsd::from_cents(cents)
}

/// venue_b taker fee per contract: `round_half_up(0.07 × p × (1 − p), 5)` dollars, at least 0.00001 for a
/// price strictly between 0 and 1.
pub fn venue_b_fee(price: Price) -> MicroUsd {
    let num = numerator(price);
    if num == 0 {
        return MicroUsd::ZERO;
    }
    // 0.07·p·(1−p) dollars = 7·m·(S−m)/(100·S²) dollars = 7·m·(S−m)/10⁹ units of 1e-5 dollar.
    let den: i64 = 1_000_000_000;
    let units = ((2 * num + den) / (2 * den)).max(1);
    // One unit of 1e-5 dollar is 10 micro-dollars.
    MicroUsd::from_micros(units * 10)
}

/// The taker fee per contract for buying at `price` on `exchange`.
pub fn taker_fee(exchange: Exchange, price: Price) -> MicroUsd {
    match exchange {
        Exchange::VenueA => venue_a_fee(price),
        Exchange::VenueB => venue_b_fee(price),
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use rust_decimal::{Decimal, RoundingStrategy, prelude::ToPrimitive};

    use super::*;

    /// Reference venue_a fee on a 4-decimal tick `t` (p = t / 10,000), in whole cents, written in the tick
    /// scale instead of the micro scale: `ceil(7·t·(10⁴−t) / 10⁸)`.
    fn ref_a_cents_tick(t: i64) -> i64 {
        let num = 7 * t * (10_000 - t);
        (num + 100_000_000 - 1) / 100_000_000
    }

    /// Reference venue_b fee on a tick, in units of 1e-5 dollar: `round_half_up(7·t·(10⁴−t) / 10⁵)`, min 1.
    fn ref_b_units_tick(t: i64) -> i64 {
        let num = 7 * t * (10_000 - t);
        let q = num / 100_000;
        let r = num % 100_000;
        let rounded = if r * 2 >= 100_000 { q + 1 } else { q };
        rounded.max(1)
    }

    /// Independent reference through `rust_decimal`: the formula exactly as the spec writes it, in micro-dollars.
    fn ref_decimal(exchange: Exchange, micros: i64) -> i64 {
        let p = Decimal::new(micros, 6);
        let raw = Decimal::new(7, 2) * p * (Decimal::ONE - p);
        let dollars = match exchange {
            // Round up to the next cent.
            Exchange::VenueA => raw.round_dp_with_strategy(2, RoundingStrategy::AwayFromZero),
            Exchange::VenueB => {
                let r = raw.round_dp_with_strategy(5, RoundingStrategy::MidpointAwayFromZero);
                if raw > Decimal::ZERO {
                    r.max(Decimal::new(1, 5))
                } else {
                    r
                }
            }
        };
        (dollars * Decimal::new(1_000_000, 0)).to_i64().unwrap()
    }

    #[test]
    fn hand_worked_values() {
        // p = 0.50: 7 × 0.5 × 0.5 = 1.75 cents → venue_a rounds up to 2 cents; venue_b 0.0175 dollar = 1.75 cents.
        assert_eq!(venue_a_fee(Price::from_cents(50)), MicroUsd::from_cents(2));
        assert_eq!(venue_b_fee(Price::from_cents(50)), MicroUsd(17_500));
        // p = 0.01: 7 × 0.01 × 0.99 = 0.0693 cents → venue_a 1 cent; venue_b 0.000693 → 0.00069 dollar = 0.069 cents.
        assert_eq!(venue_a_fee(Price::from_cents(1)), MicroUsd::from_cents(1));
        assert_eq!(venue_b_fee(Price::from_cents(1)), MicroUsd(690));
        // p = 0.45: 7 × 0.45 × 0.55 = 1.7325 cents → 2 cents; venue_b 0.017325 → 0.01733 (half-up at the 5th decimal).
        assert_eq!(venue_a_fee(Price::from_cents(45)), MicroUsd::from_cents(2));
        assert_eq!(venue_b_fee(Price::from_cents(45)), MicroUsd(17_330));
        // p = 0.40: 7 × 0.4 × 0.6 = 1.68 cents → 2 cents; venue_b exactly 0.0168.
        assert_eq!(venue_a_fee(Price::from_cents(40)), MicroUsd::from_cents(2));
        assert_eq!(venue_b_fee(Price::from_cents(40)), MicroUsd(16_800));
        // p = 0.0001: 0.07 × 0.0001 × 0.9999 = 0.0000069993 → 0.00001 (rounding, not the minimum).
        assert_eq!(venue_b_fee(Price(100)), MicroUsd(10));
        // p = 0.000001: 0.07e-6 rounds to 0, the minimum 0.00001 applies.
        assert_eq!(venue_b_fee(Price(1)), MicroUsd(10));
        assert_eq!(venue_a_fee(Price(1)), MicroUsd::from_cents(1));
        // Boundaries: nothing at 0 or 1, nor outside.
        for p in [Price::ZERO, Price::ONE, Price(-5), Price(1_000_001)] {
            assert_eq!(venue_a_fee(p), MicroUsd::ZERO, "{p}");
            assert_eq!(venue_b_fee(p), MicroUsd::ZERO, "{p}");
        }
        assert_eq!(
            taker_fee(Exchange::VenueA, Price::from_cents(50)),
            MicroUsd::from_cents(2)
        );
        assert_eq!(taker_fee(Exchange::VenueB, Price::from_cents(50)), MicroUsd(17_500));
    }

    #[test]
    fn every_tick_matches_the_integer_references() {
        for t in 1..=9_999i64 {
            let p = Price(t * 100);
            let a = venue_a_fee(p);
            let b = venue_b_fee(p);
            assert_eq!(a, MicroUsd::from_cents(ref_a_cents_tick(t)), "venue_a at tick {t}");
            assert_eq!(b, MicroUsd(ref_b_units_tick(t) * 10), "venue_b at tick {t}");
            assert_eq!(
                a.micros(),
                ref_decimal(Exchange::VenueA, p.micros()),
                "venue_a decimal at tick {t}"
            );
            assert_eq!(
                b.micros(),
                ref_decimal(Exchange::VenueB, p.micros()),
                "venue_b decimal at tick {t}"
            );
            // Symmetry: the fee of p equals the fee of 1 − p.
            assert_eq!(a, venue_a_fee(p.complement()));
            assert_eq!(b, venue_b_fee(p.complement()));
            // venue_a rounds up to the cent and can never be below venue_b, which rounds to 1e-5.
            assert!(a >= b, "tick {t}");
            assert!(a.micros() % 10_000 == 0 && b.micros() % 10 == 0);
        }
    }

    proptest! {
        #[test]
        fn micro_prices_match_the_decimal_reference(m in 1i64..1_000_000) {
            prop_assert_eq!(venue_a_fee(Price(m)).micros(), ref_decimal(Exchange::VenueA, m));
            prop_assert_eq!(venue_b_fee(Price(m)).micros(), ref_decimal(Exchange::VenueB, m));
            // Bounds: at least the minimum charge, at most 2 cents (the maximum 1.75 cents, rounded up).
            prop_assert!(venue_b_fee(Price(m)) >= MicroUsd(10));
            prop_assert!(venue_a_fee(Price(m)) <= MicroUsd::from_cents(2));
        }
    }
}
