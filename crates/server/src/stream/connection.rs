//! One stream connection: the client's ops in, the session's messages out, heartbeats, and the close frame
//! that says why it ended.

use std::{future::Future, sync::Arc, time::Duration};

use axum::extract::ws::{CloseFrame, Message, Utf8Bytes, WebSocket, close_code};
use crossbook_core::{Exchange, Plan, Status, Timestamp};
use futures_util::{SinkExt, StreamExt, stream::SplitSink};
use serde_json::json;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::{
    hub::{Adopted, AnonymousSlot, ConnectionSlot, Hub},
    protocol::{Channel, ClientOp, MAX_CLIENT_MESSAGE, OpError, control, envelope, error_frag, frag},
    session::{Out, Owner, Session},
};
use crate::state::AppState;

/// Close code for a client that reads too slowly ("try again later").
const CLOSE_SLOW: u16 = 1013;
/// How long a connection may stay open without a valid key.
const AUTH_WITHIN: Duration = Duration::from_secs(10);
/// How long a closing connection waits for the client's close frame (and, for a client that reads nothing,
/// for its socket to take the close frame at all); then the socket is dropped.
const CLOSE_WAIT: Duration = Duration::from_secs(2);
/// Most queued messages written before one flush.
const WRITE_BATCH: usize = 256;

/// What the upgrade request brought.
#[derive(Debug, Default)]
pub struct Opening {
    /// The owner of the `X-API-Key` header, if any.
    pub owner: Option<Owner>,
    /// `session`, `resume_from` and `resume_pos` of the query string.
    pub resume: Option<Resume>,
    /// For a stream opened without a key: its place among its address's, held until it authenticates.
    pub anonymous: Option<AnonymousSlot>,
}

/// A client's resume: its session, the last `seq` it got, and the last `pos` (for another process).
#[derive(Debug, Clone)]
pub struct Resume {
    pub id: String,
    pub from: u64,
    pub pos: Option<u64>,
}

/// Where the session to resume was found.
enum Found {
    /// Held here.
    Held(Arc<Session>),
    /// Taken over from another process with its missed messages.
    Replayed(Arc<Session>),
    /// Taken over from another process, its missed messages gone.
    Reset(Arc<Session>),
    /// Nowhere (unknown, expired, or another customer's).
    Nowhere,
}

/// Finds the session a client resumes: held here, or shared by another api process.
async fn find(hub: &Hub, r: &Resume, owner: Option<Owner>) -> Found {
    if let Some(s) = hub.find(&r.id, owner) {
        return Found::Held(s);
    }
    let (Some(shared), Some(owner)) = (hub.shared(), owner) else {
        return Found::Nowhere;
    };
    let found = match hub.take_over(shared, &r.id, owner, r.from, r.pos).await {
        Some(Adopted::Replayed(s)) => Found::Replayed(s),
        Some(Adopted::Reset(s)) => Found::Reset(s),
        None => Found::Nowhere,
    };
    let [resumed, reset, unknown] = super::shared::ELSEWHERE_RESULTS;
    let result = match &found {
        Found::Replayed(_) => resumed,
        Found::Reset(_) => reset,
        _ => unknown,
    };
    metrics::counter!("crossbook_stream_resumes_elsewhere_total", "result" => result).increment(1);
    found
}

/// Shares the session's record with the other api processes (before an answer that changes what the
/// client knows of it, so a resume elsewhere never knows less).
async fn share(hub: &Hub, id: &str, record: Option<super::shared::Record>) {
    if let (Some(shared), Some(record)) = (hub.shared(), record) {
        shared.put(id, &record).await;
    }
}

type Sink = SplitSink<WebSocket, Message>;

fn close(code: u16, reason: &str) -> Message {
    Message::Close(Some(CloseFrame {
        code,
        reason: Utf8Bytes::from(reason),
    }))
}

fn slow_close() -> Message {
    close(
        CLOSE_SLOW,
        "slow consumer: the client read too slowly; resume to continue",
    )
}

fn going_away() -> Message {
    close(close_code::AWAY, "going away: the server is shutting down")
}

/// Runs `write` unless the connection is cut or the server shuts down first (then the close frame to send).
/// A client that stops reading blocks every write once its socket buffers are full; without this the cut
/// would wait for a write that never ends, holding the socket and the plan's slot.
async fn unless_ended<T>(
    cut: &CancellationToken,
    closing: &CancellationToken,
    write: impl Future<Output = T>,
) -> Result<T, Message> {
    tokio::select! {
        biased;
        () = closing.cancelled() => Err(going_away()),
        () = cut.cancelled() => Err(slow_close()),
        r = write => Ok(r),
    }
}

