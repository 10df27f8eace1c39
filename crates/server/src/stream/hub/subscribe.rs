//! Sessions and who follows what: connections within each plan's limits, a session's connection attached and
//! detached, subscriptions, and the snapshots a subscription starts with.

use std::{
    sync::{Arc, atomic::Ordering},
    time::Instant,
};

use crossbook_core::{Plan, Timestamp};
use serde_json::json;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::{AnonymousSlot, Attachment, ChannelIndex, ConnectionSlot, Hub, at_pos, lock, pushed};
use crate::{
    state::FRESHNESS_LIMIT,
    stream::{
        frames,
        protocol::{Channel, Frag, OpError},
        session::{Attached, Owner, Session, State},
    },
};

impl Hub {
    /// Takes up a stream without a key from `ip`, or `Err(limit)` when that address already has as many open
    /// as allowed. Such a stream holds a connection until it authenticates or is closed (10 s), so without a
    /// bound one address could take every connection the server has.
    pub fn connect_anonymous(&self, ip: std::net::IpAddr) -> Result<AnonymousSlot, usize> {
        let limit = self.settings.anonymous_per_address;
        self.anonymous.take(ip, limit).ok_or(limit)
    }

    /// Takes up a connection of the owner's plan, or refuses when the plan's limit is reached.
    pub fn connect(&self, owner: Owner) -> Result<ConnectionSlot, OpError> {
        let limit = self.settings.limits(owner.plan).connections;
        let Some(slot) = self.connections.take(owner.customer_id, limit) else {
            return Err(OpError {
                code: "limit_exceeded",
                detail: format!(
                    "the {} plan allows {limit} open streams per customer; close one first",
                    owner.plan.display_name()
                ),
                param: None,
                channel: None,
            });
        };
        metrics::gauge!("crossbook_stream_connections").increment(1.0);
        Ok(ConnectionSlot { _slot: slot })
    }

    /// The session `id`, if it is held and is not another customer's.
    pub fn find(&self, id: &str, owner: Option<Owner>) -> Option<Arc<Session>> {
        let s = lock(&self.sessions).get(id).cloned()?;
        let theirs = s.lock().owner.map(|o| o.customer_id);
        (theirs.is_none() || theirs == owner.map(|o| o.customer_id)).then_some(s)
    }

    /// Attaches a connection's queue to a session (an older connection of the session is closed). With
    /// `resume_from`, also returns what the session sent after it; both are taken under one lock, so no
    /// message falls between the two.
    pub fn attach(&self, s: &Session, slow: CancellationToken, resume_from: Option<u64>) -> Attachment {
        let (tx, rx) = mpsc::channel(self.settings.queue.max(1));
        let id = self.next_connection.fetch_add(1, Ordering::Relaxed);
        let mut st = s.lock();
        let missed = resume_from.and_then(|after| Session::since(&st, after));
        if let Some(old) = st.attached.replace(Attached { tx, slow, id }) {
            old.slow.cancel();
        }
        st.detached_at = None;
        Attachment { id, rx, missed }
    }

    /// Detaches connection `id` from its session (if it is still the attached one); the session then waits
    /// a resume window for its client.
    pub fn detach(&self, s: &Session, id: u64) {
        let mut st = s.lock();
        if st.attached.as_ref().is_some_and(|a| a.id == id) {
            st.attached = None;
            st.detached_at = Some(Instant::now());
        }
    }

    /// Numbers and sends a message to one session.
    pub fn push(&self, s: &Session, frag: Frag) {
        pushed(s.push(frag));
    }

    /// Sets the session's owner (a key given at connect or by `auth`), then holds the owner to its plan's
    /// bound of sessions.
    pub fn set_owner(&self, s: &Session, owner: Owner) {
        s.lock().owner = Some(owner);
        self.bound_sessions(owner, &s.id);
    }

