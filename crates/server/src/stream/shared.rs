//! Sessions shared by the api processes of a deployment, so a client cut from one process resumes on another.
//!
//! - Every message an api process renders from a bus event carries `pos`, the leader's number of the event's
//!   bus message: the same number for the same event in every process, growing from leader term to term
//!   (see [`crossbook_live::DomainEvent::Position`] and [`crossbook_live::nats::wire::first_seq`]).
//! - On each subscription change (before the answer goes out, so the record is never behind what the client
//!   knows), on close, and every third of the resume window while connected, the process writes the
//!   session's [`Record`] (its customer and subscriptions) to the key-value bucket
//!   [`crossbook_live::nats::SESSIONS_BUCKET`], whose entries expire a resume window after their last write.
//! - A process asked to resume a session it does not hold reads the record, checks that the key's customer
//!   owns it, finds the client's position in the event stream (whose messages are in the order of their
//!   numbers), and replays from there every event after the client's `resume_pos` that the subscriptions
//!   select, rendered as the hub renders them and numbered on from `resume_from`; then the
//!   session joins live delivery at the hub's position ([`super::Hub::take_over`]), with nothing lost or sent
//!   twice at the hand-over. Past the stream's window, the session is kept and reset as a same-process
//!   resume whose messages are gone.

use std::{
    collections::{BTreeMap, BTreeSet},
    sync::Arc,
    time::Duration,
};

use async_nats::jetstream::{
    self,
    consumer::{DeliverPolicy, pull::OrderedConfig},
    kv,
};
use crossbook_core::{Plan, Timestamp};
use crossbook_live::{
    DomainEvent,
    nats::{
        EVENTS_STREAM, SESSIONS_BUCKET,
        wire::{Envelope, first_seq},
    },
};
use futures_util::StreamExt;
use serde::{Deserialize, Serialize};

use super::{protocol::Channel, session::Subscriptions};

/// How long one read or write of the bus may take before the stream goes on without it.
const BUS_TIMEOUT: Duration = Duration::from_secs(3);

/// The result label of `crossbook_stream_resumes_elsewhere_total`: the missed messages replayed, the
/// session reset (its messages past the bus's window), or no session to resume (unknown, expired, or
/// another customer's).
pub const ELSEWHERE_RESULTS: [&str; 3] = ["resumed", "reset", "unknown"];

/// A session as the other processes see it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Record {
    pub customer_id: i64,
    /// Per channel name: `null` for every market, else the markets.
    pub subscriptions: BTreeMap<String, Option<BTreeSet<String>>>,
}

impl Record {
    pub fn new(customer_id: i64, subs: &Subscriptions) -> Record {
        Record {
            customer_id,
            subscriptions: subs.iter().map(|(c, m)| (c.as_str().to_string(), m.clone())).collect(),
        }
    }

    /// The subscriptions, less the channels `plan` may not read (a key whose plan went down since).
    pub fn subscriptions(&self, plan: Plan) -> Subscriptions {
        self.subscriptions
            .iter()
            .filter_map(|(c, m)| Channel::parse(c).map(|c| (c, m.clone())))
            .filter(|(c, _)| plan >= c.plan())
            .collect()
    }
}

/// What a session's subscriptions become after a `subscribe` (the hub's rule: no markets means every market).
pub fn after_subscribe(subs: &Subscriptions, channel: Channel, markets: &[String]) -> Subscriptions {
    let mut subs = subs.clone();
    match subs.get_mut(&channel) {
        None if markets.is_empty() => {
            subs.insert(channel, None);
        }
        None => {
            subs.insert(channel, Some(markets.iter().cloned().collect()));
        }
        Some(None) => {}
        Some(held) if markets.is_empty() => *held = None,
        Some(Some(held)) => held.extend(markets.iter().cloned()),
    }
    subs
}