/// Whether a read failed on a client message over [`MAX_CLIENT_MESSAGE`] (the connection can still send its
/// close frame: nothing of the message was taken).
fn too_big(e: &axum::Error) -> bool {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(err) = source {
        if let Some(tungstenite::Error::Capacity(_)) = err.downcast_ref() {
            return true;
        }
        source = err.source();
    }
    false
}

async fn write(sink: &mut Sink, (seq, frag): &Out, sent_at: &str) -> Result<(), axum::Error> {
    sink.feed(Message::Text(envelope(*seq, sent_at, frag).into())).await
}

fn limits_json(hub: &Hub, plan: Option<Plan>) -> serde_json::Value {
    plan.map_or(serde_json::Value::Null, |p| {
        let l = hub.settings().limits(p);
        json!({ "connections": l.connections, "markets": l.markets })
    })
}

fn welcome(hub: &Hub, s: &Session, plan: Option<Plan>) -> super::protocol::Frag {
    control(
        "welcome",
        json!({
            "session": s.id,
            "plan": plan.map(Plan::as_str),
            "limits": limits_json(hub, plan),
            "resume_seconds": hub.settings().resume.as_secs(),
            "buffer": hub.settings().buffer,
        }),
    )
}

/// Runs one connection until the client leaves, is cut, or the server shuts down.
pub async fn run(state: AppState, socket: WebSocket, opening: Opening) {
    let mut slot: Option<ConnectionSlot> = None;
    let mut anonymous = opening.anonymous;
    let hub = state.stream.clone();
    let (mut sink, mut stream) = socket.split();
    let plan = opening.owner.map(|o| o.plan);
    if let Some(owner) = opening.owner {
        match hub.connect(owner) {
            Ok(s) => slot = Some(s),
            Err(e) => {
                // Refused before any session exists: this error is the connection's first and only message.
                let _ = sink
                    .send(Message::Text(
                        envelope(1, &Timestamp::now().to_iso(), &error_frag(&e, None)).into(),
                    ))
                    .await;
                let _ = sink.send(close(close_code::POLICY, "connection limit reached")).await;
                return;
            }
        }
    }

    // The session: the one resumed (held here, or taken over from another process), or a new one.
    let found = match &opening.resume {
        Some(r) => find(&hub, r, opening.owner).await,
        None => Found::Nowhere,
    };
    let (session, held) = match found {
        Found::Held(s) | Found::Replayed(s) => (s, true),
        Found::Reset(s) => (s, false),
        Found::Nowhere => (hub.open_session(), false),
    };
    let kept = held || matches!(&opening.resume, Some(r) if r.id == session.id);
    if let Some(owner) = opening.owner {
        hub.set_owner(&session, owner);
    }
    let cut = CancellationToken::new();
    let from = opening.resume.as_ref().map(|r| r.from);
    let mut att = hub.attach(&session, cut.clone(), from);
    let missed = att.missed.take().filter(|_| held);
    if from.is_some() {
        let [resumed, reset] = super::hub::RESUME_RESULTS;
        let result = if missed.is_some() { resumed } else { reset };
        metrics::counter!("crossbook_stream_resumes_total", "result" => result).increment(1);
    }
    match (from, missed) {
        (Some(from), Some(missed)) => {
            let sent_at = Timestamp::now().to_iso();
            for out in &missed {
                if write(&mut sink, out, &sent_at).await.is_err() {
                    hub.detach(&session, att.id);
                    return;
                }
            }
            hub.push(
                &session,
                control("resumed", json!({ "session": session.id, "from": from })),
            );
        }
        (Some(_), _) => {
            hub.push(&session, welcome(&hub, &session, plan));
            let reason = if kept {
                "the messages after resume_from are no longer held; fresh snapshots follow"
            } else {
                "the session is unknown or expired; subscribe again"
            };
            hub.push(&session, control("reset", json!({ "reason": reason })));
            hub.resnapshot(&session);
        }
        (None, _) => hub.push(&session, welcome(&hub, &session, plan)),
    }
    let ping_every = hub.settings().ping;
    let mut ping = tokio::time::interval_at(Instant::now() + ping_every, ping_every);
    let mut last_heard = Instant::now();
    let closing = hub.closing().clone();
    // A connection without a key counts against no plan's limit, so it may not stay open without one.
    let auth_deadline = Instant::now() + AUTH_WITHIN;
    let end: Option<Message> = loop {
        tokio::select! {
            biased;
            () = closing.cancelled() => break Some(going_away()),
            () = cut.cancelled() => break Some(slow_close()),
            () = tokio::time::sleep_until(auth_deadline), if slot.is_none() => {
                break Some(close(close_code::POLICY, "no API key: send it in the X-API-Key header or an auth message within 10 s"));
            }
            out = att.rx.recv() => {
                let Some(out) = out else { break None };
                let batch = async {
                    let sent_at = Timestamp::now().to_iso();
                    write(&mut sink, &out, &sent_at).await?;
                    // Messages already waiting go out in the same flush: one write call for many messages is
                    // what lets one core serve a thousand clients.
                    let mut n = 1;
                    while n < WRITE_BATCH {
                        let Ok(more) = att.rx.try_recv() else { break };
                        write(&mut sink, &more, &sent_at).await?;
                        n += 1;
                    }
                    sink.flush().await.map(|()| n)
                };
                match unless_ended(&cut, &closing, batch).await {
                    Ok(Ok(n)) => metrics::counter!("crossbook_stream_messages_total").increment(n as u64),
                    Ok(Err(_)) => break None,
                    Err(frame) => break Some(frame),
                }
            }
            msg = stream.next() => {
                last_heard = Instant::now();
                match msg {
                    Some(Ok(Message::Text(text))) => {
                        if let Some(reply) = handle(&state, &hub, &session, &mut slot, text.as_str()).await {
                            break Some(reply);
                        }
                        // Authenticated: the stream now counts against its customer's plan, not the address.
                        if slot.is_some() {
                            drop(anonymous.take());
                        }
                    }
                    Some(Ok(Message::Binary(_))) => hub.push(&session, error_frag(&OpError::invalid("op", "send JSON text messages, not binary ones"), None)),
                    Some(Ok(Message::Ping(_) | Message::Pong(_))) => {}
                    Some(Err(e)) if too_big(&e) => break Some(close(
                        close_code::SIZE,
                        &format!("message too big: a client message may be at most {MAX_CLIENT_MESSAGE} bytes"),
                    )),
                    Some(Ok(Message::Close(_))) | Some(Err(_)) | None => break None,
                }
            }
            _ = ping.tick() => {
                if last_heard.elapsed() > ping_every * 3 {
                    break Some(close(close_code::AWAY, "no answer to pings"));
                }
                match unless_ended(&cut, &closing, sink.send(Message::Ping(Default::default()))).await {
                    Ok(Ok(())) => {}
                    Ok(Err(_)) => break None,
                    Err(frame) => break Some(frame),
                }
            }
        }
    };
    hub.detach(&session, att.id);
    // The plan's slot is free from here: a client cut as slow, or gone, may open another stream at once.
    drop(slot);
    if let Some(frame) = end {
        // The closing handshake: send the close frame, then read until the client answers it. Dropping the
        // socket with the client's frames unread would reset the connection, and the client could lose the
        // close frame (and its reason) with it.
        let _ = tokio::time::timeout(CLOSE_WAIT, async {
            if sink.send(frame).await.is_ok() {
                while let Some(Ok(m)) = stream.next().await {
                    if matches!(m, Message::Close(_)) {
                        break;
                    }
                }
            }
        })
        .await;
    }
    // The resume window starts now for the other processes too (after the close: a slow bus delays no
    // one's close frame, nor the plan's slot).
    let record = hub.record(&session).filter(|r| !r.subscriptions.is_empty());
    share(&hub, &session.id, record).await;
}

