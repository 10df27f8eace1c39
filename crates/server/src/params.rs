//! Strict query and path parameters (contracts §1).
//!
//! axum's `Query<T>` rejects with a message that does not name the parameter, so every route parses the raw
//! query string into a [`QueryMap`] and reads each parameter through one of its typed accessors. The rules,
//! the same on every route:
//!
//! - Unknown parameters are ignored; a parameter given twice is an error.
//! - A parameter given empty (`?limit=`) is an error, never "absent".
//! - Values are validated against their range or enum and never clamped.
//! - Numbers are written as JSON writes them, without a sign: digits with at most one point, optionally with an
//!   exponent (`1e3`, `2.5E-1`), read exactly (never through `f64`) as the plain form (`1000`, `0.25`) would
//!   be. An integer parameter takes any such number whose value is whole (`1.5e1` is 15).
//! - Money thresholds (`min_*`) are non-negative decimals parsed exactly into micro-units, never `f64`.
//! - Timestamps are ISO 8601 / RFC 3339 (or a bare date), or Unix milliseconds (from 2001 on) where the spec says so.
//! - Every error is 400 with `param` naming the parameter and a `detail` such as
//!   "limit must be an integer from 1 to 100".
//!
//! A route declares its parameters as a struct that implements [`FromQuery`] (the validated values) and
//! `utoipa::IntoParams` (their documentation), and takes it with the [`ValidQuery`] extractor. Each field's type
//! is a typed parameter ([`Limit`], [`Offset`], [`Int`], [`Flag`], [`Text`], an enum or [`Defaulted`] enum) that
//! both reads the parameter ([`Param`], through [`QueryMap::get`]) and documents it (`PartialSchema`), so a rule
//! is written once. A value read by one of the typed readers below (amounts, cents, times) is documented with
//! that reader's schema type (`#[param(value_type = Option<AmountQuery>, inline)]` for
//! [`QueryMap::non_negative_amount`], ...), declared here beside the reader.

use std::{borrow::Cow, collections::BTreeMap};

use axum::{extract::FromRequestParts, http::request::Parts};
use crossbook_core::{Amount, Timestamp, arb::MicroUsd};
use serde_json::{Value, json};
use utoipa::{
    PartialSchema, ToSchema,
    openapi::{RefOr, Schema},
};

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

// ------------------------------------------------------------------------------------------------ schemas
//
// The documented form of each typed reader above, for `#[param(value_type = Option<..>, inline)]`: each states
// in schema keywords what its reader accepts, from the constants the reader uses.

fn schema_of(v: Value) -> RefOr<Schema> {
    serde_json::from_value(v).expect("a parameter schema is a valid schema")
}

