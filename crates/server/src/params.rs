//! Strict query and path parameters (contracts §1).
//!
//! axum's `Query<T>` rejects with a message that does not name the parameter, so every route parses the raw
//! query string into a [`QueryMap`] and reads each parameter through one of its typed accessors. The rules,
//! the same on every route:
//!
//! - Unknown parameters are ignored; a parameter given twice is an error.
//! - A parameter given empty (`?limit=`) is an error, never "absent".
//! - Values are validated against their range or enum and never clamped; integers are plain decimal integers.
//! - Money thresholds (`min_*`) are non-negative decimals parsed exactly into micro-units, never `f64`.
//! - Timestamps are ISO 8601 / RFC 3339 (or a bare date), or Unix milliseconds (from 2001 on) where the spec says so.
//! - Every error is 400 with `param` naming the parameter and a `detail` such as
//!   "limit must be an integer from 1 to 100".
//!
//! A route declares its parameters as a struct that implements [`FromQuery`] (the validated values) and
//! `utoipa::IntoParams` (their documentation), and takes it with the [`ValidQuery`] extractor.

use std::collections::BTreeMap;

use axum::{extract::FromRequestParts, http::request::Parts};
use crossbook_core::{Amount, Timestamp, arb::MicroUsd};

/// 2001-01-01T00:00:00Z in Unix milliseconds: the earliest time a millisecond parameter accepts (see
/// [`QueryMap::instant`]).
pub const MIN_MILLIS: i64 = 978_307_200_000;
use serde::de::DeserializeOwned;

use crate::error::{ApiError, ApiResult};

/// Longest accepted free-text value (`q`, ids), in characters.
pub const MAX_TEXT_LEN: usize = 256;
/// Cents parameters are below this (`MicroUsd::parse_cents_ceil` takes at most twelve integer digits).
pub const CENTS_BOUND: i64 = 1_000_000_000_000;

/// Largest `offset`.
pub const MAX_OFFSET: u32 = 1_000_000;

/// `offset` when absent: from the first item.
pub const DEFAULT_OFFSET: u32 = 0;
/// Accepted `offset`s.
pub const OFFSET_RANGE: IntRange = IntRange::new(0, MAX_OFFSET as i64);

/// An inclusive integer range with an optional default, for the message and the check.
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

/// The `limit` of a paged route: `1..=max`, `default` when absent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limit {
    pub default: u32,
    pub max: u32,
}

impl Limit {
    /// Smallest accepted `limit` of every paged route.
    pub const MIN: u32 = 1;

    pub const fn new(default: u32, max: u32) -> Self {
        Limit { default, max }
    }
}

/// An enum accepted as a query parameter: its wire spellings, in the order they are listed in messages.
pub trait ParamEnum: Copy + 'static {
    const VALUES: &'static [(&'static str, Self)];

    /// `a, b or c`, for messages.
    fn listing() -> String {
        let names: Vec<&str> = Self::VALUES.iter().map(|(n, _)| *n).collect();
        match names.as_slice() {
            [] => String::new(),
            [one] => (*one).to_string(),
            [init @ .., last] => format!("{} or {last}", init.join(", ")),
        }
    }
}

/// The query string as name → value, decoded, with repeats rejected (but for the names a route lets repeat).
#[derive(Debug, Clone, Default)]
pub struct QueryMap {
    pairs: BTreeMap<String, String>,
    repeated: BTreeMap<String, Vec<String>>,
}

impl QueryMap {
    /// Decodes `a=1&b=x%20y` (`+` is a space). A name given twice is an error naming it.
    pub fn parse(raw: &str) -> ApiResult<Self> {
        QueryMap::parse_repeating(raw, &[])
    }

    /// [`QueryMap::parse`], except that the names in `repeating` may be given many times ([`QueryMap::all`]).
    pub fn parse_repeating(raw: &str, repeating: &[&str]) -> ApiResult<Self> {
        let mut q = QueryMap::default();
        for (k, v) in url::form_urlencoded::parse(raw.as_bytes()) {
            let k = k.into_owned();
            if repeating.contains(&k.as_str()) {
                q.repeated.entry(k).or_default().push(v.into_owned());
                continue;
            }
            if q.pairs.contains_key(&k) {
                return Err(ApiError::invalid(&k, format!("{k} must be given at most once")));
            }
            q.pairs.insert(k, v.into_owned());
        }
        Ok(q)
    }