/// Handles one client message; returns a close frame when the connection must end.
async fn handle(
    state: &AppState,
    hub: &Arc<Hub>,
    session: &Arc<Session>,
    slot: &mut Option<ConnectionSlot>,
    text: &str,
) -> Option<Message> {
    let op = match ClientOp::parse(text) {
        Ok(op) => op,
        Err(e) => {
            hub.push(session, error_frag(&e, None));
            return None;
        }
    };
    match op {
        ClientOp::Ping => hub.push(session, control("pong", json!({}))),
        ClientOp::Auth { key } => {
            let owner = match state.keys.lookup(state.store.as_ref(), &key).await {
                Ok(Some(o)) => Owner {
                    customer_id: o.customer_id,
                    plan: o.plan,
                },
                Ok(None) => {
                    let e = OpError {
                        code: "unauthorized",
                        detail: "the API key is unknown or revoked".into(),
                        param: Some("key"),
                        channel: None,
                    };
                    hub.push(session, error_frag(&e, None));
                    return None;
                }
                Err(err) => {
                    tracing::warn!(error = %err, "stream auth: the key store cannot be read");
                    let e = OpError {
                        code: "unavailable",
                        detail: "the database cannot be reached; try again shortly".into(),
                        param: None,
                        channel: None,
                    };
                    hub.push(session, error_frag(&e, None));
                    return None;
                }
            };
            if slot.is_none() {
                match hub.connect(owner) {
                    Ok(s) => *slot = Some(s),
                    Err(e) => {
                        hub.push(session, error_frag(&e, None));
                        return Some(close(close_code::POLICY, "connection limit reached"));
                    }
                }
            }
            hub.set_owner(session, owner);
            hub.push(
                session,
                control(
                    "authenticated",
                    json!({ "plan": owner.plan.as_str(), "limits": limits_json(hub, Some(owner.plan)) }),
                ),
            );
        }
        ClientOp::Subscribe { channel, markets } => {
            let not_live = match check_markets(state, channel, &markets).await {
                Ok(not_live) => not_live,
                Err(e) => {
                    hub.push(session, error_frag(&e, None));
                    return None;
                }
            };
            // What the subscriptions become, shared before `subscribed` goes out; a refused op shares nothing.
            match hub.check_subscribe(session, channel, &markets) {
                Ok(()) => {
                    let (subs, owner) = hub.subscriptions(session);
                    let after = super::shared::after_subscribe(&subs, channel, &markets);
                    let record = owner.map(|o| super::shared::Record::new(o.customer_id, &after));
                    share(hub, &session.id, record).await;
                }
                Err((e, plan)) => {
                    hub.push(session, error_frag(&e, plan));
                    return None;
                }
            }
            match hub.subscribe(session, channel, markets) {
                // A book subscription to a market with no book held would otherwise be silence: say so, per
                // market, after `subscribed`. The subscription stands, so a book that appears later follows.
                Ok(()) if channel == Channel::Book => {
                    for m in not_live {
                        hub.push(session, not_live_frag(&m));
                    }
                }
                Ok(()) => {}
                Err((e, plan)) => hub.push(session, error_frag(&e, plan)),
            }
        }
        ClientOp::Unsubscribe { channel, markets } => {
            let (subs, owner) = hub.subscriptions(session);
            let after = super::shared::after_unsubscribe(&subs, channel, &markets);
            if after != subs {
                let record = owner.map(|o| super::shared::Record::new(o.customer_id, &after));
                share(hub, &session.id, record).await;
            }
            hub.unsubscribe(session, channel, markets)
        }
    }
    None
}

