//! `GET /v1/replay`: the recorded books and trades of up to 50 markets over a range, streamed as
//! newline-delimited JSON in time order ([`crate::export`] reads the messages, [`crate::export::ndjson`]
//! writes them). Everything that can be wrong
//! with a request (a parameter, the range over the plan's cap, an unknown market) is answered with a 400 or
//! 404 before the first byte of the stream.

use axum::{
    body::Body,
    extract::{RawQuery, State},
    http::header,
    response::{IntoResponse, Response},
};
use crossbook_core::{Exchange, Plan, Timestamp};
use crossbook_store::KeyOwner;
use utoipa::IntoParams;
use utoipa_axum::{router::OpenApiRouter, routes};

use crate::{
    AppState,
    access::{
        Gate, groups,
        plans::{self, HOUR_MS},
    },
    error::{ApiError, ApiResult},
    export::{self, Include, ReplayMarket, ReplayPlan, ndjson::Ndjson},
    params::{InstantQuery, QueryMap, Text, check_order, text_value},
    slots::{OpenCounts, Slot},
};

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(replay_route))
}

/// Most markets in one replay.
pub const MAX_MARKETS: usize = 50;

/// Query parameters of `/v1/replay` (for the document; read by [`parse`]).
#[derive(Debug, IntoParams)]
#[into_params(parameter_in = Query)]
#[allow(dead_code)]
struct ReplayParams {
    /// The venue of every `market_id` written without one: `venue_a` or `venue_b`.
    #[param(value_type = Option<crossbook_core::Exchange>)]
    exchange: Option<String>,
    /// A market to replay: a venue_a ticker or a venue_b condition id, optionally prefixed with its venue
    /// (`venue_b:0x…`) to mix venues in one replay. Repeat the parameter for more markets, up to 50. A
    /// venue_b market replays both of its tokens' books.
    #[param(value_type = Vec<Text>, inline)]
    market_id: Vec<String>,
    /// Range start (inclusive): Unix milliseconds (from 2001; a smaller number is refused as Unix seconds), an
    /// RFC 3339 time (no offset means UTC) or a bare date (midnight UTC). Each book starts with its state at this
    /// instant.
    #[param(value_type = InstantQuery, inline)]
    start_time: String,
    /// Range end (inclusive), written as `start_time`. The range may span at most 24 hours with a Free key, 7 days with
    /// Builder and 31 days with Trader.
    #[param(value_type = InstantQuery, inline)]
    end_time: String,
}

/// What a valid request asks for.
struct Parsed {
    markets: Vec<(Exchange, String)>,
    from: Timestamp,
    to: Timestamp,
}

fn millis(q: &QueryMap, name: &str) -> ApiResult<Timestamp> {
    q.instant(name)?.ok_or_else(|| ApiError::missing(name))
}

fn parse(q: &QueryMap, plan: Plan) -> ApiResult<Parsed> {
    let exchange: Option<Exchange> = q.one_of("exchange")?;
    let ids = q.all("market_id");
    if ids.is_empty() {
        return Err(ApiError::missing("market_id"));
    }
    if ids.len() > MAX_MARKETS {
        return Err(ApiError::invalid(
            "market_id",
            format!("market_id may be given at most {MAX_MARKETS} times"),
        ));
    }
    let mut markets = Vec::with_capacity(ids.len());
    for raw in ids {
        let id = text_value("market_id", raw)?;
        let (venue, id) = match id.split_once(':') {
            Some((v, rest)) if v == "venue_a" || v == "venue_b" => (Some(v.parse::<Exchange>()), rest.to_string()),
            _ => (None, id),
        };
        let venue = match venue {
            Some(Ok(v)) => v,
            Some(Err(_)) | None => exchange.ok_or_else(|| {
                ApiError::invalid(
                    "market_id",
                    format!("market_id {id} needs a venue: give exchange, or write venue_a:{id} or venue_b:{id}"),
                )
            })?,
        };
        if !markets.contains(&(venue, id.clone())) {
            markets.push((venue, id));
        }
    }
    let from = millis(q, "start_time")?;
    let to = millis(q, "end_time")?;
    check_order("start_time", Some(from), "end_time", Some(to))?;
    let cap = plans::replay_window_ms(plan);
    if to.millis() - from.millis() > cap {
        return Err(ApiError::invalid(
            "end_time",
            format!(
                "the range may span at most {} hours with the {} plan; split it into several requests",
                cap / HOUR_MS,
                plan.display_name()
            ),
        ));
    }
    Ok(Parsed { markets, from, to })
}

