//! Sessions of another api process taken over by this one ([`super::super::shared`]): the events the client
//! missed are rendered from the bus's event stream as delivery renders them, and the session joins delivery
//! under the delivery lock, so each later event reaches it live, once. The records that let other processes
//! take over this one's sessions are refreshed here too.

use std::{collections::HashSet, sync::Arc, time::Duration};

use crossbook_core::book::BookChange;
use crossbook_live::{BookKey, DomainEvent};

use super::{Hub, at_pos, lock, pushed};
use crate::stream::{
    frames,
    protocol::Channel,
    session::{Owner, Session, State, Subscriptions},
    shared::{Replayed, SharedSessions, selects},
};
use tokio_util::sync::CancellationToken;

/// How long a resume waits for this process to reach the client's position (it mirrors the same events,
/// a few milliseconds apart at most while both are healthy).
const CATCH_UP: Duration = Duration::from_secs(3);

/// How a session of another process was taken over.
pub enum Adopted {
    /// Its missed messages are in its buffer, after `resume_from`.
    Replayed(Arc<Session>),
    /// Its subscriptions are kept, but the messages it missed are gone: it gets `reset` and fresh snapshots.
    Reset(Arc<Session>),
}

impl Hub {
    /// Installs a session's subscriptions in the index (a session of another process taken over).
    fn index_subs(&self, s: &Arc<Session>, subs: &Subscriptions) {
        let mut index = self.index.write().unwrap_or_else(|e| e.into_inner());
        for (channel, markets) in subs {
            let ci = &mut index[*channel as usize];
            match markets {
                None => ci.all.push(s.clone()),
                Some(ms) => {
                    for m in ms {
                        ci.markets.entry(m.clone()).or_default().push(s.clone());
                    }
                }
            }
        }
    }

    /// Holds a session taken over from another process under its id, replacing one held here.
    fn hold(&self, s: &Arc<Session>) {
        let old = {
            let mut sessions = lock(&self.sessions);
            let old = sessions.insert(s.id.clone(), s.clone());
            metrics::gauge!("crossbook_stream_sessions").set(sessions.len() as f64);
            old
        };
        if let Some(old) = old {
            if let Some(a) = old.lock().attached.take() {
                a.slow.cancel();
            }
            self.forget(&[old]);
        }
    }

    /// A session of another process whose missed messages are gone: its subscriptions, numbered on from
    /// `from`; the caller resets it (`reset` and fresh snapshots).
    pub fn adopt_reset(&self, id: &str, owner: Owner, subs: Subscriptions, from: u64) -> Arc<Session> {
        let s = Session::new(id.to_string(), self.settings.buffer);
        {
            let mut st = s.lock();
            st.seq = from;
            st.owner = Some(owner);
            self.index_subs(&s, &subs);
            st.subs = subs;
        }
        self.hold(&s);
        s
    }

    /// Takes over session `id` of another process, whose client has every message up to its `resume_from`
    /// (`from`) and every event up to the position it named: under the delivery lock, the events read from the
    /// event stream up to the position delivered here are rendered into the session's buffer, numbered on from
    /// `from`, and the session joins delivery, so each later event reaches it live, once. `None` when delivery
    /// has moved past `read_upto` (read on, and try again).
    ///
    /// The rendering is the hub's, with one assumption: a book's first change in the replay follows the
    /// client's copy (the client got every event before, the change included when a snapshot it got was taken
    /// from the live map while that change was still on its way to the hub: the one case where it gets it
    /// twice, with a `book_seq` it already holds). A followed book with no event in the replay is assumed the
    /// same way at its first live change.
    pub fn adopt(
        &self,
        id: &str,
        owner: Owner,
        subs: &Subscriptions,
        from: u64,
        events: &[Replayed],
        read_upto: u64,
    ) -> Option<Arc<Session>> {
        let delivery = lock(&self.delivery);
        let upto = delivery.complete();
        if upto > read_upto {
            return None;
        }
        let s = Session::new(id.to_string(), self.settings.buffer);
        {
            let mut st = s.lock();
            st.seq = from;
            st.owner = Some(owner);
            st.subs = subs.clone();
            let mut gone: HashSet<BookKey> = HashSet::new();
            for r in events.iter().filter(|r| r.pos <= upto) {
                self.replay_one(&s, &mut st, r, &mut gone);
            }
            if let Some(Some(markets)) = subs.get(&Channel::Book) {
                for m in markets {
                    for (key, _) in self.live.market_books(m) {
                        if !st.books.contains_key(&key) && !gone.contains(&key) {
                            st.assumed.insert(key);
                        }
                    }
                }
            }
            self.index_subs(&s, subs);
        }
        drop(delivery);
        self.hold(&s);
        Some(s)
    }

