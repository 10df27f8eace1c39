//! The rows of the export files: replay messages flattened into one row per changed level, as Tardis's
//! `incremental_book_L2` files are, so a day loads straight into a data frame.
//!
//! Books: a snapshot is one row per level of the whole book with `is_snapshot` true (a book with no levels is
//! one row without a level); a change is one row per changed level, its size the level's new size (0 removes
//! it); a gap is one row without a level, its `gap` naming the cause and `gap_end` when the book was whole again
//! (empty while it lasts past the day). Trades: one row per trade.

use crossbook_core::{Amount, Exchange, Price, Timestamp, book::BookKey};

use super::{Message, ndjson::side_name};

/// Which file an export writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Table {
    Books,
    Trades,
}

impl Table {
    pub fn as_str(self) -> &'static str {
        match self {
            Table::Books => "books",
            Table::Trades => "trades",
        }
    }

    /// The column names, in file order.
    pub fn columns(self) -> &'static [&'static str] {
        match self {
            Table::Books => &BOOK_COLUMNS,
            Table::Trades => &TRADE_COLUMNS,
        }
    }
}

pub const BOOK_COLUMNS: [&str; 12] = [
    "exchange",
    "market_id",
    "asset_id",
    "seq",
    "venue_ts",
    "received_at",
    "is_snapshot",
    "side",
    "price",
    "size",
    "gap",
    "gap_end",
];

pub const TRADE_COLUMNS: [&str; 9] = [
    "exchange",
    "market_id",
    "asset_id",
    "trade_id",
    "executed_at",
    "taker_side",
    "outcome",
    "price",
    "size",
];

/// One row of a books file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BookRow<'a> {
    pub exchange: Exchange,
    pub market_id: &'a str,
    pub asset_id: Option<&'a str>,
    pub seq: u64,
    pub venue_ts: Option<Timestamp>,
    pub received_at: Timestamp,
    pub is_snapshot: bool,
    /// The level: side, price and size; `None` on gap rows and on the row of an empty snapshot.
    pub level: Option<(&'static str, Price, Amount)>,
    pub gap: Option<&'a str>,
    pub gap_end: Option<Timestamp>,
}

impl<'a> BookRow<'a> {
    /// A row of `key`'s event without a level, gap or snapshot mark.
    fn head(key: &'a BookKey, seq: u64, venue_ts: Option<Timestamp>, received_at: Timestamp) -> Self {
        BookRow {
            exchange: key.exchange,
            market_id: &key.market_id,
            asset_id: key.asset_id.as_deref(),
            seq,
            venue_ts,
            received_at,
            is_snapshot: false,
            level: None,
            gap: None,
            gap_end: None,
        }
    }
}

/// One row of a trades file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TradeRow<'a> {
    pub exchange: Exchange,
    pub market_id: &'a str,
    pub asset_id: Option<&'a str>,
    pub trade_id: &'a str,
    pub executed_at: Timestamp,
    pub taker_side: &'static str,
    pub outcome: &'static str,
    pub price: Price,
    pub size: Amount,
}

/// Calls `row` for each book row of `m` (none for a trade).
pub fn book_rows<'a>(m: &'a Message<'a>, mut row: impl FnMut(BookRow<'a>)) {
    match m {
        Message::Snapshot {
            key,
            seq,
            venue_ts,
            at,
            ladders,
        } => {
            let base = BookRow {
                is_snapshot: true,
                ..BookRow::head(key, *seq, *venue_ts, *at)
            };
            let mut any = false;
            for (side, ladder) in [
                ("bid", &ladders.bids),
                ("ask", &ladders.asks),
                ("no_bid", &ladders.no_bids),
            ] {
                for l in ladder {
                    any = true;
                    row(BookRow {
                        level: Some((side, l.price, l.size)),
                        ..base
                    });
                }
            }
            if !any {
                row(base);
            }
        }
        Message::Change {
            key,
            seq,
            venue_ts,
            at,
            changes,
            ..
        } => {
            let base = BookRow::head(key, *seq, *venue_ts, *at);
            for c in changes.iter() {
                row(BookRow {
                    level: Some((side_name(c.side), c.price, c.size)),
                    ..base
                });
            }
        }
        Message::Gap {
            key,
            seq,
            venue_ts,
            start,
            end,
            cause,
        } => row(BookRow {
            gap: Some(cause),
            gap_end: *end,
            ..BookRow::head(key, *seq, *venue_ts, *start)
        }),
        Message::Trade { .. } => {}
    }
}

/// The trade row of `m`, if it is a trade.
pub fn trade_row<'a>(m: &'a Message<'a>) -> Option<TradeRow<'a>> {
    match m {
        Message::Trade {
            exchange,
            market_id,
            asset_id,
            trade,
        } => Some(TradeRow {
            exchange: *exchange,
            market_id,
            asset_id: *asset_id,
            trade_id: &trade.trade.source_trade_id,
            executed_at: trade.trade.executed_at,
            taker_side: trade.trade.taker_side.as_str(),
            outcome: trade.trade.outcome.as_str(),
            price: trade.trade.price,
            size: trade.trade.size,
        }),
        _ => None,
    }
}
