//! Backtests (Trader plan): `POST /v1/backtests` starts a cross-venue arbitrage backtest over the recorded
//! log in the background and answers 202 with its id; `GET /v1/backtests/{id}` says where it stands and,
//! once done, gives its report; `GET /v1/backtests/{id}/trades` gives its trades as CSV or JSON;
//! `GET /v1/backtests` lists the caller's runs; `DELETE /v1/backtests/{id}` deletes one (stopping it if it runs). A run belongs to its customer: another customer's id is 404.
//!
//! Everything wrong with a request (a value, the range over the plan's limit, too many runs at once) is
//! answered before the run starts. The engine and the run are [`crate::backtests`].

use axum::{
    extract::State,
    http::{StatusCode, header},
    response::{IntoResponse, Response},
};
use crossbook_core::{
    Amount, IntervalCode, Plan, Timestamp,
    arb::{FeeModel, MicroUsd, fees::stored_category},
    backtest::{BacktestParams, LegOrder, MissingLeg},
};
use crossbook_store::{BacktestStatus, KeyOwner, StoredBacktest, backtests::STALLED_AFTER_MS};
use serde::Serialize;
use serde_json::{Map, Value, json};
use utoipa::{IntoParams, ToSchema};
use utoipa_axum::{router::OpenApiRouter, routes};

use crate::{
    AppState,
    access::{
        Gate, groups,
        plans::{self, HOUR_MS},
    },
    api::common::{body_object, iso, iso_opt},
    backtests::{self, render, trades},
    error::{ApiError, ApiResult},
    json::Json,
    params::{FromQuery, MIN_MILLIS, ParamEnum, Path, QueryMap, ValidQuery, text_value},
};

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(create_backtest, list_backtests))
        .routes(routes!(get_backtest, delete_backtest))
        .routes(routes!(backtest_trades))
}

/// Runs a customer's list shows.
pub const LISTED: u32 = 50;

/// A backtest id as `POST /v1/backtests` gives it: `bt_` and 32 lowercase hex digits.
#[derive(Debug, ToSchema)]
#[schema(value_type = String, pattern = r"^bt_[0-9a-f]{32}$", example = "bt_3f2a9c1e7b5d4e0f8a6b2c4d1e9f7a3b")]
pub struct BacktestId(#[allow(dead_code)] String);

/// The path's id, checked: anything that is not an id is a 400 naming it.
fn backtest_id(path: Result<Path<String>, ApiError>) -> ApiResult<String> {
    let id = path?.0;
    let hex = id.strip_prefix("bt_").unwrap_or_default();
    if hex.len() != 32 || !hex.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)) {
        return Err(ApiError::invalid(
            "id",
            "id must be a backtest id: bt_ and 32 lowercase hex digits",
        ));
    }
    Ok(id)
}

/// The file format of a run's trades.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum TradesFormat {
    Csv,
    Json,
}

impl ParamEnum for TradesFormat {
    const VALUES: &'static [(&'static str, Self)] = &[("csv", TradesFormat::Csv), ("json", TradesFormat::Json)];
}

/// Parameters of `/v1/backtests/{id}/trades`.
#[derive(Debug, Clone, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct TradesParams {
    /// `csv` (default): one row per trade, a nested object's fields prefixed with its name
    /// (`yes_leg_filled`); `json`: the report's `trades` array.
    #[param(inline)]
    pub format: Option<TradesFormat>,
}

impl FromQuery for TradesParams {
    fn from_query(q: &QueryMap) -> ApiResult<Self> {
        Ok(TradesParams {
            format: q.one_of("format")?,
        })
    }
}

/// The body of `POST /v1/backtests`. Only `from` and `to` are required.
#[derive(Debug, ToSchema)]
#[allow(dead_code)]
pub struct BacktestIn {
    /// Range start, Unix milliseconds (inclusive): the books as they stood then.
    #[schema(example = 1795287600000i64)]
    from: i64,
    /// Range end, Unix milliseconds (inclusive). At most 31 days after `from`.
    #[schema(example = 1795291200000i64)]
    to: i64,
    /// Take an opportunity when it nets at least this many cents per contract after fees. Default 1.
    #[schema(example = 1.0)]
    min_net_cents: Option<f64>,
    /// The most one trade may cost, legs and fees, in dollars; null for no limit. Default 100.
    capital_per_trade_dollars: Option<f64>,
    /// The most all open trades may cost together; null for no limit. Default 1000.
    capital_total_dollars: Option<f64>,
    /// From detection to each leg's order reaching its venue, 0 to 60000 ms. Default 250.
    latency_ms: Option<i64>,
    /// `simultaneous` (default) or `venue_a_first`.
    leg_order: Option<String>,
    /// `unwind` (default) or `hold`: what happens to contracts of one leg the other did not match.
    missing_leg: Option<String>,
    /// venue_b's taker rate per category for this run, e.g. `sports=0.03, crypto=0.07`; categories not named
    /// keep the server's rate.
    venue_b_fee_rate: Option<String>,
    /// Only window pairs of this interval (`15m`, `1h`, ...).
    interval_code: Option<String>,
}