    /// Renders one replayed event into a session taken over, as delivery would have (`gone`: the books whose
    /// continuity the replay saw lost: they wait for a whole book).
    fn replay_one(&self, s: &Session, st: &mut State, r: &Replayed, gone: &mut HashSet<BookKey>) {
        let pos = r.pos;
        match &r.event {
            DomainEvent::BookUpdated(c) => {
                if !selects(&st.subs, Channel::Book, &[c.key.market_id.as_str()]) {
                    return;
                }
                let whole = matches!(c.change, BookChange::Snapshot { .. });
                let takes = match st.books.get(&c.key).copied() {
                    Some(l) if c.book_seq <= l => false,
                    Some(l) => c.book_seq == l + 1 || whole,
                    None => !gone.contains(&c.key) || whole,
                };
                if !takes {
                    if st.books.remove(&c.key).is_some() {
                        gone.insert(c.key.clone());
                    }
                    return;
                }
                gone.remove(&c.key);
                st.books.insert(c.key.clone(), c.book_seq);
                if let Some(f) = frames::book_change(c) {
                    pushed(s.push_locked(st, at_pos(pos, f)));
                }
            }
            DomainEvent::BooksStale {
                exchange,
                keys,
                book_seqs,
                cause,
                at,
            } => {
                if selects(&st.subs, Channel::Status, &[]) {
                    let f = frames::gap(*exchange, keys, book_seqs, *cause, *at);
                    pushed(s.push_locked(st, at_pos(pos, f)));
                }
                for (key, &seq) in keys.iter().zip(book_seqs) {
                    if !selects(&st.subs, Channel::Book, &[key.market_id.as_str()])
                        || st.books.get(key).is_some_and(|&l| l >= seq)
                    {
                        continue;
                    }
                    st.books.remove(key);
                    gone.insert(key.clone());
                    let f = frames::book_stale(key, Some(*cause), *at, seq);
                    pushed(s.push_locked(st, at_pos(pos, f)));
                }
            }
            DomainEvent::TradeIngested(t) if selects(&st.subs, Channel::Trades, &[t.market_id.as_str()]) => {
                pushed(s.push_locked(st, at_pos(pos, frames::trade(t, r.sent_at))));
            }
            DomainEvent::WhaleEntry(w) if selects(&st.subs, Channel::Whales, &[]) => {
                pushed(s.push_locked(st, at_pos(pos, frames::whale(w, r.sent_at))));
            }
            DomainEvent::ArbitrageChanged(c) => {
                let o = &c.opportunity;
                let markets = [o.venue_a.market_ticker.as_str(), o.venue_b.condition_id.as_str()];
                if selects(&st.subs, Channel::Arbitrage, &markets) {
                    pushed(s.push_locked(st, at_pos(pos, frames::opportunity(c, r.sent_at))));
                }
            }
            _ => {}
        }
    }

    /// Takes over session `id` of another process for `owner`, as [`SharedSessions`] explains: its missed
    /// events read from the bus's event stream, then live delivery joined. `None` when no process shared
    /// such a session within the resume window, or it is another customer's.
    pub async fn take_over(
        &self,
        shared: &SharedSessions,
        id: &str,
        owner: Owner,
        from: u64,
        pos: Option<u64>,
    ) -> Option<Adopted> {
        let record = shared.get(id).await?;
        if record.customer_id != owner.customer_id {
            return None;
        }
        let subs = record.subscriptions(owner.plan);
        let reset = |why: &dyn std::fmt::Display| {
            tracing::info!(session = id, reason = %why, "a stream session from another process is reset");
            Some(Adopted::Reset(self.adopt_reset(id, owner, subs.clone(), from)))
        };
        let Some(pos) = pos else {
            return reset(&"the client named no resume_pos");
        };
        // This process must have delivered the events the client got on the other one.
        if !self.reached(pos, tokio::time::Instant::now() + CATCH_UP).await {
            return reset(&format!("this process is behind the client's position {pos}"));
        }
        let mut reader = match shared.events_after(pos).await {
            Ok(r) => r,
            Err(e) => return reset(&e),
        };
        // The hub moves on while the events are read: read up to its position, then join under its delivery
        // lock if it has not moved past what was read, else read on.
        for _ in 0..100 {
            if let Err(e) = reader.read_to(self.position()).await {
                return reset(&e);
            }
            if let Some(s) = self.adopt(id, owner, &subs, from, &reader.events, reader.upto) {
                return Some(Adopted::Replayed(s));
            }
        }
        reset(&"this process's events moved on faster than they could be read")
    }

