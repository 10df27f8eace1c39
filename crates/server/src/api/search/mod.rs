//! Search (spec §4.1, contracts §4): text search over series, events and markets, the recently ingested
//! events and markets, and the markets of one event. Public; a key is optional.
//!
//! Handlers only validate parameters, call [`CatalogStore`](crossbook_store::CatalogStore) and turn its rows
//! into the `*Out` objects of spec §2.1–2.3. Matching and ordering live in the store.

mod out;
mod params;

pub use out::*;
pub use params::*;

use crossbook_store::{EventQuery, EventSort, MarketQuery, MarketSort, SeriesQuery, SeriesSort};
use utoipa_axum::{router::OpenApiRouter, routes};

use crate::{
    AppState,
    access::{Gate, groups},
    api::{also_unversioned, common::iso},
    error::{ApiError, ApiResult, ErrorBody},
    json::Json,
    params::{Path, Text, ValidQuery, text_value},
};
use axum::{extract::State, response::Response};

/// The search routes, each also reachable without `/v1`.
pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(also_unversioned(routes!(search)))
        .routes(also_unversioned(routes!(search_series)))
        .routes(also_unversioned(routes!(search_events)))
        .routes(also_unversioned(routes!(search_markets)))
        .routes(also_unversioned(routes!(recent_events)))
        .routes(also_unversioned(routes!(recent_markets)))
        .routes(also_unversioned(routes!(event_markets)))
}

/// Combined search
///
/// Searches series, events and markets at once with the same `q`, `exchange` and `status`, and returns up to
/// `limit` items of each kind, each in relevance order (series by title).
#[utoipa::path(
    get,
    path = "/v1/search",
    tag = "search",
    params(CombinedParams),
    security((), ("api_key" = [])),
    responses((status = 200, description = "Matching series, events and markets.", body = CombinedOut))
)]
async fn search(
    State(state): State<AppState>,
    _gate: Gate<groups::Search>,
    ValidQuery(p): ValidQuery<CombinedParams>,
) -> ApiResult<Response> {
    let series = SeriesQuery {
        q: Some(p.q.0.clone()),
        exchange: p.exchange,
        category: None,
        status: p.status.0,
        sort: SeriesSort::Title,
        limit: p.limit.get(),
        offset: 0,
    };
    let events = EventQuery {
        q: Some(p.q.0.clone()),
        series_id: None,
        exchange: p.exchange,
        category: None,
        status: p.status.0,
        min_volume: None,
        discovered_after: None,
        sort: EventSort::Relevance,
        limit: p.limit.get(),
        offset: 0,
    };
    let markets = MarketQuery {
        q: Some(p.q.into_inner()),
        series_id: None,
        event_id: None,
        exchange: p.exchange,
        category: None,
        status: p.status.0,
        min_volume: None,
        min_liquidity: None,
        discovered_after: None,
        settled_after: None,
        settled_before: None,
        sort: MarketSort::Relevance,
        limit: p.limit.get(),
        offset: 0,
    };
    let key = format!("combined {series:?} {events:?} {markets:?}");
    let store = &state.store;
    state
        .search_cache
        .json(key, async {
            let (series, events, markets) = tokio::try_join!(
                store.search_series(&series),
                store.search_events(&events),
                store.search_markets(&markets)
            )?;
            Ok(CombinedOut {
                series: series.into_iter().map(SeriesOut::from).collect(),
                events: events.into_iter().map(EventOut::from).collect(),
                markets: markets.into_iter().map(MarketOut::from).collect(),
            })
        })
        .await
}

/// Search series
///
/// Series whose `series_id` or title contains `q` (case-insensitive), filtered and sorted as requested.
#[utoipa::path(
    get,
    path = "/v1/search/series",
    tag = "search",
    params(SeriesParams),
    security((), ("api_key" = [])),
    responses((status = 200, description = "A page of series.", body = [SeriesOut]))
)]
async fn search_series(
    State(state): State<AppState>,
    _gate: Gate<groups::Search>,
    ValidQuery(p): ValidQuery<SeriesParams>,
) -> ApiResult<Response> {
    let query = SeriesQuery {
        q: p.q.map(Text::into_inner),
        exchange: p.exchange,
        category: p.category.map(Text::into_inner),
        status: p.status.0,
        sort: p.sort_by.0.into(),
        limit: p.limit.get(),
        offset: p.offset.get(),
    };
    let key = format!("series {query:?}");
    state
        .search_cache
        .json(key, async {
            let rows = state.store.search_series(&query).await?;
            Ok(rows.into_iter().map(SeriesOut::from).collect::<Vec<_>>())
        })
        .await
}