/// Keys a body may have.
const BODY_KEYS: [&str; 10] = [
    "from",
    "to",
    "min_net_cents",
    "capital_per_trade_dollars",
    "capital_total_dollars",
    "latency_ms",
    "leg_order",
    "missing_leg",
    "venue_b_fee_rate",
    "interval_code",
];

fn int(body: &Map<String, Value>, key: &str) -> ApiResult<Option<i64>> {
    match body.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => v
            .as_i64()
            .map(Some)
            .ok_or_else(|| ApiError::invalid(key, format!("{key} must be a whole number"))),
    }
}

fn text(body: &Map<String, Value>, key: &str) -> ApiResult<Option<String>> {
    match body.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => text_value(key, s).map(Some),
        Some(_) => Err(ApiError::invalid(key, format!("{key} must be a string"))),
    }
}

/// An amount of money in `key`, a JSON number read exactly from its decimal text by `parse` (never through
/// floating point). `None` when absent; `Some(None)` for an explicit null (no limit).
fn money<E>(
    body: &Map<String, Value>,
    key: &str,
    parse: impl Fn(&str) -> Result<MicroUsd, E>,
) -> ApiResult<Option<Option<MicroUsd>>> {
    match body.get(key) {
        None => Ok(None),
        Some(Value::Null) => Ok(Some(None)),
        Some(Value::Number(n)) => parse(&n.to_string()).map(|m| Some(Some(m))).map_err(|_| {
            ApiError::invalid(
                key,
                format!("{key} must be a number with at most 6 decimals of a dollar"),
            )
        }),
        Some(_) => Err(ApiError::invalid(key, format!("{key} must be a number"))),
    }
}

/// Dollars, exact to the micro-dollar.
fn dollars(s: &str) -> Result<MicroUsd, crossbook_core::money::ParseDecimalError> {
    s.parse::<Amount>().map(|a| MicroUsd(a.micros()))
}

/// Reads and checks a body against the caller's plan.
pub fn parse(body: &Value, plan: Plan, fees: FeeModel) -> ApiResult<BacktestParams> {
    let p = read_params(body, fees)?;
    let cap = plans::backtest_window_ms(plan);
    if p.to.millis() - p.from.millis() > cap {
        return Err(ApiError::invalid(
            "to",
            format!(
                "the range may span at most {} hours with the {} plan; split it into several backtests",
                cap / HOUR_MS,
                plan.display_name()
            ),
        ));
    }
    Ok(p)
}

