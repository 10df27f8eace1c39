//! API keys, plans and who may call what (contracts §3).
//!
//! - [`KeyCache`] resolves `X-API-Key` to its owner and plan through a small in-memory cache in front of
//!   [`AccountStore::find_key`](crossbook_store::AccountStore::find_key).
//! - [`RouteGroup`] is the gating table of contracts §3, written once. Every route belongs to one group.
//! - Extractors state in a handler's signature what the route needs: [`Gate<G>`] for a route group (the
//!   normal way), and the building blocks [`OptionalKey`], [`RequireKey`] and [`RequirePlan<P>`].
//! - [`authenticate`] is the middleware in front of the API routes: it resolves the caller once, applies the
//!   caller's rate limit (see [`crate::rate_limit`]) and leaves the [`Caller`] in the request for the extractors.
//!
//! # Adding a route group's routes
//!
//! Take `Gate<groups::Historical>` (or the group's marker) in the handler. The gate answers 401/403 itself and
//! tells preview groups whether the caller gets the full or the preview view ([`View`]). Webhook POST/PUT,
//! whose group depends on the `{type}` path segment, call [`Caller::authorize`] with
//! [`RouteGroup::webhook_write`] after parsing the type.

use std::{
    collections::HashMap,
    marker::PhantomData,
    net::{IpAddr, Ipv4Addr, SocketAddr},
    sync::Mutex,
    time::{Duration, Instant},
};

use axum::{
    extract::{ConnectInfo, FromRequestParts, Request, State},
    http::{HeaderMap, HeaderName, StatusCode, request::Parts},
    middleware::Next,
    response::{IntoResponse, Response},
};
use crossbook_core::Plan;
use crossbook_store::{KeyOwner, Store, StoreResult, accounts::hash_key};

use crate::{
    error::{ApiError, ApiResult},
    rate_limit::Decision,
    state::AppState,
};

/// The request header that carries the API key.
pub const X_API_KEY: HeaderName = HeaderName::from_static("x-api-key");

/// Who is calling, as far as the API is concerned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Caller {
    /// No `X-API-Key` header (or an empty one).
    Anonymous,
    /// A key that is malformed, unknown or revoked. Public routes treat it as no key; keyed routes answer 401.
    InvalidKey,
    /// A valid, unrevoked key.
    Key(KeyOwner),
}

impl Caller {
    /// The key's owner, for a valid key.
    pub fn owner(&self) -> Option<&KeyOwner> {
        match self {
            Caller::Key(o) => Some(o),
            _ => None,
        }
    }

    /// The caller's plan, for a valid key.
    pub fn plan(&self) -> Option<Plan> {
        self.owner().map(|o| o.plan)
    }

    /// Applies the gating table: the view this caller gets of `group`, or 401/403.
    pub fn authorize(&self, group: RouteGroup) -> ApiResult<View> {
        match group.access() {
            Access::Public => Ok(View::Full),
            Access::Preview { full_from } => Ok(if self.plan().is_some_and(|p| p >= full_from) {
                View::Full
            } else {
                View::Preview
            }),
            Access::Plan(required) => self.require_plan(required).map(|_| View::Full),
        }
    }

    /// The owner of a valid key on `required` or a higher plan; 401 without a valid key, 403 below the plan.
    pub fn require_plan(&self, required: Plan) -> ApiResult<&KeyOwner> {
        match self {
            Caller::Key(o) if o.plan >= required => Ok(o),
            Caller::Key(_) => Err(ApiError::EntitlementRequired { required }),
            Caller::Anonymous => Err(ApiError::Unauthorized {
                detail: "this route requires an API key in the X-API-Key header".to_string(),
            }),
            Caller::InvalidKey => Err(ApiError::Unauthorized {
                detail: "the API key is unknown or revoked".to_string(),
            }),
        }
    }
}

/// What a route group requires (a column of contracts §3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// Anyone; a key is optional and an invalid key counts as none.
    Public,
    /// Anyone, in preview mode below `full_from`; an invalid key counts as none.
    Preview { full_from: Plan },
    /// A valid key on at least this plan (`Plan::Free` = any valid key); otherwise 401, or 403 when the plan is
    /// too low.
    Plan(Plan),
}

/// What a caller may see of a preview route group.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum View {
    Full,
    Preview,
}