/// `schema` with `keywords` (a JSON object) added or replaced: a narrower rule over a reader's schema, such as
/// a maximum over [`AmountQuery`] or a default over an enum's values.
pub fn with_keywords(schema: RefOr<Schema>, keywords: Value) -> RefOr<Schema> {
    let mut v = serde_json::to_value(schema).expect("a schema serialises");
    if let (Some(m), Value::Object(k)) = (v.as_object_mut(), keywords) {
        m.extend(k);
    }
    schema_of(v)
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

/// At least one character that is not a space, and none that is a control character (U+0000–U+001F,
/// U+007F–U+009F): what [`text_value`] keeps.
pub const TEXT_PATTERN: &str = "^(?=.*\\S)[^\\u0000-\\u001F\\u007F-\\u009F]*$";

/// The schema keywords of [`text_value`]'s rules: 1 to [`MAX_TEXT_LEN`] characters, not only spaces, and no
/// control characters.
pub fn text_keywords() -> serde_json::Map<String, Value> {
    let mut m = serde_json::Map::new();
    m.insert("minLength".into(), Value::from(1));
    m.insert("maxLength".into(), Value::from(MAX_TEXT_LEN));
    m.insert("pattern".into(), Value::from(TEXT_PATTERN));
    m
}

/// A free-text value read by [`text_value`] (a body field; query parameters get the same keywords from the
/// document's pass over every free-text parameter).
pub struct TextValue;

impl PartialSchema for TextValue {
    fn schema() -> RefOr<Schema> {
        let mut m = text_keywords();
        m.insert("type".into(), Value::from("string"));
        schema_of(Value::Object(m))
    }
}

impl ToSchema for TextValue {}

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

// ------------------------------------------------------------------------------------------------ typed parameters
//
// One type per kind of parameter, carrying its bounds, default and spellings: it reads the parameter
// ([`Param`]) and documents it (`PartialSchema`) from the same constants, so a route states each rule once, in
// the type of a field of its parameters struct:
//
//     /// Page size.
//     #[param(inline, required = false)]
//     pub limit: Limit<30, 100>,
//
// read in its `FromQuery` with `limit: q.get("limit")?`. `inline` puts the type's schema in the parameter (not
// a `$ref`); `required = false` marks a parameter with a default, which utoipa cannot tell from a field that
// is never `None`.

/// A value read from one query parameter ([`QueryMap::get`]).
pub trait Param: Sized {
    /// Parameter `name` of `q`: its value, its default when absent, or the 400 naming it.
    fn read(q: &QueryMap, name: &str) -> ApiResult<Self>;
}

/// An optional parameter: `None` when absent.
impl<T: OptionalParam> Param for Option<T> {
    fn read(q: &QueryMap, name: &str) -> ApiResult<Self> {
        T::read_given(q, name)
    }
}

/// A parameter without a default: absent is `None` as an [`Option`], and 400 `missing_parameter` otherwise.
pub trait OptionalParam: Sized {
    /// `None` when `name` is absent.
    fn read_given(q: &QueryMap, name: &str) -> ApiResult<Option<Self>>;
}

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

/// Free text, as [`text_value`] keeps it: trimmed, 1 to [`MAX_TEXT_LEN`] characters, no control character.
/// Required as `Text`, optional as `Option<Text>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Text(pub String);

impl Text {
    pub fn into_inner(self) -> String {
        self.0
    }
}

impl std::ops::Deref for Text {
    type Target = str;

    fn deref(&self) -> &str {
        &self.0
    }
}

impl OptionalParam for Text {
    fn read_given(q: &QueryMap, name: &str) -> ApiResult<Option<Self>> {
        Ok(q.text(name)?.map(Text))
    }
}

impl Param for Text {
    fn read(q: &QueryMap, name: &str) -> ApiResult<Self> {
        q.required_text(name).map(Text)
    }
}

impl PartialSchema for Text {
    fn schema() -> RefOr<Schema> {
        TextValue::schema()
    }
}

impl ToSchema for Text {}

/// The schema of an enum parameter that has no schema of its own: a string, one of its spellings.
pub fn enum_schema<T: ParamEnum>() -> RefOr<Schema> {
    let names: Vec<&str> = T::VALUES.iter().map(|(n, _)| *n).collect();
    schema_of(json!({"type": "string", "enum": names}))
}

/// [`enum_schema`] described by its spellings: "`a` or `b`.", for an enum whose type has no documentation of
/// its own.
pub fn listed_enum_schema<T: ParamEnum>() -> RefOr<Schema> {
    let names: Vec<String> = T::VALUES.iter().map(|(n, _)| format!("`{n}`")).collect();
    let listing = match names.as_slice() {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} or {last}", init.join(", ")),
    };
    with_keywords(enum_schema::<T>(), json!({"description": format!("{listing}.")}))
}

/// An enum parameter without a default: one of its spellings, exactly.
impl<T: ParamEnum> OptionalParam for T {
    fn read_given(q: &QueryMap, name: &str) -> ApiResult<Option<Self>> {
        q.one_of(name)
    }
}

/// The value an enum parameter takes when absent, the same on every route that takes it.
pub trait ParamDefault: ParamEnum + PartialEq {
    const DEFAULT: Self;

    /// The wire spelling of [`ParamDefault::DEFAULT`].
    fn default_spelling() -> &'static str {
        Self::VALUES
            .iter()
            .find(|(_, v)| *v == Self::DEFAULT)
            .map(|(s, _)| *s)
            .expect("the default of an enum parameter is one of its values")
    }
}

/// An enum parameter with a default ([`ParamDefault`]): documented with the enum's own schema (its values) and
/// that default.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Defaulted<T>(pub T);