/// Reads and checks a body, whatever the range (`crossbook backtest` runs on the operator's own database).
/// `fees` are the configured rates, which `venue_b_fee_rate` overrides category by category.
pub fn read_params(body: &Value, fees: FeeModel) -> ApiResult<BacktestParams> {
    let body = body_object(body)?;
    if let Some(k) = body.keys().find(|k| !BODY_KEYS.contains(&k.as_str())) {
        return Err(ApiError::invalid(
            k,
            format!("unknown field {k}; the fields are {}", BODY_KEYS.join(", ")),
        ));
    }
    let from = int(body, "from")?.ok_or_else(|| ApiError::missing("from"))?;
    let to = int(body, "to")?.ok_or_else(|| ApiError::missing("to"))?;
    for (k, v) in [("from", from), ("to", to)] {
        if v < MIN_MILLIS {
            return Err(ApiError::invalid(
                k,
                format!("{k} must be Unix milliseconds (from 2001)"),
            ));
        }
    }
    let mut p = BacktestParams::new(Timestamp::from_millis(from), Timestamp::from_millis(to));
    // As `/v1/arbitrage/current` reads it: rounded up to the micro-dollar.
    if let Some(m) = money(body, "min_net_cents", MicroUsd::parse_cents_ceil)? {
        p.min_net = m.ok_or_else(|| ApiError::invalid("min_net_cents", "min_net_cents cannot be null"))?;
    }
    if let Some(c) = money(body, "capital_per_trade_dollars", dollars)? {
        p.capital_per_trade = c;
    }
    if let Some(c) = money(body, "capital_total_dollars", dollars)? {
        p.capital_total = c;
    }
    if let Some(l) = int(body, "latency_ms")? {
        p.latency_ms = l;
    }
    if let Some(o) = text(body, "leg_order")?.as_deref() {
        p.leg_order = LegOrder::ALL
            .into_iter()
            .find(|x| x.as_str() == o)
            .ok_or_else(|| ApiError::invalid("leg_order", "leg_order must be simultaneous or venue_a_first"))?;
    }
    if let Some(o) = text(body, "missing_leg")?.as_deref() {
        p.missing_leg = MissingLeg::ALL
            .into_iter()
            .find(|x| x.as_str() == o)
            .ok_or_else(|| ApiError::invalid("missing_leg", "missing_leg must be unwind or hold"))?;
    }
    p.fees = fees;
    if let Some(f) = text(body, "venue_b_fee_rate")?.as_deref() {
        let bad = |e: String| ApiError::invalid("venue_b_fee_rate", format!("venue_b_fee_rate: {e}"));
        // Each category named replaces the configured rate; the others keep it.
        for entry in f.split(',').map(str::trim).filter(|e| !e.is_empty()) {
            let one: FeeModel = entry.parse().map_err(bad)?;
            let name = entry.split_once('=').map_or(entry, |(n, _)| n);
            let category = stored_category(name).ok_or_else(|| bad(format!("unknown category {name:?}")))?;
            p.fees = p.fees.with_venue_b_rate(category, one.venue_b_rate(category));
        }
    }
    if let Some(c) = text(body, "interval_code")?.as_deref() {
        p.interval_code = Some(c.parse::<IntervalCode>().map_err(|_| {
            ApiError::invalid(
                "interval_code",
                format!("interval_code {c:?} is not an interval code (15m, 1h, ...)"),
            )
        })?);
    }
    if let Err((field, reason)) = p.check() {
        return Err(ApiError::invalid(field, reason));
    }
    Ok(p)
}

fn owner<G: groups::Group>(gate: &Gate<G>) -> ApiResult<&KeyOwner> {
    gate.owner().ok_or_else(|| ApiError::Unauthorized {
        detail: "this route requires an API key".into(),
    })
}

/// Start a backtest
///
/// Replays both venues' recorded books over `[from, to]` in time order, prices every pair with the arbitrage
/// scanner's own function, and trades each opportunity found under the body's assumptions: each leg a limit
/// order at the depth walk's price, filled against the book as it stood `latency_ms` after detection. The run
/// goes on in the background; poll `GET /v1/backtests/{id}` for its report. Trader plan; at most two runs at
/// once per customer.
#[utoipa::path(
    post,
    path = "/v1/backtests",
    tag = "backtests",
    request_body = BacktestIn,
    security(("api_key" = [])),
    responses(
        (status = 202, description = "Started: `id`, `status` (`running`) and the parameters with every default filled in.", body = Object),
        (status = 400, description = "A bad value, `from` after `to`, capital of 0 or less, or a range over the plan's limit.", body = crate::error::ErrorBody),
        (status = 403, description = "The key's plan is below Trader; `required_plan` names the plan needed.", body = crate::error::ErrorBody,
         example = json!({"detail": "this route requires the Trader plan", "code": "entitlement_required", "required_plan": "trader"})),
        (status = 429, description = "The customer already runs as many backtests as the plan allows.", body = crate::error::ErrorBody),
    )
)]
async fn create_backtest(
    State(state): State<AppState>,
    gate: Gate<groups::Backtests>,
    body: Result<Json<Value>, ApiError>,
) -> ApiResult<Response> {
    let owner = owner(&gate)?;
    let Json(body) = body?;
    let params = parse(&body, owner.plan, state.config.venue_b_fee_rate)?;
    let now = Timestamp::now();
    let limit = plans::concurrent_backtests(owner.plan);
    let running = state
        .store
        .running_backtests(
            owner.customer_id,
            Timestamp::from_millis(now.millis() - STALLED_AFTER_MS),
        )
        .await?;
    if running >= limit {
        return Err(ApiError::TooManyOpen {
            detail: format!(
                "the {} plan runs at most {limit} backtests at once per customer; retry when one has ended",
                owner.plan.display_name()
            ),
        });
    }
    let id = format!("bt_{}", uuid::Uuid::new_v4().simple());
    let shown = render::params(&params);
    state
        .store
        .create_backtest(&id, owner.customer_id, &shown.to_string(), now)
        .await?;
    backtests::spawn(state.store.clone(), id.clone(), params);
    let location = format!("/v1/backtests/{id}");
    Ok((
        StatusCode::ACCEPTED,
        [(header::LOCATION, location)],
        Json(json!({ "id": id, "status": "running", "created_at": iso(now), "params": shown })),
    )
        .into_response())
}

