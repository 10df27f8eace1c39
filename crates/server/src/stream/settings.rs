//! The stream's settings, built from the configuration's `stream_*` keys (whose defaults live in the
//! configuration alone). What each plan may hold open comes from the plans table
//! ([`crate::access::plans`]).

use std::time::Duration;

use crossbook_core::Plan;

pub use crate::access::plans::PlanLimits;
use crate::{access::PlanTable, config::Config};

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
    /// Streams without a key open at once from one client address (0: no limit).
    pub anonymous_per_address: usize,
    /// Open streams, markets and sessions per plan.
    plans: PlanTable,
}

impl StreamSettings {
    /// The settings as configured (`stream_*`), the plans' limits through the plans table.
    pub fn from_config(c: &Config) -> Self {
        let plans = PlanTable::from_config(c);
        StreamSettings {
            queue: c.stream_queue,
            buffer: c.stream_buffer,
            resume: Duration::from_secs(c.stream_resume_seconds),
            ping: Duration::from_secs(c.stream_ping_seconds),
            anonymous_per_address: plans.anonymous_streams_per_address,
            plans,
        }
    }

    /// Open streams and markets per stream `plan` allows.
    pub fn limits(&self, plan: Plan) -> PlanLimits {
        self.plans.of(plan).stream
    }

    /// Sessions one customer of `plan` may hold, attached or detached; `None` when unbounded (no connection
    /// limit on the plan, or no multiple set).
    pub fn sessions_bound(&self, plan: Plan) -> Option<usize> {
        self.plans.sessions_bound(plan)
    }
}
