//! Exact fixed-point money.
//!
//! Both venues quote prices as decimal strings with up to 6 decimals (venue_a `"0.4700"`, venue_b `"0.47"`)
//! and venue_b sizes carry up to 6 decimals (`"219.217767"`). One micro-unit (1e-6) represents all of them
//! exactly, so prices and quantities are `i64` micro-units. Products (notional = price × size) go through
//! `i128` and are rounded half-up back to micro-units. `f64` appears only when rendering a JSON number.

use std::{fmt, str::FromStr};

use serde::{Deserialize, Serialize};

/// Micro-units per whole unit (dollar or contract).
pub const SCALE: i64 = 1_000_000;

/// Error from parsing a decimal string into micro-units.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("not a decimal with at most 6 fractional digits: {0:?}")]
pub struct ParseDecimalError(pub String);

fn parse_micros(s: &str) -> Result<i64, ParseDecimalError> {
    let err = || ParseDecimalError(s.to_string());
    let t = s.trim();
    let (neg, body) = match t.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, t.strip_prefix('+').unwrap_or(t)),
    };
    if body.is_empty() {
        return Err(err());
    }
    let (int_part, frac_part) = match body.split_once('.') {
        Some((i, f)) => (i, f),
        None => (body, ""),
    };
    if int_part.is_empty() && frac_part.is_empty() {
        return Err(err());
    }
    if !int_part.bytes().all(|b| b.is_ascii_digit()) || !frac_part.bytes().all(|b| b.is_ascii_digit()) {
        return Err(err());
    }
    // Trailing zeros beyond six digits are harmless ("0.50000000"); other digits would lose precision.
    let frac_trimmed = frac_part.trim_end_matches('0');
    if frac_trimmed.len() > 6 {
        return Err(err());
    }
    let int_val: i64 = if int_part.is_empty() {
        0
    } else {
        int_part.parse().map_err(|_| err())?
    };
    let mut frac_val: i64 = 0;
    for (i, b) in frac_trimmed.bytes().enumerate() {
        frac_val += i64::from(b - b'0') * 10i64.pow(5 - i as u32);
    }
    let v = int_val
        .checked_mul(SCALE)
        .and_then(|v| v.checked_add(frac_val))
        .ok_or_else(err)?;
    Ok(if neg { -v } else { v })
}

fn fmt_micros(v: i64, decimals: u32, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    let r = round_half_up(v, 6 - decimals);
    let sign = if r < 0 { "-" } else { "" };
    let a = r.unsigned_abs();
    let unit = 10u64.pow(decimals);
    let whole = a / unit;
    let frac = a % unit;
    if decimals == 0 {
        write!(f, "{sign}{whole}")
    } else {
        write!(f, "{sign}{whole}.{frac:0width$}", width = decimals as usize)
    }
}

/// Rounds `v` half-up (away from zero at .5) dropping `digits` decimal digits; returns the shortened integer.
pub fn round_half_up(v: i64, digits: u32) -> i64 {
    if digits == 0 {
        return v;
    }
    let d = 10i64.pow(digits);
    let q = v / d;
    let r = (v % d).abs();
    if r * 2 >= d { q + v.signum() } else { q }
}

/// A price in micro-dollars (1e-6 dollar). Prediction-market prices lie in `[0, 1]` dollar.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Price(pub i64);

impl Price {
    /// One dollar: the payout of a winning contract.
    pub const ONE: Price = Price(SCALE);
    pub const ZERO: Price = Price(0);

    /// From micro-dollars.
    pub const fn from_micros(m: i64) -> Self {
        Price(m)
    }
    pub const fn micros(self) -> i64 {
        self.0
    }
    /// From whole cents (`47` → 0.47).
    pub const fn from_cents(c: i64) -> Self {
        Price(c * 10_000)
    }
    /// The complement `1 − p` (a venue_a YES ask from a NO bid).
    pub const fn complement(self) -> Self {
        Price(SCALE - self.0)
    }
    /// Renders as a 4-decimal string (`"0.5300"`), half-up.
    pub fn to_string4(self) -> String {
        self.four_decimals().as_str().to_string()
    }
    /// The 4-decimal string (`"0.5300"`, half-up) formatted on the stack: a page of order books renders
    /// thousands of levels, and this neither allocates nor goes through `fmt`.
    pub fn four_decimals(self) -> Price4 {
        let r = round_half_up(self.0, 2);
        let mut buf = [0u8; 24];
        // Digits from the right: four decimals, the point, then at least one whole digit.
        let mut at = buf.len();
        let mut a = r.unsigned_abs();
        for i in 0.. {
            if i == 4 {
                at -= 1;
                buf[at] = b'.';
            }
            at -= 1;
            buf[at] = b'0' + (a % 10) as u8;
            a /= 10;
            if i >= 4 && a == 0 {
                break;
            }
        }
        if r < 0 {
            at -= 1;
            buf[at] = b'-';
        }
        Price4 { buf, start: at as u8 }
    }
    /// The value as a JSON number rounded half-up to 4 decimals. Rendering only; never compute with it.
    pub fn to_f64_4(self) -> f64 {
        round_half_up(self.0, 2) as f64 / 10_000.0
    }
}

