//! Taker fee per contract on each venue (spec 2.12, contracts §6), in exact integer arithmetic, and the fee
//! model that says which venue_b rate applies to a market of each category.
//!
//! Both venues charge `rate × p × (1 − p)` dollars per contract for a taker buying at price `p`; they differ
//! in rounding. venue_a's rate is the spec's 0.07; venue_b's rate is configurable per market category
//! ([`FeeModel`]) and defaults to the spec's 0.07 everywhere:
//!
//! | Venue | Rounding | Exact integer form (`m` = price in micro-dollars, `S` = 1,000,000, `r` = rate in basis points) |
//! |---|---|---|
//! | venue_a | up to the next cent | `ceil(7·m·(S−m) / S²)` cents |
//! | venue_b | half-up to 5 decimals of a dollar, at least 0.00001 | `round(r·m·(S−m) / 10¹¹)` units of 1e-5 dollar, at least 1 |
//!
//! With `r = 700` (0.07) the venue_b form is `round(7·m·(S−m) / 10⁹)`, the spec's formula. `r·m·(S−m)` is at
//! most `10⁴ × 2.5·10¹¹`, far inside `i64`, so no step ever leaves the integers: p = 0.50 gives exactly 2
//! cents on venue_a, where `0.07 × 0.5 × 0.5` in floating point is `0.017500000000000002`.
//!
//! Modelling choices, all documented in the contracts or taken here:
//! - The fee is per contract (contracts §6). venue_a really rounds the order total up to the cent
//!   (PROTOCOLS A.8: 100 @ 0.35 costs 1.60, not 100 × 2 cents); the per-contract model is the contract's
//!   conservative estimate and is what the depth walk's "marginal contract" needs.
//! - Fee multipliers and maker fees are out of scope. venue_b charges less than 0.07 outside crypto (PROTOCOLS
//!   B.7), so the default 0.07 overstates those fees, which errs on the side of a smaller edge; an operator
//!   who knows the venue's current schedule sets it per category ([`FeeModel`]).
//! - venue_b minimum: PROTOCOLS B.7 notes that on the live venue "tiny fees round to 0", but the contracts
//!   say "at least 0.00001", and the contracts are what clients rely on. The minimum therefore applies to
//!   every price strictly between 0 and 1 when the rate is above 0 (a rate of 0 is a fee-free market and
//!   charges nothing). On 4-decimal prices at 0.07 it never binds (p = 0.0001 already rounds up to
//!   0.00001); it only matters for micro-prices below about 0.0000715, or for low rates.
//! - At p = 0 or p = 1 (and outside `[0, 1]`, which no valid ask reaches) both fees are 0: `p × (1 − p)` is
//!   0, there is nothing to round up, and a contract at 0 or 1 moves no money at risk.
//!
//! # The `fee_model` label
//! Every opportunity names the rates it was priced at ([`PairFees::label`]), so a figure can be checked after
//! the operator changes a rate. The format is `;`-separated venue entries:
//!
//! ```text
//! venue_a:0.07;venue_b:sports=0.03
//! ```
//!
//! `venue_a:<rate>` is venue_a's rate; `venue_b:<category>=<rate>` is the category whose venue_b rate was
//! used (lower case: `crypto`, `sports` or `other`) and that rate. Rates are plain decimals with no trailing
//! zeros (`0.07`, `0.0125`, `0`, `1`). The format only grows by appending entries, so a client may split on
//! `;` and then on the first `:`.

use std::{fmt, str::FromStr};

use serde::{Deserialize, Serialize};

use crate::{Category, Exchange, Price, money::SCALE};

use super::units::MicroUsd;

/// A taker fee rate, exact: a whole number of basis points (1/10,000) from 0 to 10,000, i.e. a decimal rate
/// from 0 to 1 with at most 4 decimals (`0.07` is 700). Never a float. Built only through
/// [`FeeRate::from_bps`] and [`FromStr`], which keep it within 0 to 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct FeeRate(u16);

impl FeeRate {
    /// Basis points in a rate of 1.
    pub const ONE_BPS: u16 = 10_000;
    /// The spec's rate (spec 2.12): 0.07.
    pub const SPEC: FeeRate = FeeRate(700);
    /// No fee.
    pub const ZERO: FeeRate = FeeRate(0);

