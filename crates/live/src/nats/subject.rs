//! The bus's subjects: one family per kind of event, with the venue and the book or market in the subject
//! where a reader may want to filter on them.
//!
//! | subject | what |
//! |---|---|
//! | `crossbook.book.<venue>.<market>.<asset>` | a book changed |
//! | `crossbook.keyframe.<venue>.<market>.<asset>` | the whole book, or its removal (the last one per book is kept) |
//! | `crossbook.stale.<venue>` | books lost continuity |
//! | `crossbook.trade.<venue>.<market>` | a trade was stored |
//! | `crossbook.catalog.<venue>` | a catalog sync finished |
//! | `crossbook.whale.<venue>.<market>` | a whale trade |
//! | `crossbook.arbitrage.opportunity` | an opportunity above the webhook threshold |
//! | `crossbook.arbitrage.change` | an opportunity opened, changed or closed |
//! | `crossbook.control.keyframes` | a reader asks the leader for fresh keyframes (not stored) |
//!
//! Ids become one subject token each: every byte outside `A-Z a-z 0-9 -` is written `%XX` (two upper-case
//! hex digits), so `.`, `*`, `>`, spaces and `%` itself never reach the subject and [`unescape`] gives the id
//! back. A venue_a book has no asset: its asset token is `_` (an `_` in an id is written `%5F`).

use crossbook_core::{Exchange, book::BookKey};

use super::wire::Body;

/// The first token of every subject.
pub const ROOT: &str = "crossbook";
/// Where a reader asks the leader for fresh keyframes.
pub const CONTROL_KEYFRAMES: &str = "crossbook.control.keyframes";
/// The token standing for "no asset" (venue_a books).
pub const NO_ASSET: &str = "_";

/// The subject patterns of the event window stream.
pub fn event_subjects() -> Vec<String> {
    ["book", "stale", "trade", "catalog", "whale", "arbitrage"]
        .iter()
        .map(|k| format!("{ROOT}.{k}.>"))
        .collect()
}

/// Every subject of the bus: what a mirror reads live, on one subscription so that it keeps the leader's order.
pub fn all() -> String {
    format!("{ROOT}.>")
}

/// The subject pattern of the keyframe stream.
pub fn keyframe_subjects() -> String {
    format!("{ROOT}.keyframe.>")
}

/// One id as a subject token (see the module docs).
pub fn escape(id: &str) -> String {
    let mut out = String::with_capacity(id.len());
    for b in id.bytes() {
        if b.is_ascii_alphanumeric() || b == b'-' {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// The id a token of [`escape`] stands for; `None` when the token is not one [`escape`] writes.
pub fn unescape(token: &str) -> Option<String> {
    let bytes = token.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'%' => {
                let hex = token.get(i + 1..i + 3)?;
                out.push(u8::from_str_radix(hex, 16).ok()?);
                i += 3;
            }
            b if b.is_ascii_alphanumeric() || b == b'-' => {
                out.push(b);
                i += 1;
            }
            _ => return None,
        }
    }
    String::from_utf8(out).ok()
}

fn book_tokens(key: &BookKey) -> String {
    let asset = key.asset_id.as_deref().map_or_else(|| NO_ASSET.to_string(), escape);
    format!("{}.{}.{asset}", key.exchange.as_str(), escape(&key.market_id))
}

/// The keyframe subject of a book.
pub fn keyframe(key: &BookKey) -> String {
    format!("{ROOT}.keyframe.{}", book_tokens(key))
}

/// The book of a `book` or `keyframe` subject, `None` when it is not one.
pub fn book_key_of(subject: &str) -> Option<BookKey> {
    let mut t = subject.split('.');
    if t.next()? != ROOT || !matches!(t.next()?, "book" | "keyframe") {
        return None;
    }
    let exchange = match t.next()? {
        "venue_a" => Exchange::VenueA,
        "venue_b" => Exchange::VenueB,
        _ => return None,
    };
    let market_id = unescape(t.next()?)?;
    let asset = t.next()?;
    let asset_id = if asset == NO_ASSET {
        None
    } else {
        Some(unescape(asset)?)
    };
    t.next().is_none().then_some(BookKey {
        exchange,
        market_id,
        asset_id,
    })
}

/// The subject a message is published on.
pub fn of(body: &Body) -> String {
    match body {
        Body::Book(c) => format!("{ROOT}.book.{}", book_tokens(&c.key)),
        Body::Keyframe(k) => keyframe(&k.key),
        Body::Removed { key } => keyframe(key),
        Body::Stale { exchange, .. } => format!("{ROOT}.stale.{}", exchange.as_str()),
        Body::Trade(t) => format!("{ROOT}.trade.{}.{}", t.exchange.as_str(), escape(&t.market_id)),
        Body::Catalog { exchange, .. } => format!("{ROOT}.catalog.{}", exchange.as_str()),
        Body::Whale(w) => format!(
            "{ROOT}.whale.{}.{}",
            w.trade.exchange.as_str(),
            escape(&w.trade.market_id)
        ),
        Body::Opportunity(_) => format!("{ROOT}.arbitrage.opportunity"),
        Body::ArbitrageChanged(_) => format!("{ROOT}.arbitrage.change"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unsafe_characters_are_escaped_reversibly() {
        for id in [
            "KXBTC-25NOV27-T100000",
            "0xabc.def",
            "a*b>c d\te",
            "100%_sure",
            "",
            "ünï",
        ] {
            let t = escape(id);
            assert!(
                t.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'%'),
                "{id:?} -> {t}"
            );
            assert_eq!(unescape(&t).as_deref(), Some(id), "{t}");
        }
        assert_eq!(escape("a.b*c>d e"), "a%2Eb%2Ac%3Ed%20e");
        assert_eq!(unescape("a.b"), None);
        assert_eq!(unescape("%G1"), None);
        assert_eq!(unescape("%4"), None);
    }

    #[test]
    fn book_subjects_name_the_book() {
        for key in [BookKey::venue_a("KX.1"), BookKey::venue_b("0x1 2", "_99")] {
            let s = keyframe(&key);
            assert_eq!(s.split('.').count(), 5, "{s}");
            assert_eq!(book_key_of(&s), Some(key));
        }
        assert_eq!(keyframe(&BookKey::venue_a("KX")), "crossbook.keyframe.venue_a.KX._");
        assert_eq!(book_key_of("crossbook.trade.venue_a.KX._"), None);
        assert_eq!(book_key_of("crossbook.book.venue_c.KX._"), None);
    }
}
