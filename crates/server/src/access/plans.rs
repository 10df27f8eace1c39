//! What each plan may do, in one table (contracts §3 and the configuration's `rate_limit_*` and `stream_*`
//! keys). Every entitlement is written here once:
//!
//! - the route-group gates and the plan that unlocks a preview group ([`RouteGroup::access`]); the arbitrage
//!   history's view follows its group's gate;
//! - how much a preview shows of the whale pool ([`PlanTable::whale_preview_events`]);
//! - the replay and export window ([`replay_window_ms`]) and the reads one customer may run at once
//!   ([`concurrent_reads`]);
//! - the plan each live-stream channel needs: that of the REST routes of the same data ([`Access::full_plan`]);
//! - the limits the configuration sets per plan: requests per minute, open streams, markets per stream and
//!   sessions per stream ([`PlanTable`]).
//!
//! A rule that depends on the plan belongs here; code elsewhere asks this table rather than matching on
//! [`Plan`] itself.

use crossbook_core::Plan;

use super::route_groups::RouteGroup;
use crate::config::Config;

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

impl RouteGroup {
    /// The gating table of contracts §3. The plan that lifts a preview group to its full view is its
    /// `full_from`: the whole whale pool from Builder, the unmasked arbitrage history from Trader.
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
            RouteGroup::PriceSpread | RouteGroup::WebhooksWriteArbitrage | RouteGroup::Backtests => {
                Access::Plan(Plan::Trader)
            }
        }
    }
}

impl Access {
    /// The lowest plan that gets the full view: `Free` for a public group (any key will do where a key is
    /// asked for the same data), `full_from` for a preview group.
    pub const fn full_plan(self) -> Plan {
        match self {
            Access::Public => Plan::Free,
            Access::Preview { full_from } => full_from,
            Access::Plan(plan) => plan,
        }
    }
}

/// An hour in milliseconds, the unit of the replay window.
pub const HOUR_MS: i64 = 3_600_000;

/// The longest range one replay or export may cover, by plan.
pub const fn replay_window_ms(plan: Plan) -> i64 {
    match plan {
        Plan::Free => 24 * HOUR_MS,
        Plan::Builder => 7 * 24 * HOUR_MS,
        Plan::Trader => 31 * 24 * HOUR_MS,
    }
}

/// Replays and exports one customer may have running at once. Each holds a reader of the log and a
/// connection for as long as its client reads, so without a bound one key that opens many and reads none
/// holds the server's memory and connections from everyone else.
pub const fn concurrent_reads(plan: Plan) -> usize {
    match plan {
        Plan::Free => 2,
        Plan::Builder => 4,
        Plan::Trader => 8,
    }
}

/// Backtests one customer may have running at once. Each replays a range of the whole log on a core of its
/// own while it runs, so a bound keeps one customer from taking every core of the server.
pub const fn concurrent_backtests(plan: Plan) -> u64 {
    match plan {
        Plan::Free | Plan::Builder => 0,
        Plan::Trader => 2,
    }
}

/// The longest range one backtest may cover, by plan: as long as a replay's.
pub const fn backtest_window_ms(plan: Plan) -> i64 {
    replay_window_ms(plan)
}

/// Connections and markets one plan may hold on the live stream; 0 means no limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PlanLimits {
    /// Open streams per customer.
    pub connections: usize,
    /// Distinct markets one stream may follow, over all its channels.
    pub markets: usize,
}

/// What the configuration sets for one plan; 0 means no limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Allowance {
    /// Requests per minute, per key (`rate_limit_<plan>`).
    pub rate_per_minute: u32,
    /// Open streams and markets per stream (`stream_connections_<plan>`, `stream_markets_<plan>`).
    pub stream: PlanLimits,
}

/// The configurable part of the table: the defaults live in the configuration alone (`rate_limit_*`,
/// `stream_connections_*`, `stream_markets_*`, `stream_anonymous_per_address`,
/// `stream_sessions_per_connection`, `whale_preview_events`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlanTable {
    /// Free, Builder, Trader.
    plans: [Allowance; 3],
    /// Requests per minute per client address for callers without a valid key (0: no limit).
    pub anonymous_rate_per_minute: u32,
    /// Streams without a key open at once from one client address (0: no limit).
    pub anonymous_streams_per_address: usize,
    /// Sessions (attached or kept for resumption) one customer may hold, per open stream its plan allows
    /// (0: no bound). Past the bound the customer's oldest detached session is dropped.
    pub sessions_per_connection: usize,
    /// Events of the day's whale pool a preview caller sees unlocked.
    pub whale_preview_events: usize,
}

impl PlanTable {
    /// The table as configured.
    pub fn from_config(c: &Config) -> Self {
        let plan = |rate_per_minute, connections, markets| Allowance {
            rate_per_minute,
            stream: PlanLimits { connections, markets },
        };
        PlanTable {
            plans: [
                plan(c.rate_limit_free, c.stream_connections_free, c.stream_markets_free),
                plan(
                    c.rate_limit_builder,
                    c.stream_connections_builder,
                    c.stream_markets_builder,
                ),
                plan(
                    c.rate_limit_trader,
                    c.stream_connections_trader,
                    c.stream_markets_trader,
                ),
            ],
            anonymous_rate_per_minute: c.rate_limit_anonymous,
            anonymous_streams_per_address: c.stream_anonymous_per_address,
            sessions_per_connection: c.stream_sessions_per_connection,
            whale_preview_events: c.whale_preview_events as usize,
        }
    }

    /// What `plan` may do.
    pub fn of(&self, plan: Plan) -> &Allowance {
        &self.plans[plan as usize]
    }

    /// Sessions one customer of `plan` may hold, attached or detached; `None` when unbounded (no connection
    /// limit on the plan, or no multiple set).
    pub fn sessions_bound(&self, plan: Plan) -> Option<usize> {
        let connections = self.of(plan).stream.connections;
        (connections > 0 && self.sessions_per_connection > 0)
            .then(|| connections.saturating_mul(self.sessions_per_connection))
    }
}

/// Plan markers for [`RequirePlan<P>`](super::RequirePlan).
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

#[cfg(test)]
mod tests {
    use crossbook_store::KeyOwner;

    use super::*;
    use crate::access::{Caller, View};

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
        let table: [(RouteGroup, [Cell; 5]); 11] = [
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
            (RouteGroup::Backtests, [E401, E401, E403, E403, Yes]),
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
    fn configured_limits_per_plan() {
        let c = Config {
            rate_limit_anonymous: 7,
            rate_limit_builder: 9,
            stream_connections_builder: 3,
            stream_markets_trader: 11,
            stream_sessions_per_connection: 2,
            ..Config::default()
        };
        let t = PlanTable::from_config(&c);
        assert_eq!(t.anonymous_rate_per_minute, 7);
        assert_eq!(t.of(Plan::Builder).rate_per_minute, 9);
        assert_eq!(t.of(Plan::Builder).stream.connections, 3);
        assert_eq!(t.of(Plan::Trader).stream.markets, 11);
        assert_eq!(t.sessions_bound(Plan::Builder), Some(6));
        let unbounded = PlanTable::from_config(&Config {
            stream_connections_free: 0,
            ..c
        });
        assert_eq!(unbounded.sessions_bound(Plan::Free), None);
    }
}