/// A price's 4-decimal string, held on the stack ([`Price::four_decimals`]). Serializes as that string.
#[derive(Clone, Copy)]
pub struct Price4 {
    buf: [u8; 24],
    start: u8,
}

impl Price4 {
    pub fn as_str(&self) -> &str {
        // Only ASCII digits, '.' and '-' were written from `start` on.
        std::str::from_utf8(&self.buf[usize::from(self.start)..]).unwrap_or_default()
    }
}

impl fmt::Debug for Price4 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl Serialize for Price4 {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl FromStr for Price {
    type Err = ParseDecimalError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        parse_micros(s).map(Price)
    }
}

impl fmt::Display for Price {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt_micros(self.0, 6, f)
    }
}

/// A quantity in micro-units: contracts, shares, or dollars of volume, liquidity or notional.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Amount(pub i64);

impl Amount {
    pub const ZERO: Amount = Amount(0);

    pub const fn from_micros(m: i64) -> Self {
        Amount(m)
    }
    pub const fn micros(self) -> i64 {
        self.0
    }
    /// Whole units (`12` → 12.000000).
    pub const fn from_units(u: i64) -> Self {
        Amount(u * SCALE)
    }
    /// `abs(price × size)` in dollars, rounded half-up to micro-dollars.
    pub fn notional(price: Price, size: Amount) -> Amount {
        let p = i128::from(price.0) * i128::from(size.0);
        let s = i128::from(SCALE);
        let q = p / s;
        let r = (p % s).abs();
        let v = if r * 2 >= s { q + p.signum() } else { q };
        Amount(i64::try_from(v.abs()).unwrap_or(i64::MAX))
    }
    pub fn saturating_add(self, o: Amount) -> Amount {
        Amount(self.0.saturating_add(o.0))
    }
    /// The value as a JSON number rounded half-up to `decimals` (≤ 6). Rendering only.
    pub fn to_f64(self, decimals: u32) -> f64 {
        let d = decimals.min(6);
        round_half_up(self.0, 6 - d) as f64 / 10f64.powi(d as i32)
    }
}

impl FromStr for Amount {
    type Err = ParseDecimalError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        parse_micros(s).map(Amount)
    }
}

impl fmt::Display for Amount {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt_micros(self.0, 6, f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_venue_strings_exactly() {
        let cases: &[(&str, i64)] = &[
            ("0.4700", 470_000),
            ("0.47", 470_000),
            (".5", 500_000),
            ("1", 1_000_000),
            ("0.000001", 1),
            ("219.217767", 219_217_767),
            ("312.00", 312_000_000),
            ("0.50000000", 500_000),
            ("-0.25", -250_000),
        ];
        for (s, m) in cases {
            assert_eq!(s.parse::<Price>().unwrap().micros(), *m, "{s}");
        }
        for bad in ["", "abc", "0.1234567", "1e3", ".", "1.2.3", "--1", " "] {
            assert!(bad.parse::<Price>().is_err(), "{bad:?} should not parse");
        }
    }

    #[test]
    fn renders_four_decimals_half_up() {
        assert_eq!(Price(530_000).to_string4(), "0.5300");
        assert_eq!(Price(123_450).to_string4(), "0.1235");
        assert_eq!(Price(123_449).to_string4(), "0.1234");
        assert_eq!(Price(1_000_000).to_string4(), "1.0000");
        assert_eq!(Price(123_450).to_f64_4(), 0.1235);
        assert_eq!(Price(-530_000).to_string4(), "-0.5300");
        assert_eq!(Price(12_345_678_900).to_string4(), "12345.6789");
        assert_eq!(Price(0).to_string4(), "0.0000");
        assert_eq!(Price(i64::MIN).to_string4(), "-9223372036854.7758");
        // The stack formatter agrees with `fmt` over a spread of values, both signs.
        struct Fmt(i64);
        impl fmt::Display for Fmt {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                fmt_micros(self.0, 4, f)
            }
        }
        for v in (-3_000_000..3_000_000)
            .step_by(37)
            .chain([i64::MAX, i64::MIN + 1, 49, -49, 50, -50])
        {
            assert_eq!(Price(v).to_string4(), Fmt(v).to_string(), "{v}");
        }
    }

    #[test]
    fn notional_is_exact() {
        let n = Amount::notional("0.47".parse().unwrap(), "2500".parse().unwrap());
        assert_eq!(n, Amount::from_units(1175));
        let n = Amount::notional("0.999".parse().unwrap(), "2".parse().unwrap());
        assert_eq!(n.micros(), 1_998_000);
        // Half-up at the micro-dollar.
        assert_eq!(Amount::notional(Price(500_000), Amount(1)).micros(), 1);
        assert_eq!(Amount::notional(Price(400_000), Amount(1)).micros(), 0);
    }
}
