//! Rate limits by plan (contracts §3): a token bucket per key for authenticated callers, per client IP for
//! anonymous callers and callers with an invalid key. A request is charged to a [`RateKey`], a plain key
//! the gate derives from its caller, so limiting knows nothing of how callers are resolved.
//!
//! Each tier is one keyed governor limiter with quota `N per minute` (a burst of `N`, refilled at `N/60` per
//! second); `N = 0` turns the tier off. The keyed stores grow with the number of keys and IPs seen, so
//! [`RateLimits::retain_recent`] runs on a timer (see [`crate::serve`]).

use std::{hash::Hash, net::IpAddr, num::NonZeroU32};

use axum::http::{HeaderMap, HeaderValue};
use crossbook_core::Plan;
use governor::{
    Quota, RateLimiter,
    clock::{Clock, DefaultClock},
    middleware::StateInformationMiddleware,
    state::keyed::DefaultKeyedStateStore,
};

use super::plans::PlanTable;
use crate::error::{X_RATELIMIT_LIMIT, X_RATELIMIT_REMAINING};

/// The bucket a request is charged to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RateKey {
    /// A valid key: its own bucket, at its plan's rate.
    Key { key_id: i64, plan: Plan },
    /// No valid key: the client address's bucket, at the anonymous rate.
    Address(IpAddr),
}

type KeyedLimiter<K> = RateLimiter<K, DefaultKeyedStateStore<K>, DefaultClock, StateInformationMiddleware>;

/// One tier's limiter and its per-minute rate.
struct Tier<K: Hash + Eq + Clone> {
    per_minute: u32,
    limiter: KeyedLimiter<K>,
}

impl<K: Hash + Eq + Clone> Tier<K> {
    fn new(per_minute: u32) -> Option<Self> {
        let n = NonZeroU32::new(per_minute)?;
        let limiter = RateLimiter::keyed(Quota::per_minute(n)).with_middleware::<StateInformationMiddleware>();
        Some(Tier { per_minute, limiter })
    }

    fn check(&self, key: &K) -> Decision {
        match self.limiter.check_key(key) {
            Ok(state) => Decision::Allowed {
                limit_per_minute: self.per_minute,
                remaining: state.remaining_burst_capacity(),
            },
            Err(not_until) => {
                let wait = not_until.wait_time_from(self.limiter.clock().now());
                // Whole seconds, rounded up: retrying after `Retry-After` must succeed.
                let secs = wait.as_secs() + u64::from(wait.subsec_nanos() > 0);
                Decision::Limited {
                    limit_per_minute: self.per_minute,
                    retry_after_secs: secs.max(1),
                }
            }
        }
    }

    fn retain_recent(&self) {
        self.limiter.retain_recent();
        self.limiter.shrink_to_fit();
    }
}

/// The outcome of one request against its caller's bucket.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    /// The caller's tier has no limit.
    Unlimited,
    /// Admitted; `remaining` requests are left in the bucket.
    Allowed { limit_per_minute: u32, remaining: u32 },
    /// Refused; retry after this many seconds.
    Limited {
        limit_per_minute: u32,
        retry_after_secs: u64,
    },
}

impl Decision {
    /// Adds `X-RateLimit-Limit` and `X-RateLimit-Remaining` (nothing when unlimited).
    pub fn apply(&self, headers: &mut HeaderMap) {
        let (limit, remaining) = match *self {
            Decision::Unlimited => return,
            Decision::Allowed {
                limit_per_minute,
                remaining,
            } => (limit_per_minute, remaining),
            Decision::Limited { limit_per_minute, .. } => (limit_per_minute, 0),
        };
        headers.insert(X_RATELIMIT_LIMIT, HeaderValue::from(limit));
        headers.insert(X_RATELIMIT_REMAINING, HeaderValue::from(remaining));
    }
}

/// The limiters of every tier.
pub struct RateLimits {
    anonymous: Option<Tier<IpAddr>>,
    free: Option<Tier<i64>>,
    builder: Option<Tier<i64>>,
    trader: Option<Tier<i64>>,
}

