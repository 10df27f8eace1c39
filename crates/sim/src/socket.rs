//! The WebSocket session loop both venues share: commands in, model updates out, heartbeats, faults and
//! shutdown. What the frames say is each venue's [`Protocol`].

use std::{sync::Arc, time::Duration};

use axum::{
    body::Bytes,
    extract::ws::{Message, WebSocket},
};
use crossbook_core::Exchange;
use futures_util::{SinkExt, StreamExt, stream::SplitSink};
use tokio::{sync::broadcast::error::RecvError, time::MissedTickBehavior};

use crate::http::{Batch, Shared};

/// What a session sends in answer to one client message.
#[derive(Debug, Default)]
pub(crate) struct Reply {
    /// Messages (JSON text). Suppressed while the venue is silent.
    pub frames: Vec<String>,
    /// Keepalive answers (`PONG`), sent even while silent: a silent feed keeps its socket alive.
    pub control: Vec<String>,
}

/// One venue's message protocol over a session.
pub(crate) trait Protocol: Send {
    const EXCHANGE: Exchange;
    /// A frame no parser accepts, for [`crate::Faults::malform_next`].
    const MALFORMED: &'static str;
    /// Server-initiated ping frames (venue_a: every 10 s with body `heartbeat`).
    const PING: Option<(Duration, &'static [u8])>;
    /// Handles one text message from the client.
    fn on_text(&mut self, text: &str) -> Reply;
    /// Turns one published batch into messages for this client.
    fn on_batch(&mut self, batch: &Batch) -> Vec<String>;
    /// Whether this connection is subscribed to `id` (a venue_a ticker, a venue_b token), for
    /// [`crate::Faults::drop_socket_carrying`].
    fn carries(&self, id: &str) -> bool;
}

type Tx = SplitSink<WebSocket, Message>;

/// Runs a session until the client leaves, the socket fails, a drop fault fires or the simulator stops.
pub(crate) async fn drive<P: Protocol>(shared: Arc<Shared>, socket: WebSocket, mut proto: P) {
    let ex = P::EXCHANGE;
    let _open = shared.faults.session(ex);
    // Subscribe before anything is snapshotted: every batch newer than a snapshot is then guaranteed to
    // arrive here (see `Shared::mutate`).
    let mut updates = shared.subscribe();
    let mut drops = shared.faults.drop_watch(ex);
    let mut drop_one = shared.faults.drop_one_watch(ex);
    let (mut tx, mut rx) = socket.split();
    let (period, body) = P::PING.unwrap_or((Duration::from_secs(3_600), b""));
    let mut ping = tokio::time::interval_at(tokio::time::Instant::now() + period, period);
    ping.set_missed_tick_behavior(MissedTickBehavior::Delay);
    loop {
        let result = tokio::select! {
            _ = shared.cancel.cancelled() => {
                let _ = tx.send(Message::Close(None)).await;
                return;
            }
            // A dropped socket: return without a close frame, as a network failure looks.
            _ = drops.changed() => return,
            _ = drop_one.changed() => {
                let target = drop_one.borrow_and_update().1.clone();
                if proto.carries(&target) {
                    return;
                }
                Ok(())
            }
            _ = ping.tick(), if P::PING.is_some() => tx.send(Message::Ping(Bytes::from_static(body))).await,
            msg = rx.next() => match msg {
                Some(Ok(Message::Text(text))) => {
                    let reply = proto.on_text(text.as_str());
                    match send_control(&mut tx, reply.control).await {
                        Ok(()) => send(&shared, ex, P::MALFORMED, &mut tx, reply.frames).await,
                        Err(e) => Err(e),
                    }
                }
                // Pongs to client pings are queued by the socket itself.
                Some(Ok(Message::Binary(_) | Message::Ping(_) | Message::Pong(_))) => Ok(()),
                Some(Ok(Message::Close(_))) | None | Some(Err(_)) => return,
            },
            batch = updates.recv() => match batch {
                Ok(batch) => {
                    let _sending = shared.sending();
                    let frames = proto.on_batch(&batch);
                    send(&shared, ex, P::MALFORMED, &mut tx, frames).await
                }
                // A client this far behind has lost updates it cannot recover from on this socket.
                Err(RecvError::Lagged(n)) => {
                    tracing::warn!(venue = %ex, lagged = n, "simulated socket fell behind; closing");
                    return;
                }
                Err(RecvError::Closed) => return,
            },
        };
        if result.is_err() {
            return;
        }
    }
}

async fn send_control(tx: &mut Tx, control: Vec<String>) -> Result<(), axum::Error> {
    for c in control {
        tx.send(Message::Text(c.into())).await?;
    }
    Ok(())
}

async fn send(
    shared: &Shared,
    ex: Exchange,
    malformed: &str,
    tx: &mut Tx,
    frames: Vec<String>,
) -> Result<(), axum::Error> {
    if frames.is_empty() || shared.faults.is_silent(ex) {
        return Ok(());
    }
    if shared.faults.take_malformed(ex) {
        tx.feed(Message::Text(malformed.into())).await?;
    }
    for f in frames {
        tx.feed(Message::Text(f.into())).await?;
    }
    tx.flush().await
}