/// What a session's subscriptions become after an `unsubscribe` (no markets: the whole channel).
pub fn after_unsubscribe(subs: &Subscriptions, channel: Channel, markets: &[String]) -> Subscriptions {
    let mut subs = subs.clone();
    if markets.is_empty() {
        subs.remove(&channel);
    } else if let Some(Some(held)) = subs.get_mut(&channel) {
        for m in markets {
            held.remove(m);
        }
        if held.is_empty() {
            subs.remove(&channel);
        }
    }
    subs
}

/// Whether `subs` select a message of `channel` about `markets` (none: not about a market).
pub fn selects(subs: &Subscriptions, channel: Channel, markets: &[&str]) -> bool {
    match subs.get(&channel) {
        None => false,
        Some(None) => true,
        Some(Some(held)) => markets.iter().any(|m| held.contains(*m)),
    }
}

/// Why a session cannot be replayed from the event stream.
#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    #[error("the bus no longer holds the events after position {0}")]
    Passed(u64),
    #[error("position {0} is past the bus's last event")]
    Ahead(u64),
    #[error("the bus cannot be read: {0}")]
    Bus(String),
}

/// One event of the event stream, with what a replay needs to render it.
#[derive(Debug, Clone)]
pub struct Replayed {
    pub pos: u64,
    /// When the leader published it: a replayed trade's, whale's or opportunity's `received_at`.
    pub sent_at: Timestamp,
    pub event: DomainEvent,
}

/// The event stream read from a position on.
pub struct EventReader {
    messages: jetstream::consumer::pull::Ordered,
    /// The last position read (the client's at first).
    pub upto: u64,
    /// The leader term of the last message read: a message of an earlier term is skipped, as the mirror does.
    term: u64,
    pub events: Vec<Replayed>,
}

impl EventReader {
    /// Reads until position `target` is read.
    pub async fn read_to(&mut self, target: u64) -> Result<(), ReplayError> {
        while self.upto < target {
            let msg = match tokio::time::timeout(BUS_TIMEOUT, self.messages.next()).await {
                Ok(Some(Ok(m))) => m,
                Ok(Some(Err(e))) => return Err(ReplayError::Bus(e.to_string())),
                Ok(None) | Err(_) => return Err(ReplayError::Bus("the event stream stopped answering".into())),
            };
            // A message that cannot be read has no number, and is skipped as the mirror skips it.
            let Ok(env) = Envelope::decode(&msg.payload) else {
                continue;
            };
            if env.term < self.term || env.seq <= self.upto {
                continue;
            }
            let pos = env.seq;
            self.upto = pos;
            self.term = env.term;
            if let Some(event) = env.body.into_event() {
                self.events.push(Replayed {
                    pos,
                    sent_at: env.sent_at,
                    event,
                });
            }
        }
        Ok(())
    }
}

/// The session records in the bus, and the event stream for replays. One per api process.
pub struct SharedSessions {
    js: jetstream::Context,
    /// How long a record outlives its last write: the resume window.
    pub(super) window: Duration,
    /// The bucket, opened (or created) at first use.
    bucket: tokio::sync::Mutex<Option<kv::Store>>,
}

impl std::fmt::Debug for SharedSessions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SharedSessions").field("window", &self.window).finish()
    }
}

impl SharedSessions {
    pub fn new(client: async_nats::Client, window: Duration) -> Arc<SharedSessions> {
        Arc::new(SharedSessions {
            js: jetstream::new(client),
            window,
            bucket: tokio::sync::Mutex::new(None),
        })
    }