impl RateLimits {
    /// Requests per minute for each tier; 0 turns a tier off.
    pub fn new(anonymous: u32, free: u32, builder: u32, trader: u32) -> Self {
        RateLimits {
            anonymous: Tier::new(anonymous),
            free: Tier::new(free),
            builder: Tier::new(builder),
            trader: Tier::new(trader),
        }
    }

    /// The rates of the plans table (`rate_limit_*`).
    pub fn from_plans(plans: &PlanTable) -> Self {
        Self::new(
            plans.anonymous_rate_per_minute,
            plans.of(Plan::Free).rate_per_minute,
            plans.of(Plan::Builder).rate_per_minute,
            plans.of(Plan::Trader).rate_per_minute,
        )
    }

    /// Takes one token from `key`'s bucket.
    pub fn check(&self, key: RateKey) -> Decision {
        let outcome = match key {
            RateKey::Key { key_id, plan } => {
                let tier = match plan {
                    Plan::Free => &self.free,
                    Plan::Builder => &self.builder,
                    Plan::Trader => &self.trader,
                };
                tier.as_ref().map(|t| t.check(&key_id))
            }
            RateKey::Address(ip) => self.anonymous.as_ref().map(|t| t.check(&ip)),
        };
        outcome.unwrap_or(Decision::Unlimited)
    }

    /// Forgets buckets that are full again, and releases their memory.
    pub fn retain_recent(&self) {
        if let Some(t) = &self.anonymous {
            t.retain_recent();
        }
        for t in [&self.free, &self.builder, &self.trader].into_iter().flatten() {
            t.retain_recent();
        }
    }
}

#[cfg(test)]
mod tests {
    use std::net::Ipv4Addr;

    use super::*;

    fn key(key_id: i64, plan: Plan) -> RateKey {
        RateKey::Key { key_id, plan }
    }

    #[test]
    fn buckets_are_per_key_and_per_ip() {
        let limits = RateLimits::new(2, 1, 0, 5);
        let ip1 = IpAddr::V4(Ipv4Addr::new(10, 0, 0, 1));
        let ip2 = IpAddr::V4(Ipv4Addr::new(10, 0, 0, 2));
        assert_eq!(
            limits.check(RateKey::Address(ip1)),
            Decision::Allowed {
                limit_per_minute: 2,
                remaining: 1
            }
        );
        // Every caller without a valid key shares the bucket of its address.
        assert_eq!(
            limits.check(RateKey::Address(ip1)),
            Decision::Allowed {
                limit_per_minute: 2,
                remaining: 0
            }
        );
        assert!(matches!(
            limits.check(RateKey::Address(ip1)),
            Decision::Limited {
                limit_per_minute: 2,
                retry_after_secs: 30..
            }
        ));
        assert!(matches!(limits.check(RateKey::Address(ip2)), Decision::Allowed { .. }));
        // A free key is limited on its own bucket, apart from every address.
        assert!(matches!(
            limits.check(key(1, Plan::Free)),
            Decision::Allowed { remaining: 0, .. }
        ));
        assert!(matches!(
            limits.check(key(1, Plan::Free)),
            Decision::Limited {
                retry_after_secs: 60,
                ..
            }
        ));
        assert!(matches!(limits.check(key(2, Plan::Free)), Decision::Allowed { .. }));
        // Builder is off.
        for _ in 0..10 {
            assert_eq!(limits.check(key(3, Plan::Builder)), Decision::Unlimited);
        }
        limits.retain_recent();
    }

    #[test]
    fn headers() {
        let mut h = HeaderMap::new();
        Decision::Allowed {
            limit_per_minute: 60,
            remaining: 59,
        }
        .apply(&mut h);
        assert_eq!(h[&X_RATELIMIT_LIMIT], "60");
        assert_eq!(h[&X_RATELIMIT_REMAINING], "59");
        let mut h = HeaderMap::new();
        Decision::Unlimited.apply(&mut h);
        assert!(h.is_empty());
    }
}
