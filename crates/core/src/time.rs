//! Timestamps: Unix milliseconds inside, ISO 8601 UTC with milliseconds and `Z` outside.
//!
//! Storage keeps `i64` milliseconds on both backends so ordering and binding are identical; the API renders
//! `2026-11-21T19:15:00.000Z` and accepts RFC 3339, ISO 8601 with or without an offset, and bare dates.

use std::fmt;

use serde::{Deserialize, Serialize};
use time::{
    Date, OffsetDateTime, PrimitiveDateTime, UtcOffset, format_description::well_known::Rfc3339,
    macros::format_description,
};

/// One day in milliseconds.
pub const DAY_MS: i64 = 86_400_000;

/// A point in time as Unix milliseconds (UTC).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Timestamp(pub i64);

/// Error from [`Timestamp::parse_iso`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("not an ISO 8601 timestamp or date: {0:?}")]
pub struct ParseTimeError(pub String);

impl Timestamp {
    /// Now, from the system clock.
    pub fn now() -> Self {
        Self::from_datetime(OffsetDateTime::now_utc())
    }
    pub const fn from_millis(ms: i64) -> Self {
        Timestamp(ms)
    }
    pub const fn from_secs(s: i64) -> Self {
        Timestamp(s * 1000)
    }
    pub const fn millis(self) -> i64 {
        self.0
    }
    pub const fn secs(self) -> i64 {
        self.0.div_euclid(1000)
    }
    pub fn from_datetime(dt: OffsetDateTime) -> Self {
        Timestamp((dt.unix_timestamp_nanos() / 1_000_000) as i64)
    }
    pub fn to_datetime(self) -> OffsetDateTime {
        OffsetDateTime::from_unix_timestamp_nanos(i128::from(self.0) * 1_000_000).unwrap_or(OffsetDateTime::UNIX_EPOCH)
    }
    /// `2026-11-21T19:15:00.000Z`.
    pub fn to_iso(self) -> String {
        let dt = self.to_datetime();
        format!(
            "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z",
            dt.year(),
            u8::from(dt.month()),
            dt.day(),
            dt.hour(),
            dt.minute(),
            dt.second(),
            dt.millisecond()
        )
    }
    /// Parses RFC 3339 (`2026-11-21T19:15:00Z`, `…+02:00`, fractional seconds), an ISO 8601 date-time
    /// without offset (read as UTC) or a bare date (`2026-11-21`, midnight UTC).
    pub fn parse_iso(s: &str) -> Result<Self, ParseTimeError> {
        let t = s.trim();
        if let Ok(dt) = OffsetDateTime::parse(t, &Rfc3339) {
            return Ok(Self::from_datetime(dt));
        }
        let no_offset = [
            format_description!("[year]-[month]-[day]T[hour]:[minute]:[second].[subsecond]"),
            format_description!("[year]-[month]-[day]T[hour]:[minute]:[second]"),
            format_description!("[year]-[month]-[day]T[hour]:[minute]"),
            format_description!("[year]-[month]-[day] [hour]:[minute]:[second]"),
        ];
        for fd in no_offset {
            if let Ok(p) = PrimitiveDateTime::parse(t, fd) {
                return Ok(Self::from_datetime(p.assume_offset(UtcOffset::UTC)));
            }
        }
        if let Ok(d) = Date::parse(t, format_description!("[year]-[month]-[day]")) {
            return Ok(Self::from_datetime(d.midnight().assume_utc()));
        }
        Err(ParseTimeError(s.to_string()))
    }
}

impl fmt::Display for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_iso())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_iso() {
        let t = Timestamp::parse_iso("2026-11-21T19:15:00.123Z").unwrap();
        assert_eq!(t.to_iso(), "2026-11-21T19:15:00.123Z");
        assert_eq!(
            Timestamp::parse_iso("2026-11-21T21:15:00+02:00").unwrap().to_iso(),
            "2026-11-21T19:15:00.000Z"
        );
        assert_eq!(
            Timestamp::parse_iso("2026-11-21").unwrap().to_iso(),
            "2026-11-21T00:00:00.000Z"
        );
        assert_eq!(
            Timestamp::parse_iso("2026-11-21T19:15:00").unwrap().to_iso(),
            "2026-11-21T19:15:00.000Z"
        );
        for bad in ["", "yesterday", "2026-13-01", "1700000000", "2026-11-21T25:00:00Z"] {
            assert!(Timestamp::parse_iso(bad).is_err(), "{bad:?}");
        }
    }
}