    /// Rewrites the records of the sessions attached here every third of the resume window, so a session
    /// stays resumable on another process for a whole window after this process stops without closing it.
    pub async fn refresh_records(self: Arc<Hub>, shared: Arc<SharedSessions>, cancel: CancellationToken) {
        let every = (shared.window / 3).max(Duration::from_secs(1));
        let mut tick = tokio::time::interval(every);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                () = cancel.cancelled() => return,
                _ = tick.tick() => {}
            }
            for (id, record) in self.attached_records() {
                shared.put(&id, &record).await;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use crossbook_core::{
        Amount, Plan, Price, Timestamp,
        book::{BookChange, BookKey, LevelChange, Side},
    };
    use crossbook_live::{BookChanged, DomainEvent, LiveBooks};
    use crossbook_venues::VenueHealth;
    use serde_json::Value;
    use tokio_util::sync::CancellationToken;

    use crate::stream::{
        Hub, StreamSettings,
        protocol::Channel,
        session::{Owner, Subscriptions},
        shared::Replayed,
    };

    use super::super::tests::book;

    fn change(market: &str, book_seq: u64) -> DomainEvent {
        DomainEvent::BookUpdated(Arc::new(BookChanged {
            key: BookKey::venue_a(market),
            book_seq,
            timestamp: Timestamp(1),
            change: BookChange::Delta(vec![LevelChange {
                side: Side::Bid,
                price: Price::from_cents(40),
                size: Amount::from_units(book_seq as i64),
            }]),
            venue_ts: None,
            received_at: Timestamp(1),
        }))
    }

    fn at(pos: u64, event: DomainEvent) -> Replayed {
        Replayed {
            pos,
            sent_at: Timestamp(1),
            event,
        }
    }

    /// (seq, type, market, book_seq, pos) of every message queued or given.
    fn read(out: impl IntoIterator<Item = crate::stream::session::Out>) -> Vec<(u64, String, String, u64, u64)> {
        out.into_iter()
            .map(|(seq, frag)| {
                let v: Value = serde_json::from_str(&format!("{{{frag}")).unwrap();
                let s = |k: &str| v[k].as_str().unwrap_or_default().to_string();
                let n = |k: &str| v[k].as_u64().unwrap_or(0);
                (seq, s("type"), s("market_id"), n("book_seq"), n("pos"))
            })
            .collect()
    }

    #[test]
    fn a_session_of_another_process_gets_the_replay_numbered_on_then_live_changes_once() {
        let live = LiveBooks::new();
        for bid in [40, 41] {
            live.upsert(book("A", bid));
            live.upsert(book("B", bid));
        }
        let hub = Hub::new(
            StreamSettings::from_config(&crate::config::Config::default()),
            live.clone(),
            VenueHealth::new(&live),
        );
        let owner = Owner {
            customer_id: 1,
            plan: Plan::Free,
        };
        // This process has delivered every event up to position 10.
        hub.deliver_all(&[DomainEvent::Position {
            seq: 10,
            event_follows: false,
        }]);
        assert_eq!(hub.position(), 10);
        let mut subs = Subscriptions::new();
        subs.insert(Channel::Book, Some(["A".to_string(), "B".to_string()].into()));
        // The client got everything up to position 7 and seq 5; the stream holds A's changes 2 (at 8) and 3 (at
        // 11), and a change of a market it does not follow.
        let events = [at(8, change("A", 2)), at(9, change("C", 7)), at(11, change("A", 3))];
        assert!(
            hub.adopt("s_x", owner, &subs, 5, &events, 11).is_some(),
            "read past the position delivered: enough"
        );
        assert!(
            hub.adopt("s_y", owner, &subs, 5, &events[..2], 9).is_none(),
            "delivery is past what was read: read on"
        );
        let s = hub.find("s_x", Some(owner)).expect("held under its id");
        let mut att = hub.attach(&s, CancellationToken::new(), Some(5));
        assert_eq!(
            read(att.missed.take().expect("the replay")),
            [(6, "change".into(), "A".into(), 2, 8)],
            "only what follows the client's position, up to the position delivered here"
        );
        // Live: A's change 3 follows the replayed 2; B had no event in the replay, so its first change follows
        // the client's copy too. Each once, numbered on, with its position.
        hub.deliver_all(&[
            DomainEvent::Position {
                seq: 11,
                event_follows: true,
            },
            change("A", 3),
            DomainEvent::Position {
                seq: 12,
                event_follows: true,
            },
            change("B", 3),
        ]);
        let mut got = Vec::new();
        while let Ok(out) = att.rx.try_recv() {
            got.push(out);
        }
        assert_eq!(
            read(got),
            [
                (7, "change".into(), "A".into(), 3, 11),
                (8, "change".into(), "B".into(), 3, 12),
            ]
        );
        assert_eq!(hub.position(), 12);
    }
}