/// The caller's run `id`, or 404.
async fn owned(state: &AppState, owner: &KeyOwner, id: &str) -> ApiResult<StoredBacktest> {
    match state.store.backtest(id).await? {
        Some(b) if b.customer_id == owner.customer_id => Ok(b),
        _ => Err(ApiError::not_found(format!("no backtest {id}"))),
    }
}

/// Where a run stands, without its report.
fn head(b: &StoredBacktest, now: Timestamp) -> Map<String, Value> {
    let status = b.status_at(now);
    let params: Value = serde_json::from_str(&b.params).unwrap_or(Value::Null);
    let span = |k: &str| params.get(k).and_then(Value::as_i64);
    // How far the replay has gone, 0 to 1.
    let progress = match (status, span("from"), span("to"), b.progress_at) {
        (BacktestStatus::Done, ..) => Some(1.0),
        (_, Some(from), Some(to), Some(at)) if to > from => {
            Some(((at.millis() - from) as f64 / (to - from) as f64).clamp(0.0, 1.0))
        }
        _ => None,
    };
    let error = match (status, &b.error) {
        (_, Some(e)) => Some(e.clone()),
        (BacktestStatus::Failed, None) => Some("the process running it stopped before it ended".into()),
        _ => None,
    };
    let mut m = Map::new();
    m.insert("id".into(), json!(b.id));
    m.insert("status".into(), json!(status.as_str()));
    m.insert("created_at".into(), json!(iso(b.created_at)));
    m.insert("finished_at".into(), json!(iso_opt(b.finished_at)));
    m.insert("progress".into(), json!(progress));
    m.insert("error".into(), json!(error));
    m.insert("params".into(), params);
    m
}

/// A backtest
///
/// `status` is `running` (with `progress`, 0 to 1), `done` or `failed` (with `error`). A done run carries its
/// whole report: `opportunities_seen`, `opportunities_taken`, `pnl_gross_dollars`, `pnl_net_dollars`,
/// `max_drawdown_dollars`, `latency_cost_dollars`, `summary` and `zero_latency` (fills, partial fills, second
/// legs missed, capital used, ...), `equity`, `by_interval`, `by_category`, `by_pair`, `marked_markets`,
/// `opportunities` and `trades`. Money is exact to the micro-dollar.
#[utoipa::path(
    get,
    path = "/v1/backtests/{id}",
    tag = "backtests",
    params(("id" = inline(BacktestId), Path, description = "The id `POST /v1/backtests` answered.")),
    security(("api_key" = [])),
    responses(
        (status = 200, description = "The run, and its report once done.", body = Object),
        (status = 403, description = "The key's plan is below Trader; `required_plan` names the plan needed.", body = crate::error::ErrorBody,
         example = json!({"detail": "this route requires the Trader plan", "code": "entitlement_required", "required_plan": "trader"})),
        (status = 404, description = "No such run of this customer.", body = crate::error::ErrorBody),
    )
)]
async fn get_backtest(
    State(state): State<AppState>,
    gate: Gate<groups::Backtests>,
    path: Result<Path<String>, ApiError>,
) -> ApiResult<Json<Value>> {
    let owner = owner(&gate)?;
    let b = owned(&state, owner, &backtest_id(path)?).await?;
    let mut out = head(&b, Timestamp::now());
    if let Some(Value::Object(report)) = b
        .report
        .as_deref()
        .and_then(|r| serde_json::from_slice::<Value>(r).ok())
    {
        for (k, v) in report {
            out.entry(k).or_insert(v);
        }
    }
    Ok(Json(Value::Object(out)))
}