/// Declares the route groups once: the [`RouteGroup`] enum, [`RouteGroup::ALL`] in this order, and a
/// marker type per group in [`groups`].
macro_rules! route_groups {
    ($($(#[$m:meta])* $name:ident),* $(,)?) => {
        /// The route groups of contracts §3. [`RouteGroup::access`] is the table.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum RouteGroup {
            $($(#[$m])* $name,)*
        }

        impl RouteGroup {
            /// Every group, in the order of contracts §3.
            pub const ALL: [RouteGroup; [$(RouteGroup::$name),*].len()] = [$(RouteGroup::$name),*];
        }

        /// Zero-sized markers naming a [`RouteGroup`] in a type, for [`Gate<G>`].
        pub mod groups {
            use super::RouteGroup;

            /// A type that names a route group.
            pub trait Group: Send + Sync + 'static {
                const GROUP: RouteGroup;
            }

            $(
                $(#[$m])*
                #[derive(Debug, Clone, Copy)]
                pub struct $name;
                impl Group for $name {
                    const GROUP: RouteGroup = RouteGroup::$name;
                }
            )*
        }
    };
}

route_groups!(
    /// Search; public.
    Search,
    /// Public whale feed and catalog; preview below Builder.
    PublicWhales,
    /// Arbitrage history; preview below Trader.
    ArbitrageHistory,
    /// Historical order books.
    Historical,
    /// Current arbitrage.
    ArbitrageCurrent,
    /// Price spread (`/v1/arbitrage/current/difference`).
    PriceSpread,
    /// Personal whale routes (watchlist, user feed, stats).
    PersonalWhales,
    /// Webhooks: GET, DELETE, list (and the deliveries log).
    WebhooksRead,
    /// Webhooks: POST, PUT of type `whale` (and its test delivery).
    WebhooksWriteWhale,
    /// Webhooks: POST, PUT of type `arbitrage` (and its test delivery).
    WebhooksWriteArbitrage,
);

impl RouteGroup {
    /// The gating table of contracts §3.
    pub const fn access(self) -> Access {
        match self {
            RouteGroup::Search => Access::Public,
            RouteGroup::PublicWhales => Access::Preview {
                full_from: Plan::Builder,
            },
            RouteGroup::ArbitrageHistory => Access::Preview {
                full_from: Plan::Trader,
            },
            RouteGroup::Historical
            | RouteGroup::ArbitrageCurrent
            | RouteGroup::PersonalWhales
            | RouteGroup::WebhooksRead => Access::Plan(Plan::Free),
            RouteGroup::WebhooksWriteWhale => Access::Plan(Plan::Builder),
            RouteGroup::PriceSpread | RouteGroup::WebhooksWriteArbitrage => Access::Plan(Plan::Trader),
        }
    }

    /// The group of a webhook POST/PUT, by webhook type (`whale` or `arbitrage`).
    pub fn webhook_write(is_arbitrage: bool) -> RouteGroup {
        if is_arbitrage {
            RouteGroup::WebhooksWriteArbitrage
        } else {
            RouteGroup::WebhooksWriteWhale
        }
    }

    /// How the group is described in the API reference.
    pub fn label(self) -> &'static str {
        match self {
            RouteGroup::Search => "search",
            RouteGroup::PublicWhales => "public whale feed and catalog",
            RouteGroup::ArbitrageHistory => "arbitrage history",
            RouteGroup::Historical => "historical orderbooks",
            RouteGroup::ArbitrageCurrent => "arbitrage current",
            RouteGroup::PriceSpread => "price spread (/current/difference)",
            RouteGroup::PersonalWhales => "personal whale routes",
            RouteGroup::WebhooksRead => "webhooks: GET, DELETE, list",
            RouteGroup::WebhooksWriteWhale => "webhooks: POST, PUT whale",
            RouteGroup::WebhooksWriteArbitrage => "webhooks: POST, PUT arbitrage",
        }
    }
}

/// Plan markers for [`RequirePlan<P>`].
pub mod plans {
    use crossbook_core::Plan;

    /// A type that names a plan.
    pub trait PlanLevel: Send + Sync + 'static {
        const PLAN: Plan;
    }

    /// The Builder plan or higher.
    #[derive(Debug, Clone, Copy)]
    pub struct Builder;
    impl PlanLevel for Builder {
        const PLAN: Plan = Plan::Builder;
    }

    /// The Trader plan.
    #[derive(Debug, Clone, Copy)]
    pub struct Trader;
    impl PlanLevel for Trader {
        const PLAN: Plan = Plan::Trader;
    }
}

/// In-memory cache of key lookups, valid and invalid, in front of the store.
///
/// Entries live for `ttl` (config `key_cache_seconds`, default 5 s), so a revoked key stops working within
/// that time on every process, with no invalidation protocol; a key that failed is also remembered for `ttl`,
/// so floods of bad keys do not reach the database. Keys that cannot be ours (not `cbk_` + 32 base62
/// characters) never reach it either. The map is keyed by the key's SHA-256 and bounded: when full it is
/// purged of expired entries, then cleared.
pub struct KeyCache {
    ttl: Duration,
    // A std mutex: the critical sections are a map lookup or insert and never hold it across an `.await`.
    entries: Mutex<HashMap<Vec<u8>, CachedKey>>,
}

struct CachedKey {
    owner: Option<KeyOwner>,
    expires: Instant,
}

/// Most entries the cache holds before it is purged.
const KEY_CACHE_MAX: usize = 100_000;

/// Whether `key` has the shape of our keys: `cbk_` followed by 32 ASCII letters and digits.
pub fn looks_like_key(key: &str) -> bool {
    key.strip_prefix("cbk_")
        .is_some_and(|body| body.len() == 32 && body.bytes().all(|b| b.is_ascii_alphanumeric()))
}

impl KeyCache {
    pub fn new(ttl: Duration) -> Self {
        KeyCache {
            ttl,
            entries: Mutex::new(HashMap::new()),
        }
    }

    /// The owner of `key` if it is valid and unrevoked (as of at most `ttl` ago).
    pub async fn lookup(&self, store: &dyn Store, key: &str) -> StoreResult<Option<KeyOwner>> {
        if !looks_like_key(key) {
            return Ok(None);
        }
        let hash = hash_key(key);
        let now = Instant::now();
        if let Some(hit) = self.lock().get(&hash).filter(|e| e.expires > now) {
            return Ok(hit.owner.clone());
        }
        let owner = store.find_key(&hash).await?;
        if !self.ttl.is_zero() {
            let mut map = self.lock();
            if map.len() >= KEY_CACHE_MAX {
                map.retain(|_, e| e.expires > now);
                if map.len() >= KEY_CACHE_MAX {
                    map.clear();
                }
            }
            map.insert(
                hash,
                CachedKey {
                    owner: owner.clone(),
                    expires: Instant::now() + self.ttl,
                },
            );
        }
        Ok(owner)
    }

    /// Drops expired entries (called periodically).
    pub fn purge_expired(&self) {
        let now = Instant::now();
        self.lock().retain(|_, e| e.expires > now);
    }

    /// Entries currently held.
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    /// Whether the cache is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<Vec<u8>, CachedKey>> {
        // A panic while holding the lock cannot leave the map inconsistent (single insert/remove calls).
        self.entries.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// Resolves the caller from the request headers. Only a store failure is an error.
pub async fn resolve_caller(state: &AppState, headers: &HeaderMap) -> ApiResult<Caller> {
    let Some(value) = headers.get(X_API_KEY) else {
        return Ok(Caller::Anonymous);
    };
    let Ok(key) = value.to_str() else {
        return Ok(Caller::InvalidKey);
    };
    let key = key.trim();
    if key.is_empty() {
        return Ok(Caller::Anonymous);
    }
    Ok(match state.keys.lookup(state.store.as_ref(), key).await? {
        Some(owner) => Caller::Key(owner),
        None => Caller::InvalidKey,
    })
}

/// The peer address of the connection, or `0.0.0.0` when the server was not started with connect info (tests
/// that drive the router in-process). `X-Forwarded-For` is not trusted.
pub fn client_ip(parts_ext: &axum::http::Extensions) -> IpAddr {
    parts_ext
        .get::<ConnectInfo<SocketAddr>>()
        .map(|ConnectInfo(addr)| addr.ip())
        .unwrap_or(IpAddr::V4(Ipv4Addr::UNSPECIFIED))
}

/// Middleware in front of the API routes: resolves the caller once, enforces the caller's rate limit (429
/// `rate_limited` with `Retry-After`), stores the [`Caller`] for the extractors and adds `X-RateLimit-Limit`
/// and `X-RateLimit-Remaining` to the response.
pub async fn authenticate(State(state): State<AppState>, mut req: Request, next: Next) -> Response {
    let caller = match resolve_caller(&state, req.headers()).await {
        Ok(c) => c,
        Err(e) => return e.into_response(),
    };
    let ip = client_ip(req.extensions());
    let decision = state.limits.check(&caller, ip);
    if let Decision::Limited {
        limit_per_minute,
        retry_after_secs,
    } = decision
    {
        let mut resp = ApiError::RateLimited {
            retry_after_secs,
            limit_per_minute,
        }
        .into_response();
        resp.extensions_mut().insert(RateCharged);
        return resp;
    }
    req.extensions_mut().insert(caller);
    let mut resp = next.run(req).await;
    decision.apply(resp.headers_mut());
    resp.extensions_mut().insert(RateCharged);
    resp
}

/// Marks a response whose request [`authenticate`] has already charged to its caller's bucket.
#[derive(Debug, Clone, Copy)]
struct RateCharged;

/// Middleware of the whole app ([`crate::api::with_common_layers`]): the answers no rate-limited route made,
/// the 404 of an unknown path and the 405 of a known path asked with another method (service paths included),
/// are charged to the caller's bucket as well, and over the limit answered 429 instead. Otherwise anyone could
/// send such requests as fast as the server answers them. Only these two statuses: the service routes' own
/// answers (`/healthz` for load balancers, say) stay unlimited.
pub async fn limit_unrouted(State(state): State<AppState>, req: Request, next: Next) -> Response {
    // Just the key header, kept for after the answer: most requests never need it.
    let mut key = HeaderMap::new();
    if let Some(v) = req.headers().get(X_API_KEY) {
        key.insert(X_API_KEY, v.clone());
    }
    let ip = client_ip(req.extensions());
    let resp = next.run(req).await;
    let unrouted = matches!(resp.status(), StatusCode::NOT_FOUND | StatusCode::METHOD_NOT_ALLOWED);
    if !unrouted || resp.extensions().get::<RateCharged>().is_some() {
        return resp;
    }
    let caller = match resolve_caller(&state, &key).await {
        Ok(c) => c,
        Err(e) => return e.into_response(),
    };
    match state.limits.check(&caller, ip) {
        Decision::Limited {
            limit_per_minute,
            retry_after_secs,
        } => ApiError::RateLimited {
            retry_after_secs,
            limit_per_minute,
        }
        .into_response(),
        decision => {
            let mut resp = resp;
            decision.apply(resp.headers_mut());
            resp
        }
    }
}

/// The caller of this request: left by [`authenticate`], or resolved now (routers without the middleware).
async fn caller_of(parts: &mut Parts, state: &AppState) -> ApiResult<Caller> {
    if let Some(c) = parts.extensions.get::<Caller>() {
        return Ok(c.clone());
    }
    let caller = resolve_caller(state, &parts.headers).await?;
    parts.extensions.insert(caller.clone());
    Ok(caller)
}

/// Admits the caller to route group `G` per the gating table, or rejects with 401/403. For preview groups,
/// [`Gate::view`] says whether the caller gets the full or the preview view.
#[derive(Debug, Clone)]
pub struct Gate<G> {
    pub caller: Caller,
    pub view: View,
    _group: PhantomData<G>,
}

impl<G> Gate<G> {
    /// The key's owner, when the caller has a valid key.
    pub fn owner(&self) -> Option<&KeyOwner> {
        self.caller.owner()
    }
}

impl<G: groups::Group> FromRequestParts<AppState> for Gate<G> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, ApiError> {
        let caller = caller_of(parts, state).await?;
        let view = caller.authorize(G::GROUP)?;
        Ok(Gate {
            caller,
            view,
            _group: PhantomData,
        })
    }
}

/// The key's owner if the request carries a valid key; an invalid or revoked key counts as none.
#[derive(Debug, Clone)]
pub struct OptionalKey(pub Option<KeyOwner>);

impl FromRequestParts<AppState> for OptionalKey {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, ApiError> {
        Ok(OptionalKey(caller_of(parts, state).await?.owner().cloned()))
    }
}

/// The caller, whoever it is: for routes that admit anonymous callers but refuse an invalid key (the stream,
/// whose key may also come later in a message).
#[derive(Debug, Clone)]
pub struct AnyCaller(pub Caller);

impl FromRequestParts<AppState> for AnyCaller {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, ApiError> {
        caller_of(parts, state).await.map(AnyCaller)
    }
}

/// A valid key on any plan, else 401 `unauthorized`.
#[derive(Debug, Clone)]
pub struct RequireKey(pub KeyOwner);

impl FromRequestParts<AppState> for RequireKey {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, ApiError> {
        let caller = caller_of(parts, state).await?;
        caller.require_plan(Plan::Free).cloned().map(RequireKey)
    }
}

/// A valid key on plan `P` or higher, else 401 `unauthorized` or 403 `entitlement_required`.
#[derive(Debug, Clone)]
pub struct RequirePlan<P> {
    pub owner: KeyOwner,
    plan: PhantomData<P>,
}

impl<P: plans::PlanLevel> FromRequestParts<AppState> for RequirePlan<P> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, ApiError> {
        let caller = caller_of(parts, state).await?;
        caller.require_plan(P::PLAN).cloned().map(|owner| RequirePlan {
            owner,
            plan: PhantomData,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(plan: Plan) -> Caller {
        Caller::Key(KeyOwner {
            key_id: 1,
            customer_id: 1,
            plan,
        })
    }

    /// Outcome of one cell of the table: full access, preview, 401 or 403.
    #[derive(Debug, PartialEq)]
    enum Cell {
        Yes,
        Preview,
        E401,
        E403,
    }
    use Cell::*;

    fn cell(caller: &Caller, group: RouteGroup) -> Cell {
        match caller.authorize(group) {
            Ok(View::Full) => Yes,
            Ok(View::Preview) => Preview,
            Err(e) if e.status().as_u16() == 401 => E401,
            Err(e) if e.status().as_u16() == 403 => E403,
            Err(e) => panic!("unexpected {e:?}"),
        }
    }

    /// contracts §3, copied literally: no key, invalid key, free, builder, trader.
    #[test]
    fn gating_table_matches_contracts() {
        let table: [(RouteGroup, [Cell; 5]); 10] = [
            (RouteGroup::Search, [Yes, Yes, Yes, Yes, Yes]),
            (RouteGroup::PublicWhales, [Preview, Preview, Preview, Yes, Yes]),
            (RouteGroup::ArbitrageHistory, [Preview, Preview, Preview, Preview, Yes]),
            (RouteGroup::Historical, [E401, E401, Yes, Yes, Yes]),
            (RouteGroup::ArbitrageCurrent, [E401, E401, Yes, Yes, Yes]),
            (RouteGroup::PriceSpread, [E401, E401, E403, E403, Yes]),
            (RouteGroup::PersonalWhales, [E401, E401, Yes, Yes, Yes]),
            (RouteGroup::WebhooksRead, [E401, E401, Yes, Yes, Yes]),
            (RouteGroup::WebhooksWriteWhale, [E401, E401, E403, Yes, Yes]),
            (RouteGroup::WebhooksWriteArbitrage, [E401, E401, E403, E403, Yes]),
        ];
        let callers = [
            Caller::Anonymous,
            Caller::InvalidKey,
            key(Plan::Free),
            key(Plan::Builder),
            key(Plan::Trader),
        ];
        assert_eq!(table.len(), RouteGroup::ALL.len());
        for (group, row) in table {
            for (caller, want) in callers.iter().zip(row) {
                assert_eq!(cell(caller, group), want, "{group:?} for {caller:?}");
            }
        }
    }

    #[test]
    fn forbidden_names_the_plan() {
        let e = key(Plan::Builder).authorize(RouteGroup::PriceSpread).unwrap_err();
        assert_eq!(e.body().detail, "this route requires the Trader plan");
        let e = key(Plan::Free).authorize(RouteGroup::webhook_write(false)).unwrap_err();
        assert_eq!(e.body().detail, "this route requires the Builder plan");
    }

    #[test]
    fn key_shape() {
        assert!(looks_like_key("cbk_0123456789abcdefghijABCDEFGHIJkl"));
        for bad in [
            "",
            "cbk_",
            "cbk_short",
            "xbk_0123456789abcdefghijABCDEFGHIJkl",
            "cbk_0123456789abcdefghijABCDEFGHIJk!",
        ] {
            assert!(!looks_like_key(bad), "{bad}");
        }
    }
}
