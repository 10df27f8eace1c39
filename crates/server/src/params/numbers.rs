//! Numbers: the bounds of integer, money and time parameters, the one reading of a number in a query
//! ([`plain_number`]), the schemas of the typed readers of [`QueryMap`](super::QueryMap) (amounts, cents,
//! times) and the typed integer parameters ([`Limit`], [`Offset`], [`Int`]) and [`Flag`].

use std::borrow::Cow;

use crossbook_core::Amount;
use serde_json::{Value, json};
use utoipa::{
    PartialSchema, ToSchema,
    openapi::{RefOr, Schema},
};

use super::{Param, QueryMap, schema_of};
use crate::error::ApiResult;

/// 2001-01-01T00:00:00Z in Unix milliseconds: the earliest time a millisecond parameter accepts (see
/// [`QueryMap::instant`]).
pub const MIN_MILLIS: i64 = 978_307_200_000;

/// Cents parameters are below this (`MicroUsd::parse_cents_ceil` takes at most twelve integer digits).
pub const CENTS_BOUND: i64 = 1_000_000_000_000;

/// Largest `offset`.
pub const MAX_OFFSET: u32 = 1_000_000;

/// An inclusive integer range, for the message and the check of [`QueryMap::int`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IntRange {
    pub min: i64,
    pub max: i64,
}

impl IntRange {
    pub const fn new(min: i64, max: i64) -> Self {
        IntRange { min, max }
    }
}

/// Longest plain form [`plain_number`] writes out: far more digits than any parameter takes, and a bound on
/// what an exponent such as `1e999999999` could make the server allocate.
pub const MAX_NUMBER_LEN: usize = 64;

/// A number as a query writes it: digits with at most one decimal point (at least one digit), optionally
/// followed by an exponent (`e` or `E`, an optional `+` or `-`, digits), with no sign or space. Returns the
/// same value in plain digits, exactly: unchanged without an exponent, else with the point moved and leading
/// and trailing zeros dropped (`1e3` is `1000`, `2.5E-1` is `0.25`). `None` when `v` is not such a number or
/// its plain form would be longer than [`MAX_NUMBER_LEN`].
pub fn plain_number(v: &str) -> Option<Cow<'_, str>> {
    let (mantissa, exponent) = match v.find(['e', 'E']) {
        Some(i) => (&v[..i], Some(&v[i + 1..])),
        None => (v, None),
    };
    let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if (int.is_empty() && frac.is_empty()) || !digits(int) || !digits(frac) {
        return None;
    }
    let Some(exponent) = exponent else {
        return Some(Cow::Borrowed(v));
    };
    let (negative, magnitude) = match exponent.as_bytes().first() {
        Some(b'-') => (true, &exponent[1..]),
        Some(b'+') => (false, &exponent[1..]),
        _ => (false, exponent),
    };
    if magnitude.is_empty() || !digits(magnitude) {
        return None;
    }
    let magnitude = magnitude.trim_start_matches('0');
    let shift: usize = if magnitude.is_empty() {
        0
    } else {
        magnitude.parse().ok().filter(|n| *n <= MAX_NUMBER_LEN)?
    };
    // Every digit, and where the point goes among them once the exponent is applied.
    let all = format!("{int}{frac}");
    let (whole, fraction) = if negative {
        match int.len().checked_sub(shift) {
            Some(point) => (all[..point].to_string(), all[point..].to_string()),
            None => (String::new(), format!("{}{all}", "0".repeat(shift - int.len()))),
        }
    } else {
        let point = int.len() + shift;
        if point >= all.len() {
            (format!("{all}{}", "0".repeat(point - all.len())), String::new())
        } else {
            (all[..point].to_string(), all[point..].to_string())
        }
    };
    let whole = match whole.trim_start_matches('0') {
        "" => "0",
        w => w,
    };
    let fraction = fraction.trim_end_matches('0');
    let plain = if fraction.is_empty() {
        whole.to_string()
    } else {
        format!("{whole}.{fraction}")
    };
    (plain.len() <= MAX_NUMBER_LEN).then_some(Cow::Owned(plain))
}

/// A [`plain_number`] whose value is whole (`1000`, `1e3`, `1.5e1`, `15.0`), as an integer; `None` otherwise
/// or beyond `i64`.
pub fn whole_number(v: &str) -> Option<i64> {
    let plain = plain_number(v)?;
    let (int, frac) = plain.split_once('.').unwrap_or((&plain, ""));
    if !frac.bytes().all(|b| b == b'0') {
        return None;
    }
    int.parse().ok()
}

/// The smallest step of an amount ([`QueryMap::non_negative_amount`]): one micro-unit, `0.000001`.
pub fn amount_step() -> Value {
    serde_json::from_str(&Amount::from_micros(1).to_string()).expect("an amount renders as a JSON number")
}

/// A parameter read by [`QueryMap::non_negative_amount`]: a number of 0 or more with at most 6 decimals.
pub struct AmountQuery;

impl PartialSchema for AmountQuery {
    fn schema() -> RefOr<Schema> {
        schema_of(json!({"type": "number", "minimum": 0, "multipleOf": amount_step()}))
    }
}

impl ToSchema for AmountQuery {}

/// A parameter read by [`QueryMap::cents_ceil`]: cents from 0 to below [`CENTS_BOUND`], any number of decimals
/// (rounded up to the next 1e-4 cent).
pub struct CentsQuery;