    /// Every value of a repeating parameter, in the order given.
    pub fn all(&self, name: &str) -> &[String] {
        self.repeated.get(name).map(Vec::as_slice).unwrap_or_default()
    }

    /// The raw decoded value, if the parameter was given (possibly empty).
    pub fn raw(&self, name: &str) -> Option<&str> {
        self.pairs.get(name).map(String::as_str)
    }

    /// Whether the parameter was given at all.
    pub fn contains(&self, name: &str) -> bool {
        self.pairs.contains_key(name)
    }

    /// Free text, checked by [`text_value`].
    pub fn text(&self, name: &str) -> ApiResult<Option<String>> {
        self.raw(name).map(|v| text_value(name, v)).transpose()
    }

    /// A required free-text parameter: absent → 400 `missing_parameter`.
    pub fn required_text(&self, name: &str) -> ApiResult<String> {
        self.text(name)?.ok_or_else(|| ApiError::missing(name))
    }

    /// An integer in `range`: "`name` must be an integer from `min` to `max`".
    pub fn int(&self, name: &str, range: IntRange) -> ApiResult<Option<i64>> {
        let Some(v) = self.raw(name) else { return Ok(None) };
        match v.parse::<i64>() {
            Ok(n) if (range.min..=range.max).contains(&n) => Ok(Some(n)),
            _ => Err(ApiError::invalid(
                name,
                format!("{name} must be an integer from {} to {}", range.min, range.max),
            )),
        }
    }

    /// `limit`: an integer from 1 to `spec.max`, `spec.default` when absent.
    pub fn limit(&self, spec: Limit) -> ApiResult<u32> {
        let n = self.int("limit", IntRange::new(i64::from(Limit::MIN), i64::from(spec.max)))?;
        Ok(n.map_or(spec.default, |n| n as u32))
    }

    /// `offset`: an integer from 0 to [`MAX_OFFSET`], 0 when absent.
    pub fn offset(&self) -> ApiResult<u32> {
        let n = self.int("offset", OFFSET_RANGE)?;
        Ok(n.map_or(DEFAULT_OFFSET, |n| n as u32))
    }

    /// A non-negative decimal (integer or up to 6 decimals) as exact micro-units: `min_volume`,
    /// `min_liquidity`, `min_trade_size`, `min_net_cents`, ...
    pub fn non_negative_amount(&self, name: &str) -> ApiResult<Option<Amount>> {
        self.plain_decimal(
            name,
            |v| v.parse::<Amount>().ok().filter(|a| a.micros() >= 0),
            || format!("{name} must be a number of 0 or more with at most 6 decimals, written with digits and at most one point (e.g. 1000 or 2.5)"),
        )
    }

    /// A non-negative decimal number of cents as micro-dollars, rounded up to the next 1e-4 cent (which keeps
    /// an inclusive comparison against whole micro-dollars exact): `min_net_cents`.
    pub fn cents_ceil(&self, name: &str) -> ApiResult<Option<MicroUsd>> {
        self.plain_decimal(
            name,
            |v| {
                (v.matches('.').count() <= 1 && v.len() <= 24)
                    .then(|| MicroUsd::parse_cents_ceil(v).ok())
                    .flatten()
            },
            || format!("{name} must be a number of cents below {CENTS_BOUND}, written with digits and at most one point (e.g. 0, 1 or 2.5)"),
        )
    }