/// Replay
///
/// The recorded order books and trades of up to 50 markets between `start_time` and `end_time`, as
/// newline-delimited JSON (`application/x-ndjson`, one message a line) in time order across all the books.
/// Each message has `type`, `exchange`, `market_id`, `asset_id` (the venue_b token; null on venue_a), `seq`
/// (the book's event number; null on trades), `venue_ts` (the venue's time where known) and `received_at`;
/// book levels' prices are four-decimal strings, a trade's price and every size numbers:
/// - `book_snapshot`: the whole book (`bids`, `asks`, `no_bids`, best first), at `start_time` and after each
///   gap;
/// - `book_change`: `changes`, each `{side, price, size}` with the level's new size (0 removes it);
/// - `trade`: `trade_id`, `taker_side`, `outcome`, `price`, `size`, placed at the execution time (both
///   `venue_ts` and `received_at`; the time a trade arrived is not recorded);
/// - `gap`: the book lost continuity from `start` to `end` (null while it lasts past the range); `cause` as on
///   the gaps route, or `unreadable` for stored events that could not be decoded. The book's next message is a
///   `book_snapshot`.
///
/// A client that applies every `book_snapshot` and `book_change` in order holds the recorded book at each
/// instant. The stream is sent as it is read, so its size has no limit; a client that reads slowly slows only its
/// own stream. A database failure part-way ends the stream with `{"type": "error", "detail"}`. The whole stream
/// counts as one request for the rate limit.
#[utoipa::path(
    get,
    path = "/v1/replay",
    tag = "historical",
    params(ReplayParams),
    security(("api_key" = [])),
    responses(
        (status = 200, description = "The replay, one JSON message a line.", content_type = "application/x-ndjson", body = String,
         example = json!("{\"type\":\"book_snapshot\",\"exchange\":\"venue_a\",\"market_id\":\"KXBTC15M-26NOV211915-15\",\"asset_id\":null,\"seq\":4120,\"venue_ts\":null,\"received_at\":\"2026-11-21T19:00:00.000Z\",\"bids\":[{\"price\":\"0.4800\",\"size\":120.0}],\"asks\":[],\"no_bids\":[{\"price\":\"0.5000\",\"size\":80.0}]}\n{\"type\":\"book_change\",\"exchange\":\"venue_a\",\"market_id\":\"KXBTC15M-26NOV211915-15\",\"asset_id\":null,\"seq\":4121,\"venue_ts\":null,\"received_at\":\"2026-11-21T19:00:00.412Z\",\"changes\":[{\"side\":\"bid\",\"price\":\"0.4800\",\"size\":95.0}]}\n")),
        (status = 404, description = "A market_id that is not in the catalog.", body = crate::error::ErrorBody),
    )
)]
async fn replay_route(
    State(state): State<AppState>,
    gate: Gate<groups::Historical>,
    RawQuery(raw): RawQuery,
) -> ApiResult<Response> {
    let plan = gate.owner().map_or(Plan::Free, |o| o.plan);
    let q = QueryMap::parse_repeating(raw.as_deref().unwrap_or(""), &["market_id"])?;
    let parsed = parse(&q, plan)?;
    let mut markets = Vec::with_capacity(parsed.markets.len());
    for (exchange, id) in &parsed.markets {
        markets.push(replay_market(&state, *exchange, id).await?);
    }
    let plan = ReplayPlan {
        markets,
        from: parsed.from,
        to: parsed.to,
        include: Include::ALL,
    };
    let slot = take_slot(&state, &gate)?;
    Ok(stream(
        &state,
        slot,
        plan,
        Ndjson::default(),
        "application/x-ndjson",
        &[],
    ))
}

