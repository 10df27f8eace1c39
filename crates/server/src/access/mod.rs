//! Who may call what, and how often (contracts §3).
//!
//! - [`plans`]: every entitlement of every plan in one table: route-group gates and preview unlocks, the
//!   replay window, reads at once, and the configured request rates and stream limits.
//! - [`route_groups`]: the route groups ([`RouteGroup`]) and their marker types ([`groups`]).
//! - [`caller`]: who is calling ([`Caller`]) and what the gating table gives it ([`View`], 401, 403).
//! - [`keys`]: `X-API-Key` resolved to its owner and plan through the [`KeyCache`].
//! - [`rate_limit`]: token buckets per key or per client address ([`RateLimits`], keyed by a plain
//!   [`RateKey`]).
//! - [`gate`]: the middleware in front of the API routes ([`authenticate`]) and the extractors that state in a
//!   handler's signature what the route needs: [`Gate<G>`] for a route group (the normal way), and the
//!   building blocks [`OptionalKey`], [`AnyCaller`], [`RequireKey`] and [`RequirePlan<P>`].
//!
//! Imports run one way: `gate` → `caller`, `keys`, `rate_limit` → `plans` → `route_groups`. None of them knows
//! the application state; the state hands the gate its [`Gatekeeper`].
//!
//! # Adding a route group's routes
//!
//! Take `Gate<groups::Historical>` (or the group's marker) in the handler. The gate answers 401/403 itself and
//! tells preview groups whether the caller gets the full or the preview view ([`View`]). Webhook POST/PUT,
//! whose group depends on the `{type}` path segment, call [`Caller::authorize`] with
//! [`RouteGroup::webhook_write`] after parsing the type. A new group is a line in [`route_groups`] and a row
//! of [`RouteGroup::access`] in [`plans`].

pub mod caller;
pub mod gate;
pub mod keys;
pub mod plans;
pub mod rate_limit;
pub mod route_groups;

pub use caller::{Caller, View, X_API_KEY, client_ip};
pub use gate::{
    AnyCaller, Gate, Gatekeeper, OptionalKey, RequireKey, RequirePlan, authenticate, limit_unrouted, resolve_caller,
};
pub use keys::{KeyCache, looks_like_key};
pub use plans::{Access, PlanTable};
pub use rate_limit::{Decision, RateKey, RateLimits};
pub use route_groups::{RouteGroup, groups};