    /// The one reading of money in a query: plain digits with an optional decimal point (no sign, exponent or
    /// space), then `parse`; anything else is a 400 naming `name` with `message`.
    fn plain_decimal<T>(
        &self,
        name: &str,
        parse: impl FnOnce(&str) -> Option<T>,
        message: impl FnOnce() -> String,
    ) -> ApiResult<Option<T>> {
        let Some(v) = self.raw(name) else { return Ok(None) };
        let plain = !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit() || b == b'.');
        match plain.then(|| parse(v)).flatten() {
            Some(x) => Ok(Some(x)),
            None => Err(ApiError::invalid(name, message())),
        }
    }

    /// An ISO 8601 / RFC 3339 timestamp, or a bare date (midnight UTC); no offset means UTC.
    pub fn timestamp(&self, name: &str) -> ApiResult<Option<Timestamp>> {
        let Some(v) = self.raw(name) else { return Ok(None) };
        if v.trim().is_empty() {
            return Err(Self::bad_timestamp(name));
        }
        Timestamp::parse_iso(v).map(Some).map_err(|_| Self::bad_timestamp(name))
    }

    fn bad_timestamp(name: &str) -> ApiError {
        ApiError::invalid(
            name,
            format!("{name} must be an ISO 8601 timestamp (e.g. 2026-11-21T19:15:00Z) or a date (e.g. 2026-11-21)"),
        )
    }

    /// A time written either way: Unix milliseconds (digits only), or as [`QueryMap::timestamp`] reads it
    /// (RFC 3339, ISO 8601 without offset as UTC, or a bare date as midnight UTC).
    ///
    /// Digits that would be a time before 2001 as milliseconds are refused: such a value is almost surely Unix
    /// seconds, and answering it with an empty range would hide the mistake.
    pub fn instant(&self, name: &str) -> ApiResult<Option<Timestamp>> {
        match self.raw(name) {
            Some(v) if !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit()) => match v.parse::<i64>() {
                Ok(ms) if ms >= MIN_MILLIS => Ok(Some(Timestamp::from_millis(ms))),
                Ok(secs) => Err(ApiError::invalid(
                    name,
                    format!(
                        "{name} must be in Unix milliseconds, not seconds: {secs} is before 2001 as milliseconds \
                         (as seconds, send {name}={})",
                        secs * 1000
                    ),
                )),
                Err(_) => Err(Self::bad_instant(name)),
            },
            Some(v) if Timestamp::parse_iso(v).is_ok() => self.timestamp(name),
            Some(_) => Err(Self::bad_instant(name)),
            None => Ok(None),
        }
    }

    fn bad_instant(name: &str) -> ApiError {
        ApiError::invalid(
            name,
            format!(
                "{name} must be Unix milliseconds (e.g. 1763752500000), an ISO 8601 timestamp (e.g. \
                 2026-11-21T19:15:00Z) or a date (e.g. 2026-11-21)"
            ),
        )
    }

    /// `true` or `false` (also `1` / `0`), case-insensitive.
    pub fn boolean(&self, name: &str) -> ApiResult<Option<bool>> {
        let Some(v) = self.raw(name) else { return Ok(None) };
        match v.to_ascii_lowercase().as_str() {
            "true" | "1" => Ok(Some(true)),
            "false" | "0" => Ok(Some(false)),
            _ => Err(ApiError::invalid(name, format!("{name} must be true or false"))),
        }
    }

    /// One of an enum's spellings, exactly: "`name` must be one of a, b or c".
    pub fn one_of<T: ParamEnum>(&self, name: &str) -> ApiResult<Option<T>> {
        let Some(v) = self.raw(name) else { return Ok(None) };
        T::VALUES
            .iter()
            .find(|(spelling, _)| *spelling == v)
            .map(|(_, value)| Some(*value))
            .ok_or_else(|| ApiError::invalid(name, format!("{name} must be one of {}", T::listing())))
    }
}

/// Free text (a query or path parameter), trimmed: empty (or only spaces) is an error, as are control
/// characters and more than [`MAX_TEXT_LEN`] characters.
pub fn text_value(name: &str, raw: &str) -> ApiResult<String> {
    let t = raw.trim();
    if t.is_empty() {
        return Err(ApiError::invalid(name, format!("{name} must not be empty")));
    }
    if t.chars().count() > MAX_TEXT_LEN {
        return Err(ApiError::invalid(
            name,
            format!("{name} must be at most {MAX_TEXT_LEN} characters"),
        ));
    }
    // NUL and other control characters cannot be stored or matched (PostgreSQL rejects NUL in text).
    if t.chars().any(char::is_control) {
        return Err(ApiError::invalid(
            name,
            format!("{name} must not contain control characters"),
        ));
    }
    Ok(t.to_string())
}

/// Checks that `start <= end` when both are set: "`start` must not be after `end`".
pub fn check_order<T: PartialOrd>(start_name: &str, start: Option<T>, end_name: &str, end: Option<T>) -> ApiResult<()> {
    match (start, end) {
        (Some(s), Some(e)) if s > e => Err(ApiError::invalid(
            start_name,
            format!("{start_name} must not be after {end_name}"),
        )),
        _ => Ok(()),
    }
}

