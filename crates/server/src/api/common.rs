//! Types shared by several API areas: the wire enums (with their OpenAPI schemas and query-parameter
//! spellings) and the renderers of contracts §1 (times, prices, amounts).
//!
//! The core enums cannot carry OpenAPI derives (core has no HTTP dependencies), so each has a wire twin here
//! with exhaustive conversions both ways.

use crossbook_core::{Amount, Exchange, IntervalCode, Price, Status, Timestamp};
use serde::Serialize;
use utoipa::ToSchema;

use crate::params::ParamEnum;

/// A venue: `venue_a` or `venue_b`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
pub enum ExchangeName {
    #[serde(rename = "venue_a")]
    VenueA,
    #[serde(rename = "venue_b")]
    VenueB,
}

impl ParamEnum for ExchangeName {
    const VALUES: &'static [(&'static str, Self)] =
        &[("venue_a", ExchangeName::VenueA), ("venue_b", ExchangeName::VenueB)];
}

impl From<Exchange> for ExchangeName {
    fn from(e: Exchange) -> Self {
        match e {
            Exchange::VenueA => ExchangeName::VenueA,
            Exchange::VenueB => ExchangeName::VenueB,
        }
    }
}

impl From<ExchangeName> for Exchange {
    fn from(e: ExchangeName) -> Self {
        match e {
            ExchangeName::VenueA => Exchange::VenueA,
            ExchangeName::VenueB => Exchange::VenueB,
        }
    }
}

/// Trading status: `active` or `closed`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum StatusName {
    Active,
    Closed,
}

impl ParamEnum for StatusName {
    const VALUES: &'static [(&'static str, Self)] = &[("active", StatusName::Active), ("closed", StatusName::Closed)];
}

impl From<Status> for StatusName {
    fn from(s: Status) -> Self {
        match s {
            Status::Active => StatusName::Active,
            Status::Closed => StatusName::Closed,
        }
    }
}

impl From<StatusName> for Status {
    fn from(s: StatusName) -> Self {
        match s {
            StatusName::Active => Status::Active,
            StatusName::Closed => Status::Closed,
        }
    }
}

/// Window length of an interval market: `5m`, `15m`, `1h`, `24h` or `1w`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
pub enum IntervalCodeName {
    #[serde(rename = "5m")]
    M5,
    #[serde(rename = "15m")]
    M15,
    #[serde(rename = "1h")]
    H1,
    #[serde(rename = "24h")]
    H24,
    #[serde(rename = "1w")]
    W1,
}

impl ParamEnum for IntervalCodeName {
    const VALUES: &'static [(&'static str, Self)] = &[
        ("5m", IntervalCodeName::M5),
        ("15m", IntervalCodeName::M15),
        ("1h", IntervalCodeName::H1),
        ("24h", IntervalCodeName::H24),
        ("1w", IntervalCodeName::W1),
    ];
}

impl From<IntervalCode> for IntervalCodeName {
    fn from(c: IntervalCode) -> Self {
        match c {
            IntervalCode::M5 => IntervalCodeName::M5,
            IntervalCode::M15 => IntervalCodeName::M15,
            IntervalCode::H1 => IntervalCodeName::H1,
            IntervalCode::H24 => IntervalCodeName::H24,
            IntervalCode::W1 => IntervalCodeName::W1,
        }
    }
}

impl From<IntervalCodeName> for IntervalCode {
    fn from(c: IntervalCodeName) -> Self {
        match c {
            IntervalCodeName::M5 => IntervalCode::M5,
            IntervalCodeName::M15 => IntervalCode::M15,
            IntervalCodeName::H1 => IntervalCode::H1,
            IntervalCodeName::H24 => IntervalCode::H24,
            IntervalCodeName::W1 => IntervalCode::W1,
        }
    }
}

/// A time in a JSON body: ISO 8601 UTC with milliseconds (`2026-11-21T19:15:00.000Z`).
pub fn iso(t: Timestamp) -> String {
    t.to_iso()
}

/// An optional time in a JSON body.
pub fn iso_opt(t: Option<Timestamp>) -> Option<String> {
    t.map(Timestamp::to_iso)
}

/// A ladder or last price in a JSON body: a 4-decimal string (`"0.5300"`).
pub fn price4(p: Option<Price>) -> Option<String> {
    p.map(Price::to_string4)
}

/// Dollars (volume, liquidity, notional) as a JSON number rounded half-up to 2 decimals.
pub fn dollars(a: Amount) -> f64 {
    a.to_f64(2)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Every query spelling of a wire enum is also its JSON spelling, and every value is listed once.
    pub(crate) fn assert_spellings_match_serde<T: ParamEnum + Serialize + PartialEq + std::fmt::Debug>() {
        for (spelling, value) in T::VALUES {
            assert_eq!(serde_json::to_value(value).unwrap(), *spelling, "{value:?}");
            assert_eq!(
                T::VALUES.iter().filter(|(_, v)| v == value).count(),
                1,
                "{value:?} listed twice"
            );
        }
    }

    #[test]
    fn wire_enums_match_core() {
        assert_spellings_match_serde::<ExchangeName>();
        assert_spellings_match_serde::<StatusName>();
        assert_spellings_match_serde::<IntervalCodeName>();
        for e in Exchange::ALL {
            assert_eq!(serde_json::to_value(ExchangeName::from(e)).unwrap(), e.as_str());
            assert_eq!(Exchange::from(ExchangeName::from(e)), e);
        }
        for s in [Status::Active, Status::Closed] {
            assert_eq!(serde_json::to_value(StatusName::from(s)).unwrap(), s.as_str());
        }
        for c in IntervalCode::ALL {
            assert_eq!(serde_json::to_value(IntervalCodeName::from(c)).unwrap(), c.as_str());
            assert_eq!(IntervalCode::from(IntervalCodeName::from(c)), c);
        }
        assert_eq!(IntervalCodeName::VALUES.len(), IntervalCode::ALL.len());
    }

    #[test]
    fn renderers() {
        assert_eq!(price4(Some(Price::from_micros(530_000))).as_deref(), Some("0.5300"));
        assert_eq!(dollars(Amount::from_micros(1_234_565)), 1.23);
        assert_eq!(dollars(Amount::from_micros(1_235_000)), 1.24);
        assert_eq!(iso(Timestamp::from_millis(0)), "1970-01-01T00:00:00.000Z");
    }
}