/// The replays and exports running now, per customer (clones share the counts).
#[derive(Debug, Default, Clone)]
pub struct ReadSlots {
    open: std::sync::Arc<OpenCounts<i64>>,
}

/// One running replay or export, counted against its customer until dropped (when its read ends).
pub type ReadSlot = Slot<i64>;

impl ReadSlots {
    /// Takes a slot of `owner`'s plan, or answers 429 when the customer already runs as many as it allows.
    pub fn take(&self, owner: &KeyOwner) -> ApiResult<ReadSlot> {
        let limit = plans::concurrent_reads(owner.plan);
        self.open
            .take(owner.customer_id, limit)
            .ok_or_else(|| ApiError::TooManyOpen {
                detail: format!(
                    "the {} plan runs at most {limit} replays and exports at once per customer; retry when one has \
                     ended",
                    owner.plan.display_name()
                ),
            })
    }
}

/// A catalog market and its books, or a 404 naming `market_id`.
pub(super) async fn replay_market(state: &AppState, exchange: Exchange, id: &str) -> ApiResult<ReplayMarket> {
    let m = state
        .store
        .get_market(exchange, id)
        .await?
        .ok_or_else(|| ApiError::not_found(format!("unknown market_id {id} on {exchange}")))?;
    Ok(ReplayMarket::of(m.market))
}

/// Streams `plan` encoded by `enc` as the response body, with `headers` beside its content type. The read
/// runs in its own task, which counts itself in the metrics and ends when the client goes away.
/// The caller's slot for one more replay or export (the gate has checked there is a key).
pub(super) fn take_slot(state: &AppState, gate: &Gate<groups::Historical>) -> ApiResult<ReadSlot> {
    let owner = gate
        .owner()
        .ok_or_else(|| ApiError::internal(anyhow::anyhow!("a historical route without a key")))?;
    state.reads.take(owner)
}