/// Checks that two parameters are given together: "`a` must be set together with `b`".
pub fn check_together<A, B>(a_name: &str, a: &Option<A>, b_name: &str, b: &Option<B>) -> ApiResult<()> {
    match (a.is_some(), b.is_some()) {
        (true, false) => Err(ApiError::invalid(
            a_name,
            format!("{a_name} must be set together with {b_name}"),
        )),
        (false, true) => Err(ApiError::invalid(
            b_name,
            format!("{b_name} must be set together with {a_name}"),
        )),
        _ => Ok(()),
    }
}

impl<S: Send + Sync> FromRequestParts<S> for QueryMap {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Self, ApiError> {
        QueryMap::parse(parts.uri.query().unwrap_or(""))
    }
}

/// A route's validated parameters, built from the raw query.
pub trait FromQuery: Sized {
    /// Parameters that may be given many times (read with [`QueryMap::all`]); every other one at most once.
    const REPEATING: &'static [&'static str] = &[];

    fn from_query(q: &QueryMap) -> ApiResult<Self>;
}

/// Extracts a [`FromQuery`] type; any invalid parameter rejects with 400 naming it.
#[derive(Debug, Clone)]
pub struct ValidQuery<T>(pub T);

impl<T: FromQuery, S: Send + Sync> FromRequestParts<S> for ValidQuery<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        let _ = state;
        let q = QueryMap::parse_repeating(parts.uri.query().unwrap_or(""), T::REPEATING)?;
        T::from_query(&q).map(ValidQuery)
    }
}

/// Path parameters, rejecting with an [`ApiError`] instead of axum's plain-text body.
#[derive(Debug, Clone)]
pub struct Path<T>(pub T);

