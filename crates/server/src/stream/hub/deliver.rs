//! Delivery: each bus event rendered once and pushed to the sessions that follow its channel and market.

use std::{
    collections::{BTreeMap, HashMap},
    sync::Arc,
};

use crossbook_core::{Exchange, Timestamp};
use crossbook_live::{BookChanged, DomainEvent};
use crossbook_venues::{FeedMode, Freshness};
use serde_json::json;

use super::{Hub, at_pos, lock, pushed};
use crate::{
    state::FRESHNESS_LIMIT,
    stream::{
        frames,
        protocol::{Channel, Frag, control},
        session::Session,
    },
};

impl Hub {
    pub(super) fn targets(&self, channel: Channel, markets: &[&str]) -> Vec<Arc<Session>> {
        let index = self.index.read().unwrap_or_else(|e| e.into_inner());
        let mut out = Vec::new();
        index[channel as usize].targets(markets, &mut out);
        out
    }

    pub(super) fn send_all(&self, channel: Channel, markets: &[&str], frag: &Frag) {
        for s in self.targets(channel, markets) {
            pushed(s.push(frag.clone()));
        }
    }

    /// Book changes to the sessions following their markets: for each session, the change when it follows
    /// the last `book_seq` the session got, nothing when the session's snapshot already holds it, else a fresh
    /// snapshot. A gap takes a number too, so the change after a `stale` never follows and comes as a snapshot.
    ///
    /// Each message is rendered once for all its sessions. The batch is delivered session by session: each
    /// session takes all of its messages under one lock, back to back, so its connection wakes once and writes
    /// them with one flush, rather than once per change (a write per message is what costs a thousand
    /// connections their latency).
    pub(super) fn deliver_books(&self, changes: &[(&BookChanged, u64)]) {
        // Who follows each change, copied out of the index (no session lock is taken while it is held), then
        // grouped by session in the order first seen.
        let mut sessions: Vec<(Arc<Session>, Vec<usize>)> = Vec::new();
        {
            let index = self.index.read().unwrap_or_else(|e| e.into_inner());
            let ci = &index[Channel::Book as usize];
            let mut targets = Vec::new();
            if let [(c, _)] = changes {
                ci.targets(&[c.key.market_id.as_str()], &mut targets);
                sessions.extend(targets.into_iter().map(|s| (s, vec![0])));
            } else {
                let mut at: HashMap<usize, usize, foldhash::fast::RandomState> = HashMap::default();
                for (i, (c, _)) in changes.iter().enumerate() {
                    ci.targets(&[c.key.market_id.as_str()], &mut targets);
                    for s in targets.drain(..) {
                        let n = *at.entry(Arc::as_ptr(&s) as usize).or_insert_with(|| {
                            sessions.push((s, Vec::new()));
                            sessions.len() - 1
                        });
                        sessions[n].1.push(i);
                    }
                }
            }
        }
        if sessions.is_empty() {
            return;
        }
        // Per change, rendered on first need: the change (`None` inside: nothing to show), and the book's
        // snapshot with its `book_seq` (`None` inside: the book is no longer held).
        let mut change: Vec<Option<Option<Frag>>> = vec![None; changes.len()];
        let mut snapshot: Vec<Option<Option<(Frag, u64)>>> = vec![None; changes.len()];
        for (s, mine) in sessions {
            let mut st = s.lock();
            for i in mine {
                let (c, pos) = changes[i];
                match st.books.get(&c.key).copied() {
                    Some(l) if c.book_seq <= l => {}
                    Some(l) if c.book_seq == l + 1 => {
                        // In place: a thousand sessions following a book must not clone its key each change.
                        if let Some(seq) = st.books.get_mut(&c.key) {
                            *seq = c.book_seq;
                        }
                        if let Some(f) = change[i].get_or_insert_with(|| frames::book_change(c).map(|f| at_pos(pos, f)))
                        {
                            pushed(s.push_locked(&mut st, f.clone()));
                        }
                    }
                    // A session taken over from another process: its client holds the book up to this change.
                    None if !st.assumed.is_empty() && st.assumed.remove(&c.key) => {
                        st.books.insert(c.key.clone(), c.book_seq);
                        if let Some(f) = change[i].get_or_insert_with(|| frames::book_change(c).map(|f| at_pos(pos, f)))
                        {
                            pushed(s.push_locked(&mut st, f.clone()));
                        }
                    }
                    _ => {
                        let snap = snapshot[i].get_or_insert_with(|| {
                            self.live
                                .entry(&c.key)
                                .map(|e| (at_pos(pos, frames::book_snapshot(&c.key, &e)), e.seq))
                        });
                        if let Some((f, seq)) = snap {
                            st.books.insert(c.key.clone(), *seq);
                            pushed(s.push_locked(&mut st, f.clone()));
                        }
                    }
                }
            }
        }
    }