/// Search events
///
/// Events matching `q` and/or belonging to `series_id` (at least one of the two is required), with the
/// aggregates of their markets.
#[utoipa::path(
    get,
    path = "/v1/search/events",
    tag = "search",
    params(EventsParams),
    security((), ("api_key" = [])),
    responses((status = 200, description = "A page of events.", body = [EventOut]))
)]
async fn search_events(
    State(state): State<AppState>,
    _gate: Gate<groups::Search>,
    ValidQuery(p): ValidQuery<EventsParams>,
) -> ApiResult<Response> {
    let query = p.into_query();
    let key = format!("events {query:?}");
    state
        .search_cache
        .json(key, async {
            let rows = state.store.search_events(&query).await?;
            Ok(rows.into_iter().map(EventOut::from).collect::<Vec<_>>())
        })
        .await
}

/// Search markets
///
/// Markets matching `q` (or whose `interval_code` equals `q`) and/or belonging to `series_id` (at least one
/// of the two is required).
#[utoipa::path(
    get,
    path = "/v1/search/markets",
    tag = "search",
    params(MarketsParams),
    security((), ("api_key" = [])),
    responses((status = 200, description = "A page of markets.", body = [MarketOut]))
)]
async fn search_markets(
    State(state): State<AppState>,
    _gate: Gate<groups::Search>,
    ValidQuery(p): ValidQuery<MarketsParams>,
) -> ApiResult<Response> {
    let query = p.into_query();
    let key = format!("markets {query:?}");
    state
        .search_cache
        .json(key, async {
            let rows = state.store.search_markets(&query).await?;
            Ok(rows.into_iter().map(MarketOut::from).collect::<Vec<_>>())
        })
        .await
}

/// Recently ingested events
///
/// The latest events the service has discovered, newest `discovered_at` first.
#[utoipa::path(
    get,
    path = "/v1/search/recent/events",
    tag = "search",
    params(RecentParams),
    security((), ("api_key" = [])),
    responses((status = 200, description = "A page of events, newest first.", body = [RecentEventOut]))
)]
async fn recent_events(
    State(state): State<AppState>,
    _gate: Gate<groups::Search>,
    ValidQuery(p): ValidQuery<RecentParams>,
) -> ApiResult<Json<Vec<RecentEventOut>>> {
    let rows = state.store.recent_events(&p.into_query()).await?;
    Ok(Json(
        rows.into_iter()
            .map(|s| RecentEventOut {
                discovered_at: iso(s.discovered_at),
                event: s.into(),
            })
            .collect(),
    ))
}

/// Recently ingested markets
///
/// The latest markets the service has discovered, newest `discovered_at` first.
#[utoipa::path(
    get,
    path = "/v1/search/recent/markets",
    tag = "search",
    params(RecentParams),
    security((), ("api_key" = [])),
    responses((status = 200, description = "A page of markets, newest first.", body = [RecentMarketOut]))
)]
async fn recent_markets(
    State(state): State<AppState>,
    _gate: Gate<groups::Search>,
    ValidQuery(p): ValidQuery<RecentParams>,
) -> ApiResult<Json<Vec<RecentMarketOut>>> {
    let rows = state.store.recent_markets(&p.into_query()).await?;
    Ok(Json(
        rows.into_iter()
            .map(|s| RecentMarketOut {
                discovered_at: iso(s.discovered_at),
                market: s.into(),
            })
            .collect(),
    ))
}

/// Markets of one event
///
/// All markets under the event `event_id` (on whichever venue has it), highest volume first. 404 when no
/// venue has such an event.
#[utoipa::path(
    get,
    path = "/v1/search/events/{event_id}/markets",
    tag = "search",
    params(
        ("event_id" = inline(Text), Path, description = "Source event ticker / ID, as in `event_id` of an event."),
        EventMarketsParams
    ),
    security((), ("api_key" = [])),
    responses(
        (status = 200, description = "A page of the event's markets.", body = [MarketOut]),
        (status = 404, description = "No event with this id.", body = ErrorBody),
    )
)]
async fn event_markets(
    State(state): State<AppState>,
    _gate: Gate<groups::Search>,
    Path(event_id): Path<String>,
    ValidQuery(p): ValidQuery<EventMarketsParams>,
) -> ApiResult<Json<Vec<MarketOut>>> {
    let event_id = text_value("event_id", &event_id)?;
    let Some(event) = state.store.find_event(&event_id).await? else {
        return Err(ApiError::not_found(format!("no event with id {event_id:?}")));
    };
    let query = MarketQuery::of_event(
        event.event.exchange,
        &event.event.event_id,
        p.status.0,
        p.limit.get(),
        p.offset.get(),
    );
    let rows = state.store.search_markets(&query).await?;
    Ok(Json(rows.into_iter().map(Into::into).collect()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::common::tests::assert_spellings_match_serde;

    #[test]
    fn sort_spellings_match_their_schemas() {
        assert_spellings_match_serde::<SeriesSortBy>();
        assert_spellings_match_serde::<EventSortBy>();
        assert_spellings_match_serde::<MarketSortBy>();
    }
}