    async fn bucket(&self) -> Result<kv::Store, String> {
        let mut held = self.bucket.lock().await;
        if let Some(b) = held.as_ref() {
            return Ok(b.clone());
        }
        // The bucket's stream is created here as the client's own bucket creation would make it: that one
        // first asks the server for its account's details, which the client cannot read from NATS 2.9.
        let stream = jetstream::stream::Config {
            name: format!("KV_{SESSIONS_BUCKET}"),
            description: Some("crossbook live-stream sessions, for a resume on another api process".into()),
            subjects: vec![format!("$KV.{SESSIONS_BUCKET}.>")],
            max_messages_per_subject: 1,
            max_age: self.window.max(Duration::from_secs(1)),
            storage: jetstream::stream::StorageType::File,
            allow_rollup: true,
            deny_delete: true,
            allow_direct: true,
            discard: jetstream::stream::DiscardPolicy::New,
            num_replicas: 1,
            ..Default::default()
        };
        self.js.get_or_create_stream(stream).await.map_err(|e| e.to_string())?;
        let b = self
            .js
            .get_key_value(SESSIONS_BUCKET)
            .await
            .map_err(|e| e.to_string())?;
        *held = Some(b.clone());
        Ok(b)
    }

    /// Writes a session's record; a failure is logged (a resume on another process then resets).
    pub async fn put(&self, id: &str, record: &Record) {
        let write = async {
            let bucket = self.bucket().await?;
            let value = serde_json::to_vec(record).map_err(|e| e.to_string())?;
            bucket.put(id, value.into()).await.map_err(|e| e.to_string())?;
            Ok::<_, String>(())
        };
        match tokio::time::timeout(BUS_TIMEOUT, write).await {
            Ok(Ok(())) => {}
            Ok(Err(e)) => tracing::warn!(session = id, error = %e, "cannot share a stream session"),
            Err(_) => tracing::warn!(session = id, "sharing a stream session timed out"),
        }
    }

    /// A session's record, if one was written within the resume window.
    pub async fn get(&self, id: &str) -> Option<Record> {
        let read = async {
            let bucket = self.bucket().await?;
            bucket.get(id).await.map_err(|e| e.to_string())
        };
        match tokio::time::timeout(BUS_TIMEOUT, read).await {
            Ok(Ok(Some(v))) => serde_json::from_slice(&v).ok(),
            Ok(Ok(None)) => None,
            Ok(Err(e)) => {
                tracing::warn!(session = id, error = %e, "cannot read a shared stream session");
                None
            }
            Err(_) => None,
        }
    }

    /// The event stream from after `pos`, if it still holds every event since.
    pub async fn events_after(&self, pos: u64) -> Result<EventReader, ReplayError> {
        let open = async {
            let bus = |e: &dyn std::fmt::Display| ReplayError::Bus(e.to_string());
            let mut stream = self.js.get_stream(EVENTS_STREAM).await.map_err(|e| bus(&e))?;
            let state = &stream.info().await.map_err(|e| bus(&e))?.state;
            let (first, last) = (state.first_sequence.max(1), state.last_sequence);
            let start = match numbered_from(&stream, first, last).await? {
                // Nothing held: only a client that saw no event at all has missed none.
                None if pos == 0 => last + 1,
                None => return Err(ReplayError::Passed(pos)),
                Some((first, env)) => {
                    // The stream must still hold the message right after the client's last one: its first
                    // message is at most that one, or the first of a term the client saw nothing before.
                    let starts_term = env.seq == first_seq(env.term) + 1;
                    if env.seq > pos + 1 && !(pos == 0 && starts_term) {
                        return Err(ReplayError::Passed(pos));
                    }
                    if let Some((_, newest)) = numbered_from(&stream, last, last).await?
                        && newest.seq < pos
                    {
                        return Err(ReplayError::Ahead(pos));
                    }
                    if env.seq > pos {
                        first
                    } else {
                        after(&stream, pos, first, last).await?
                    }
                }
            };
            let consumer = stream
                .create_consumer(OrderedConfig {
                    deliver_policy: DeliverPolicy::ByStartSequence { start_sequence: start },
                    ..Default::default()
                })
                .await
                .map_err(|e| bus(&e))?;
            let messages = consumer.messages().await.map_err(|e| bus(&e))?;
            Ok(EventReader {
                messages,
                upto: pos,
                term: 0,
                events: Vec::new(),
            })
        };
        tokio::time::timeout(BUS_TIMEOUT, open)
            .await
            .map_err(|_| ReplayError::Bus("the event stream did not answer".into()))?
    }
}

