//! Exact units of the arbitrage math: signed micro-dollars for edges and fees, basis points for ROI.
//!
//! Every per-contract quantity of the fee model is an exact multiple of one micro-dollar: prices are
//! micro-dollars ([`Price`]), venue_a fees are whole cents (10,000 micro-dollars) and venue_b fees are
//! multiples of 1e-5 dollar (10 micro-dollars). So gross, fee and net edges are exact `i64` micro-dollars
//! and nothing is rounded until a value is rendered. The only quantity that is not a whole number of
//! micro-dollars is a ratio (ROI), which is rounded once, half-up, to the precision the API renders.

use std::{
    fmt,
    ops::{Add, AddAssign, Neg, Sub},
};

use serde::{Deserialize, Serialize};

use crate::money::{ParseDecimalError, Price, SCALE, round_half_up};

/// Micro-dollars per cent.
pub const MICROS_PER_CENT: i64 = 10_000;

/// A signed amount of money in micro-dollars (1e-6 dollar = 1e-4 cent).
///
/// Used for per-contract gross edges, fees and net edges (rendered as cents) and for profits (rendered as
/// dollars). Signed because a losing pair has a negative net edge.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize, Deserialize)]
#[serde(transparent)]
pub struct MicroUsd(pub i64);

impl MicroUsd {
    /// Zero dollars.
    pub const ZERO: MicroUsd = MicroUsd(0);

    /// From micro-dollars.
    pub const fn from_micros(m: i64) -> Self {
        MicroUsd(m)
    }
    /// The value in micro-dollars.
    pub const fn micros(self) -> i64 {
        self.0
    }
    /// From whole cents (`2` → 0.02 dollar).
    pub const fn from_cents(c: i64) -> Self {
        MicroUsd(c * MICROS_PER_CENT)
    }
    /// The amount a price represents (a contract bought at `p` costs `p` dollars).
    pub const fn from_price(p: Price) -> Self {
        MicroUsd(p.micros())
    }
    /// Cents as a JSON number rounded half-up to 2 decimals (`17_500` → `1.75`). Rendering only.
    pub fn cents_f64(self) -> f64 {
        // Hundredths of a cent are 100 micro-dollars.
        round_half_up(self.0, 2) as f64 / 100.0
    }
    /// Dollars as a JSON number rounded half-up to 2 decimals. Rendering only.
    pub fn dollars_f64(self) -> f64 {
        // Hundredths of a dollar are 10,000 micro-dollars.
        round_half_up(self.0, 4) as f64 / 100.0
    }
    /// Dollars as a JSON number rounded half-up to 4 decimals (a price difference). Rendering only.
    pub fn dollars_f64_4(self) -> f64 {
        round_half_up(self.0, 2) as f64 / 10_000.0
    }

    /// Parses a threshold given in cents (`"1"`, `"0.5"`, `"1.25"`) into micro-dollars, rounding **up**.
    ///
    /// Net edges are whole micro-dollars, so for every edge `n`, `n >= ceil(t)` exactly when `n >= t`: the
    /// inclusive `min_net_cents` comparison keeps its meaning for thresholds finer than 1e-4 cent.
    pub fn parse_cents_ceil(s: &str) -> Result<MicroUsd, ParseDecimalError> {
        let err = || ParseDecimalError(s.to_string());
        let t = s.trim();
        let (neg, body) = match t.strip_prefix('-') {
            Some(rest) => (true, rest),
            None => (false, t.strip_prefix('+').unwrap_or(t)),
        };
        let (int_part, frac_part) = body.split_once('.').unwrap_or((body, ""));
        if int_part.is_empty() && frac_part.is_empty() {
            return Err(err());
        }
        if !int_part.bytes().all(|b| b.is_ascii_digit()) || !frac_part.bytes().all(|b| b.is_ascii_digit()) {
            return Err(err());
        }
        let int_digits = int_part.trim_start_matches('0');
        if int_digits.len() > 12 {
            return Err(err());
        }
        let int_val: i64 = if int_digits.is_empty() {
            0
        } else {
            int_digits.parse().map_err(|_| err())?
        };
        // Cents have 4 decimals in micro-dollars; anything finer is a remainder.
        let mut frac_val: i64 = 0;
        for i in 0..4 {
            let d = frac_part.as_bytes().get(i).map_or(0, |b| i64::from(b - b'0'));
            frac_val = frac_val * 10 + d;
        }
        let remainder = frac_part.bytes().skip(4).any(|b| b != b'0');
        let magnitude = int_val * MICROS_PER_CENT + frac_val;
        // Ceil: a positive value with a remainder goes up; a negative one truncates toward zero (which is up).
        Ok(MicroUsd(if neg {
            -magnitude
        } else {
            magnitude + i64::from(remainder)
        }))
    }

    /// [`MicroUsd::parse_cents_ceil`] for a threshold that arrives as an `f64` (a configuration value).
    ///
    /// The number goes through its shortest decimal representation (`1.1` → `"1.1"`), not through float
    /// multiplication, so `1.1` cents is exactly 11,000 micro-dollars. `None` for NaN, infinities and values
    /// too large to represent.
    pub fn cents_ceil_from_f64(x: f64) -> Option<MicroUsd> {
        if !x.is_finite() {
            return None;
        }
        MicroUsd::parse_cents_ceil(&format!("{x}")).ok()
    }
}

impl Add for MicroUsd {
    type Output = MicroUsd;
    fn add(self, o: MicroUsd) -> MicroUsd {
        MicroUsd(self.0 + o.0)
    }
}

