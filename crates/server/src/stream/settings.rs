//! The stream's settings, built from the configuration's `stream_*` keys (whose defaults live in the
//! configuration alone).

use std::time::Duration;

use crossbook_core::Plan;

use crate::config::Config;

/// Connections and markets one plan may hold; 0 means no limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PlanLimits {
    /// Open streams per customer.
    pub connections: usize,
    /// Distinct markets one stream may follow, over all its channels.
    pub markets: usize,
}

/// The stream's settings (configuration `stream_*`).
#[derive(Debug, Clone)]
pub struct StreamSettings {
    /// Messages a connection may have waiting before it is cut as too slow.
    pub queue: usize,
    /// Messages a session keeps for a resume.
    pub buffer: usize,
    /// How long a session waits for its client to come back.
    pub resume: Duration,
    /// How often the server pings (and how long a client may stay silent: three times this).
    pub ping: Duration,
    /// Free, Builder, Trader.
    pub limits: [PlanLimits; 3],
    /// Streams without a key open at once from one client address (0: no limit).
    pub anonymous_per_address: usize,
    /// Sessions (attached or kept for resumption) one customer may hold, per open stream its plan allows
    /// (0: no bound). Past the bound the customer's oldest detached session is dropped.
    pub sessions_per_connection: usize,
}

impl StreamSettings {
    /// The settings as configured (`stream_*`).
    pub fn from_config(c: &Config) -> Self {
        let limits = |connections, markets| PlanLimits { connections, markets };
        StreamSettings {
            queue: c.stream_queue,
            buffer: c.stream_buffer,
            resume: Duration::from_secs(c.stream_resume_seconds),
            ping: Duration::from_secs(c.stream_ping_seconds),
            limits: [
                limits(c.stream_connections_free, c.stream_markets_free),
                limits(c.stream_connections_builder, c.stream_markets_builder),
                limits(c.stream_connections_trader, c.stream_markets_trader),
            ],
            anonymous_per_address: c.stream_anonymous_per_address,
            sessions_per_connection: c.stream_sessions_per_connection,
        }
    }

    pub fn limits(&self, plan: Plan) -> PlanLimits {
        self.limits[plan as usize]
    }

    /// Sessions one customer of `plan` may hold, attached or detached; `None` when unbounded (no connection
    /// limit on the plan, or no multiple set).
    pub fn sessions_bound(&self, plan: Plan) -> Option<usize> {
        let connections = self.limits(plan).connections;
        (connections > 0 && self.sessions_per_connection > 0)
            .then(|| connections.saturating_mul(self.sessions_per_connection))
    }
}