    /// From basis points; `None` above 10,000 (a rate above 1).
    pub const fn from_bps(bps: u16) -> Option<FeeRate> {
        if bps <= Self::ONE_BPS { Some(FeeRate(bps)) } else { None }
    }

    /// The rate in basis points.
    pub const fn bps(self) -> u16 {
        self.0
    }
}

/// Parses a decimal rate from 0 to 1 with at most 4 decimals (`0.07`, `0.0125`, `0`, `1`, `1.0`).
impl FromStr for FeeRate {
    type Err = String;
    fn from_str(s: &str) -> Result<FeeRate, String> {
        let err = || format!("{s:?} is not a rate: expected a decimal from 0 to 1 with at most 4 decimals, e.g. 0.07");
        let t = s.trim();
        let (int_part, frac_part) = match t.split_once('.') {
            Some((i, f)) => (i, Some(f)),
            None => (t, None),
        };
        let digits = |x: &str| !x.is_empty() && x.bytes().all(|b| b.is_ascii_digit());
        if !digits(int_part) || frac_part.is_some_and(|f| !digits(f)) {
            return Err(err());
        }
        // Trailing zeros carry no precision ("0.07000" is 0.07), so only the significant decimals count.
        let frac = frac_part.unwrap_or("").trim_end_matches('0');
        if frac.len() > 4 {
            return Err(err());
        }
        let int: u32 = match int_part.trim_start_matches('0') {
            "" => 0,
            "1" => 1,
            _ => return Err(err()),
        };
        // At most 4 digits, padded to 4: "07" is 700 basis points.
        let frac_bps: u32 = format!("{frac:0<4}").parse().map_err(|_| err())?;
        let bps = int * u32::from(Self::ONE_BPS) + frac_bps;
        u16::try_from(bps).ok().and_then(FeeRate::from_bps).ok_or_else(err)
    }
}

/// The rate as a plain decimal without trailing zeros: `0.07`, `0.0125`, `0`, `1`.
impl fmt::Display for FeeRate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (int, frac) = (self.0 / Self::ONE_BPS, self.0 % Self::ONE_BPS);
        if frac == 0 {
            return write!(f, "{int}");
        }
        let decimals = format!("{frac:04}");
        write!(f, "{int}.{}", decimals.trim_end_matches('0'))
    }
}

/// `m × (S − m)` for a price of `m` micro-dollars, the factor both venues' fees share; 0 outside the open
/// interval (0, 1).
fn spread(price: Price) -> i64 {
    let m = price.micros();
    if m <= 0 || m >= SCALE {
        return 0;
    }
    m * (SCALE - m)
}

/// venue_a taker fee per contract: `ceil(7 × p × (1 − p))` cents.
pub fn venue_a_fee(price: Price) -> MicroUsd {
    let num = 7 * spread(price);
    // 7·p·(1−p) cents = 7·m·(S−m)/S² cents with p = m/S.
    let den = SCALE * SCALE;
    let cents = (num + den - 1) / den;
    MicroUsd::from_cents(cents)
}

/// venue_b taker fee per contract at the spec's rate 0.07: `round_half_up(0.07 × p × (1 − p), 5)` dollars,
/// at least 0.00001 for a price strictly between 0 and 1.
pub fn venue_b_fee(price: Price) -> MicroUsd {
    venue_b_fee_at(FeeRate::SPEC, price)
}

/// venue_b taker fee per contract at `rate`: `round_half_up(rate × p × (1 − p), 5)` dollars, at least
/// 0.00001 when that is above 0 (a rate above 0 and a price strictly between 0 and 1).
pub fn venue_b_fee_at(rate: FeeRate, price: Price) -> MicroUsd {
    let num = i64::from(rate.bps()) * spread(price);
    if num == 0 {
        return MicroUsd::ZERO;
    }
    // rate·p·(1−p) dollars = (r/10⁴)·m·(S−m)/S² dollars = r·m·(S−m)/10¹¹ units of 1e-5 dollar.
    let den: i64 = 100_000_000_000;
    let units = ((2 * num + den) / (2 * den)).max(1);
    // One unit of 1e-5 dollar is 10 micro-dollars.
    MicroUsd::from_micros(units * 10)
}

/// The taker fee per contract for buying at `price` on `exchange`, at the spec's rates.
pub fn taker_fee(exchange: Exchange, price: Price) -> MicroUsd {
    PairFees::SPEC.taker_fee(exchange, price)
}