    /// Drops the oldest detached sessions of `owner`'s customer while it holds more than its plan allows
    /// ([`StreamSettings::sessions_bound`]). Each detached session keeps its resume buffer for the resume
    /// window, so without a bound a client reconnecting without `session` could pile them up; a dropped
    /// session's resume answers `reset`. Attached sessions are never dropped: the plan's connection limit
    /// already bounds them, and neither is `keep`: the session being opened or resumed, which is not attached
    /// yet.
    pub(super) fn bound_sessions(&self, owner: Owner, keep: &str) {
        let Some(bound) = self.settings.sessions_bound(owner.plan) else {
            return;
        };
        let evicted: Vec<Arc<Session>> = {
            let mut sessions = lock(&self.sessions);
            let mut held = 0usize;
            let mut detached: Vec<(Instant, String)> = Vec::new();
            for (id, s) in sessions.iter() {
                let st = s.lock();
                if st.owner.map(|o| o.customer_id) != Some(owner.customer_id) {
                    continue;
                }
                held += 1;
                if st.attached.is_none()
                    && id != keep
                    && let Some(at) = st.detached_at
                {
                    detached.push((at, id.clone()));
                }
            }
            if held <= bound {
                return;
            }
            detached.sort();
            detached
                .iter()
                .take(held - bound)
                .filter_map(|(_, id)| sessions.remove(id))
                .collect()
        };
        if evicted.is_empty() {
            return;
        }
        metrics::counter!("crossbook_stream_sessions_evicted_total").increment(evicted.len() as u64);
        tracing::info!(
            customer = owner.customer_id,
            evicted = evicted.len(),
            bound,
            "stream sessions over the customer's bound; the oldest detached ones were dropped"
        );
        self.forget(&evicted);
    }

    /// Removes dropped sessions from the channel index and updates the sessions gauge.
    pub(super) fn forget(&self, gone: &[Arc<Session>]) {
        {
            let mut index = self.index.write().unwrap_or_else(|e| e.into_inner());
            for ci in index.iter_mut() {
                ci.all.retain(|s| !gone.iter().any(|e| Arc::ptr_eq(s, e)));
                ci.markets.retain(|_, v| {
                    v.retain(|s| !gone.iter().any(|e| Arc::ptr_eq(s, e)));
                    !v.is_empty()
                });
            }
        }
        metrics::gauge!("crossbook_stream_sessions").set(lock(&self.sessions).len() as f64);
    }

    /// Subscribes a session: checks the key, the plan and the market limit, records the subscription, and
    /// sends `subscribed` followed by the channel's current state (a snapshot of each book; the venues'
    /// status). `markets` are already known to exist.
    /// Whether a `subscribe` would be accepted: the key, the plan and the market limit.
    pub fn check_subscribe(
        &self,
        s: &Session,
        channel: Channel,
        markets: &[String],
    ) -> Result<(), (OpError, Option<Plan>)> {
        self.check_locked(&s.lock(), channel, markets)
    }

    pub(super) fn check_locked(
        &self,
        st: &State,
        channel: Channel,
        markets: &[String],
    ) -> Result<(), (OpError, Option<Plan>)> {
        let Some(owner) = st.owner else {
            return Err((
                OpError {
                    code: "unauthorized",
                    detail: "subscribing needs an API key: send it in the X-API-Key header or as {\"op\": \"auth\", \"key\": …}".into(),
                    param: None,
                    channel: Some(channel),
                },
                None,
            ));
        };
        let required = channel.plan();
        if owner.plan < required {
            return Err((
                OpError {
                    code: "entitlement_required",
                    detail: format!(
                        "the {} channel requires the {} plan",
                        channel.as_str(),
                        required.display_name()
                    ),
                    param: None,
                    channel: Some(channel),
                },
                Some(required),
            ));
        }
        let limit = self.settings.limits(owner.plan).markets;
        if limit > 0 {
            let mut all: std::collections::BTreeSet<&str> = st
                .subs
                .values()
                .flat_map(|m| m.iter().flatten().map(String::as_str))
                .collect();
            all.extend(markets.iter().map(String::as_str));
            if all.len() > limit {
                return Err((
                    OpError {
                        code: "limit_exceeded",
                        detail: format!(
                            "the {} plan allows {limit} markets per stream; this would make {}",
                            owner.plan.display_name(),
                            all.len()
                        ),
                        param: Some("markets"),
                        channel: Some(channel),
                    },
                    None,
                ));
            }
        }
        Ok(())
    }