/// Delete a backtest
///
/// Deletes a run and its report. A run still running stops, and writes nothing more.
#[utoipa::path(
    delete,
    path = "/v1/backtests/{id}",
    tag = "backtests",
    params(("id" = inline(BacktestId), Path, description = "The run.")),
    security(("api_key" = [])),
    responses(
        (status = 204, description = "Deleted."),
        (status = 403, description = "The key's plan is below Trader; `required_plan` names the plan needed.", body = crate::error::ErrorBody,
         example = json!({"detail": "this route requires the Trader plan", "code": "entitlement_required", "required_plan": "trader"})),
        (status = 404, description = "No such run of this customer.", body = crate::error::ErrorBody),
    )
)]
async fn delete_backtest(
    State(state): State<AppState>,
    gate: Gate<groups::Backtests>,
    path: Result<Path<String>, ApiError>,
) -> ApiResult<StatusCode> {
    let owner = owner(&gate)?;
    let id = backtest_id(path)?;
    owned(&state, owner, &id).await?;
    state.store.delete_backtest(&id).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// Backtests
///
/// The caller's 50 newest runs, newest first, without their reports.
#[utoipa::path(
    get,
    path = "/v1/backtests",
    tag = "backtests",
    security(("api_key" = [])),
    responses(
        (status = 200, description = "`backtests`: each run's id, status, progress and parameters.", body = Object),
        (status = 403, description = "The key's plan is below Trader; `required_plan` names the plan needed.", body = crate::error::ErrorBody,
         example = json!({"detail": "this route requires the Trader plan", "code": "entitlement_required", "required_plan": "trader"})),
    )
)]
async fn list_backtests(State(state): State<AppState>, gate: Gate<groups::Backtests>) -> ApiResult<Json<Value>> {
    let owner = owner(&gate)?;
    let now = Timestamp::now();
    let runs = state.store.customer_backtests(owner.customer_id, LISTED).await?;
    let runs: Vec<Value> = runs.iter().map(|b| Value::Object(head(b, now))).collect();
    Ok(Json(json!({ "backtests": runs })))
}

/// A backtest's trades
///
/// The trades of a done run, one row per trade, as CSV (`format=csv`, the default; a nested object's fields
/// are prefixed with its name: `yes_leg_filled`) or as the report's JSON array (`format=json`). A run that is
/// not done answers 409.
#[utoipa::path(
    get,
    path = "/v1/backtests/{id}/trades",
    tag = "backtests",
    params(("id" = inline(BacktestId), Path, description = "The run."), TradesParams),
    security(("api_key" = [])),
    responses(
        (status = 200, description = "The trades: CSV (`text/csv`) or, with `format=json`, `{\"trades\": [...]}`.", content_type = "text/csv", body = String),
        (status = 403, description = "The key's plan is below Trader; `required_plan` names the plan needed.", body = crate::error::ErrorBody,
         example = json!({"detail": "this route requires the Trader plan", "code": "entitlement_required", "required_plan": "trader"})),
        (status = 404, description = "No such run of this customer.", body = crate::error::ErrorBody),
        (status = 409, description = "The run is not done.", body = crate::error::ErrorBody),
    )
)]
async fn backtest_trades(
    State(state): State<AppState>,
    gate: Gate<groups::Backtests>,
    path: Result<Path<String>, ApiError>,
    ValidQuery(p): ValidQuery<TradesParams>,
) -> ApiResult<Response> {
    let owner = owner(&gate)?;
    let id = backtest_id(path)?;
    let b = owned(&state, owner, &id).await?;
    let report: Option<Value> = b.report.as_deref().and_then(|r| serde_json::from_slice(r).ok());
    let Some(Value::Array(list)) = report.and_then(|mut r| r.get_mut("trades").map(Value::take)) else {
        return Err(ApiError::Conflict {
            detail: format!(
                "backtest {id} is {}; its trades are ready once it is done",
                b.status_at(Timestamp::now()).as_str()
            ),
        });
    };
    Ok(match p.format.unwrap_or(TradesFormat::Csv) {
        TradesFormat::Json => Json(json!({ "trades": list })).into_response(),
        TradesFormat::Csv => (
            [
                (header::CONTENT_TYPE, "text/csv; charset=utf-8".to_string()),
                (
                    header::CONTENT_DISPOSITION,
                    format!("attachment; filename=\"{id}_trades.csv\""),
                ),
            ],
            trades::csv(&list),
        )
            .into_response(),
    })
}
