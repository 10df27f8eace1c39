//! Gzip-compressed CSV (`.csv.gz`): a header line, then one line per row of [`super::rows`]. Times are
//! ISO 8601 UTC with milliseconds, prices four-decimal strings, sizes six-decimal strings; an empty field is a
//! missing value. A day with no data is the header alone.

use std::fmt::Write as _;

use crossbook_core::Timestamp;
use flate2::{Compression, write::GzEncoder};

use super::{
    Encoder, Message,
    rows::{Table, book_rows, trade_row},
};
use std::io::Write as _;

/// Rows are gathered as text and compressed about this much at a time.
const TEXT_BATCH: usize = 64 * 1024;

/// The CSV encoder: rows of `table` through gzip.
pub struct Csv {
    table: Table,
    text: String,
    gz: GzEncoder<Vec<u8>>,
    /// The last second written and its text up to the point (`2026-11-24T19:15:07.`): rows share seconds, and
    /// formatting a date is most of a row's cost.
    second: (i64, String),
}

impl Csv {
    pub fn new(table: Table) -> Self {
        let mut text = table.columns().join(",");
        text.push('\n');
        // Level 3: on a book-day (1.7M rows) 13.9 MiB in 1.9 s, where level 1 gives 20.6 MiB in 1.2 s and
        // level 6 (zlib's default) 12.4 MiB in 2.6 s (crossbook-bench export).
        let gz = GzEncoder::new(Vec::with_capacity(64 * 1024), Compression::new(3));
        Csv {
            table,
            text,
            gz,
            second: (i64::MIN, String::new()),
        }
    }

    fn compress(&mut self) -> std::io::Result<()> {
        self.gz.write_all(self.text.as_bytes())?;
        self.text.clear();
        Ok(())
    }
}

fn field(buf: &mut String, s: &str) {
    if s.contains([',', '"', '\n', '\r']) {
        buf.push('"');
        buf.push_str(&s.replace('"', "\"\""));
        buf.push('"');
    } else {
        buf.push_str(s);
    }
}

/// Writes `t` as ISO 8601 with milliseconds (nothing for `None`), reusing `second`'s text within a second.
fn time(buf: &mut String, second: &mut (i64, String), t: Option<Timestamp>) {
    let Some(t) = t else { return };
    let s = t.secs();
    if second.0 != s {
        let iso = t.to_iso();
        *second = (s, iso[..20].to_string());
    }
    buf.push_str(&second.1);
    let _ = write!(buf, "{:03}Z", t.millis().rem_euclid(1000));
}

impl Encoder for Csv {
    fn message(&mut self, m: &Message<'_>) {
        let buf = &mut self.text;
        let second = &mut self.second;
        match self.table {
            Table::Books => book_rows(m, |r| {
                buf.push_str(r.exchange.as_str());
                buf.push(',');
                field(buf, r.market_id);
                buf.push(',');
                field(buf, r.asset_id.unwrap_or(""));
                let _ = write!(buf, ",{},", r.seq);
                time(buf, second, r.venue_ts);
                buf.push(',');
                time(buf, second, Some(r.received_at));
                buf.push_str(if r.is_snapshot { ",true," } else { ",false," });
                if let Some((side, price, size)) = r.level {
                    let _ = write!(buf, "{side},{},{size}", price.four_decimals().as_str());
                } else {
                    buf.push_str(",,");
                }
                buf.push(',');
                buf.push_str(r.gap.unwrap_or(""));
                buf.push(',');
                time(buf, second, r.gap_end);
                buf.push('\n');
            }),
            Table::Trades => {
                if let Some(r) = trade_row(m) {
                    buf.push_str(r.exchange.as_str());
                    buf.push(',');
                    field(buf, r.market_id);
                    buf.push(',');
                    field(buf, r.asset_id.unwrap_or(""));
                    buf.push(',');
                    field(buf, r.trade_id);
                    buf.push(',');
                    time(buf, second, Some(r.executed_at));
                    let _ = writeln!(
                        buf,
                        ",{},{},{},{}",
                        r.taker_side,
                        r.outcome,
                        r.price.four_decimals().as_str(),
                        r.size
                    );
                }
            }
        }
        if self.text.len() >= TEXT_BATCH {
            // Writing into a Vec cannot fail.
            let _ = self.compress();
        }
    }

    fn ready(&self) -> usize {
        self.gz.get_ref().len()
    }

    fn take(&mut self) -> Vec<u8> {
        std::mem::take(self.gz.get_mut())
    }

    fn finish(&mut self) -> std::io::Result<Vec<u8>> {
        self.compress()?;
        self.gz.try_finish()?;
        Ok(self.take())
    }

    fn failed(&mut self, _detail: &str) -> Option<Vec<u8>> {
        None
    }
}