/// Most messages in a row that may be missing or unreadable where a replay looks for its start.
const UNREADABLE_RUN: u64 = 64;

/// The first message of the event stream at or after stream sequence `seq` (up to `last`) that can be read,
/// with its stream sequence; `None` when there is none.
async fn numbered_from(
    stream: &jetstream::stream::Stream,
    seq: u64,
    last: u64,
) -> Result<Option<(u64, Envelope)>, ReplayError> {
    use jetstream::stream::RawMessageErrorKind;
    for s in seq..=last.min(seq.saturating_add(UNREADABLE_RUN)) {
        match stream.get_raw_message(s).await {
            Ok(m) => {
                if let Ok(env) = Envelope::decode(&m.payload) {
                    return Ok(Some((s, env)));
                }
            }
            // Aged out since the stream was looked at.
            Err(e) if e.kind() == RawMessageErrorKind::NoMessageFound => {}
            Err(e) => return Err(ReplayError::Bus(e.to_string())),
        }
    }
    if last > seq.saturating_add(UNREADABLE_RUN) {
        return Err(ReplayError::Bus(format!(
            "{UNREADABLE_RUN} messages of the event stream in a row from {seq} cannot be read"
        )));
    }
    Ok(None)
}

/// The stream sequence of the first message numbered after `pos`, given that the message at stream sequence
/// `lo` is numbered at or before it: the stream holds the leader's messages in the order of their numbers, so
/// a binary search finds it in a few dozen reads however long the window.
async fn after(stream: &jetstream::stream::Stream, pos: u64, mut lo: u64, last: u64) -> Result<u64, ReplayError> {
    let mut hi = last + 1;
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        match numbered_from(stream, mid, hi - 1).await? {
            Some((s, env)) if env.seq <= pos => lo = s,
            // Nothing readable from `mid` to the message found (or to `hi`): the start is at or before `mid`.
            _ => hi = mid,
        }
    }
    Ok(hi)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn subs(v: &[(Channel, Option<&[&str]>)]) -> Subscriptions {
        v.iter()
            .map(|(c, m)| (*c, m.map(|m| m.iter().map(|s| s.to_string()).collect())))
            .collect()
    }

    #[test]
    fn subscription_changes_follow_the_hubs_rules() {
        let s = subs(&[]);
        let s = after_subscribe(&s, Channel::Book, &["A".into()]);
        let s = after_subscribe(&s, Channel::Book, &["B".into()]);
        let s = after_subscribe(&s, Channel::Trades, &[]);
        assert_eq!(s, subs(&[(Channel::Book, Some(&["A", "B"])), (Channel::Trades, None)]));
        assert_eq!(
            after_subscribe(&s, Channel::Trades, &["X".into()]),
            s,
            "every market already"
        );
        let s = after_unsubscribe(&s, Channel::Book, &["A".into()]);
        assert_eq!(s, subs(&[(Channel::Book, Some(&["B"])), (Channel::Trades, None)]));
        let s = after_unsubscribe(&s, Channel::Book, &["B".into()]);
        assert_eq!(s, subs(&[(Channel::Trades, None)]), "no market left: no subscription");
        assert!(selects(&s, Channel::Trades, &["any"]));
        assert!(!selects(&s, Channel::Book, &["B"]));
    }

    #[test]
    fn a_record_keeps_only_the_channels_the_plan_reads() {
        let s = subs(&[
            (Channel::Book, Some(&["A"])),
            (Channel::Arbitrage, None),
            (Channel::Whales, None),
        ]);
        let r = Record::new(7, &s);
        let back: Record = serde_json::from_str(&serde_json::to_string(&r).unwrap()).unwrap();
        assert_eq!(back, r);
        assert_eq!(back.subscriptions(Plan::Trader), s);
        assert_eq!(
            back.subscriptions(Plan::Free),
            subs(&[(Channel::Book, Some(&["A"]))]),
            "a plan that went down reads no more than it may"
        );
    }
}
