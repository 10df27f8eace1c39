//! US Eastern time and the window grids of the interval products.
//!
//! Both venues name BTC windows in US Eastern time (venue_a event tickers carry the ET close time, venue_b
//! hourly/daily slugs the ET hour or date), so the simulator needs DST-aware ET without a time-zone
//! database. The US rule since 2007 is enough: daylight time from the second Sunday of March 02:00 EST
//! (07:00 UTC) to the first Sunday of November 02:00 EDT (06:00 UTC).

use crossbook_core::IntervalCode;
use time::{Date, Month, OffsetDateTime, UtcOffset};

/// `JAN`…`DEC`, as in venue_a tickers (`26MAY12`).
pub(crate) const MONTHS_UPPER: [&str; 12] = [
    "JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC",
];
/// Full month names, as in titles and (lower-cased) venue_b slugs.
pub(crate) const MONTHS: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];

/// Seconds per hour.
const HOUR: i64 = 3_600;

fn nth_sunday(year: i32, month: Month, n: u8) -> Date {
    let first = Date::from_calendar_date(year, month, 1).expect("valid first of month");
    let to_sunday = (7 - first.weekday().number_days_from_sunday()) % 7;
    first + time::Duration::days(i64::from(to_sunday) + 7 * i64::from(n - 1))
}

fn utc(secs: i64) -> OffsetDateTime {
    OffsetDateTime::from_unix_timestamp(secs).unwrap_or(OffsetDateTime::UNIX_EPOCH)
}

/// Whether US daylight time is in force at `utc_secs`.
pub(crate) fn is_dst(utc_secs: i64) -> bool {
    let year = utc(utc_secs).year();
    let start = nth_sunday(year, Month::March, 2)
        .midnight()
        .assume_utc()
        .unix_timestamp()
        + 7 * HOUR;
    let end = nth_sunday(year, Month::November, 1)
        .midnight()
        .assume_utc()
        .unix_timestamp()
        + 6 * HOUR;
    (start..end).contains(&utc_secs)
}

/// The ET offset from UTC in seconds at `utc_secs` (−4 h or −5 h).
pub(crate) fn et_offset_secs(utc_secs: i64) -> i64 {
    if is_dst(utc_secs) { -4 * HOUR } else { -5 * HOUR }
}

/// `EDT` or `EST`, for rules text.
pub(crate) fn et_abbrev(utc_secs: i64) -> &'static str {
    if is_dst(utc_secs) { "EDT" } else { "EST" }
}

/// The ET wall-clock date-time of `utc_secs`.
pub(crate) fn to_et(utc_secs: i64) -> OffsetDateTime {
    let off = et_offset_secs(utc_secs);
    let offset = UtcOffset::from_whole_seconds(off as i32).unwrap_or(UtcOffset::UTC);
    utc(utc_secs).to_offset(offset)
}

/// `[start, end)` in Unix seconds of the window of `code` that contains `t`.
///
/// 5m/15m/1h sit on the UTC grid (ET differs by whole hours, so it is also the ET grid). 24h windows run
/// 16:00 UTC to 16:00 UTC (noon ET in daylight time, like venue_b's daily BTC markets) and 1w windows
/// Friday 21:00 UTC to Friday 21:00 UTC (17:00 ET in daylight time; a product neither venue lists for BTC
/// up/down, invented here). Anchoring them in UTC rather than ET keeps every window exactly its interval
/// long across DST changes, which is how clients recognise the interval.
pub(crate) fn window_containing(code: IntervalCode, t: i64) -> (i64, i64) {
    let len = code.seconds();
    let anchor = match code {
        IntervalCode::M5 | IntervalCode::M15 | IntervalCode::H1 => 0,
        IntervalCode::H24 => 16 * HOUR,
        // The Unix epoch was a Thursday: 1970-01-02T21:00Z is the first Friday 21:00.
        IntervalCode::W1 => 86_400 + 21 * HOUR,
    };
    let start = (t - anchor).div_euclid(len) * len + anchor;
    (start, start + len)
}

/// `7:15AM` (ET clock of `utc_secs`), as in venue_b window titles.
pub(crate) fn et_clock(utc_secs: i64) -> String {
    let t = to_et(utc_secs);
    let (h12, ampm) = twelve_hour(t.hour());
    format!("{h12}:{:02}{ampm}", t.minute())
}

/// `(7, "AM")` from a 24-hour hour.
pub(crate) fn twelve_hour(hour: u8) -> (u8, &'static str) {
    let ampm = if hour < 12 { "AM" } else { "PM" };
    let h = hour % 12;
    (if h == 0 { 12 } else { h }, ampm)
}

/// Month name of a date.
pub(crate) fn month_name(d: Date) -> &'static str {
    MONTHS[usize::from(u8::from(d.month())) - 1]
}

/// `26MAY12` (YY MON DD) of an ET date, as in venue_a tickers.
pub(crate) fn yymondd(d: Date) -> String {
    format!(
        "{:02}{}{:02}",
        d.year() % 100,
        MONTHS_UPPER[usize::from(u8::from(d.month())) - 1],
        d.day()
    )
}

#[cfg(test)]
mod tests {
    use time::Weekday;

    use super::*;

    #[test]
    fn eastern_time_follows_us_dst() {
        // 2026-05-12T11:00Z is 07:00 EDT (sample payloads).
        let t = 1_778_583_600;
        assert!(is_dst(t));
        assert_eq!(to_et(t).hour(), 7);
        // 2026-01-15T17:00Z is 12:00 EST.
        let w = 1_768_496_400;
        assert!(!is_dst(w));
        assert_eq!(to_et(w).hour(), 12);
        // 2026 transitions: 8 March 07:00Z and 1 November 06:00Z.
        assert!(!is_dst(1_772_953_200 - 1));
        assert!(is_dst(1_772_953_200));
        assert!(is_dst(1_793_512_800 - 1));
        assert!(!is_dst(1_793_512_800));
        let d = Date::from_calendar_date(2026, Month::May, 12).unwrap();
        assert_eq!(yymondd(d), "26MAY12");
        assert_eq!(et_clock(1_778_583_600), "7:00AM");
    }

    #[test]
    fn windows_contain_their_instant_and_tile() {
        for code in IntervalCode::ALL {
            let mut t = 1_778_584_051;
            for _ in 0..5 {
                let (s, e) = window_containing(code, t);
                assert!(s <= t && t < e, "{code}");
                let (s2, _) = window_containing(code, e);
                assert_eq!(s2, e, "{code} windows tile");
                t = e + 1;
            }
        }
        let (s, e) = window_containing(IntervalCode::M15, 1_778_584_051);
        assert_eq!((s, e), (1_778_583_600, 1_778_584_500));
        let (s, e) = window_containing(IntervalCode::H24, 1_778_584_051);
        assert_eq!(to_et(s).hour(), 12);
        assert_eq!(e - s, 86_400);
        let (s, e) = window_containing(IntervalCode::W1, 1_778_584_051);
        assert_eq!(to_et(s).weekday(), Weekday::Friday);
        assert_eq!(to_et(s).hour(), 17);
        assert_eq!(e - s, 604_800);
        // Exact lengths across a DST change (2026-11-01).
        let (s, e) = window_containing(IntervalCode::H24, 1_793_512_800);
        assert_eq!(e - s, 86_400);
    }
}
