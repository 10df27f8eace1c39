//! Serde helpers shared by both venues' wire types.
//!
//! Both venues mix JSON types for the same kind of value (PROTOCOLS part E.2): prices and sizes arrive as
//! strings on one endpoint and as numbers on the next, some arrays arrive as a string holding JSON, and
//! timestamps come as RFC 3339 text, string milliseconds or integer seconds. The wire types accept every
//! form through the helpers here and keep the value as text; conversion into exact micro-units happens in
//! each venue's `normalise` module, where a bad value becomes a typed error with the payload.

use std::{fmt, str::FromStr};

use crossbook_core::{Amount, Price, Timestamp};
use rust_decimal::{Decimal, RoundingStrategy};
use serde::{
    Deserialize, Deserializer,
    de::{self, Visitor},
};

/// A decimal number as the venue wrote it: from a JSON string (`"0.4700"`) or a JSON number (`0.47`).
///
/// JSON numbers are kept through their shortest round-trip text, which reproduces what the venue wrote for
/// anything with up to 15 significant digits; no arithmetic happens on the `f64` serde_json parses into.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Num(pub String);

impl Num {
    /// Micro-dollars, for a price that is a figure rather than a book level (Gamma's last prices, which
    /// arrive as JSON numbers such as `0.30000000000000004`): digits below a micro-dollar are rounded
    /// half-up.
    pub fn price(&self) -> Result<Price, String> {
        parse_micros(&self.0).map(Price::from_micros)
    }

    /// Exact micro-dollars, for a book level: a price with digits below a micro-dollar is refused rather
    /// than rounded, which could merge two levels into one.
    pub fn price_exact(&self) -> Result<Price, String> {
        match parse_micros_rounding(&self.0)? {
            (m, false) => Ok(Price::from_micros(m)),
            (_, true) => Err(format!("{:?} has digits below a micro-dollar", self.0)),
        }
    }

    /// Micro-dollars, and whether digits below a micro-dollar were rounded away (half-up): for a trade
    /// price the venue computed as an average (venue_b's Data API `price` is the fill's dollars over its
    /// shares and can carry many decimals). The caller records each rounding.
    pub fn price_rounding(&self) -> Result<(Price, bool), String> {
        parse_micros_rounding(&self.0).map(|(m, rounded)| (Price::from_micros(m), rounded))
    }

    /// Exact micro-units of a quantity.
    pub fn amount(&self) -> Result<Amount, String> {
        parse_micros(&self.0).map(Amount::from_micros)
    }

    /// The value as an integer, when it is one (legacy integer cents and counts).
    pub fn integer(&self) -> Option<i64> {
        self.0.trim().parse().ok()
    }
}

impl fmt::Display for Num {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl From<&str> for Num {
    fn from(s: &str) -> Self {
        Num(s.to_string())
    }
}

impl<'de> Deserialize<'de> for Num {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Num;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a decimal number or a string holding one")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Num, E> {
                Ok(Num(v.to_string()))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Num, E> {
                Ok(Num(v.to_string()))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Num, E> {
                Ok(Num(v.to_string()))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Num, E> {
                if v.is_finite() {
                    // `Display` of f64 is the shortest text that round-trips.
                    Ok(Num(v.to_string()))
                } else {
                    Err(E::custom("non-finite number"))
                }
            }
        }
        d.deserialize_any(V)
    }
}

/// Parses decimal text into micro-units: exactly when it has at most six decimals, else rounded half-up
/// (scientific notation from a JSON number's text included).
pub fn parse_micros(s: &str) -> Result<i64, String> {
    parse_micros_rounding(s).map(|(m, _)| m)
}

/// [`parse_micros`], also telling whether the value was rounded (its exact value is not a whole number of
/// micro-units).
pub fn parse_micros_rounding(s: &str) -> Result<(i64, bool), String> {
    if let Ok(p) = s.parse::<Price>() {
        return Ok((p.micros(), false));
    }
    let t = s.trim();
    let d = Decimal::from_str(t)
        .or_else(|_| Decimal::from_scientific(t))
        .map_err(|_| format!("not a decimal number: {s:?}"))?;
    let rounded = d.round_dp_with_strategy(6, RoundingStrategy::MidpointAwayFromZero);
    let micros = (rounded * Decimal::from(1_000_000))
        .trunc()
        .to_string()
        .parse::<i64>()
        .map_err(|_| format!("decimal out of range: {s:?}"))?;
    Ok((micros, rounded != d))
}

/// A list that arrives either as a JSON array or as a string holding a JSON array (venue_b Gamma's
/// `outcomes`, `outcomePrices`, `clobTokenIds`), or as `null`/absent (non-CLOB markets). Elements are
/// kept as text: token ids are 78-digit integers that overflow every native number type.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct JsonList(pub Vec<String>);

impl<'de> Deserialize<'de> for JsonList {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = serde_json::Value::deserialize(d)?;
        json_list_from_value(&v).map(JsonList).map_err(de::Error::custom)
    }
}

