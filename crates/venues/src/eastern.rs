//! US Eastern wall-clock time to UTC, for the two places where a venue encodes a window in ET text:
//! venue_a event tickers (`KXBTC15M-26MAY120715` closes 07:15 ET) and venue_b hourly/daily slugs
//! (`bitcoin-up-or-down-june-19-2026-8am-et`).
//!
//! Both are fallbacks: the venues' own UTC fields (`open_time`/`close_time`, `eventStartTime`/`endDate`)
//! win whenever they are present. A time-zone database would be heavier than the one rule needed here:
//! since 2007, daylight time runs from the second Sunday of March 02:00 local to the first Sunday of
//! November 02:00 local.

use crossbook_core::Timestamp;
use time::{Date, Month, PrimitiveDateTime, Time, Weekday};

/// The `n`-th Sunday (1-based) of a month.
fn nth_sunday(year: i32, month: Month, n: u8) -> Option<Date> {
    let first = Date::from_calendar_date(year, month, 1).ok()?;
    let offset = (7 + Weekday::Sunday.number_days_from_monday() - first.weekday().number_days_from_monday()) % 7;
    Date::from_calendar_date(year, month, 1 + offset + 7 * (n - 1)).ok()
}

/// Whether a local Eastern date-time falls in daylight time.
fn is_daylight(local: PrimitiveDateTime) -> bool {
    let year = local.year();
    let (Some(start), Some(end)) = (nth_sunday(year, Month::March, 2), nth_sunday(year, Month::November, 1)) else {
        return false;
    };
    let two = Time::from_hms(2, 0, 0).unwrap_or(Time::MIDNIGHT);
    local >= PrimitiveDateTime::new(start, two) && local < PrimitiveDateTime::new(end, two)
}

/// Converts an Eastern wall-clock time to UTC. `None` when the date does not exist.
pub fn eastern_to_utc(year: i32, month: Month, day: u8, hour: u8, minute: u8) -> Option<Timestamp> {
    let date = Date::from_calendar_date(year, month, day).ok()?;
    let time = Time::from_hms(hour, minute, 0).ok()?;
    let local = PrimitiveDateTime::new(date, time);
    let offset_hours: i64 = if is_daylight(local) { 4 } else { 5 };
    let utc_secs = local.assume_utc().unix_timestamp() + offset_hours * 3600;
    Some(Timestamp::from_secs(utc_secs))
}

/// A month from its English name or three-letter abbreviation, any case (`MAY`, `june`).
pub fn month_from_name(s: &str) -> Option<Month> {
    const NAMES: [(&str, Month); 12] = [
        ("january", Month::January),
        ("february", Month::February),
        ("march", Month::March),
        ("april", Month::April),
        ("may", Month::May),
        ("june", Month::June),
        ("july", Month::July),
        ("august", Month::August),
        ("september", Month::September),
        ("october", Month::October),
        ("november", Month::November),
        ("december", Month::December),
    ];
    let l = s.to_ascii_lowercase();
    if l.len() < 3 {
        return None;
    }
    NAMES
        .iter()
        .find(|(name, _)| *name == l || (l.len() == 3 && name.starts_with(&l)))
        .map(|(_, m)| *m)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn converts_across_daylight_saving() {
        // PROTOCOLS A.7 examples.
        let t = eastern_to_utc(2026, Month::April, 3, 16, 45).unwrap();
        assert_eq!(t.to_iso(), "2026-04-03T20:45:00.000Z");
        let t = eastern_to_utc(2026, Month::April, 3, 18, 0).unwrap();
        assert_eq!(t.to_iso(), "2026-04-03T22:00:00.000Z");
        // Winter: UTC-5.
        let t = eastern_to_utc(2026, Month::January, 4, 17, 0).unwrap();
        assert_eq!(t.to_iso(), "2026-01-04T22:00:00.000Z");
        // 2026: DST starts March 8, ends November 1.
        assert_eq!(
            eastern_to_utc(2026, Month::March, 8, 1, 0).unwrap().to_iso(),
            "2026-03-08T06:00:00.000Z"
        );
        assert_eq!(
            eastern_to_utc(2026, Month::March, 8, 3, 0).unwrap().to_iso(),
            "2026-03-08T07:00:00.000Z"
        );
        assert_eq!(
            eastern_to_utc(2026, Month::November, 1, 3, 0).unwrap().to_iso(),
            "2026-11-01T08:00:00.000Z"
        );
        assert!(eastern_to_utc(2026, Month::February, 30, 0, 0).is_none());
    }

    #[test]
    fn month_names() {
        assert_eq!(month_from_name("MAY"), Some(Month::May));
        assert_eq!(month_from_name("june"), Some(Month::June));
        assert_eq!(month_from_name("Sep"), Some(Month::September));
        assert_eq!(month_from_name("ma"), None);
        assert_eq!(month_from_name("maybe"), None);
    }
}