pub(super) fn stream<E: export::Encoder + 'static>(
    state: &AppState,
    slot: ReadSlot,
    plan: ReplayPlan,
    enc: E,
    content_type: &'static str,
    headers: &[(header::HeaderName, String)],
) -> Response {
    // A few pieces in flight: enough to keep the socket busy, little enough that a slow reader holds the
    // writer back instead of the server's memory.
    let (tx, rx) = tokio::sync::mpsc::channel(4);
    let store = state.store.clone();
    tokio::spawn(async move {
        metrics::gauge!("crossbook_replay_streams").increment(1.0);
        let (ended, messages) = export::run(store, plan, enc, tx).await;
        drop(slot);
        metrics::gauge!("crossbook_replay_streams").decrement(1.0);
        metrics::counter!("crossbook_replays_total", "ended" => ended.as_str()).increment(1);
        metrics::counter!("crossbook_replay_messages_total").increment(messages);
        tracing::info!(ended = ended.as_str(), messages, content_type, "replay ended");
    });
    let pieces = futures_util::stream::unfold(rx, |mut rx| async move { rx.recv().await.map(|piece| (piece, rx)) });
    let mut response = Body::from_stream(pieces).into_response();
    let h = response.headers_mut();
    h.insert(header::CONTENT_TYPE, header::HeaderValue::from_static(content_type));
    for (name, value) in headers {
        if let Ok(v) = header::HeaderValue::from_str(value) {
            h.insert(name.clone(), v);
        }
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    fn owner(customer_id: i64, plan: Plan) -> KeyOwner {
        KeyOwner {
            key_id: customer_id,
            customer_id,
            plan,
        }
    }

    /// A customer runs at most its plan's number of replays and exports at once; the next is a 429 naming the
    /// plan and the limit, and a slot is free again as soon as a read ends. Other customers are not affected.
    #[test]
    fn replays_and_exports_at_once_are_bounded_per_customer() {
        let slots = ReadSlots::default();
        let free = owner(1, Plan::Free);
        let mut held: Vec<ReadSlot> = (0..plans::concurrent_reads(Plan::Free))
            .map(|_| slots.take(&free).unwrap())
            .collect();
        let e = slots.take(&free).expect_err("over the Free plan's bound");
        assert_eq!(e.status().as_u16(), 429);
        assert_eq!(e.body().code, crate::error::ErrorCode::RateLimited);
        assert!(e.detail().contains("Free plan runs at most 2"), "{}", e.detail());
        // Another customer, and a Trader's larger bound.
        let trader = owner(2, Plan::Trader);
        let more: Vec<ReadSlot> = (0..8).map(|_| slots.take(&trader).unwrap()).collect();
        assert!(slots.take(&trader).is_err());
        held.pop();
        let again = slots.take(&free).expect("a read ended: its slot is free");
        assert!(slots.take(&free).is_err(), "and only that one");
        drop((again, held, more));
        assert_eq!(slots.open.held(&2), 0, "nothing left open for the customer");
    }

    fn err(raw: &str, plan: Plan) -> (String, String) {
        let q = QueryMap::parse_repeating(raw, &["market_id"]).unwrap();
        let e = parse(&q, plan).err().expect("an error");
        let b = e.body();
        (b.param.clone().unwrap_or_default(), b.detail.clone())
    }

    #[test]
    fn requests_are_checked_before_anything_is_read() {
        // 2026-11-18, in milliseconds (a number before 2001 is refused as seconds).
        const T: i64 = 1_795_000_000_000;
        let ok = QueryMap::parse_repeating(
            &format!(
                "exchange=venue_a&market_id=A&market_id=venue_b:0xB&market_id=A&start_time={T}&end_time={}",
                T + 1000
            ),
            &["market_id"],
        )
        .unwrap();
        let p = parse(&ok, Plan::Free).unwrap();
        assert_eq!(
            p.markets,
            vec![
                (Exchange::VenueA, "A".to_string()),
                (Exchange::VenueB, "0xB".to_string())
            ],
            "prefixes name the venue, repeats count once"
        );
        assert_eq!(err(&format!("start_time={T}&end_time={T}"), Plan::Free).0, "market_id");
        assert_eq!(
            err(&format!("market_id=A&start_time={T}&end_time={T}"), Plan::Free).0,
            "market_id"
        );
        assert_eq!(
            err(&format!("exchange=venue_a&market_id=A&end_time={T}"), Plan::Free).0,
            "start_time"
        );
        assert_eq!(
            err(
                &format!("exchange=venue_a&market_id=A&start_time={}&end_time={T}", T + 5),
                Plan::Free
            )
            .0,
            "start_time"
        );
        let day = 24 * HOUR_MS;
        let over = format!("exchange=venue_a&market_id=A&start_time={T}&end_time={}", T + day + 1);
        let (param, detail) = err(&over, Plan::Free);
        assert_eq!(param, "end_time");
        assert!(detail.contains("24 hours"), "{detail}");
        let q = QueryMap::parse_repeating(&over, &["market_id"]).unwrap();
        assert!(parse(&q, Plan::Builder).is_ok(), "a Builder key may ask for a week");
        let many: String = (0..51).map(|i| format!("market_id=M{i}&")).collect();
        assert_eq!(
            err(
                &format!("{many}exchange=venue_a&start_time={T}&end_time={T}"),
                Plan::Trader
            )
            .0,
            "market_id"
        );
        assert_eq!(
            err(
                &format!("exchange=venue_c&market_id=A&start_time={T}&end_time={T}"),
                Plan::Free
            )
            .0,
            "exchange"
        );
    }
}
