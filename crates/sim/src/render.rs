//! Rendering of exact micro-unit values and timestamps into the venues' text forms.
//!
//! Every price and size the simulator sends is an integer number of micro-units
//! ([`crossbook_core::Price`]/[`crossbook_core::Amount`]); these helpers turn them into the exact decimal
//! strings each venue uses (`"0.4700"`, `"312.00"`, `"0.47"`, `"212.49"`) with integer arithmetic only.
//! JSON numbers (Gamma `bestBid`, Data API `price`) are produced by parsing that exact decimal text, so no
//! `f64` arithmetic ever touches a value.

use crossbook_core::{Timestamp, money::round_half_up};
use serde_json::Value;

/// `micros` with exactly `decimals` (0–6) fractional digits, rounded half-up.
pub(crate) fn fixed(micros: i64, decimals: u32) -> String {
    let d = decimals.min(6);
    let r = round_half_up(micros, 6 - d);
    let sign = if r < 0 { "-" } else { "" };
    let a = r.unsigned_abs();
    let unit = 10u64.pow(d);
    if d == 0 {
        format!("{sign}{a}")
    } else {
        format!("{sign}{}.{:0width$}", a / unit, a % unit, width = d as usize)
    }
}

/// `micros` with trailing zeros removed and no dot for whole numbers (`"0.515"`, `"110"`, `"1"`).
pub(crate) fn trimmed(micros: i64) -> String {
    let s = fixed(micros, 6);
    let s = s.trim_end_matches('0');
    s.trim_end_matches('.').to_string()
}

/// A JSON number with the exact decimal value of `micros` (rendering only).
pub(crate) fn number(micros: i64) -> Value {
    serde_json::from_str(&trimmed(micros)).unwrap_or(Value::Null)
}

/// RFC 3339 with whole seconds, as the venues print window boundaries: `2026-05-12T11:00:00Z`.
pub(crate) fn iso_secs(t: Timestamp) -> String {
    let s = t.to_iso();
    // `to_iso` is `YYYY-MM-DDTHH:MM:SS.mmmZ`; drop the milliseconds.
    format!("{}Z", &s[..19])
}

/// RFC 3339 with microseconds, as venue_a prints creation and trade times: `2026-05-11T11:00:04.118000Z`.
pub(crate) fn iso_micros(t: Timestamp) -> String {
    let s = t.to_iso();
    format!("{}000Z", &s[..23])
}

/// RFC 3339 with milliseconds: `2026-05-12T11:07:31.412Z`.
pub(crate) fn iso_millis(t: Timestamp) -> String {
    t.to_iso()
}

/// Lower-case hex of a string's bytes: the opaque cursors handed out by the paged listings.
pub(crate) fn hex_encode(s: &str) -> String {
    s.bytes().map(|b| format!("{b:02x}")).collect()
}

/// Inverse of [`hex_encode`]; `None` for anything that is not a cursor this simulator issued.
pub(crate) fn hex_decode(s: &str) -> Option<String> {
    if !s.len().is_multiple_of(2) {
        return None;
    }
    let bytes: Option<Vec<u8>> = (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok())
        .collect();
    String::from_utf8(bytes?).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimal_text_is_exact() {
        assert_eq!(fixed(470_000, 4), "0.4700");
        assert_eq!(fixed(312_000_000, 2), "312.00");
        assert_eq!(fixed(-12_000_000, 2), "-12.00");
        assert_eq!(fixed(470_000, 2), "0.47");
        assert_eq!(fixed(520_000, 3), "0.520");
        assert_eq!(trimmed(515_000), "0.515");
        assert_eq!(trimmed(110_000_000), "110");
        assert_eq!(trimmed(212_490_000), "212.49");
        assert_eq!(trimmed(0), "0");
        assert_eq!(number(510_000).to_string(), "0.51");
        assert_eq!(number(5_000_000).to_string(), "5");
    }

    #[test]
    fn times_and_cursors() {
        let t = Timestamp::from_millis(1_778_584_051_412);
        assert_eq!(iso_secs(t), "2026-05-12T11:07:31Z");
        assert_eq!(iso_millis(t), "2026-05-12T11:07:31.412Z");
        assert_eq!(iso_micros(t), "2026-05-12T11:07:31.412000Z");
        assert_eq!(hex_decode(&hex_encode("KXBTC15M|x")).as_deref(), Some("KXBTC15M|x"));
        assert_eq!(hex_decode("zz"), None);
        assert_eq!(hex_decode("abc"), None);
    }
}