impl<T: ParamDefault> Param for Defaulted<T> {
    fn read(q: &QueryMap, name: &str) -> ApiResult<Self> {
        Ok(Defaulted(q.one_of(name)?.unwrap_or(T::DEFAULT)))
    }
}

// utoipa documents a field of a generic type through `ComposeSchema` (what its own derive emits for generic
// types, and what gives `PartialSchema`); the enum's schema is taken whole, so the generic argument utoipa
// passes is not needed.
impl<T: ParamDefault + PartialSchema> utoipa::__dev::ComposeSchema for Defaulted<T> {
    fn compose(_generics: Vec<RefOr<Schema>>) -> RefOr<Schema> {
        with_keywords(T::schema(), json!({"default": T::default_spelling()}))
    }
}

impl<T: ParamDefault + ToSchema> ToSchema for Defaulted<T> {}

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
        type L = Limit<30, 100>;
        let limit = |m: QueryMap| m.get::<L>("limit").map(L::get);
        assert_eq!(limit(q("")).unwrap(), 30);
        assert_eq!(limit(q("limit=1")).unwrap(), 1);
        assert_eq!(limit(q("limit=100")).unwrap(), 100);
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
            let (p, d) = err(limit(q(bad)));
            assert_eq!(p.as_deref(), Some("limit"), "{bad}");
            assert_eq!(d, "limit must be an integer from 1 to 100", "{bad}");
        }
        let offset = |m: QueryMap| m.get::<Offset>("offset").map(Offset::get);
        assert_eq!(offset(q("")).unwrap(), 0);
        assert_eq!(offset(q("offset=1000000")).unwrap(), 1_000_000);
        for bad in ["offset=-1", "offset=1000001", "offset="] {
            let (_, d) = err(offset(q(bad)));
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
        assert_eq!(m.non_negative_amount("e").unwrap(), Some(Amount::from_units(1000)));
        for bad in ["d", "f", "g", "h"] {
            let (p, _) = err(m.non_negative_amount(bad));
            assert_eq!(p.as_deref(), Some(bad));
        }
        assert_eq!(m.non_negative_amount("absent").unwrap(), None);
    }

    /// The exponent form reads as the plain form, exactly; a value too fine or not whole is still refused.
    #[test]
    fn exponents_read_as_the_plain_form() {
        for (written, plain) in [
            ("1e3", "1000"),
            ("1E3", "1000"),
            ("1e+3", "1000"),
            ("2.5E-1", "0.25"),
            ("25e-3", "0.025"),
            ("1.5e1", "15"),
            (".5e1", "5"),
            ("0.000001e6", "1"),
            ("123.456e2", "12345.6"),
            ("1e0", "1"),
            ("1000", "1000"),
            ("2.5", "2.5"),
        ] {
            assert_eq!(plain_number(written).as_deref(), Some(plain), "{written}");
            // `+` in a query string is a space: a client sends it as `%2B`.
            let exact = q(&format!("a={}", written.replace('+', "%2B")))
                .non_negative_amount("a")
                .unwrap();
            assert_eq!(
                exact,
                q(&format!("a={plain}")).non_negative_amount("a").unwrap(),
                "{written}"
            );
        }
        for bad in [
            "",
            "e3",
            "1e",
            "1e-",
            "-1e3",
            "1e3.5",
            "1.2.3e1",
            " 1e3",
            "1e3 ",
            "0x10",
            "1e99999999999",
            "inf",
            "NaN",
        ] {
            assert_eq!(plain_number(bad), None, "{bad:?}");
        }
        // More than 6 decimals once written out: refused as the plain form is.
        let (p, _) = err(q("a=1e-7").non_negative_amount("a"));
        assert_eq!(p.as_deref(), Some("a"));
        assert!(q("a=0.0000001").non_negative_amount("a").is_err());
        // Integers: any whole value, written either way.
        let limit = |m: QueryMap| m.get::<Limit<30, 100>>("limit").map(|l| l.get());
        for (written, n) in [("1e2", 100), ("1.5e1", 15), ("5E1", 50), ("15.0", 15), ("100", 100)] {
            assert_eq!(limit(q(&format!("limit={written}"))).unwrap(), n, "{written}");
        }
        for bad in ["1e3", "1.5", "2.5e0", "1e-1", "1e99999999999"] {
            assert!(limit(q(&format!("limit={bad}"))).is_err(), "{bad}");
        }
        // Cents keep any precision (rounded up), and milliseconds read the exponent form too.
        assert_eq!(
            q("c=2.5e-1").cents_ceil("c").unwrap(),
            q("c=0.25").cents_ceil("c").unwrap()
        );
        assert_eq!(
            q("t=1.7637525e12").instant("t").unwrap(),
            Some(Timestamp::from_millis(1_763_752_500_000))
        );
        assert!(q("t=1.5e0").instant("t").is_err());
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

    impl ParamDefault for Color {
        const DEFAULT: Self = Color::Blue;
    }

    impl PartialSchema for Color {
        fn schema() -> RefOr<Schema> {
            enum_schema::<Color>()
        }
    }

    fn schema<T: PartialSchema>() -> Value {
        serde_json::to_value(T::schema()).unwrap()
    }

    /// Each typed parameter documents the bounds and the default it reads with: the largest documented value
    /// is read, one more is refused, and absent reads as the documented default.
    #[test]
    fn typed_parameters_document_what_they_read() {
        fn check<T: Param + PartialSchema + std::fmt::Debug>(name: &str, as_int: impl Fn(T) -> i64) {
            let s = schema::<T>();
            let (min, max) = (s["minimum"].as_i64().unwrap(), s["maximum"].as_i64().unwrap());
            assert_eq!(
                as_int(q("").get::<T>(name).unwrap()),
                s["default"].as_i64().unwrap(),
                "{s}"
            );
            assert_eq!(as_int(q(&format!("{name}={max}")).get::<T>(name).unwrap()), max, "{s}");
            assert_eq!(as_int(q(&format!("{name}={min}")).get::<T>(name).unwrap()), min, "{s}");
            let (_, detail) = err(q(&format!("{name}={}", max + 1)).get::<T>(name));
            assert_eq!(detail, format!("{name} must be an integer from {min} to {max}"));
            assert!(q(&format!("{name}={}", min - 1)).get::<T>(name).is_err(), "{s}");
        }
        check::<Limit<30, 100>>("limit", |l| l.get().into());
        check::<Offset>("offset", |o| o.get().into());
        check::<Int<1, 86_400, 30>>("max_staleness_seconds", Int::get);
        assert_eq!(
            schema::<Limit<30, 100>>()["minimum"],
            Value::from(Limit::<30, 100>::MIN)
        );

        let flag = schema::<Flag<false>>();
        assert_eq!(
            (flag["type"].as_str(), flag["default"].as_bool()),
            (Some("boolean"), Some(false))
        );
        assert_eq!(q("").get::<Flag<false>>("orderbook").unwrap(), Flag(false));
        assert_eq!(q("orderbook=true").get::<Flag<false>>("orderbook").unwrap(), Flag(true));

        let text = schema::<Text>();
        assert_eq!(text["maxLength"], Value::from(MAX_TEXT_LEN), "{text}");
        assert_eq!(text["minLength"], Value::from(1), "{text}");
        let longest = "x".repeat(MAX_TEXT_LEN);
        assert_eq!(q(&format!("q={longest}")).get::<Text>("q").unwrap().0, longest);
        assert!(q(&format!("q={longest}x")).get::<Option<Text>>("q").is_err());
        assert_eq!(q("").get::<Option<Text>>("q").unwrap(), None);
        assert_eq!(err(q("").get::<Text>("q")).1, "q is required");

        // An enum's documented values are the ones it reads, and its default is one of them.
        let color = schema::<Defaulted<Color>>();
        assert_eq!(color["enum"], json!(["red", "blue"]), "{color}");
        assert_eq!(color["default"], "blue", "{color}");
        assert_eq!(q("").get::<Defaulted<Color>>("c").unwrap(), Defaulted(Color::Blue));
        assert_eq!(q("c=red").get::<Defaulted<Color>>("c").unwrap(), Defaulted(Color::Red));
        assert_eq!(q("c=red").get::<Option<Color>>("c").unwrap(), Some(Color::Red));
        assert_eq!(
            err(q("c=green").get::<Defaulted<Color>>("c")).1,
            "c must be one of red or blue"
        );
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
