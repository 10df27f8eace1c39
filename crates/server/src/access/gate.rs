//! The key gate: the middleware that resolves and rate-limits each caller ([`authenticate`],
//! [`limit_unrouted`]) and the extractors that admit it to a route ([`Gate<G>`] and its building blocks).
//!
//! Both need only a [`Gatekeeper`] (the store, the key cache and the rate limits), taken from the
//! application state through [`FromRef`], so this module does not know the state.

use std::{marker::PhantomData, sync::Arc};

use axum::{
    extract::{FromRef, FromRequestParts, Request, State},
    http::{HeaderMap, StatusCode, request::Parts},
    middleware::Next,
    response::{IntoResponse, Response},
};
use crossbook_store::{KeyOwner, Store};

use super::{
    caller::{Caller, View, X_API_KEY, client_ip},
    keys::KeyCache,
    plans::PlanLevel,
    rate_limit::{Decision, RateLimits},
    route_groups::groups,
};
use crate::error::{ApiError, ApiResult};

/// What the gate needs of the application: where keys are looked up and the rate limits. Cheap to clone.
#[derive(Clone)]
pub struct Gatekeeper {
    pub store: Arc<dyn Store>,
    pub keys: Arc<KeyCache>,
    pub limits: Arc<RateLimits>,
}

/// Resolves the caller from the request headers. Only a store failure is an error.
pub async fn resolve_caller(gk: &Gatekeeper, headers: &HeaderMap) -> ApiResult<Caller> {
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
    Ok(match gk.keys.lookup(gk.store.as_ref(), key).await? {
        Some(owner) => Caller::Key(owner),
        None => Caller::InvalidKey,
    })
}

/// Middleware in front of the API routes: resolves the caller once, enforces the caller's rate limit (429
/// `rate_limited` with `Retry-After`), stores the [`Caller`] for the extractors and adds `X-RateLimit-Limit`
/// and `X-RateLimit-Remaining` to the response.
pub async fn authenticate(State(gk): State<Gatekeeper>, mut req: Request, next: Next) -> Response {
    let caller = match resolve_caller(&gk, req.headers()).await {
        Ok(c) => c,
        Err(e) => return e.into_response(),
    };
    let ip = client_ip(req.extensions());
    let decision = gk.limits.check(caller.rate_key(ip));
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
pub async fn limit_unrouted(State(gk): State<Gatekeeper>, req: Request, next: Next) -> Response {
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
    let caller = match resolve_caller(&gk, &key).await {
        Ok(c) => c,
        Err(e) => return e.into_response(),
    };
    match gk.limits.check(caller.rate_key(ip)) {
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
async fn caller_of<S: Send + Sync>(parts: &mut Parts, state: &S) -> ApiResult<Caller>
where
    Gatekeeper: FromRef<S>,
{
    if let Some(c) = parts.extensions.get::<Caller>() {
        return Ok(c.clone());
    }
    let caller = resolve_caller(&Gatekeeper::from_ref(state), &parts.headers).await?;
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

impl<G: groups::Group, S: Send + Sync> FromRequestParts<S> for Gate<G>
where
    Gatekeeper: FromRef<S>,
{
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
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

impl<S: Send + Sync> FromRequestParts<S> for OptionalKey
where
    Gatekeeper: FromRef<S>,
{
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        Ok(OptionalKey(caller_of(parts, state).await?.owner().cloned()))
    }
}

/// The caller, whoever it is: for routes that admit anonymous callers but refuse an invalid key (the stream,
/// whose key may also come later in a message).
#[derive(Debug, Clone)]
pub struct AnyCaller(pub Caller);

impl<S: Send + Sync> FromRequestParts<S> for AnyCaller
where
    Gatekeeper: FromRef<S>,
{
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        caller_of(parts, state).await.map(AnyCaller)
    }
}

/// A valid key on any plan, else 401 `unauthorized`.
#[derive(Debug, Clone)]
pub struct RequireKey(pub KeyOwner);

impl<S: Send + Sync> FromRequestParts<S> for RequireKey
where
    Gatekeeper: FromRef<S>,
{
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        let caller = caller_of(parts, state).await?;
        caller.require_plan(crossbook_core::Plan::Free).cloned().map(RequireKey)
    }
}

/// A valid key on plan `P` or higher, else 401 `unauthorized` or 403 `entitlement_required`.
#[derive(Debug, Clone)]
pub struct RequirePlan<P> {
    pub owner: KeyOwner,
    plan: PhantomData<P>,
}

impl<P: PlanLevel, S: Send + Sync> FromRequestParts<S> for RequirePlan<P>
where
    Gatekeeper: FromRef<S>,
{
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        let caller = caller_of(parts, state).await?;
        caller.require_plan(P::PLAN).cloned().map(|owner| RequirePlan {
            owner,
            plan: PhantomData,
        })
    }
}