fn json_list_from_value(v: &serde_json::Value) -> Result<Vec<String>, String> {
    use serde_json::Value;
    match v {
        Value::Null => Ok(Vec::new()),
        Value::String(s) if s.trim().is_empty() => Ok(Vec::new()),
        Value::String(s) => {
            let inner: Value =
                serde_json::from_str(s).map_err(|e| format!("string is not a JSON array ({e}): {s:?}"))?;
            match inner {
                Value::Array(_) => json_list_from_value(&inner),
                _ => Err(format!("string is not a JSON array: {s:?}")),
            }
        }
        Value::Array(items) => items
            .iter()
            .map(|i| match i {
                Value::String(s) => Ok(s.clone()),
                Value::Number(n) => Ok(n.to_string()),
                other => Err(format!("unexpected list element {other}")),
            })
            .collect(),
        other => Err(format!("expected a list, got {other}")),
    }
}

/// One element of a list that is decoded on its own, so that one malformed item in a catalog page is
/// reported and skipped instead of making the whole page unreadable.
#[derive(Debug, Clone, PartialEq)]
pub enum Lenient<T> {
    Ok(T),
    Bad {
        /// Why the element did not decode.
        error: String,
        /// The element as JSON text.
        raw: String,
    },
}

impl<'de, T: serde::de::DeserializeOwned> Deserialize<'de> for Lenient<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = serde_json::Value::deserialize(d)?;
        Ok(match T::deserialize(&v) {
            Ok(t) => Lenient::Ok(t),
            Err(e) => Lenient::Bad {
                error: e.to_string(),
                raw: v.to_string(),
            },
        })
    }
}

/// A Unix-millisecond time sent as a string (`"1778584051466"`) or a number.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Millis(pub i64);

impl<'de> Deserialize<'de> for Millis {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let n = Num::deserialize(d)?;
        n.integer()
            .map(Millis)
            .ok_or_else(|| de::Error::custom(format!("not integer milliseconds: {n}")))
    }
}

impl Millis {
    pub fn timestamp(self) -> Timestamp {
        Timestamp::from_millis(self.0)
    }
}

/// Parses the venues' date-time texts: RFC 3339 with or without fractional seconds, ISO 8601 without an
/// offset (UTC), a bare date, and Gamma's `2026-05-12 11:16:30+00` form.
pub fn parse_time(s: &str) -> Option<Timestamp> {
    let t = s.trim();
    if t.is_empty() {
        return None;
    }
    if let Ok(ts) = Timestamp::parse_iso(t) {
        return Some(ts);
    }
    // `2026-05-12 11:16:30+00` / `2026-05-12 11:16:30.123+00:00`.
    let mut fixed = t.replacen(' ', "T", 1);
    if let Some(pos) = fixed.rfind(['+', '-']).filter(|&p| p > 10) {
        let offset = &fixed[pos + 1..];
        if offset.len() == 2 && offset.bytes().all(|b| b.is_ascii_digit()) {
            fixed.push_str(":00");
        }
    }
    Timestamp::parse_iso(&fixed).ok()
}

