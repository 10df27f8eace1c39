//! A stream session: what one client subscribed to, the messages it was sent (numbered, the last ones kept
//! for a resume), and the queue to its connection while one is attached.
//!
//! A session outlives its connection by the resume window: the hub goes on numbering and keeping its
//! messages while no connection is attached, so a client that reconnects with `resume_from` misses nothing
//! the buffer still holds.

use std::{
    collections::{BTreeMap, BTreeSet, HashMap, HashSet, VecDeque},
    sync::{Arc, Mutex, MutexGuard},
    time::Instant,
};

use crossbook_core::Plan;
use crossbook_live::BookKey;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::protocol::{Channel, Frag};

/// A numbered message on its way to a connection.
pub type Out = (u64, Frag);

/// What a session is subscribed to: per channel, `None` for every market, or the markets named.
pub type Subscriptions = BTreeMap<Channel, Option<BTreeSet<String>>>;

/// How a session is owned and what it may do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Owner {
    pub customer_id: i64,
    pub plan: Plan,
}

/// The attached connection: its queue, and the token that closes it when it cannot keep up.
#[derive(Debug)]
pub struct Attached {
    pub tx: mpsc::Sender<Out>,
    /// Cancelled when the connection must close: too slow, or replaced by a newer one.
    pub slow: CancellationToken,
    /// The connection's number, so that only the connection itself detaches it.
    pub id: u64,
}

#[derive(Debug)]
pub struct State {
    /// The last `seq` handed out.
    pub seq: u64,
    /// The last messages, oldest first, for a resume.
    pub ring: VecDeque<Out>,
    pub subs: Subscriptions,
    /// The last `book_seq` sent per book of a `book` subscription; a book not here gets a snapshot first.
    /// foldhash rather than SipHash: every change of a followed book is looked up here once per session
    /// that follows it, and the keys come from our feeds, not from the client.
    pub books: HashMap<BookKey, u64, foldhash::fast::RandomState>,
    /// Books of a session taken over from another process that its client holds though this process sent
    /// them to it never: the first change of each is sent as a change, not a snapshot.
    pub assumed: HashSet<BookKey, foldhash::fast::RandomState>,
    pub owner: Option<Owner>,
    pub attached: Option<Attached>,
    /// When the last connection went away (the session expires a resume window later).
    pub detached_at: Option<Instant>,
}

/// One session. Its state sits behind a std mutex: every critical section is a few map operations and a
/// non-blocking queue send, never an `.await`.
#[derive(Debug)]
pub struct Session {
    pub id: String,
    /// How many messages the ring keeps.
    buffer: usize,
    state: Mutex<State>,
}

/// What pushing a message did to the connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pushed {
    /// Queued for the connection, or kept for a resume when none is attached.
    Ok,
    /// The connection's queue was full: it was cut (and the session detached).
    CutSlow,
}

impl Session {
    pub fn new(id: String, buffer: usize) -> Arc<Session> {
        Arc::new(Session {
            id,
            buffer: buffer.max(1),
            state: Mutex::new(State {
                seq: 0,
                ring: VecDeque::new(),
                subs: Subscriptions::new(),
                books: HashMap::default(),
                assumed: HashSet::default(),
                owner: None,
                attached: None,
                detached_at: Some(Instant::now()),
            }),
        })
    }

    pub fn lock(&self) -> MutexGuard<'_, State> {
        // A panic under the lock leaves at worst one message unnumbered; the state stays usable.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Numbers a message, keeps it for a resume and queues it for the connection, in the caller's lock.
    pub fn push_locked(&self, st: &mut State, frag: Frag) -> Pushed {
        st.seq += 1;
        let out = (st.seq, frag);
        if st.ring.len() == self.buffer {
            st.ring.pop_front();
        }
        st.ring.push_back(out.clone());
        let Some(a) = &st.attached else {
            return Pushed::Ok;
        };
        match a.tx.try_send(out) {
            Ok(()) => Pushed::Ok,
            Err(mpsc::error::TrySendError::Closed(_)) => {
                st.attached = None;
                st.detached_at = Some(Instant::now());
                Pushed::Ok
            }
            Err(mpsc::error::TrySendError::Full(_)) => {
                // Never wait for a slow reader: that would hold up every other session and the bus. The
                // connection is closed; what it missed stays in the ring for a resume.
                if let Some(a) = st.attached.take() {
                    a.slow.cancel();
                }
                st.detached_at = Some(Instant::now());
                Pushed::CutSlow
            }
        }
    }

    /// [`Session::push_locked`] under its own lock.
    pub fn push(&self, frag: Frag) -> Pushed {
        let mut st = self.lock();
        self.push_locked(&mut st, frag)
    }

    /// The messages after `after`, if the ring still holds all of them.
    pub fn since(st: &State, after: u64) -> Option<Vec<Out>> {
        if after > st.seq {
            return None;
        }
        let first = st.ring.front().map_or(st.seq + 1, |(s, _)| *s);
        if after + 1 < first {
            return None;
        }
        Some(st.ring.iter().filter(|(s, _)| *s > after).cloned().collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stream::protocol::control;

    fn msg(n: u64) -> Frag {
        control("test", serde_json::json!({ "n": n }))
    }

    #[test]
    fn the_ring_keeps_the_last_messages_and_a_resume_past_it_is_refused() {
        let s = Session::new("s".into(), 3);
        for n in 1..=5 {
            assert_eq!(s.push(msg(n)), Pushed::Ok, "no connection: kept for a resume");
        }
        let st = s.lock();
        assert_eq!(st.seq, 5);
        let seqs = |v: Option<Vec<Out>>| v.map(|v| v.iter().map(|(s, _)| *s).collect::<Vec<_>>());
        assert_eq!(seqs(Session::since(&st, 2)), Some(vec![3, 4, 5]));
        assert_eq!(seqs(Session::since(&st, 4)), Some(vec![5]));
        assert_eq!(seqs(Session::since(&st, 5)), Some(vec![]));
        assert_eq!(seqs(Session::since(&st, 1)), None, "message 2 is gone");
        assert_eq!(seqs(Session::since(&st, 9)), None, "never sent");
    }

    #[test]
    fn a_full_queue_cuts_the_connection_and_keeps_the_messages() {
        let s = Session::new("s".into(), 10);
        let (tx, mut rx) = mpsc::channel(2);
        let slow = CancellationToken::new();
        s.lock().attached = Some(Attached {
            tx,
            slow: slow.clone(),
            id: 1,
        });
        assert_eq!(s.push(msg(1)), Pushed::Ok);
        assert_eq!(s.push(msg(2)), Pushed::Ok);
        assert_eq!(s.push(msg(3)), Pushed::CutSlow);
        assert!(slow.is_cancelled());
        assert!(s.lock().attached.is_none());
        assert_eq!(rx.try_recv().map(|(n, _)| n).ok(), Some(1));
        assert_eq!(
            Session::since(&s.lock(), 2).map(|v| v.len()),
            Some(1),
            "message 3 waits for a resume"
        );
    }
}