/// A subscribed market of the catalog with no book held now.
struct NotLive {
    exchange: Exchange,
    market_id: String,
    closed: bool,
}

/// The `not_live` message of a book subscription to a market with no book held.
fn not_live_frag(m: &NotLive) -> super::protocol::Frag {
    let (reason, detail) = if m.closed {
        ("closed", "the market is closed: it has no live book")
    } else {
        (
            "no_book",
            "no book of this market is held now: the service does not follow it, or has not received its book \
             yet; a snapshot follows if it arrives",
        )
    };
    frag(
        "not_live",
        Some(Channel::Book),
        None,
        None,
        json!({
            "exchange": m.exchange.as_str(),
            "market_id": m.market_id,
            "reason": reason,
            "detail": detail,
        }),
    )
}

/// Refuses market ids that are neither live nor in the catalog, so a typo is an error rather than silence.
/// Returns the catalog's markets that have no book held now.
async fn check_markets(state: &AppState, channel: Channel, markets: &[String]) -> Result<Vec<NotLive>, OpError> {
    let mut not_live = Vec::new();
    for m in markets {
        if state.live.has_market(m) {
            continue;
        }
        // venue_b markets are condition ids (`0x` and 64 hex digits); anything else is a venue_a ticker.
        let exchange = if m.starts_with("0x") {
            Exchange::VenueB
        } else {
            Exchange::VenueA
        };
        match state.store.get_market(exchange, m).await {
            Ok(Some(found)) => not_live.push(NotLive {
                exchange,
                market_id: m.clone(),
                closed: found.market.status == Status::Closed,
            }),
            Ok(None) => {
                return Err(OpError {
                    channel: Some(channel),
                    ..OpError::invalid(
                        "markets",
                        format!("unknown market id {m:?} (venue_a tickers and venue_b condition ids)"),
                    )
                });
            }
            Err(err) => {
                tracing::warn!(error = %err, "stream subscribe: the catalog cannot be read");
                return Err(OpError {
                    code: "unavailable",
                    detail: "the database cannot be reached; try again shortly".into(),
                    param: None,
                    channel: Some(channel),
                });
            }
        }
    }
    Ok(not_live)
}
