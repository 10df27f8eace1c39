//! The reader behind replay and export: each book's log and each market's trades read a page at a time and
//! merged in time order into [`Message`]s, which an [`Encoder`] turns into pieces for the channel.

use std::{
    cmp::Reverse,
    collections::{BinaryHeap, VecDeque},
    sync::{
        Arc,
        atomic::{AtomicI64, Ordering},
    },
};

use crossbook_core::{
    Timestamp,
    book::{BookChange, BookEvent, BookKey, BookState, Ladders, LevelChange},
};
use crossbook_store::{Store, StoreError, StoredTrade, TradeCursor};
use tokio::sync::mpsc;
use tokio_util::bytes::Bytes;

use super::*;

/// Chunks read per page of a book's log (up to 4,096 events each).
const LOG_PAGE_CHUNKS: u32 = 4;
/// Chunks of a book's first page: a replay of many books (a backtest reads every book of a day) holds one
/// page of each from the start, most of them books whose events come hours later.
const FIRST_PAGE_CHUNKS: u32 = 1;
/// Trades read per page of a market.
const TRADE_PAGE: u32 = 2_000;

/// One book being replayed.
struct BookSource {
    key: BookKey,
    state: BookState,
    /// Where the next log read goes on from.
    read_seq: u64,
    read_ts: Timestamp,
    exhausted: bool,
    buf: VecDeque<Item>,
    /// Pages read so far.
    pages: u32,
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

    // The next item of every source that has one, earliest first: book events before trades of the same
    // millisecond, then in source order. A source goes back in once its next item is known, so each message
    // costs a heap step, however many books the replay merges.
    let mut heads: BinaryHeap<Reverse<(Timestamp, u8, usize)>> = BinaryHeap::new();
    for (i, b) in books.iter_mut().enumerate() {
        if b.buf.is_empty() && !b.exhausted {
            refill_book(store, b, plan.to).await?;
        }
        if let Some(e) = b.buf.front() {
            heads.push(Reverse((e.at(), 0, i)));
        }
    }
    for (i, t) in trades.iter_mut().enumerate() {
        refill_trades(store, t, &plan.markets[t.market], plan).await?;
        if let Some(tr) = t.buf.front() {
            heads.push(Reverse((tr.trade.executed_at, 1, i)));
        }
    }

    while let Some(Reverse((_, kind, i))) = heads.pop() {
        if kind == 0 {
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
            if b.buf.is_empty() && !b.exhausted {
                refill_book(store, b, plan.to).await?;
            }
            if let Some(e) = b.buf.front() {
                heads.push(Reverse((e.at(), 0, i)));
            }
        } else {
            let t = trades[i].buf.pop_front().expect("a head was seen");
            let m = &plan.markets[trades[i].market];
            out.send(Message::Trade {
                exchange: m.exchange,
                market_id: &m.market_id,
                asset_id: m.token_of(t.trade.outcome),
                trade: &t,
            })
            .await?;
            let src = &mut trades[i];
            if src.buf.is_empty() && !src.exhausted {
                refill_trades(store, src, &plan.markets[src.market], plan).await?;
            }
            if let Some(tr) = src.buf.front() {
                heads.push(Reverse((tr.trade.executed_at, 1, i)));
            }
        }
    }
    Ok(())
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
        pages: 0,
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
        .log_after(
            &b.key,
            b.read_seq,
            b.read_ts,
            to,
            if b.pages == 0 {
                FIRST_PAGE_CHUNKS
            } else {
                LOG_PAGE_CHUNKS
            },
        )
        .await?;
    b.pages += 1;
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
                    out.send(change(&b.key, &e, &changes, after)).await
                }
            }
        }
        BookChange::Delta(changes) => {
            if b.state.ladders().is_none() || b.state.apply(&e.change).is_err() || changes.is_empty() {
                return Ok(());
            }
            let Some(after) = b.state.ladders() else { return Ok(()) };
            out.send(change(&b.key, &e, changes, after)).await
        }
    }
}

fn change<'a>(key: &'a BookKey, e: &BookEvent, changes: &'a [LevelChange], book: &'a Ladders) -> Message<'a> {
    Message::Change {
        key,
        seq: e.seq,
        venue_ts: e.venue_ts,
        at: e.received_at,
        changes,
        book,
    }
}
