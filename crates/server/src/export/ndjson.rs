//! Newline-delimited JSON, the replay route's format: one message a line, written straight into the buffer
//! (a replay sends hundreds of thousands of lines a second; going through `serde_json::Value` would halve it).

use std::fmt::Write as _;

use crossbook_core::{
    Exchange, Timestamp,
    book::{Level, Side},
};

use super::{Encoder, Message};

/// The NDJSON encoder.
#[derive(Debug, Default)]
pub struct Ndjson {
    buf: String,
}

impl Encoder for Ndjson {
    fn message(&mut self, m: &Message<'_>) {
        let buf = &mut self.buf;
        match m {
            Message::Snapshot {
                key,
                seq,
                venue_ts,
                at,
                ladders,
            } => {
                head(
                    buf,
                    "book_snapshot",
                    key.exchange,
                    &key.market_id,
                    key.asset_id.as_deref(),
                    Some(*seq),
                    *venue_ts,
                    *at,
                );
                levels(buf, "bids", &ladders.bids);
                levels(buf, "asks", &ladders.asks);
                levels(buf, "no_bids", &ladders.no_bids);
                buf.push('}');
            }
            Message::Change {
                key,
                seq,
                venue_ts,
                at,
                changes,
                ..
            } => {
                head(
                    buf,
                    "book_change",
                    key.exchange,
                    &key.market_id,
                    key.asset_id.as_deref(),
                    Some(*seq),
                    *venue_ts,
                    *at,
                );
                buf.push_str(r#","changes":["#);
                for (i, c) in changes.iter().enumerate() {
                    if i > 0 {
                        buf.push(',');
                    }
                    let _ = write!(
                        buf,
                        r#"{{"side":"{}","price":"{}","size":{}}}"#,
                        side_name(c.side),
                        c.price.four_decimals().as_str(),
                        c.size.to_f64(6)
                    );
                }
                buf.push_str("]}");
            }
            Message::Gap {
                key,
                seq,
                venue_ts,
                start,
                end,
                cause,
            } => {
                head(
                    buf,
                    "gap",
                    key.exchange,
                    &key.market_id,
                    key.asset_id.as_deref(),
                    Some(*seq),
                    *venue_ts,
                    *start,
                );
                buf.push_str(r#","start":"#);
                opt_time(buf, Some(*start));
                buf.push_str(r#","end":"#);
                opt_time(buf, *end);
                let _ = write!(buf, r#","cause":"{cause}"}}"#);
            }
            Message::Trade {
                exchange,
                market_id,
                asset_id,
                trade,
            } => {
                let tr = &trade.trade;
                head(
                    buf,
                    "trade",
                    *exchange,
                    market_id,
                    *asset_id,
                    None,
                    Some(tr.executed_at),
                    tr.executed_at,
                );
                buf.push_str(r#","trade_id":"#);
                json_str(buf, &tr.source_trade_id);
                let _ = write!(
                    buf,
                    r#","taker_side":"{}","outcome":"{}","price":{},"size":{}}}"#,
                    tr.taker_side.as_str(),
                    tr.outcome.as_str(),
                    tr.price.to_f64_4(),
                    tr.size.to_f64(6)
                );
            }
        }
        buf.push('\n');
    }

    fn ready(&self) -> usize {
        self.buf.len()
    }

    fn take(&mut self) -> Vec<u8> {
        // The next piece starts at full size: growing a buffer from empty to 32 KiB copies it a dozen times.
        std::mem::replace(&mut self.buf, String::with_capacity(super::PIECE_BYTES + 1024)).into_bytes()
    }

    fn finish(&mut self) -> std::io::Result<Vec<u8>> {
        Ok(self.take())
    }

    fn failed(&mut self, detail: &str) -> Option<Vec<u8>> {
        let mut out = self.take();
        out.extend_from_slice(br#"{"type":"error","detail":"#);
        out.extend_from_slice(serde_json::Value::from(detail).to_string().as_bytes());
        out.extend_from_slice(b"}\n");
        Some(out)
    }
}

/// The name of a book side in every export format.
pub fn side_name(side: Side) -> &'static str {
    match side {
        Side::Bid => "bid",
        Side::Ask => "ask",
        Side::NoBid => "no_bid",
    }
}

fn json_str(buf: &mut String, s: &str) {
    // serde_json's escaping, written straight into the buffer.
    let _ = write!(buf, "{}", serde_json::Value::from(s));
}

fn opt_time(buf: &mut String, t: Option<Timestamp>) {
    match t {
        Some(t) => {
            buf.push('"');
            buf.push_str(&t.to_iso());
            buf.push('"');
        }
        None => buf.push_str("null"),
    }
}

/// `{"type":…,"exchange":…,"market_id":…,"asset_id":…,"seq":…,"venue_ts":…,"received_at":…` (open).
#[allow(clippy::too_many_arguments)]
fn head(
    buf: &mut String,
    kind: &str,
    exchange: Exchange,
    market_id: &str,
    asset_id: Option<&str>,
    seq: Option<u64>,
    venue_ts: Option<Timestamp>,
    received_at: Timestamp,
) {
    let _ = write!(
        buf,
        r#"{{"type":"{kind}","exchange":"{}","market_id":"#,
        exchange.as_str()
    );
    json_str(buf, market_id);
    buf.push_str(r#","asset_id":"#);
    match asset_id {
        Some(a) => json_str(buf, a),
        None => buf.push_str("null"),
    }
    match seq {
        Some(s) => {
            let _ = write!(buf, r#","seq":{s}"#);
        }
        None => buf.push_str(r#","seq":null"#),
    }
    buf.push_str(r#","venue_ts":"#);
    opt_time(buf, venue_ts);
    buf.push_str(r#","received_at":"#);
    opt_time(buf, Some(received_at));
}

fn levels(buf: &mut String, name: &str, ladder: &[Level]) {
    let _ = write!(buf, r#","{name}":["#);
    for (i, l) in ladder.iter().enumerate() {
        if i > 0 {
            buf.push(',');
        }
        let _ = write!(
            buf,
            r#"{{"price":"{}","size":{}}}"#,
            l.price.four_decimals().as_str(),
            l.size.to_f64(6)
        );
    }
    buf.push(']');
}