    /// Delivers bus events in order; runs of book changes go out together ([`Hub::deliver_books`]). Each
    /// message carries the position of its event, when the bus carries positions.
    pub fn deliver_all(&self, events: &[DomainEvent]) {
        let mut delivery = lock(&self.delivery);
        let mut rest = events;
        while let Some(first) = rest.first() {
            // A run of book changes, with the positions between them.
            let mut books: Vec<(&BookChanged, u64)> = Vec::new();
            let mut run = 0;
            let mut at = delivery.at;
            for e in rest {
                match e {
                    DomainEvent::BookUpdated(c) => books.push((&**c, at)),
                    DomainEvent::Position { seq, .. } => at = *seq,
                    _ => break,
                }
                run += 1;
            }
            if books.is_empty() {
                match first {
                    DomainEvent::Position { seq, event_follows } => {
                        delivery.at = *seq;
                        delivery.pending = *event_follows;
                    }
                    ev => {
                        self.deliver_at(ev, delivery.at);
                        delivery.pending = false;
                    }
                }
                rest = &rest[1..];
            } else {
                self.deliver_books(&books);
                // The run ends with a change or with the position of an event still to come.
                if let Some(DomainEvent::Position { seq, event_follows }) = rest[..run].last() {
                    delivery.at = *seq;
                    delivery.pending = *event_follows;
                } else {
                    delivery.at = at;
                    delivery.pending = false;
                }
                rest = &rest[run..];
            }
            self.position.send_replace(delivery.complete());
        }
    }

    /// Delivers one bus event.
    pub fn deliver(&self, ev: &DomainEvent) {
        self.deliver_all(std::slice::from_ref(ev));
    }

    /// Delivers one event that is not a book change, its messages at position `pos`.
    pub(super) fn deliver_at(&self, ev: &DomainEvent, pos: u64) {
        let now = Timestamp::now();
        match ev {
            DomainEvent::BookUpdated(c) => self.deliver_books(&[(&**c, pos)]),
            DomainEvent::BooksStale {
                exchange,
                keys,
                book_seqs,
                cause,
                at,
            } => {
                self.send_all(
                    Channel::Status,
                    &[],
                    &at_pos(pos, frames::gap(*exchange, keys, book_seqs, *cause, *at)),
                );
                for (key, &seq) in keys.iter().zip(book_seqs) {
                    let targets = self.targets(Channel::Book, &[key.market_id.as_str()]);
                    if !targets.is_empty() {
                        let f = at_pos(pos, frames::book_stale(key, Some(*cause), *at, seq));
                        for s in targets {
                            let mut st = s.lock();
                            // A session already sent a later number (a snapshot taken after the gap, as a
                            // failed write's gap is numbered apart from the feed) has nothing to learn.
                            if st.books.get(key).is_some_and(|&l| l >= seq) {
                                continue;
                            }
                            // A stale book is followed by a whole one, whatever its sequence: a mirror of the
                            // leader's books can get the book back at the sequence it lost it at.
                            st.books.remove(key);
                            st.assumed.remove(key);
                            pushed(s.push_locked(&mut st, f.clone()));
                        }
                    }
                }
            }
            DomainEvent::TradeIngested(t) => {
                let targets = self.targets(Channel::Trades, &[t.market_id.as_str()]);
                if !targets.is_empty() {
                    let f = at_pos(pos, frames::trade(t, now));
                    for s in targets {
                        pushed(s.push(f.clone()));
                    }
                }
            }
            DomainEvent::WhaleEntry(w) => {
                let targets = self.targets(Channel::Whales, &[]);
                if !targets.is_empty() {
                    let f = at_pos(pos, frames::whale(w, now));
                    for s in targets {
                        pushed(s.push(f.clone()));
                    }
                }
            }
            DomainEvent::ArbitrageChanged(c) => {
                let o = &c.opportunity;
                let targets = self.targets(
                    Channel::Arbitrage,
                    &[o.venue_a.market_ticker.as_str(), o.venue_b.condition_id.as_str()],
                );
                if !targets.is_empty() {
                    let f = at_pos(pos, frames::opportunity(c, now));
                    for s in targets {
                        pushed(s.push(f.clone()));
                    }
                }
            }
            _ => {}
        }
    }

    /// The bus lost `missed` events for the hub: every session is told, and books are sent afresh.
    pub(super) fn lagged(&self, missed: u64) {
        // No session of another process joins meanwhile: every session held gets the notice.
        let _delivery = lock(&self.delivery);
        tracing::warn!(
            missed,
            "the stream fell behind the bus; sessions get a lagged notice and fresh snapshots"
        );
        metrics::counter!("crossbook_stream_lagged_total").increment(1);
        let sessions: Vec<Arc<Session>> = lock(&self.sessions).values().cloned().collect();
        let f = control("lagged", json!({ "missed": missed }));
        for s in sessions {
            pushed(s.push(f.clone()));
            self.resnapshot(&s);
        }
    }

    /// Sends a `venue` message for each venue whose connection, mode or freshness changed.
    pub(super) fn status_tick(&self, last: &mut BTreeMap<Exchange, (bool, FeedMode, bool)>) {
        let now = Timestamp::now();
        for (ex, h) in self.health.snapshot() {
            let (freshness, since) = self.health.freshness_since(ex, &h, now, FRESHNESS_LIMIT);
            let state = (h.connected, h.mode, freshness == Freshness::Fresh);
            if last.insert(ex, state) != Some(state) {
                self.send_all(
                    Channel::Status,
                    &[],
                    &at_pos(self.position(), frames::venue(ex, &h, &freshness, since)),
                );
            }
        }
    }
}