/// The rates one pair is priced at: venue_b's rate for the pair's fee category (venue_a always charges the
/// spec's formula). Built by [`FeeModel::for_category`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct PairFees {
    /// The category whose venue_b rate this is (named in the label).
    pub category: Category,
    /// venue_b's taker rate.
    pub venue_b: FeeRate,
}

impl PairFees {
    /// The spec's rates (a crypto market, as spec 2.12 states them).
    pub const SPEC: PairFees = PairFees {
        category: Category::Crypto,
        venue_b: FeeRate::SPEC,
    };

    /// The taker fee per contract for buying at `price` on `exchange`.
    pub fn taker_fee(&self, exchange: Exchange, price: Price) -> MicroUsd {
        match exchange {
            Exchange::VenueA => venue_a_fee(price),
            Exchange::VenueB => venue_b_fee_at(self.venue_b, price),
        }
    }

    /// The `fee_model` label of an opportunity priced at these rates (format in the module docs), e.g.
    /// `venue_a:0.07;venue_b:crypto=0.07`: both venues' parts.
    pub fn label(&self) -> String {
        format!(
            "{};{}",
            self.venue_label(Exchange::VenueA),
            self.venue_label(Exchange::VenueB)
        )
    }

    /// One venue's part of the label: `venue_a:0.07`, or `venue_b:crypto=0.07`.
    pub fn venue_label(&self, exchange: Exchange) -> String {
        match exchange {
            Exchange::VenueA => format!("venue_a:{}", FeeRate::SPEC),
            Exchange::VenueB => format!("venue_b:{}={}", self.category.as_str(), self.venue_b),
        }
    }
}

/// A category as the catalog stores it (any case, spaces around), `None` when it names none of ours.
pub fn stored_category(text: &str) -> Option<Category> {
    let text = text.trim();
    Category::ALL
        .into_iter()
        .find(|k| k.as_str().eq_ignore_ascii_case(text))
}

/// venue_b's taker rate per market category, configurable (`venue_b_fee_rate`); every category defaults to
/// the spec's 0.07, which is conservative where the venue charges less.
///
/// Its text form (configuration, [`FromStr`] and [`fmt::Display`]) is a comma-separated list of
/// `category=rate` entries, e.g. `sports=0.03, other=0.05`: category names are matched without regard to
/// case, a category not named keeps 0.07, an empty text is the default model. Display names every category
/// (`crypto=0.07,sports=0.03,other=0.05`), so the text round-trips.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct FeeModel {
    /// Indexed like [`Category::ALL`].
    venue_b: [FeeRate; Category::ALL.len()],
}

impl Default for FeeModel {
    fn default() -> Self {
        FeeModel::SPEC
    }
}

fn category_index(c: Category) -> usize {
    Category::ALL.iter().position(|&x| x == c).unwrap_or(0)
}

impl FeeModel {
    /// 0.07 in every category (spec 2.12).
    pub const SPEC: FeeModel = FeeModel {
        venue_b: [FeeRate::SPEC; Category::ALL.len()],
    };

    /// venue_b's rate in `category`.
    pub fn venue_b_rate(&self, category: Category) -> FeeRate {
        self.venue_b[category_index(category)]
    }

    /// This model with venue_b's rate in `category` set to `rate`.
    pub fn with_venue_b_rate(mut self, category: Category, rate: FeeRate) -> FeeModel {
        self.venue_b[category_index(category)] = rate;
        self
    }

    /// The rates one market is priced at alone: its own category as the catalog stores it (case-insensitive),
    /// else `crypto` for a price window and `other` for the rest, as pairs are categorised.
    pub fn for_market(&self, market: &crate::Market) -> PairFees {
        let category =
            market
                .category
                .as_deref()
                .and_then(stored_category)
                .unwrap_or(if market.interval_code.is_some() {
                    Category::Crypto
                } else {
                    Category::Other
                });
        self.for_category(category)
    }

    /// The rates a pair whose venue_b market is in `category` is priced at.
    pub fn for_category(&self, category: Category) -> PairFees {
        PairFees {
            category,
            venue_b: self.venue_b_rate(category),
        }
    }
}

