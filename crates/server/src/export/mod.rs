//! Replay and export: the recorded history of some markets, every book event and trade between two instants,
//! merged in time order and written in one of three formats: newline-delimited JSON ([`ndjson`], the replay
//! route), gzip-compressed CSV ([`csv`]) and Parquet ([`parquet`]), the last two one row per changed level
//! ([`rows`]) for the export routes and `crossbook export`.
//!
//! Each book starts with a snapshot: the book as it stood at the start (or at its first keyframe after it).
//! Then every change follows with the changed levels' new absolute sizes, so a reader that applies them in
//! order holds the recorded book at every instant. A gap says a book lost continuity (start, end, cause); the
//! book's next message is a snapshot. The keyframes the log stores every minute are not sent as snapshots:
//! where one differs from the book the changes built, the difference is sent as a change. Trades are placed
//! at their execution time (the time a trade was received is not recorded).
//!
//! The reader walks each book's log in pages of chunks ([`BookLogStore::log_after`]) and each market's trades
//! in pages ([`crossbook_store::TradeStore::market_trades`]), holding one page per source: memory stays flat
//! however long the range. An [`Encoder`] turns messages into bytes; they go out in pieces of about 32 KiB
//! through a bounded channel, so a client that reads slowly slows only its own stream, and one that goes
//! away ends it at the next piece.
//!
//! [`BookLogStore::log_after`]: crossbook_store::BookLogStore::log_after

pub mod csv;
pub mod ndjson;
pub mod parquet;
mod reader;
pub mod rows;

pub use reader::{run, run_observed};

use crossbook_core::{
    Exchange, Outcome, Timestamp,
    book::{BookKey, GapCause, Ladders, LevelChange, Side},
};
use crossbook_store::StoredTrade;
use tokio_util::bytes::Bytes;

/// Output is sent in pieces of about this size.
const PIECE_BYTES: usize = 32 * 1024;

/// What goes through the channel: a piece of the output, or the news that it cannot be finished (the body
/// is then cut short, so a client never takes a partial file for a whole one).
pub type Piece = Result<Bytes, std::io::Error>;

/// What an export or replay reads: book events, trades, or both.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Include {
    pub books: bool,
    pub trades: bool,
}

impl Include {
    pub const ALL: Include = Include {
        books: true,
        trades: true,
    };
    pub const BOOKS: Include = Include {
        books: true,
        trades: false,
    };
    pub const TRADES: Include = Include {
        books: false,
        trades: true,
    };
}

/// One message of a replay, as the engine hands it to an [`Encoder`].
#[derive(Debug)]
pub enum Message<'a> {
    /// The whole book: at the start of the range and after each gap.
    Snapshot {
        key: &'a BookKey,
        seq: u64,
        venue_ts: Option<Timestamp>,
        at: Timestamp,
        ladders: &'a Ladders,
    },
    /// The levels that changed, with their new sizes (0 removes a level), and the whole book after them (for
    /// a reader that wants the book rather than the changes).
    Change {
        key: &'a BookKey,
        seq: u64,
        venue_ts: Option<Timestamp>,
        at: Timestamp,
        changes: &'a [LevelChange],
        book: &'a Ladders,
    },
    /// The book lost continuity from `start` to `end` (`None` while it lasts past the range).
    Gap {
        key: &'a BookKey,
        seq: u64,
        venue_ts: Option<Timestamp>,
        start: Timestamp,
        end: Option<Timestamp>,
        cause: &'a str,
    },
    /// A trade; `asset_id` is the venue_b token it was on.
    Trade {
        exchange: Exchange,
        market_id: &'a str,
        asset_id: Option<&'a str>,
        trade: &'a StoredTrade,
    },
}

/// Turns messages into the bytes of one format. Bytes gather inside until taken; a format may hold rows back
/// (Parquet writes a row group at a time).
pub trait Encoder: Send {
    /// Adds one message.
    fn message(&mut self, m: &Message<'_>);
    /// Bytes ready to be sent.
    fn ready(&self) -> usize;
    /// Takes the ready bytes.
    fn take(&mut self) -> Vec<u8>;
    /// Ends the output: whatever was held back and the format's trailer.
    fn finish(&mut self) -> std::io::Result<Vec<u8>>;
    /// Closing words after the store failed part-way, where the format can say so in-band (NDJSON's `error`
    /// line). `None` cuts the output short instead.
    fn failed(&mut self, detail: &str) -> Option<Vec<u8>>;
}

impl<E: Encoder + ?Sized> Encoder for Box<E> {
    fn message(&mut self, m: &Message<'_>) {
        (**self).message(m)
    }
    fn ready(&self) -> usize {
        (**self).ready()
    }
    fn take(&mut self) -> Vec<u8> {
        (**self).take()
    }
    fn finish(&mut self) -> std::io::Result<Vec<u8>> {
        (**self).finish()
    }
    fn failed(&mut self, detail: &str) -> Option<Vec<u8>> {
        (**self).failed(detail)
    }
}

impl Message<'_> {
    /// The message's place in time: its receive time (a trade's execution time).
    pub fn at(&self) -> Timestamp {
        match self {
            Message::Snapshot { at, .. } | Message::Change { at, .. } => *at,
            Message::Gap { start, .. } => *start,
            Message::Trade { trade, .. } => trade.trade.executed_at,
        }
    }
}

/// The file formats of an export.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileFormat {
    /// Gzip-compressed CSV.
    Csv,
    Parquet,
}