impl<T, S> FromRequestParts<S> for Path<T>
where
    T: DeserializeOwned + Send,
    S: Send + Sync,
{
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        match axum::extract::Path::<T>::from_request_parts(parts, state).await {
            Ok(axum::extract::Path(v)) => Ok(Path(v)),
            Err(rejection) => Err(ApiError::invalid_request(rejection.body_text())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Clone, Copy, PartialEq)]
    enum Color {
        Red,
        Blue,
    }
    impl ParamEnum for Color {
        const VALUES: &'static [(&'static str, Self)] = &[("red", Color::Red), ("blue", Color::Blue)];
    }

    fn q(s: &str) -> QueryMap {
        QueryMap::parse(s).unwrap()
    }

    fn err(r: ApiResult<impl std::fmt::Debug>) -> (Option<String>, String) {
        match r.unwrap_err() {
            ApiError::InvalidParameter { param, detail } | ApiError::MissingParameter { param, detail } => {
                (param, detail)
            }
            other => panic!("unexpected {other:?}"),
        }
    }

    #[test]
    fn decodes_and_rejects_repeats() {
        let m = q("q=btc+up%2Fdown&x=1");
        assert_eq!(m.raw("q"), Some("btc up/down"));
        let (p, d) = err(QueryMap::parse("limit=1&limit=2"));
        assert_eq!(p.as_deref(), Some("limit"));
        assert_eq!(d, "limit must be given at most once");
    }

    #[test]
    fn limit_and_offset_are_strict() {
        let spec = Limit::new(30, 100);
        assert_eq!(q("").limit(spec).unwrap(), 30);
        assert_eq!(q("limit=1").limit(spec).unwrap(), 1);
        assert_eq!(q("limit=100").limit(spec).unwrap(), 100);
        for bad in [
            "limit=0",
            "limit=101",
            "limit=",
            "limit=-1",
            "limit=1.5",
            "limit=abc",
            "limit=%2010",
            "limit=99999999999999999999",
        ] {
            let (p, d) = err(q(bad).limit(spec));
            assert_eq!(p.as_deref(), Some("limit"), "{bad}");
            assert_eq!(d, "limit must be an integer from 1 to 100", "{bad}");
        }
        assert_eq!(q("offset=1000000").offset().unwrap(), 1_000_000);
        for bad in ["offset=-1", "offset=1000001", "offset="] {
            let (_, d) = err(q(bad).offset());
            assert_eq!(d, "offset must be an integer from 0 to 1000000", "{bad}");
        }
    }

    #[test]
    fn amounts_are_exact_and_non_negative() {
        let m = q("a=1000&b=2.5&c=0.000001&d=-1&e=1e3&f=&g=0.1234567&h=+1");
        assert_eq!(m.non_negative_amount("a").unwrap(), Some(Amount::from_units(1000)));
        assert_eq!(
            m.non_negative_amount("b").unwrap(),
            Some(Amount::from_micros(2_500_000))
        );
        assert_eq!(m.non_negative_amount("c").unwrap(), Some(Amount::from_micros(1)));
        for bad in ["d", "e", "f", "g", "h"] {
            let (p, _) = err(m.non_negative_amount(bad));
            assert_eq!(p.as_deref(), Some(bad));
        }
        assert_eq!(m.non_negative_amount("absent").unwrap(), None);
    }

    #[test]
    fn timestamps_and_booleans() {
        let m = q("a=2026-11-21&b=2026-11-21T19:15:00%2B02:00&c=yesterday&d=&e=1763752500000&f=-5");
        assert_eq!(m.timestamp("a").unwrap().unwrap().to_iso(), "2026-11-21T00:00:00.000Z");
        assert_eq!(m.timestamp("b").unwrap().unwrap().to_iso(), "2026-11-21T17:15:00.000Z");
        assert_eq!(err(m.timestamp("c")).0.as_deref(), Some("c"));
        assert_eq!(err(m.timestamp("d")).0.as_deref(), Some("d"));
        assert_eq!(m.instant("e").unwrap(), Some(Timestamp::from_millis(1_763_752_500_000)));
        assert_eq!(err(m.instant("f")).0.as_deref(), Some("f"));
        assert_eq!(m.instant("a").unwrap(), m.timestamp("a").unwrap());
        // Unix seconds are refused, naming the milliseconds they would be.
        let m = q("s=1763752500&t=978307200000&u=978307199999");
        let (param, detail) = err(m.instant("s"));
        assert_eq!(param.as_deref(), Some("s"));
        assert!(
            detail.contains("milliseconds") && detail.contains("s=1763752500000"),
            "{detail}"
        );
        assert_eq!(m.instant("t").unwrap(), Some(Timestamp::from_millis(MIN_MILLIS)));
        assert!(m.instant("u").is_err());
        let m = q("a=true&b=FALSE&c=1&d=yes&e=");
        assert_eq!(m.boolean("a").unwrap(), Some(true));
        assert_eq!(m.boolean("b").unwrap(), Some(false));
        assert_eq!(m.boolean("c").unwrap(), Some(true));
        assert_eq!(err(m.boolean("d")).1, "d must be true or false");
        assert!(m.boolean("e").is_err());
    }

    #[test]
    fn enums_and_text() {
        let m = q("c=red&d=Red&e=&t=%20%20&u=+btc+");
        assert_eq!(m.one_of::<Color>("c").unwrap(), Some(Color::Red));
        assert_eq!(err(m.one_of::<Color>("d")).1, "d must be one of red or blue");
        assert!(m.one_of::<Color>("e").is_err());
        assert_eq!(err(m.text("t")).1, "t must not be empty");
        assert_eq!(err(q("q=a%00b").text("q")).1, "q must not contain control characters");
        // The bound the message names is the parser's.
        assert!(q("c=999999999999.9999").cents_ceil("c").is_ok());
        for bad in ["1000000000000", "1e300"] {
            let message = err(q(&format!("c={bad}")).cents_ceil("c")).1;
            assert!(message.contains(&format!("below {CENTS_BOUND}")), "{bad}: {message}");
        }
        assert_eq!(m.text("u").unwrap().as_deref(), Some("btc"));
        let long = format!("q={}", "x".repeat(MAX_TEXT_LEN + 1));
        assert!(q(&long).text("q").is_err());
        let (p, d) = err(q("").required_text("q"));
        assert_eq!((p.as_deref(), d.as_str()), (Some("q"), "q is required"));
    }

    #[test]
    fn cross_parameter_checks() {
        assert!(check_order("start_time", Some(2), "end_time", Some(1)).is_err());
        assert!(check_order("start_time", Some(1), "end_time", Some(1)).is_ok());
        assert!(check_order::<i64>("start_time", None, "end_time", Some(1)).is_ok());
        let (p, _) = err(check_together("start_time", &Some(1), "end_time", &None::<i64>));
        assert_eq!(p.as_deref(), Some("start_time"));
        let (p, _) = err(check_together("start_time", &None::<i64>, "end_time", &Some(1)));
        assert_eq!(p.as_deref(), Some("end_time"));
    }
}