impl FromStr for FeeModel {
    type Err = String;
    fn from_str(s: &str) -> Result<FeeModel, String> {
        let mut model = FeeModel::SPEC;
        let mut seen = Vec::new();
        for entry in s.split(',').map(str::trim).filter(|e| !e.is_empty()) {
            let Some((name, rate)) = entry.split_once('=') else {
                return Err(format!("{entry:?} is not category=rate (e.g. sports=0.03)"));
            };
            let name = name.trim().to_ascii_lowercase();
            let category: Category = name.parse().map_err(|()| {
                let known: Vec<&str> = Category::ALL.iter().map(|c| c.as_str()).collect();
                format!("unknown category {name:?} in {entry:?} (known: {})", known.join(", "))
            })?;
            if seen.contains(&category) {
                return Err(format!("category {name:?} is given twice"));
            }
            seen.push(category);
            let rate: FeeRate = rate.parse().map_err(|e| format!("{entry:?}: {e}"))?;
            model = model.with_venue_b_rate(category, rate);
        }
        Ok(model)
    }
}

impl fmt::Display for FeeModel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, c) in Category::ALL.iter().enumerate() {
            let sep = if i == 0 { "" } else { "," };
            write!(f, "{sep}{}={}", c.as_str(), self.venue_b_rate(*c))?;
        }
        Ok(())
    }
}

impl TryFrom<String> for FeeModel {
    type Error = String;
    fn try_from(s: String) -> Result<FeeModel, String> {
        s.parse()
    }
}

