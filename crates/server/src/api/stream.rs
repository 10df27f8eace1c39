//! `GET /v1/stream`: the WebSocket upgrade. The protocol itself is [`crate::stream`]'s.

use axum::{extract::State, extract::ws::WebSocketUpgrade, response::Response};
use utoipa::IntoParams;
use utoipa_axum::{router::OpenApiRouter, routes};

use crate::{
    AppState,
    access::{AnyCaller, Caller},
    error::{ApiError, ApiResult, ErrorBody},
    params::{FromQuery, IntRange, QueryMap, Text, ValidQuery, check_together},
    stream::{connection, protocol::MAX_CLIENT_MESSAGE, session::Owner},
};

/// Read buffer of a stream connection.
const READ_BUFFER: usize = 4 * 1024;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(stream))
}

/// Resuming a session after a disconnect.
#[derive(Debug, Clone, Default, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct StreamParams {
    /// The `session` of the `welcome` message of the connection to resume. Give it with `resume_from`.
    #[param(value_type = Option<Text>, inline)]
    pub session: Option<String>,
    /// The last `seq` received. The server sends every later message it still holds, then `resumed`; when
    /// it no longer holds them all, `welcome` and `reset`, then fresh snapshots.
    #[param(minimum = 0)]
    pub resume_from: Option<i64>,
    /// The last `pos` received (messages of an api process carry it): with it, another api process of the
    /// deployment can resume the session too, from the bus's window of events. Give it with `session`.
    #[param(minimum = 0)]
    pub resume_pos: Option<i64>,
}

impl FromQuery for StreamParams {
    fn from_query(q: &QueryMap) -> ApiResult<Self> {
        let p = StreamParams {
            session: q.text("session")?,
            resume_from: q.int("resume_from", IntRange::new(0, i64::MAX))?,
            resume_pos: q.int("resume_pos", IntRange::new(0, i64::MAX))?,
        };
        check_together("session", &p.session, "resume_from", &p.resume_from)?;
        if p.resume_pos.is_some() && p.session.is_none() {
            return Err(ApiError::invalid(
                "resume_pos",
                "resume_pos resumes a session: give it with session and resume_from",
            ));
        }
        Ok(p)
    }
}

/// The live stream (WebSocket).
///
/// Upgrades to a WebSocket of JSON messages. Send `{"op": "subscribe", "channel": …, "markets": […]}` for
/// the channels `book` (order-book snapshots, then every change; any key), `trades` (any key), `status`
/// (venue connections and capture gaps; any key), `whales` (the Builder plan) and `arbitrage` (opportunities
/// opening, changing and closing; the Trader plan). The key goes in the `X-API-Key` header, or in a first
/// message `{"op": "auth", "key": …}`. Every server message has `type`, `channel`, `seq` (per session, one
/// more each message), `sent_at`, `received_at` and `venue_ts`. A refused op gets an `error` message and
/// the connection stays open. Plans limit open streams per customer and markets per stream (Free 2 and 50,
/// Builder 10 and 500, Trader 50 and 5,000 by default). A client that reads too slowly is closed with code
/// 1013 and may resume; on shutdown streams close with 1001. A process that holds no live data (`--role api`,
/// or a standby waiting for the ingest lock) refuses the upgrade with 503 `unavailable`. The live stream
/// guide (docs/live-stream.md) documents every message.
#[utoipa::path(
    get,
    path = "/v1/stream",
    tag = "stream",
    params(StreamParams),
    security((), ("api_key" = [])),
    responses(
        (status = 101, description = "Switched to the WebSocket protocol."),
        (status = 400, description = "Not a WebSocket upgrade request, or `session` without `resume_from` (or the reverse).", body = ErrorBody),
        (status = 401, description = "The `X-API-Key` header holds an unknown or revoked key.", body = ErrorBody),
        (status = 429, description = "Over the caller's request rate, or (without a key) as many streams open from the client's address as allowed.", body = ErrorBody),
        (status = 503, description = "This process holds no live data (it does not ingest); the body says where live data is served.", body = ErrorBody),
    )
)]
async fn stream(
    State(state): State<AppState>,
    AnyCaller(caller): AnyCaller,
    extensions: axum::http::Extensions,
    ValidQuery(p): ValidQuery<StreamParams>,
    ws: Result<WebSocketUpgrade, axum::extract::ws::rejection::WebSocketUpgradeRejection>,
) -> ApiResult<Response> {
    let owner = match &caller {
        Caller::Key(o) => Some(Owner {
            customer_id: o.customer_id,
            plan: o.plan,
        }),
        Caller::InvalidKey => {
            return Err(ApiError::Unauthorized {
                detail: "the API key is unknown or revoked".into(),
            });
        }
        Caller::Anonymous => None,
    };
    let ws = ws.map_err(|r| ApiError::invalid_request(format!("GET /v1/stream is a WebSocket: {}", r.body_text())))?;
    state.require_live()?;
    // Taken before the upgrade and held by the connection until it authenticates or ends.
    let anonymous = match owner {
        Some(_) => None,
        None => {
            let ip = crate::access::client_ip(&extensions);
            Some(
                state
                    .stream
                    .connect_anonymous(ip)
                    .map_err(|limit| ApiError::TooManyOpen {
                        detail: format!(
                            "at most {limit} streams without a key may be open from one address until they \
                             authenticate; close one, or connect with an X-API-Key header"
                        ),
                    })?,
            )
        }
    };
    let opening = connection::Opening {
        owner,
        resume: p
            .session
            .zip(p.resume_from.map(|n| n as u64))
            .map(|(id, from)| connection::Resume {
                id,
                from,
                pos: p.resume_pos.map(|n| n as u64),
            }),
        anonymous,
    };
    Ok(ws
        .max_message_size(MAX_CLIENT_MESSAGE)
        // Client messages are small ops. The default read buffer (128 KiB) is zeroed on every read attempt,
        // and a stream is read on every wake-up: with a thousand streams that was a fifth of the server's
        // time, and 128 MiB of memory.
        .read_buffer_size(READ_BUFFER)
        .on_upgrade(move |socket| connection::run(state, socket, opening)))
}
