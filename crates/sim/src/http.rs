//! Pieces both venues' HTTP servers share: the shared state handed to handlers, query parameters, the
//! fault middleware, and the streaming of model updates.

use std::sync::{
    Arc, Mutex, MutexGuard,
    atomic::{AtomicUsize, Ordering},
};

use axum::{
    Json,
    extract::{Request, State},
    http::StatusCode,
    middleware::Next,
    response::{IntoResponse, Response},
};
use crossbook_core::{Exchange, Timestamp};
use serde_json::{Value, json};
use tokio::sync::broadcast;
use tokio_util::sync::CancellationToken;

use crate::{
    faults::Faults,
    model::{Model, SimScale, types::Update},
    venue_a::auth::Verifier,
};

/// The updates of one model step (or injection), stamped with the model version that produced them.
#[derive(Debug)]
pub(crate) struct Batch {
    pub version: u64,
    pub now: Timestamp,
    pub updates: Vec<Update>,
}

/// State shared by the tick task, both servers and every WebSocket session.
pub(crate) struct Shared {
    /// A `std` mutex: every critical section is a short synchronous read or step, never held across an
    /// `.await`, and publishing under the lock is what orders batches after snapshots (see [`Self::publish`]).
    model: Mutex<Model>,
    updates: broadcast::Sender<Arc<Batch>>,
    /// Sessions turning a batch into frames and writing them to their socket now.
    sending: AtomicUsize,
    pub faults: Faults,
    pub cancel: CancellationToken,
    pub verifier: Verifier,
}

/// Batches a session may fall behind before it is disconnected (about 13 minutes of steps).
const UPDATE_BUFFER: usize = 4_096;
/// The same at the full scale, where a batch holds thousands of changes: about 3.4 minutes of steps, so a
/// stalled session holds at most that much of the stream in memory.
const UPDATE_BUFFER_FULL: usize = 1_024;

impl Shared {
    pub fn new(model: Model, faults: Faults, cancel: CancellationToken, verifier: Verifier) -> Arc<Self> {
        let buffer = match model.scale() {
            SimScale::Demo => UPDATE_BUFFER,
            SimScale::Full => UPDATE_BUFFER_FULL,
        };
        let (updates, _) = broadcast::channel(buffer);
        Arc::new(Shared {
            model: Mutex::new(model),
            updates,
            sending: AtomicUsize::new(0),
            faults,
            cancel,
            verifier,
        })
    }

    /// Marks a session as writing a batch to its socket until the guard is dropped.
    pub(crate) fn sending(&self) -> Sending<'_> {
        self.sending.fetch_add(1, Ordering::SeqCst);
        Sending(&self.sending)
    }

    /// Whether every published batch has been taken by every session and written to its socket: what the
    /// model produced is on the wire (a client still has to read it).
    pub fn idle(&self) -> bool {
        self.updates.is_empty() && self.sending.load(Ordering::SeqCst) == 0
    }

    pub fn model(&self) -> MutexGuard<'_, Model> {
        self.model.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Runs `f` on the model and publishes the updates it returns while still holding the lock, so a
    /// session that takes a snapshot under the lock receives exactly the batches with a higher version.
    pub fn mutate<T>(&self, f: impl FnOnce(&mut Model) -> (T, Vec<Update>)) -> T {
        let mut model = self.model();
        let (out, updates) = f(&mut model);
        if !updates.is_empty() {
            let batch = Batch {
                version: model.version(),
                now: model.now(),
                updates,
            };
            // No receiver is not an error: nobody is connected.
            let _ = self.updates.send(Arc::new(batch));
        }
        out
    }

    /// Steps the model to `now` and publishes the step's updates.
    pub fn step(&self, now: Timestamp) {
        self.mutate(|m| ((), m.step(now)));
    }

    /// A receiver of every batch published from now on. Sessions subscribe when they start, before any
    /// snapshot, and skip batches not newer than the snapshot they sent.
    pub fn subscribe(&self) -> broadcast::Receiver<Arc<Batch>> {
        self.updates.subscribe()
    }
}

/// A session writing a batch (see [`Shared::sending`]).
pub(crate) struct Sending<'a>(&'a AtomicUsize);

impl Drop for Sending<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Query parameters in order, repeated keys kept (`?tickers=A&tickers=B`, `?id=1&id=2`).
pub(crate) type Params = Vec<(String, String)>;

/// Typed access to [`Params`] with the validation the venues apply.
pub(crate) struct Query<'a>(pub &'a Params);

impl Query<'_> {
    pub fn get(&self, name: &str) -> Option<&str> {
        self.0.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
    }
    /// Every value of a repeatable parameter, comma-separated lists split.
    pub fn all(&self, name: &str) -> Vec<String> {
        self.0
            .iter()
            .filter(|(k, _)| k == name)
            .flat_map(|(_, v)| v.split(','))
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .collect()
    }
    pub fn bool(&self, name: &str) -> Result<Option<bool>, String> {
        match self.get(name) {
            None => Ok(None),
            Some("true") => Ok(Some(true)),
            Some("false") => Ok(Some(false)),
            Some(v) => Err(format!("invalid {name}: {v:?}")),
        }
    }
    pub fn int(&self, name: &str, min: i64, max: i64) -> Result<Option<i64>, String> {
        match self.get(name) {
            None => Ok(None),
            Some(v) => match v.parse::<i64>() {
                Ok(n) if (min..=max).contains(&n) => Ok(Some(n)),
                _ => Err(format!("invalid {name}: must be an integer from {min} to {max}")),
            },
        }
    }
}

/// A JSON response with a status.
pub(crate) fn reply(status: StatusCode, body: Value) -> Response {
    (status, Json(body)).into_response()
}

/// The error answer of a failed trade-tape request (see [`Faults::fail_trades`]), if one is set.
pub(crate) fn trades_fault(faults: &Faults, ex: Exchange) -> Option<Response> {
    let code = faults.trades_failure(ex)?;
    let status = StatusCode::from_u16(code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    Some(reply(
        status,
        json!({"error": status.canonical_reason().unwrap_or("error")}),
    ))
}

/// Middleware: answers armed REST failures (see [`Faults::fail_rest`]) before the handler runs.
pub(crate) async fn rest_faults(State((faults, ex)): State<(Faults, Exchange)>, req: Request, next: Next) -> Response {
    match faults.take_rest_failure(ex) {
        None => next.run(req).await,
        Some(code) => {
            let status = StatusCode::from_u16(code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
            let body = match (ex, code) {
                // venue_a's documented 429 body; no Retry-After header.
                (Exchange::VenueA, 429) => json!({"error": "too many requests"}),
                (Exchange::VenueA, _) => {
                    json!({"error": {"code": "internal_server_error", "message": "internal server error"}})
                }
                (Exchange::VenueB, 429) => json!({"error": "Too Many Requests"}),
                (Exchange::VenueB, _) => json!({"error": "Internal Server Error"}),
            };
            reply(status, body)
        }
    }
}