impl From<FeeModel> for String {
    fn from(m: FeeModel) -> String {
        m.to_string()
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

    /// Independent reference for venue_b at any rate through `rust_decimal`: `rate × p × (1 − p)` rounded
    /// half-up to 5 decimals, at least 0.00001 when above 0; in micro-dollars.
    fn ref_decimal_b(bps: u16, micros: i64) -> i64 {
        let p = Decimal::new(micros, 6);
        let raw = Decimal::new(i64::from(bps), 4) * p * (Decimal::ONE - p);
        let mut r = raw.round_dp_with_strategy(5, RoundingStrategy::MidpointAwayFromZero);
        if raw > Decimal::ZERO {
            r = r.max(Decimal::new(1, 5));
        }
        (r * Decimal::new(1_000_000, 0)).to_i64().unwrap()
    }

    fn rate(s: &str) -> FeeRate {
        s.parse().unwrap()
    }

    #[test]
    fn venue_b_at_other_rates() {
        // The spec rate is the old formula exactly.
        for t in 1..=9_999i64 {
            assert_eq!(
                venue_b_fee_at(FeeRate::SPEC, Price(t * 100)),
                venue_b_fee(Price(t * 100))
            );
        }
        let two = rate("0.02");
        // p = 0.50: 0.02 × 0.25 = 0.005 dollar = 0.5 cent.
        assert_eq!(venue_b_fee_at(two, Price::from_cents(50)), MicroUsd(5_000));
        // p = 0.45: 0.02 × 0.2475 = 0.00495 exactly.
        assert_eq!(venue_b_fee_at(two, Price::from_cents(45)), MicroUsd(4_950));
        // p = 0.01: 0.02 × 0.0099 = 0.000198 → 0.00020 (half-up at the 5th decimal).
        assert_eq!(venue_b_fee_at(two, Price::from_cents(1)), MicroUsd(200));
        // p = 0.0001: 0.02 × 0.00009999 = 0.0000019998 → rounds to 0, the minimum 0.00001 applies.
        assert_eq!(venue_b_fee_at(two, Price(100)), MicroUsd(10));
        // A midpoint: 0.0125 × 0.5 × 0.5 = 0.003125 → 0.00313 (half-up, not to even).
        assert_eq!(venue_b_fee_at(rate("0.0125"), Price::from_cents(50)), MicroUsd(3_130));
        // A rate of 0 is a fee-free market: nothing at any price, no minimum.
        for p in [Price(1), Price(100), Price::from_cents(50), Price(999_999)] {
            assert_eq!(venue_b_fee_at(FeeRate::ZERO, p), MicroUsd::ZERO, "{p}");
        }
        // A rate of 1: p = 0.5 costs 0.25 dollar.
        assert_eq!(venue_b_fee_at(rate("1"), Price::from_cents(50)), MicroUsd(250_000));
        // Nothing at 0 or 1 at any rate.
        for p in [Price::ZERO, Price::ONE] {
            assert_eq!(venue_b_fee_at(rate("1"), p), MicroUsd::ZERO);
        }
        // Pair fees carry the rate; venue_a is untouched by it.
        let sports = FeeModel::SPEC
            .with_venue_b_rate(Category::Sports, two)
            .for_category(Category::Sports);
        assert_eq!(
            sports.taker_fee(Exchange::VenueB, Price::from_cents(50)),
            MicroUsd(5_000)
        );
        assert_eq!(
            sports.taker_fee(Exchange::VenueA, Price::from_cents(50)),
            MicroUsd::from_cents(2)
        );
    }

    #[test]
    fn rates_parse_exactly_and_print_without_trailing_zeros() {
        for (text, bps, shown) in [
            ("0.07", 700, "0.07"),
            ("0.0700", 700, "0.07"),
            ("0.02", 200, "0.02"),
            ("0.0125", 125, "0.0125"),
            ("0", 0, "0"),
            ("0.0", 0, "0"),
            ("00.5", 5_000, "0.5"),
            ("1", 10_000, "1"),
            ("1.0000", 10_000, "1"),
            (" 0.03 ", 300, "0.03"),
        ] {
            let r: FeeRate = text.parse().unwrap_or_else(|e| panic!("{text}: {e}"));
            assert_eq!((r.bps(), r.to_string()), (bps, shown.to_string()), "{text}");
        }
        for bad in [
            "", ".", "0.", ".5", "-0.01", "+0.01", "1.0001", "2", "10", "0.00001", "0.07%", "7e-2", "abc", "0,07",
        ] {
            let e = bad.parse::<FeeRate>().unwrap_err();
            assert!(e.contains("from 0 to 1 with at most 4 decimals"), "{bad}: {e}");
        }
        assert_eq!(FeeRate::from_bps(10_001), None);
    }

    #[test]
    fn fee_model_text_and_labels() {
        let m: FeeModel = "".parse().unwrap();
        assert_eq!(m, FeeModel::SPEC);
        assert_eq!(m.to_string(), "crypto=0.07,sports=0.07,other=0.07");
        // Case-insensitive category names, spaces and a trailing comma tolerated; unnamed categories keep 0.07.
        let m: FeeModel = " Sports=0.03, OTHER = 0 ,".parse().unwrap();
        assert_eq!(m.venue_b_rate(Category::Sports), rate("0.03"));
        assert_eq!(m.venue_b_rate(Category::Other), FeeRate::ZERO);
        assert_eq!(m.venue_b_rate(Category::Crypto), FeeRate::SPEC);
        assert_eq!(m.to_string(), "crypto=0.07,sports=0.03,other=0");
        assert_eq!(m.to_string().parse::<FeeModel>().unwrap(), m, "round trip");
        // Serde goes through the same text (configuration files, environment).
        assert_eq!(String::from(m), "crypto=0.07,sports=0.03,other=0");
        assert_eq!(FeeModel::try_from("sports=0.03,other=0".to_string()), Ok(m));

        for (bad, says) in [
            ("sports", "not category=rate"),
            ("politics=0.04", "unknown category \"politics\""),
            ("sports=0.03,Sports=0.02", "given twice"),
            ("sports=1.5", "from 0 to 1"),
            ("sports=0.00005", "at most 4 decimals"),
        ] {
            let e = bad.parse::<FeeModel>().unwrap_err();
            assert!(e.contains(says), "{bad}: {e}");
        }

        assert_eq!(PairFees::SPEC.label(), "venue_a:0.07;venue_b:crypto=0.07");
        assert_eq!(
            m.for_category(Category::Sports).label(),
            "venue_a:0.07;venue_b:sports=0.03"
        );
        assert_eq!(m.for_category(Category::Other).label(), "venue_a:0.07;venue_b:other=0");
    }

    proptest! {
        #[test]
        fn venue_b_at_any_rate_matches_the_decimal_reference(m in 1i64..1_000_000, bps in 0u16..=10_000) {
            let r = FeeRate::from_bps(bps).unwrap();
            prop_assert_eq!(venue_b_fee_at(r, Price(m)).micros(), ref_decimal_b(bps, m));
            // A lower rate never charges more.
            if bps > 0 {
                let lower = FeeRate::from_bps(bps - 1).unwrap();
                prop_assert!(venue_b_fee_at(lower, Price(m)) <= venue_b_fee_at(r, Price(m)));
            }
        }

        #[test]
        fn rates_round_trip_through_text(bps in 0u16..=10_000) {
            let r = FeeRate::from_bps(bps).unwrap();
            prop_assert_eq!(r.to_string().parse::<FeeRate>(), Ok(r));
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