impl AddAssign for MicroUsd {
    fn add_assign(&mut self, o: MicroUsd) {
        self.0 += o.0;
    }
}

impl Sub for MicroUsd {
    type Output = MicroUsd;
    fn sub(self, o: MicroUsd) -> MicroUsd {
        MicroUsd(self.0 - o.0)
    }
}

impl Neg for MicroUsd {
    type Output = MicroUsd;
    fn neg(self) -> MicroUsd {
        MicroUsd(-self.0)
    }
}

impl fmt::Display for MicroUsd {
    /// Cents with 4 decimals (`1.7500c`): exact, for logs and test messages.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let sign = if self.0 < 0 { "-" } else { "" };
        let a = self.0.unsigned_abs();
        let per = MICROS_PER_CENT as u64;
        write!(f, "{sign}{}.{:04}c", a / per, a % per)
    }
}

/// A return on capital in basis points (hundredths of a percent), rounded half-up once from the exact
/// ratio. That is the precision `roi_percent` is rendered at, so rendering adds no second rounding.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Roi(pub i64);

impl Roi {
    /// `100 × net / capital` percent, in basis points, half-up (away from zero). Zero when `capital <= 0`,
    /// which only a degenerate pair of zero prices could produce.
    pub fn from_ratio(net: MicroUsd, capital: MicroUsd) -> Roi {
        if capital.0 <= 0 {
            return Roi(0);
        }
        let q = div_round_half_up(i128::from(net.0) * 10_000, i128::from(capital.0));
        Roi(i64::try_from(q).unwrap_or(if q < 0 { i64::MIN } else { i64::MAX }))
    }
    /// The value in basis points.
    pub const fn basis_points(self) -> i64 {
        self.0
    }
    /// Percent as a JSON number with 2 decimals (`127` → `1.27`). Rendering only.
    pub fn percent_f64(self) -> f64 {
        self.0 as f64 / 100.0
    }
}

/// `n / d` rounded half-up (ties away from zero); `d` must be positive.
pub(crate) fn div_round_half_up(n: i128, d: i128) -> i128 {
    debug_assert!(d > 0);
    let q = n / d;
    let r = (n % d).abs();
    if r * 2 >= d { q + n.signum() } else { q }
}

/// The micro-dollar scale as `i128`, for products of micro-prices and micro-sizes.
pub(crate) const SCALE_I128: i128 = SCALE as i128;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_cents_and_dollars_half_up() {
        assert_eq!(MicroUsd(17_500).cents_f64(), 1.75);
        assert_eq!(MicroUsd(690).cents_f64(), 0.07); // 0.069 cents → 0.07
        assert_eq!(MicroUsd(649).cents_f64(), 0.06);
        assert_eq!(MicroUsd(650).cents_f64(), 0.07);
        assert_eq!(MicroUsd(-650).cents_f64(), -0.07);
        assert_eq!(MicroUsd(1_234_999).dollars_f64(), 1.23);
        assert_eq!(MicroUsd(1_235_000).dollars_f64(), 1.24);
        assert_eq!(MicroUsd(-20_000).dollars_f64_4(), -0.02);
        assert_eq!(MicroUsd(17_500).to_string(), "1.7500c");
        assert_eq!(MicroUsd(-5).to_string(), "-0.0005c");
    }

    #[test]
    fn parses_cent_thresholds_rounding_up() {
        let cases: &[(&str, i64)] = &[
            ("0", 0),
            ("1", 10_000),
            ("1.0", 10_000),
            ("0.5", 5_000),
            ("1.25", 12_500),
            (".0001", 1),
            ("0.00001", 1), // finer than a micro-dollar: ceil
            ("1.00005", 10_001),
            ("2.50000", 25_000),
            ("-0.5", -5_000),
            ("-0.00005", 0), // ceil of a negative remainder truncates toward zero
            ("+3", 30_000),
        ];
        for (s, m) in cases {
            assert_eq!(MicroUsd::parse_cents_ceil(s).unwrap().micros(), *m, "{s}");
        }
        for bad in ["", ".", "abc", "1e3", "1.2.3", "--1", "9999999999999"] {
            assert!(MicroUsd::parse_cents_ceil(bad).is_err(), "{bad:?}");
        }
        assert_eq!(MicroUsd::cents_ceil_from_f64(1.1), Some(MicroUsd(11_000)));
        assert_eq!(MicroUsd::cents_ceil_from_f64(1.0), Some(MicroUsd(10_000)));
        assert_eq!(MicroUsd::cents_ceil_from_f64(0.0), Some(MicroUsd(0)));
        assert_eq!(MicroUsd::cents_ceil_from_f64(f64::NAN), None);
        assert_eq!(MicroUsd::cents_ceil_from_f64(1e300), None);
    }

    #[test]
    fn roi_rounds_once_half_up() {
        // 1.25 / 98.75 = 1.26582…% → 127 bp.
        assert_eq!(Roi::from_ratio(MicroUsd(12_500), MicroUsd(987_500)), Roi(127));
        // Exactly half a basis point rounds away from zero: 1 / 20,000 = 0.5 bp.
        assert_eq!(Roi::from_ratio(MicroUsd(1), MicroUsd(20_000)), Roi(1));
        assert_eq!(Roi::from_ratio(MicroUsd(-1), MicroUsd(20_000)), Roi(-1));
        assert_eq!(Roi::from_ratio(MicroUsd(5), MicroUsd(0)), Roi(0));
        assert_eq!(Roi(127).percent_f64(), 1.27);
    }
}
