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
pub mod rows;

use std::{
    collections::VecDeque,
    sync::{
        Arc,
        atomic::{AtomicI64, Ordering},
    },
};

use crossbook_core::{
    Exchange, Outcome, Timestamp,
    book::{BookChange, BookEvent, BookKey, BookState, GapCause, Ladders, LevelChange, Side},
};
use crossbook_store::{Store, StoreError, StoredTrade, TradeCursor};
use tokio::sync::mpsc;
use tokio_util::bytes::Bytes;

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
    /// The levels that changed, with their new sizes (0 removes a level).
    Change {
        key: &'a BookKey,
        seq: u64,
        venue_ts: Option<Timestamp>,
        at: Timestamp,
        changes: &'a [LevelChange],
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

/// Chunks read per page of a book's log (up to 4,096 events each).
const LOG_PAGE_CHUNKS: u32 = 4;
/// Trades read per page of a market.
const TRADE_PAGE: u32 = 2_000;
/// Output is sent in pieces of about this size.
const PIECE_BYTES: usize = 32 * 1024;

/// One book being replayed.
struct BookSource {
    key: BookKey,
    state: BookState,
    /// Where the next log read goes on from.
    read_seq: u64,
    read_ts: Timestamp,
    exhausted: bool,
    buf: VecDeque<Item>,
}

/// What a book's log gives next: an event, or a hole where stored events could not be read (a corrupt chunk),
/// after which the book is unknown until its next keyframe.
enum Item {
    Event(BookEvent),
    Unreadable { seq: u64, at: Timestamp },
}

impl Item {
    fn at(&self) -> Timestamp {
        match self {
            Item::Event(e) => e.received_at,
            Item::Unreadable { at, .. } => *at,
        }
    }
}

/// One market's trades being replayed.
struct TradeSource {
    market: usize,
    cursor: Option<TradeCursor>,
    exhausted: bool,
    buf: VecDeque<StoredTrade>,
}

/// Why the writing stopped early.
enum Stop {
    ClientGone,
    Store(StoreError),
    Encode(std::io::Error),
}

impl From<StoreError> for Stop {
    fn from(e: StoreError) -> Self {
        Stop::Store(e)
    }
}

/// The output: messages encoded into pieces, sent through the channel.
struct Out<E> {
    tx: mpsc::Sender<Piece>,
    enc: E,
    messages: u64,
    progress: Option<Arc<AtomicI64>>,
}

impl<E: Encoder> Out<E> {
    async fn send(&mut self, m: Message<'_>) -> Result<(), Stop> {
        self.enc.message(&m);
        self.messages += 1;
        if let Some(p) = &self.progress {
            p.store(m.at().millis(), Ordering::Relaxed);
        }
        if self.enc.ready() >= PIECE_BYTES {
            let piece = self.enc.take();
            self.piece(piece).await?;
        }
        Ok(())
    }

    async fn piece(&mut self, bytes: Vec<u8>) -> Result<(), Stop> {
        if bytes.is_empty() {
            return Ok(());
        }
        self.tx.send(Ok(Bytes::from(bytes))).await.map_err(|_| Stop::ClientGone)
    }

    /// Ends a failed output: the format's closing words, or the body cut short.
    async fn fail(&mut self, detail: &str) {
        match self.enc.failed(detail) {
            Some(bytes) => {
                let _ = self.piece(bytes).await;
            }
            None => {
                let _ = self.tx.send(Err(std::io::Error::other(detail.to_string()))).await;
            }
        }
    }

    async fn finish(&mut self) -> Result<(), Stop> {
        let last = self.enc.finish();
        match last {
            Ok(bytes) => self.piece(bytes).await,
            Err(e) => Err(Stop::Encode(e)),
        }
    }
}

/// Writes the replay of `plan` in `enc`'s format into `tx`; returns how it ended and how many messages were
/// encoded.
pub async fn run<E: Encoder>(store: Arc<dyn Store>, plan: ReplayPlan, enc: E, tx: mpsc::Sender<Piece>) -> (Ended, u64) {
    run_observed(store, plan, enc, tx, None).await
}

/// [`run`], storing the time (Unix ms) of each message in `progress` as it is encoded, for a progress bar.
pub async fn run_observed<E: Encoder>(
    store: Arc<dyn Store>,
    plan: ReplayPlan,
    enc: E,
    tx: mpsc::Sender<Piece>,
    progress: Option<Arc<AtomicI64>>,
) -> (Ended, u64) {
    let mut out = Out {
        tx,
        enc,
        messages: 0,
        progress,
    };
    let result = match write_all(store.as_ref(), &plan, &mut out).await {
        Ok(()) => out.finish().await,
        Err(e) => Err(e),
    };
    let ended = match result {
        Ok(()) => Ended::Complete,
        Err(Stop::ClientGone) => Ended::ClientGone,
        Err(Stop::Store(e)) => {
            tracing::warn!(error = %e, "export: the store failed part-way");
            out.fail("the database failed part-way; the messages above are complete")
                .await;
            Ended::Failed
        }
        Err(Stop::Encode(e)) => {
            tracing::warn!(error = %e, "export: the output could not be encoded");
            out.fail("the output could not be encoded; the messages above are complete")
                .await;
            Ended::Failed
        }
    };
    (ended, out.messages)
}

async fn write_all<E: Encoder>(store: &dyn Store, plan: &ReplayPlan, out: &mut Out<E>) -> Result<(), Stop> {
    let mut books = Vec::new();
    if plan.include.books {
        for m in &plan.markets {
            for key in m.books() {
                books.push(start_book(store, key, plan, out).await?);
            }
        }
    }
    let trade_markets = if plan.include.trades { plan.markets.len() } else { 0 };
    let mut trades: Vec<TradeSource> = (0..trade_markets)
        .map(|market| TradeSource {
            market,
            cursor: None,
            exhausted: false,
            buf: VecDeque::new(),
        })
        .collect();

    loop {
        // Every source that can still give something shows its next item, so the earliest is known.
        for b in books.iter_mut() {
            if b.buf.is_empty() && !b.exhausted {
                refill_book(store, b, plan.to).await?;
            }
        }
        for t in trades.iter_mut() {
            if t.buf.is_empty() && !t.exhausted {
                refill_trades(store, t, &plan.markets[t.market], plan).await?;
            }
        }
        // The earliest head; book events before trades of the same millisecond, then in source order.
        let mut best: Option<(Timestamp, u8, usize)> = None;
        for (i, b) in books.iter().enumerate() {
            if let Some(e) = b.buf.front() {
                let k = (e.at(), 0, i);
                best = Some(best.map_or(k, |x| x.min(k)));
            }
        }
        for (i, t) in trades.iter().enumerate() {
            if let Some(tr) = t.buf.front() {
                let k = (tr.trade.executed_at, 1, i);
                best = Some(best.map_or(k, |x| x.min(k)));
            }
        }
        match best {
            None => return Ok(()),
            Some((_, 0, i)) => {
                let b = &mut books[i];
                let item = b.buf.pop_front().expect("a head was seen");
                let opens_gap = matches!(
                    &item,
                    Item::Unreadable { .. }
                        | Item::Event(BookEvent {
                            change: BookChange::Gap(_),
                            ..
                        })
                );
                if opens_gap && b.buf.is_empty() && !b.exhausted {
                    // The gap's end is the book's next event: read it now.
                    refill_book(store, b, plan.to).await?;
                }
                match item {
                    Item::Event(e) => book_event(b, e, out).await?,
                    Item::Unreadable { seq, at } => {
                        b.state = BookState::default();
                        let end = next_keyframe_at(b);
                        out.send(Message::Gap {
                            key: &b.key,
                            seq,
                            venue_ts: None,
                            start: at,
                            end,
                            cause: UNREADABLE,
                        })
                        .await?;
                    }
                }
            }
            Some((_, _, i)) => {
                let t = trades[i].buf.pop_front().expect("a head was seen");
                let m = &plan.markets[trades[i].market];
                out.send(Message::Trade {
                    exchange: m.exchange,
                    market_id: &m.market_id,
                    asset_id: m.token_of(t.trade.outcome),
                    trade: &t,
                })
                .await?;
            }
        }
    }
}

/// The book as it stood at `plan.from`: its `book_snapshot` (or its `gap`) is sent, and reading goes on after
/// the last event at or before `from`.
async fn start_book<E: Encoder>(
    store: &dyn Store,
    key: BookKey,
    plan: &ReplayPlan,
    out: &mut Out<E>,
) -> Result<BookSource, Stop> {
    let read = store.log_events(&key, plan.from, plan.from).await?;
    let mut b = BookSource {
        key,
        state: BookState::default(),
        read_seq: 0,
        read_ts: plan.from,
        exhausted: false,
        buf: VecDeque::new(),
    };
    if !read.corrupt.is_empty() {
        tracing::warn!(book = ?b.key, chunks = read.corrupt.len(), "replay: corrupt chunks skipped");
    }
    let Some(last) = read.events.last().cloned() else {
        return Ok(b);
    };
    for e in &read.events {
        // A change that cannot apply leaves the book unknown until its next keyframe, as in the history routes.
        let _ = b.state.apply(&e.change);
    }
    b.read_seq = last.seq;
    b.read_ts = last.received_at;
    match (&last.change, b.state.ladders()) {
        (BookChange::Gap(cause), _) => {
            refill_book(store, &mut b, plan.to).await?;
            let end = next_keyframe_at(&b);
            out.send(Message::Gap {
                key: &b.key,
                seq: last.seq,
                venue_ts: last.venue_ts,
                start: last.received_at,
                end,
                cause: cause.as_str(),
            })
            .await?;
        }
        (_, Some(ladders)) => {
            out.send(Message::Snapshot {
                key: &b.key,
                seq: last.seq,
                venue_ts: last.venue_ts,
                at: plan.from,
                ladders,
            })
            .await?;
        }
        (_, None) => {}
    }
    Ok(b)
}

async fn refill_book(store: &dyn Store, b: &mut BookSource, to: Timestamp) -> Result<(), Stop> {
    let page = store
        .log_after(&b.key, b.read_seq, b.read_ts, to, LOG_PAGE_CHUNKS)
        .await?;
    if !page.corrupt.is_empty() {
        tracing::warn!(book = ?b.key, chunks = page.corrupt.len(), "replay: corrupt chunks skipped");
        metrics::counter!("crossbook_replay_corrupt_chunks_total").increment(page.corrupt.len() as u64);
    }
    // Seqs go up by one; a jump is a chunk that could not be read (the first read of a book starts anywhere).
    let mut expected = (b.read_seq > 0).then_some(b.read_seq + 1);
    for e in page.events {
        if expected.is_some_and(|x| e.seq != x) {
            b.buf.push_back(Item::Unreadable {
                seq: expected.unwrap_or_default(),
                at: e.received_at,
            });
        }
        expected = Some(e.seq + 1);
        b.read_seq = e.seq;
        b.read_ts = e.received_at;
        b.buf.push_back(Item::Event(e));
    }
    match page.next {
        Some((seq, ts)) => {
            b.read_seq = b.read_seq.max(seq);
            b.read_ts = b.read_ts.max(ts);
        }
        None => b.exhausted = true,
    }
    Ok(())
}

async fn refill_trades(
    store: &dyn Store,
    t: &mut TradeSource,
    m: &ReplayMarket,
    plan: &ReplayPlan,
) -> Result<(), Stop> {
    let page = store
        .market_trades(m.exchange, &m.market_id, plan.from, plan.to, t.cursor, TRADE_PAGE)
        .await?;
    t.exhausted = page.len() < TRADE_PAGE as usize;
    if let Some(last) = page.last() {
        t.cursor = Some((last.trade.executed_at, last.id));
    }
    t.buf.extend(page);
    Ok(())
}

/// When the book's gap ends: its next keyframe among the events read (later events of a gap are skipped
/// until it, so it is normally the next one).
fn next_keyframe_at(b: &BookSource) -> Option<Timestamp> {
    b.buf.iter().find_map(|i| match i {
        Item::Event(e) if matches!(e.change, BookChange::Snapshot { .. }) => Some(e.received_at),
        _ => None,
    })
}

/// Sends what one stored event changes.
async fn book_event<E: Encoder>(b: &mut BookSource, e: BookEvent, out: &mut Out<E>) -> Result<(), Stop> {
    match &e.change {
        BookChange::Gap(cause) => {
            b.state = BookState::default();
            let end = next_keyframe_at(b);
            out.send(Message::Gap {
                key: &b.key,
                seq: e.seq,
                venue_ts: e.venue_ts,
                start: e.received_at,
                end,
                cause: cause.as_str(),
            })
            .await
        }
        BookChange::Snapshot { .. } => {
            let before = b.state.ladders().cloned();
            if b.state.apply(&e.change).is_err() {
                return Ok(());
            }
            let Some(after) = b.state.ladders() else { return Ok(()) };
            match before {
                // After a gap, or the book's first event: the whole book.
                None => {
                    out.send(Message::Snapshot {
                        key: &b.key,
                        seq: e.seq,
                        venue_ts: e.venue_ts,
                        at: e.received_at,
                        ladders: after,
                    })
                    .await
                }
                // A keyframe of a continuous book: only what it changes, if anything.
                Some(before) => {
                    let changes = ladder_changes(&before, after);
                    if changes.is_empty() {
                        return Ok(());
                    }
                    out.send(change(&b.key, &e, &changes)).await
                }
            }
        }
        BookChange::Delta(changes) => {
            if b.state.ladders().is_none() || b.state.apply(&e.change).is_err() || changes.is_empty() {
                return Ok(());
            }
            out.send(change(&b.key, &e, changes)).await
        }
    }
}

fn change<'a>(key: &'a BookKey, e: &BookEvent, changes: &'a [LevelChange]) -> Message<'a> {
    Message::Change {
        key,
        seq: e.seq,
        venue_ts: e.venue_ts,
        at: e.received_at,
        changes,
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
