//! Who is calling ([`Caller`]) and what the gating table gives it ([`Caller::authorize`]).

use std::net::{IpAddr, Ipv4Addr, SocketAddr};

use axum::{extract::ConnectInfo, http::HeaderName};
use crossbook_core::Plan;
use crossbook_store::KeyOwner;

use super::{plans::Access, rate_limit::RateKey, route_groups::RouteGroup};
use crate::error::{ApiError, ApiResult};

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

/// What a caller may see of a preview route group.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum View {
    Full,
    Preview,
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

    /// The bucket this caller's requests are charged to: the key's for a valid key, the client address's
    /// otherwise (an invalid key counts as none).
    pub fn rate_key(&self, ip: IpAddr) -> RateKey {
        match self {
            Caller::Key(owner) => RateKey::Key {
                key_id: owner.key_id,
                plan: owner.plan,
            },
            Caller::Anonymous | Caller::InvalidKey => RateKey::Address(ip),
        }
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

/// The peer address of the connection, or `0.0.0.0` when the server was not started with connect info (tests
/// that drive the router in-process). `X-Forwarded-For` is not trusted.
pub fn client_ip(parts_ext: &axum::http::Extensions) -> IpAddr {
    parts_ext
        .get::<ConnectInfo<SocketAddr>>()
        .map(|ConnectInfo(addr)| addr.ip())
        .unwrap_or(IpAddr::V4(Ipv4Addr::UNSPECIFIED))
}