impl FileFormat {
    pub fn as_str(self) -> &'static str {
        match self {
            FileFormat::Csv => "csv",
            FileFormat::Parquet => "parquet",
        }
    }

    /// The file name's ending.
    pub fn extension(self) -> &'static str {
        match self {
            FileFormat::Csv => "csv.gz",
            FileFormat::Parquet => "parquet",
        }
    }

    /// The media type the file is served as.
    pub fn media_type(self) -> &'static str {
        match self {
            FileFormat::Csv => "application/gzip",
            FileFormat::Parquet => "application/vnd.apache.parquet",
        }
    }

    /// A new encoder of `table` rows in this format.
    pub fn encoder(self, table: rows::Table) -> std::io::Result<Box<dyn Encoder>> {
        Ok(match self {
            FileFormat::Csv => Box::new(csv::Csv::new(table)),
            FileFormat::Parquet => {
                Box::new(parquet::Parquet::new(table).map_err(|e| std::io::Error::other(e.to_string()))?)
            }
        })
    }
}

/// The first and last millisecond of a UTC day written `YYYY-MM-DD`; `None` if it is not a real date.
pub fn utc_day(date: &str) -> Option<(Timestamp, Timestamp)> {
    let format = time::macros::format_description!("[year]-[month]-[day]");
    if date.len() != 10 {
        return None;
    }
    let day = time::Date::parse(date, &format).ok()?;
    let start = day.midnight().assume_utc().unix_timestamp() * 1000;
    Some((
        Timestamp::from_millis(start),
        Timestamp::from_millis(start + 86_400_000 - 1),
    ))
}

/// The file name of one market's day: `venue_a_KXBTC-…_2026-11-24_books.parquet`, with any character other
/// than a letter, a digit, `.`, `_` or `-` of the id written as `_`.
pub fn file_name(exchange: Exchange, market_id: &str, date: &str, table: rows::Table, format: FileFormat) -> String {
    let id: String = market_id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '_'
            }
        })
        .collect();
    format!(
        "{}_{id}_{date}_{}.{}",
        exchange.as_str(),
        table.as_str(),
        format.extension()
    )
}

/// The markets of one replay and its range (inclusive).
#[derive(Debug, Clone)]
pub struct ReplayPlan {
    pub markets: Vec<ReplayMarket>,
    pub from: Timestamp,
    pub to: Timestamp,
    pub include: Include,
}

/// One market to replay: venue_a has one book; venue_b one per token (YES first).
#[derive(Debug, Clone)]
pub struct ReplayMarket {
    pub exchange: Exchange,
    pub market_id: String,
    pub yes_token: Option<String>,
    pub no_token: Option<String>,
}

impl ReplayMarket {
    /// The books of a catalog market.
    pub fn of(m: crossbook_core::Market) -> Self {
        ReplayMarket {
            exchange: m.exchange,
            market_id: m.market_id,
            yes_token: m.yes_token_id,
            no_token: m.no_token_id,
        }
    }

    fn books(&self) -> Vec<BookKey> {
        match self.exchange {
            Exchange::VenueA => vec![BookKey::venue_a(&self.market_id)],
            Exchange::VenueB => [&self.yes_token, &self.no_token]
                .into_iter()
                .flatten()
                .map(|t| BookKey {
                    exchange: Exchange::VenueB,
                    market_id: self.market_id.clone(),
                    asset_id: Some(t.clone()),
                })
                .collect(),
        }
    }

    /// The venue_b token a trade of `outcome` is on.
    fn token_of(&self, outcome: Outcome) -> Option<&str> {
        match outcome {
            Outcome::Yes => self.yes_token.as_deref(),
            Outcome::No => self.no_token.as_deref(),
        }
    }
}

/// How a replay ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ended {
    /// Every message was sent.
    Complete,
    /// The client went away; reading stopped.
    ClientGone,
    /// The store failed part-way, or the output could not be encoded: NDJSON ends with an `error` line, a file
    /// is cut short.
    Failed,
}

impl Ended {
    pub const ALL: [Ended; 3] = [Ended::Complete, Ended::ClientGone, Ended::Failed];

    pub const fn as_str(self) -> &'static str {
        match self {
            Ended::Complete => "complete",
            Ended::ClientGone => "client_gone",
            Ended::Failed => "failed",
        }
    }
}

/// The level changes that turn `before` into `after`: new and changed levels with their sizes, removed ones
/// with size 0.
pub fn ladder_changes(before: &Ladders, after: &Ladders) -> Vec<LevelChange> {
    let mut out = Vec::new();
    for (side, old, new) in [
        (Side::Bid, &before.bids, &after.bids),
        (Side::Ask, &before.asks, &after.asks),
        (Side::NoBid, &before.no_bids, &after.no_bids),
    ] {
        for l in new {
            if !old.iter().any(|o| o.price == l.price && o.size == l.size) {
                out.push(LevelChange {
                    side,
                    price: l.price,
                    size: l.size,
                });
            }
        }
        for o in old {
            if !new.iter().any(|l| l.price == o.price) {
                out.push(LevelChange {
                    side,
                    price: o.price,
                    size: crossbook_core::Amount::ZERO,
                });
            }
        }
    }
    out
}

/// Gap causes a replay may name: the capture causes, and `unreadable` for stored events that could not be
/// decoded. Listed here for the API document.
pub const GAP_CAUSES: [&str; 8] = [
    GapCause::SequenceGap.as_str(),
    GapCause::Disconnect.as_str(),
    GapCause::Silence.as_str(),
    GapCause::Restart.as_str(),
    GapCause::RateLimited.as_str(),
    GapCause::BadMessage.as_str(),
    GapCause::WriteFailed.as_str(),
    UNREADABLE,
];

/// The gap cause of stored events that could not be decoded.
pub const UNREADABLE: &str = "unreadable";