/// Deserialises an optional date-time text leniently: unparsable or empty text becomes `None`, because a
/// single odd date field must not make a whole catalog page unreadable.
pub fn de_opt_time<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Timestamp>, D::Error> {
    let v = Option::<serde_json::Value>::deserialize(d)?;
    Ok(match v {
        Some(serde_json::Value::String(s)) => parse_time(&s),
        Some(serde_json::Value::Number(n)) => n.as_i64().map(|secs| {
            // Integer times on these endpoints are seconds; anything that large is milliseconds.
            if secs > 100_000_000_000 {
                Timestamp::from_millis(secs)
            } else {
                Timestamp::from_secs(secs)
            }
        }),
        _ => None,
    })
}

/// Deserialises `null` as the type's default (PROTOCOLS E.7: absent, empty and null all mean "nothing").
pub fn de_null_default<'de, D, T>(d: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de> + Default,
{
    Ok(Option::<T>::deserialize(d)?.unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn num_accepts_strings_and_numbers_exactly() {
        let cases: &[(&str, i64)] = &[
            (r#""0.4700""#, 470_000),
            ("0.52", 520_000),
            ("21.3", 21_300_000),
            ("8", 8_000_000),
            (r#""219.217767""#, 219_217_767),
            ("0.30000000000000004", 300_000),
            ("1e-7", 0),
            ("5e-7", 1),
        ];
        for (json, micros) in cases {
            let n: Num = serde_json::from_str(json).unwrap();
            assert_eq!(n.price().unwrap().micros(), *micros, "{json}");
        }
        let bad: Num = serde_json::from_str(r#""abc""#).unwrap();
        assert!(bad.price().is_err());
        assert!(serde_json::from_str::<Num>("true").is_err());
    }

    /// A book level keeps its exact price or is refused; a trade price says when it was rounded.
    #[test]
    fn prices_below_a_micro_dollar_are_refused_for_levels_and_reported_for_trades() {
        let n = |s: &str| Num(s.to_string());
        assert_eq!(n("0.123").price_exact(), Ok(Price::from_micros(123_000)));
        assert_eq!(n("0.5000000000").price_exact(), Ok(Price::from_micros(500_000)));
        assert!(n("0.1234567").price_exact().is_err());
        assert_eq!(n("0.1234567").price_rounding(), Ok((Price::from_micros(123_457), true)));
        assert_eq!(
            n("0.12345649").price_rounding(),
            Ok((Price::from_micros(123_456), true))
        );
        assert_eq!(n("0.123456").price_rounding(), Ok((Price::from_micros(123_456), false)));
        assert_eq!(
            n("1.23456e-1").price_rounding(),
            Ok((Price::from_micros(123_456), false))
        );
    }

    #[test]
    fn json_list_accepts_stringified_arrays_arrays_and_null() {
        let l: JsonList = serde_json::from_str(r#""[\"Up\", \"Down\"]""#).unwrap();
        assert_eq!(l.0, vec!["Up", "Down"]);
        let l: JsonList = serde_json::from_str(r#"["1", 2]"#).unwrap();
        assert_eq!(l.0, vec!["1", "2"]);
        let l: JsonList = serde_json::from_str("null").unwrap();
        assert!(l.0.is_empty());
        assert!(serde_json::from_str::<JsonList>(r#""not json""#).is_err());
        let big = "48418917734180607831833027288777571190488909295977497623601373906809754084036";
        let l: JsonList = serde_json::from_str(&format!(r#""[\"{big}\"]""#)).unwrap();
        assert_eq!(l.0, vec![big]);
    }

    #[test]
    fn times_in_every_venue_format() {
        let t = |s| parse_time(s).map(|t| t.millis());
        assert_eq!(t("2026-05-12T11:00:00Z"), Some(1_778_583_600_000));
        assert_eq!(t("2026-05-12T11:00:00.118322Z"), Some(1_778_583_600_118));
        assert_eq!(t("2026-05-12 11:00:00+00"), Some(1_778_583_600_000));
        assert_eq!(t("2026-05-12 11:00:00.5+00:00"), Some(1_778_583_600_500));
        assert_eq!(t(""), None);
        assert_eq!(t("soon"), None);
        let m: Millis = serde_json::from_str(r#""1778584051466""#).unwrap();
        assert_eq!(m.0, 1_778_584_051_466);
        let m: Millis = serde_json::from_str("1778584051466").unwrap();
        assert_eq!(m.0, 1_778_584_051_466);
    }
}
