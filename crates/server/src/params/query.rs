//! The query string as name → value ([`QueryMap`]) with its typed readers, the extractors of a route's
//! parameters ([`ValidQuery`], [`Path`]) and the checks between two parameters.

use std::collections::BTreeMap;

use axum::{extract::FromRequestParts, http::request::Parts};
use crossbook_core::{Amount, Timestamp, arb::MicroUsd};
use serde::de::DeserializeOwned;

use super::{CENTS_BOUND, IntRange, MIN_MILLIS, Param, ParamEnum, plain_number, text_value, whole_number};
use crate::error::{ApiError, ApiResult};

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
        match whole_number(v) {
            Some(n) if (range.min..=range.max).contains(&n) => Ok(Some(n)),
            _ => Err(ApiError::invalid(
                name,
                format!("{name} must be an integer from {} to {}", range.min, range.max),
            )),
        }
    }

    /// Parameter `name` as its type reads it ([`Param`]): `q.get("limit")?` in a route's [`FromQuery`], the
    /// field's type saying which rules apply.
    pub fn get<T: Param>(&self, name: &str) -> ApiResult<T> {
        T::read(self, name)
    }

    /// A non-negative decimal (integer or up to 6 decimals) as exact micro-units: `min_volume`,
    /// `min_liquidity`, `min_trade_size`, `min_net_cents`, ...
    pub fn non_negative_amount(&self, name: &str) -> ApiResult<Option<Amount>> {
        self.plain_decimal(
            name,
            |v| v.parse::<Amount>().ok().filter(|a| a.micros() >= 0),
            || format!("{name} must be a number of 0 or more with at most 6 decimals (e.g. 1000, 2.5 or 1e3)"),
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
            || format!("{name} must be a number of cents from 0 to below {CENTS_BOUND} (e.g. 0, 1, 2.5 or 1e-1)"),
        )
    }

    /// The one reading of money in a query: a number ([`plain_number`]: no sign or space; an exponent is
    /// written out), then `parse` of its plain digits; anything else is a 400 naming `name` with `message`.
    fn plain_decimal<T>(
        &self,
        name: &str,
        parse: impl FnOnce(&str) -> Option<T>,
        message: impl FnOnce() -> String,
    ) -> ApiResult<Option<T>> {
        let Some(v) = self.raw(name) else { return Ok(None) };
        match plain_number(v).and_then(|plain| parse(&plain)) {
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
            Some(v) if plain_number(v).is_some() => match whole_number(v) {
                Some(ms) if ms >= MIN_MILLIS => Ok(Some(Timestamp::from_millis(ms))),
                Some(secs) => Err(ApiError::invalid(
                    name,
                    format!(
                        "{name} must be in Unix milliseconds, not seconds: {secs} is before 2001 as milliseconds \
                         (as seconds, send {name}={})",
                        secs.saturating_mul(1000)
                    ),
                )),
                None => Err(Self::bad_instant(name)),
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
