//! Replay: the recorded history of some markets, every book event and trade between two instants, merged in
//! time order and written as newline-delimited JSON (one message a line).
//!
//! Each book starts with a `book_snapshot`: the book as it stood at the start (or at its first keyframe after
//! it). Then every change follows as a `book_change` with the changed levels' new absolute sizes, so a client
//! that applies them in order holds the recorded book at every instant. A `gap` says a book lost continuity
//! (start, end, cause); the book's next message is a `book_snapshot`. The keyframes the log stores every
//! minute are not sent as snapshots: where one differs from the book the changes built, the difference is sent
//! as a `book_change`. Trades come as `trade`, placed at their execution time (the time a trade was received is
//! not recorded).
//!
//! The reader walks each book's log in pages of chunks ([`BookLogStore::log_after`]) and each market's trades
//! in pages ([`crossbook_store::TradeStore::market_trades`]), holding one page per source: memory stays flat
//! however long the range. Output goes out in pieces of about 32 KiB through a bounded channel, so a client
//! that reads slowly slows only its own replay, and one that goes away ends it at the next piece.

use std::{collections::VecDeque, fmt::Write as _, sync::Arc};

use crossbook_core::{
    Exchange, Outcome, Timestamp,
    book::{BookChange, BookEvent, BookKey, BookState, GapCause, Ladders, Level, LevelChange, Side},
};
use crossbook_store::{Store, StoreError, StoredTrade, TradeCursor};
use tokio::sync::mpsc;
use tokio_util::bytes::Bytes;

/// The markets of one replay and its range (inclusive).
#[derive(Debug, Clone)]
pub struct ReplayPlan {
    pub markets: Vec<ReplayMarket>,
    pub from: Timestamp,
    pub to: Timestamp,
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
    /// The store failed part-way; an `error` message was the last line.
    Failed,
}

impl Ended {
    pub fn as_str(self) -> &'static str {
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
}

impl From<StoreError> for Stop {
    fn from(e: StoreError) -> Self {
        Stop::Store(e)
    }
}

/// The output: lines gathered into pieces, sent through the channel.
struct Out {
    tx: mpsc::Sender<Bytes>,
    buf: String,
    messages: u64,
}

impl Out {
    async fn line(&mut self, write: impl FnOnce(&mut String)) -> Result<(), Stop> {
        write(&mut self.buf);
        self.buf.push('\n');
        self.messages += 1;
        if self.buf.len() >= PIECE_BYTES {
            self.flush().await?;
        }
        Ok(())
    }

    async fn flush(&mut self) -> Result<(), Stop> {
        if self.buf.is_empty() {
            return Ok(());
        }
        let piece = std::mem::replace(&mut self.buf, String::with_capacity(PIECE_BYTES + 1024));
        self.tx.send(Bytes::from(piece)).await.map_err(|_| Stop::ClientGone)
    }
}

/// Writes the replay of `plan` into `tx`; returns how it ended and how many messages were sent.
pub async fn run(store: Arc<dyn Store>, plan: ReplayPlan, tx: mpsc::Sender<Bytes>) -> (Ended, u64) {
    let mut out = Out {
        tx,
        buf: String::with_capacity(PIECE_BYTES + 1024),
        messages: 0,
    };
    let ended = match write_all(store.as_ref(), &plan, &mut out).await {
        Ok(()) => match out.flush().await {
            Ok(()) => Ended::Complete,
            Err(_) => Ended::ClientGone,
        },
        Err(Stop::ClientGone) => Ended::ClientGone,
        Err(Stop::Store(e)) => {
            tracing::warn!(error = %e, "replay: the store failed part-way");
            let detail = "the database failed part-way through the replay; the messages above are complete";
            let sent = async {
                out.line(|b| {
                    let _ = write!(b, r#"{{"type":"error","detail":"{detail}"}}"#);
                })
                .await?;
                out.flush().await
            };
            let _ = sent.await;
            Ended::Failed
        }
    };
    (ended, out.messages)
}

async fn write_all(store: &dyn Store, plan: &ReplayPlan, out: &mut Out) -> Result<(), Stop> {
    let mut books = Vec::new();
    let mut book_market = Vec::new();
    for (i, m) in plan.markets.iter().enumerate() {
        for key in m.books() {
            books.push(start_book(store, key, plan, out).await?);
            book_market.push(i);
        }
    }
    let mut trades: Vec<TradeSource> = (0..plan.markets.len())
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
                        let marker = BookEvent {
                            seq,
                            venue_seq: None,
                            venue_ts: None,
                            received_at: at,
                            change: BookChange::Delta(Vec::new()),
                        };
                        let key = &b.key;
                        out.line(|buf| gap_line(buf, key, &marker, "unreadable", end)).await?;
                    }
                }
            }
            Some((_, _, i)) => {
                let t = trades[i].buf.pop_front().expect("a head was seen");
                let m = &plan.markets[trades[i].market];
                out.line(|buf| trade_line(buf, m, &t)).await?;
            }
        }
    }
}

