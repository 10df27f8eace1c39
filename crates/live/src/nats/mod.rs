//! The bridge between the in-process [`crate::Bus`] and NATS (DESIGN §1 "Beyond one process").
//!
//! - [`publisher`]: on the ingest leader, every bus event goes out on its subject ([`subject`]) as one JSON
//!   message ([`wire`]); keyframes (whole books with their sequence) go out at a book's first sight, after it
//!   lost continuity, after [`KeyframePolicy`]'s count of changes or age, and when a reader asks.
//! - [`mirror`]: on an api process, the leader's books are loaded from the keyframes, kept up to date from the
//!   changes in order (a missed sequence makes a book stale until its next keyframe), and every event is put
//!   on the process's own bus, so the stream and `/v1/arbitrage/current` work as in the leader.
//!
//! Two JetStream streams, created (or updated) by the leader: [`EVENTS_STREAM`] keeps every event subject for
//! the window (`bus_window_seconds`), for catch-up; [`KEYFRAMES_STREAM`] keeps the last keyframe of each
//! book (at most one message per subject, for the same window), which is where a reader starts. Keyframes in
//! a stream of their own, rather than a request to the leader, let a reader start while the leader is busy
//! or changing, and cost the leader nothing per reader.
//!
//! A mirror reads the bus live over a plain subscription; each event it puts on its bus comes with the
//! leader's number of its message ([`crate::DomainEvent::Position`]): the same number for the same event in
//! every api process, which is what lets a stream client resume on another process, from [`EVENTS_STREAM`].
//! The stream sessions those processes share live in the key-value bucket [`SESSIONS_BUCKET`].
//!
//! [`KeyframePolicy`]: crossbook_core::book::KeyframePolicy

pub mod mirror;
pub mod publisher;
pub mod subject;
pub mod wire;

use std::time::Duration;

use tokio::sync::watch;

/// The stream of events kept for the window.
pub const EVENTS_STREAM: &str = "CROSSBOOK_EVENTS";
/// The stream of the last keyframe per book.
pub const KEYFRAMES_STREAM: &str = "CROSSBOOK_KEYFRAMES";
/// The key-value bucket of the live stream's sessions, shared by the api processes for a resume on another
/// process (written and read by the server's stream).
pub const SESSIONS_BUCKET: &str = "crossbook_stream_sessions";

/// How a process reaches the bus.
#[derive(Debug, Clone)]
pub struct BusSettings {
    /// `nats://host:port` (several separated by commas).
    pub url: String,
    /// How long the streams keep messages.
    pub window: Duration,
}

/// Why the bus cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum BusError {
    #[error("cannot connect to the bus at {url}: {reason}")]
    Connect { url: String, reason: String },
    #[error("the bus's JetStream refused {what}: {reason}")]
    JetStream { what: String, reason: String },
}

/// A connection to NATS with its connection state (true while connected), which the client keeps up to
/// date itself: it reconnects forever after a loss.
pub struct Connection {
    pub client: async_nats::Client,
    pub connected: watch::Receiver<bool>,
    /// The streams' window (`bus_window_seconds`), for a reader that finds them missing and creates them.
    pub window: Duration,
}

/// Connects to the bus. With `wait`, fails when the server cannot be reached now; without, returns at once
/// and keeps trying in the background (the leader: capture never waits for the bus).
pub async fn connect(settings: &BusSettings, name: &str, wait: bool) -> Result<Connection, BusError> {
    let (tx, rx) = watch::channel(false);
    let tx = std::sync::Arc::new(tx);
    let events = tx.clone();
    let mut opts = async_nats::ConnectOptions::new()
        .name(name)
        .connection_timeout(Duration::from_secs(3))
        .max_reconnects(None::<usize>)
        // Loss detection within seconds rather than the default two minutes of pings.
        .ping_interval(Duration::from_secs(2))
        // Room for bursts of a whole venue's changes before the client counts a slow consumer.
        .subscription_capacity(262_144)
        .client_capacity(65_536)
        .event_callback(move |ev| {
            let events = events.clone();
            async move {
                match ev {
                    async_nats::Event::Connected => {
                        tracing::info!("bus connected");
                        events.send_replace(true);
                    }
                    async_nats::Event::Disconnected => {
                        tracing::warn!("bus disconnected; reconnecting");
                        events.send_replace(false);
                    }
                    async_nats::Event::SlowConsumer(_) => {
                        metrics::counter!("crossbook_bus_slow_consumer_total").increment(1);
                    }
                    other => tracing::debug!(event = %other, "bus event"),
                }
            }
        });
    if !wait {
        opts = opts.retry_on_initial_connect();
    }
    let client = opts
        .connect(settings.url.as_str())
        .await
        .map_err(|e| BusError::Connect {
            url: settings.url.clone(),
            reason: e.to_string(),
        })?;
    if client.connection_state() == async_nats::connection::State::Connected {
        tx.send_replace(true);
    }
    Ok(Connection {
        client,
        connected: rx,
        window: settings.window,
    })
}

/// The event stream's configuration, for a `window`.
pub fn events_stream_config(window: Duration) -> async_nats::jetstream::stream::Config {
    use async_nats::jetstream::stream::{Config, DiscardPolicy, StorageType};
    Config {
        name: EVENTS_STREAM.into(),
        subjects: subject::event_subjects(),
        max_age: window,
        storage: StorageType::File,
        discard: DiscardPolicy::Old,
        ..Default::default()
    }
}

/// Creates or updates the two streams (the leader does, at each connection).
pub async fn ensure_streams(client: &async_nats::Client, window: Duration) -> Result<(), BusError> {
    use async_nats::jetstream::stream::{Config, DiscardPolicy, StorageType};
    let js = async_nats::jetstream::new(client.clone());
    let err = |what: &str| {
        let what = what.to_string();
        move |e: async_nats::jetstream::context::CreateStreamError| BusError::JetStream {
            what,
            reason: e.to_string(),
        }
    };
    js.create_or_update_stream(events_stream_config(window))
        .await
        .map_err(err("the event stream"))?;
    js.create_or_update_stream(Config {
        name: KEYFRAMES_STREAM.into(),
        subjects: vec![subject::keyframe_subjects()],
        max_messages_per_subject: 1,
        max_age: window,
        storage: StorageType::File,
        discard: DiscardPolicy::Old,
        ..Default::default()
    })
    .await
    .map_err(err("the keyframe stream"))?;
    Ok(())
}
