//! Jittered exponential backoff, shared by WebSocket reconnects and REST retries.
//!
//! The base delay doubles per failed attempt up to a cap; the actual delay is drawn uniformly from the
//! upper half of the base (`[base/2, base]`, "equal jitter"), so that a fleet of clients knocked off at the
//! same moment does not reconnect in lock step, while every client still waits at least half the
//! schedule. A success resets the schedule, so one bad minute last week does not make today's first
//! reconnect wait the maximum.

use std::time::Duration;

use rand::{Rng, SeedableRng, rngs::SmallRng};

/// The schedule's parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BackoffPolicy {
    /// Base delay after the first failure.
    pub initial: Duration,
    /// Cap of the base delay.
    pub max: Duration,
}

impl BackoffPolicy {
    /// Reconnects: 0.5 s, 1 s, 2 s … up to 30 s.
    pub const RECONNECT: BackoffPolicy = BackoffPolicy {
        initial: Duration::from_millis(500),
        max: Duration::from_secs(30),
    };
    /// REST retries: 250 ms, 500 ms … up to 8 s.
    pub const REST: BackoffPolicy = BackoffPolicy {
        initial: Duration::from_millis(250),
        max: Duration::from_secs(8),
    };

    /// The un-jittered delay before attempt `failures + 1` (after `failures` consecutive failures, ≥ 1).
    pub fn base(&self, failures: u32) -> Duration {
        let shift = failures.saturating_sub(1).min(20);
        self.initial.saturating_mul(1u32 << shift).min(self.max)
    }
}

/// A running schedule: call [`Backoff::next_delay`] after each failure and [`Backoff::reset`] after a
/// success.
#[derive(Debug, Clone)]
pub struct Backoff {
    policy: BackoffPolicy,
    failures: u32,
    rng: SmallRng,
}

impl Backoff {
    pub fn new(policy: BackoffPolicy) -> Self {
        Backoff {
            policy,
            failures: 0,
            rng: SmallRng::from_rng(&mut rand::rng()),
        }
    }

    /// A schedule with a fixed random seed (tests).
    pub fn with_seed(policy: BackoffPolicy, seed: u64) -> Self {
        Backoff {
            policy,
            failures: 0,
            rng: SmallRng::seed_from_u64(seed),
        }
    }

    /// Records a failure and returns how long to wait before the next attempt.
    pub fn next_delay(&mut self) -> Duration {
        self.failures = self.failures.saturating_add(1);
        let base = self.policy.base(self.failures);
        let half = base / 2;
        let jitter_ms = self.rng.random_range(0..=half.as_millis() as u64);
        half + Duration::from_millis(jitter_ms)
    }

    /// Consecutive failures so far (the attempt number in logs).
    pub fn failures(&self) -> u32 {
        self.failures
    }

    /// Back to the first step after a success.
    pub fn reset(&mut self) {
        self.failures = 0;
    }
}

#[cfg(test)]
mod tests {
    use std::sync::{
        Arc,
        atomic::{AtomicU32, Ordering},
    };

    use tokio::time::Instant;

    use super::*;

    const POLICY: BackoffPolicy = BackoffPolicy {
        initial: Duration::from_millis(100),
        max: Duration::from_millis(1600),
    };

    #[test]
    fn base_doubles_to_the_cap() {
        let bases: Vec<u64> = (1..=7).map(|n| POLICY.base(n).as_millis() as u64).collect();
        assert_eq!(bases, vec![100, 200, 400, 800, 1600, 1600, 1600]);
        assert_eq!(POLICY.base(u32::MAX), POLICY.max);
    }

    #[test]
    fn every_delay_lies_in_the_upper_half_of_its_base() {
        for seed in 0..200 {
            let mut b = Backoff::with_seed(POLICY, seed);
            for n in 1..=8 {
                let base = POLICY.base(n);
                let d = b.next_delay();
                assert!(d >= base / 2 && d <= base, "seed {seed} attempt {n}: {d:?} vs {base:?}");
            }
        }
    }

    /// A retry loop driven by the schedule, measured on Tokio's paused clock: the waits follow the
    /// schedule's bounds, and a success in the middle brings the next wait back to the first step.
    #[tokio::test(start_paused = true)]
    async fn retry_loop_follows_the_schedule_and_resets_on_success() {
        let calls = Arc::new(AtomicU32::new(0));
        // Fails on calls 1-4, succeeds on 5, then fails on 6 and succeeds on 7.
        let outcome = |n: u32| n == 5 || n == 7;
        let mut backoff = Backoff::with_seed(POLICY, 7);
        let mut waits = Vec::new();
        let mut failures_before_wait = Vec::new();
        loop {
            let n = calls.fetch_add(1, Ordering::SeqCst) + 1;
            if outcome(n) {
                backoff.reset();
                if n == 7 {
                    break;
                }
                continue;
            }
            let start = Instant::now();
            let d = backoff.next_delay();
            failures_before_wait.push(backoff.failures());
            tokio::time::sleep(d).await;
            waits.push(start.elapsed());
        }
        assert_eq!(failures_before_wait, vec![1, 2, 3, 4, 1]);
        for (wait, failures) in waits.iter().zip(&failures_before_wait) {
            let base = POLICY.base(*failures);
            assert!(
                *wait >= base / 2 && *wait <= base,
                "{wait:?} outside [{:?}, {base:?}]",
                base / 2
            );
        }
        // After the reset the wait is back in the first step's bounds.
        assert!(waits[4] <= POLICY.initial);
    }
}