/// The book as it stood at `plan.from`: its `book_snapshot` (or its `gap`) is sent, and reading goes on after
/// the last event at or before `from`.
async fn start_book(store: &dyn Store, key: BookKey, plan: &ReplayPlan, out: &mut Out) -> Result<BookSource, Stop> {
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
            let cause = cause.as_str();
            let key = b.key.clone();
            out.line(|buf| gap_line(buf, &key, &last, cause, end)).await?;
        }
        (_, Some(ladders)) => {
            let (key, ladders) = (b.key.clone(), ladders.clone());
            out.line(|buf| snapshot_line(buf, &key, &last, plan.from, &ladders))
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
async fn book_event(b: &mut BookSource, e: BookEvent, out: &mut Out) -> Result<(), Stop> {
    match &e.change {
        BookChange::Gap(cause) => {
            b.state = BookState::default();
            let end = next_keyframe_at(b);
            let (key, cause) = (&b.key, cause.as_str());
            out.line(|buf| gap_line(buf, key, &e, cause, end)).await
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
                    let (key, after) = (&b.key, after.clone());
                    out.line(|buf| snapshot_line(buf, key, &e, e.received_at, &after)).await
                }
                // A keyframe of a continuous book: only what it changes, if anything.
                Some(before) => {
                    let changes = ladder_changes(&before, after);
                    if changes.is_empty() {
                        return Ok(());
                    }
                    let key = &b.key;
                    out.line(|buf| change_line(buf, key, &e, &changes)).await
                }
            }
        }
        BookChange::Delta(changes) => {
            if b.state.ladders().is_none() || b.state.apply(&e.change).is_err() || changes.is_empty() {
                return Ok(());
            }
            let key = &b.key;
            out.line(|buf| change_line(buf, key, &e, changes)).await
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

// ------------------------------------------------------------------------------------------------ lines

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
fn head(
    buf: &mut String,
    kind: &str,
    key: &BookKey,
    seq: Option<u64>,
    venue_ts: Option<Timestamp>,
    received_at: Timestamp,
) {
    let _ = write!(
        buf,
        r#"{{"type":"{kind}","exchange":"{}","market_id":"#,
        key.exchange.as_str()
    );
    json_str(buf, &key.market_id);
    buf.push_str(r#","asset_id":"#);
    match &key.asset_id {
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

fn snapshot_line(buf: &mut String, key: &BookKey, e: &BookEvent, at: Timestamp, ladders: &Ladders) {
    head(buf, "book_snapshot", key, Some(e.seq), e.venue_ts, at);
    levels(buf, "bids", &ladders.bids);
    levels(buf, "asks", &ladders.asks);
    levels(buf, "no_bids", &ladders.no_bids);
    buf.push('}');
}

fn side_name(side: Side) -> &'static str {
    match side {
        Side::Bid => "bid",
        Side::Ask => "ask",
        Side::NoBid => "no_bid",
    }
}

fn change_line(buf: &mut String, key: &BookKey, e: &BookEvent, changes: &[LevelChange]) {
    head(buf, "book_change", key, Some(e.seq), e.venue_ts, e.received_at);
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

fn gap_line(buf: &mut String, key: &BookKey, e: &BookEvent, cause: &str, end: Option<Timestamp>) {
    head(buf, "gap", key, Some(e.seq), e.venue_ts, e.received_at);
    buf.push_str(r#","start":"#);
    opt_time(buf, Some(e.received_at));
    buf.push_str(r#","end":"#);
    opt_time(buf, end);
    let _ = write!(buf, r#","cause":"{cause}"}}"#);
}

fn trade_line(buf: &mut String, m: &ReplayMarket, t: &StoredTrade) {
    let tr = &t.trade;
    let key = BookKey {
        exchange: m.exchange,
        market_id: m.market_id.clone(),
        asset_id: m.token_of(tr.outcome).map(str::to_string),
    };
    head(buf, "trade", &key, None, Some(tr.executed_at), tr.executed_at);
    buf.push_str(r#","trade_id":"#);
    json_str(buf, &tr.source_trade_id);
    let _ = write!(
        buf,
        r#","taker_side":"{}","outcome":"{}","price":"{}","size":{}}}"#,
        tr.taker_side.as_str(),
        tr.outcome.as_str(),
        tr.price.four_decimals().as_str(),
        tr.size.to_f64(6)
    );
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
    "unreadable",
];