    pub fn subscribe(
        &self,
        s: &Arc<Session>,
        channel: Channel,
        markets: Vec<String>,
    ) -> Result<(), (OpError, Option<Plan>)> {
        let mut st = s.lock();
        self.check_locked(&st, channel, &markets)?;
        let added: Vec<String> = {
            let mut index = self.index.write().unwrap_or_else(|e| e.into_inner());
            let ci = &mut index[channel as usize];
            let entry = st.subs.entry(channel);
            match entry {
                std::collections::btree_map::Entry::Vacant(v) if markets.is_empty() => {
                    v.insert(None);
                    ci.all.push(s.clone());
                    Vec::new()
                }
                std::collections::btree_map::Entry::Vacant(v) => {
                    for m in &markets {
                        ci.markets.entry(m.clone()).or_default().push(s.clone());
                    }
                    v.insert(Some(markets.iter().cloned().collect()));
                    markets.clone()
                }
                std::collections::btree_map::Entry::Occupied(mut o) => match o.get_mut() {
                    // Already every market.
                    None => Vec::new(),
                    Some(held) if markets.is_empty() => {
                        for m in held.iter() {
                            ci.remove_market(m, s);
                        }
                        ci.all.push(s.clone());
                        *o.get_mut() = None;
                        Vec::new()
                    }
                    Some(held) => {
                        let mut added = Vec::new();
                        for m in &markets {
                            if held.insert(m.clone()) {
                                ci.markets.entry(m.clone()).or_default().push(s.clone());
                                added.push(m.clone());
                            }
                        }
                        added
                    }
                },
            }
        };
        let reply = json!({ "markets": markets, "all_markets": markets.is_empty() });
        pushed(s.push_locked(&mut st, at_pos(self.position(), frames::subscribed(channel, reply))));
        match channel {
            Channel::Book => {
                for m in &added {
                    self.snapshot_market(s, &mut st, m);
                }
            }
            Channel::Status => {
                for (ex, h) in self.health.snapshot() {
                    let (freshness, since) = self.health.freshness_since(ex, &h, Timestamp::now(), FRESHNESS_LIMIT);
                    pushed(s.push_locked(
                        &mut st,
                        at_pos(self.position(), frames::venue(ex, &h, &freshness, since)),
                    ));
                }
            }
            _ => {}
        }
        Ok(())
    }

    /// Unsubscribes a session from a channel's markets, or from the whole channel when `markets` is empty.
    pub fn unsubscribe(&self, s: &Arc<Session>, channel: Channel, markets: Vec<String>) {
        let mut st = s.lock();
        {
            let mut index = self.index.write().unwrap_or_else(|e| e.into_inner());
            let ci = &mut index[channel as usize];
            if markets.is_empty() {
                match st.subs.remove(&channel) {
                    Some(None) => ChannelIndex::remove_from(&mut ci.all, s),
                    Some(Some(held)) => {
                        for m in &held {
                            ci.remove_market(m, s);
                        }
                    }
                    None => {}
                }
                if channel == Channel::Book {
                    st.books.clear();
                    st.assumed.clear();
                }
            } else if let Some(Some(held)) = st.subs.get_mut(&channel) {
                for m in &markets {
                    if held.remove(m) {
                        ci.remove_market(m, s);
                    }
                }
                if held.is_empty() {
                    st.subs.remove(&channel);
                }
                if channel == Channel::Book {
                    st.books.retain(|k, _| !markets.contains(&k.market_id));
                    st.assumed.retain(|k| !markets.contains(&k.market_id));
                }
            }
        }
        let reply = json!({ "markets": markets, "all_markets": markets.is_empty() });
        pushed(s.push_locked(&mut st, at_pos(self.position(), frames::unsubscribed(channel, reply))));
    }

    /// Sends a fresh snapshot of every book the session follows (after a `reset` or a bus lag).
    pub fn resnapshot(&self, s: &Arc<Session>) {
        let mut st = s.lock();
        st.books.clear();
        st.assumed.clear();
        let markets: Vec<String> = match st.subs.get(&Channel::Book) {
            Some(Some(m)) => m.iter().cloned().collect(),
            _ => Vec::new(),
        };
        for m in &markets {
            self.snapshot_market(s, &mut st, m);
        }
    }

    /// Pushes a snapshot of each book of `market` held now, and records its `book_seq` so that only later
    /// changes follow. A book that is not trusted gets a `stale` and no record: its next change comes as a
    /// snapshot.
    pub(super) fn snapshot_market(&self, s: &Session, st: &mut State, market: &str) {
        let pos = self.position();
        for (key, e) in self.live.market_books(market) {
            st.assumed.remove(&key);
            let frag = if e.stale {
                st.books.remove(&key);
                at_pos(pos, frames::book_stale(&key, None, e.updated_at, e.seq))
            } else {
                let f = at_pos(pos, frames::book_snapshot(&key, &e));
                st.books.insert(key, e.seq);
                f
            };
            pushed(s.push_locked(st, frag));
        }
    }
}