impl PartialSchema for CentsQuery {
    fn schema() -> RefOr<Schema> {
        schema_of(json!({"type": "number", "minimum": 0, "exclusiveMaximum": CENTS_BOUND}))
    }
}

impl ToSchema for CentsQuery {}

/// A parameter read by [`QueryMap::timestamp`]: an RFC 3339 time or a bare date (an ISO 8601 time without an
/// offset is also read, as UTC).
pub struct TimestampQuery;

/// The two written forms of a time that every time parameter takes.
fn time_forms() -> [Value; 2] {
    [
        json!({"type": "string", "format": "date-time"}),
        json!({"type": "string", "format": "date"}),
    ]
}

impl PartialSchema for TimestampQuery {
    fn schema() -> RefOr<Schema> {
        schema_of(json!({"anyOf": time_forms()}))
    }
}

impl ToSchema for TimestampQuery {}

/// A parameter read by [`QueryMap::instant`]: Unix milliseconds from [`MIN_MILLIS`] on, or a time written as
/// [`TimestampQuery`] takes it.
pub struct InstantQuery;

impl PartialSchema for InstantQuery {
    fn schema() -> RefOr<Schema> {
        let [time, date] = time_forms();
        schema_of(json!({"anyOf": [{"type": "integer", "minimum": MIN_MILLIS}, time, date]}))
    }
}

impl ToSchema for InstantQuery {}

/// An integer schema: `format`, then the bounds and the default.
fn int_schema(format: &str, min: i64, max: i64, default: i64) -> RefOr<Schema> {
    schema_of(json!({"type": "integer", "format": format, "minimum": min, "maximum": max, "default": default}))
}

/// `limit` of a paged route: an integer from 1 to `MAX`, `DEFAULT` when absent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limit<const DEFAULT: u32, const MAX: u32>(pub u32);

impl<const DEFAULT: u32, const MAX: u32> Limit<DEFAULT, MAX> {
    /// Smallest accepted `limit` of every paged route.
    pub const MIN: u32 = 1;
    pub const DEFAULT: u32 = DEFAULT;
    pub const MAX: u32 = MAX;

    pub const fn get(self) -> u32 {
        self.0
    }
}

impl<const DEFAULT: u32, const MAX: u32> Param for Limit<DEFAULT, MAX> {
    fn read(q: &QueryMap, name: &str) -> ApiResult<Self> {
        let n = q.int(name, IntRange::new(i64::from(Self::MIN), i64::from(MAX)))?;
        Ok(Limit(n.map_or(DEFAULT, |n| n as u32)))
    }
}

impl<const DEFAULT: u32, const MAX: u32> PartialSchema for Limit<DEFAULT, MAX> {
    fn schema() -> RefOr<Schema> {
        int_schema("int32", Self::MIN.into(), MAX.into(), DEFAULT.into())
    }
}

impl<const DEFAULT: u32, const MAX: u32> ToSchema for Limit<DEFAULT, MAX> {}

/// `offset`: items to skip, an integer from 0 to [`MAX_OFFSET`], 0 when absent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Offset(pub u32);

impl Offset {
    pub const fn get(self) -> u32 {
        self.0
    }
}

impl Param for Offset {
    fn read(q: &QueryMap, name: &str) -> ApiResult<Self> {
        let n = q.int(name, IntRange::new(0, MAX_OFFSET.into()))?;
        Ok(Offset(n.map_or(0, |n| n as u32)))
    }
}

impl PartialSchema for Offset {
    fn schema() -> RefOr<Schema> {
        int_schema("int32", 0, MAX_OFFSET.into(), 0)
    }
}

impl ToSchema for Offset {}

/// An integer from `MIN` to `MAX`, `DEFAULT` when absent: "`name` must be an integer from `MIN` to `MAX`".
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Int<const MIN: i64, const MAX: i64, const DEFAULT: i64>(pub i64);

impl<const MIN: i64, const MAX: i64, const DEFAULT: i64> Int<MIN, MAX, DEFAULT> {
    pub const RANGE: IntRange = IntRange::new(MIN, MAX);
    pub const DEFAULT: i64 = DEFAULT;

    pub const fn get(self) -> i64 {
        self.0
    }
}

impl<const MIN: i64, const MAX: i64, const DEFAULT: i64> Param for Int<MIN, MAX, DEFAULT> {
    fn read(q: &QueryMap, name: &str) -> ApiResult<Self> {
        Ok(Int(q.int(name, Self::RANGE)?.unwrap_or(DEFAULT)))
    }
}

impl<const MIN: i64, const MAX: i64, const DEFAULT: i64> PartialSchema for Int<MIN, MAX, DEFAULT> {
    fn schema() -> RefOr<Schema> {
        int_schema("int64", MIN, MAX, DEFAULT)
    }
}

impl<const MIN: i64, const MAX: i64, const DEFAULT: i64> ToSchema for Int<MIN, MAX, DEFAULT> {}

/// `true` or `false` (also `1` / `0`, any case), `DEFAULT` when absent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Flag<const DEFAULT: bool>(pub bool);

impl<const DEFAULT: bool> Param for Flag<DEFAULT> {
    fn read(q: &QueryMap, name: &str) -> ApiResult<Self> {
        Ok(Flag(q.boolean(name)?.unwrap_or(DEFAULT)))
    }
}

impl<const DEFAULT: bool> PartialSchema for Flag<DEFAULT> {
    fn schema() -> RefOr<Schema> {
        schema_of(json!({"type": "boolean", "default": DEFAULT}))
    }
}

impl<const DEFAULT: bool> ToSchema for Flag<DEFAULT> {}
