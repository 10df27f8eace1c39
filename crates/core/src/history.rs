//! Granularity and bucket arithmetic of book history.
//!
//! A range read is downsampled to one row per bucket: `granularity` milliseconds aligned to the Unix epoch,
//! bucket `n` holding `[n × size, (n + 1) × size)`. The API numbers its cursors by bucket and the store walks
//! buckets; both take the arithmetic from here so they cannot disagree on where a bucket starts.

use crate::Timestamp;

/// Bucket size of range reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Granularity {
    /// One second.
    S1,
    /// Ten seconds.
    S10,
    /// One minute.
    M1,
    /// Five minutes.
    M5,
    /// One hour.
    H1,
}

impl Granularity {
    pub const ALL: [Granularity; 5] = [
        Granularity::S1,
        Granularity::S10,
        Granularity::M1,
        Granularity::M5,
        Granularity::H1,
    ];

    /// The bucket size in milliseconds.
    pub const fn millis(self) -> i64 {
        match self {
            Granularity::S1 => 1_000,
            Granularity::S10 => 10_000,
            Granularity::M1 => 60_000,
            Granularity::M5 => 300_000,
            Granularity::H1 => 3_600_000,
        }
    }

    /// The wire name (`1s`, `10s`, `1m`, `5m`, `1h`).
    pub const fn as_str(self) -> &'static str {
        match self {
            Granularity::S1 => "1s",
            Granularity::S10 => "10s",
            Granularity::M1 => "1m",
            Granularity::M5 => "5m",
            Granularity::H1 => "1h",
        }
    }

    /// The number of the bucket holding `t`.
    pub fn bucket_of(self, t: Timestamp) -> i64 {
        bucket_of(t.millis(), self.millis())
    }

    /// The first millisecond of bucket `n`.
    pub fn bucket_start(self, n: i64) -> Timestamp {
        Timestamp::from_millis(bucket_start(n, self.millis()))
    }
}

/// The number of the `bucket_ms` bucket holding millisecond `ms`: `⌊ms / bucket_ms⌋` (floored, also before
/// the epoch). A size below 1 ms counts as 1 ms.
pub fn bucket_of(ms: i64, bucket_ms: i64) -> i64 {
    ms.div_euclid(bucket_ms.max(1))
}

/// The first millisecond of bucket `n` of size `bucket_ms`, saturating at the ends of `i64`.
pub fn bucket_start(n: i64, bucket_ms: i64) -> i64 {
    n.saturating_mul(bucket_ms.max(1))
}

/// The first millisecond of the bucket after the one holding `ms`.
pub fn next_bucket_start(ms: i64, bucket_ms: i64) -> i64 {
    bucket_start(bucket_of(ms, bucket_ms).saturating_add(1), bucket_ms)
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    #[test]
    fn granularities() {
        assert_eq!(Granularity::M1.millis(), 60_000);
        assert_eq!(Granularity::M5.millis(), 300_000);
        assert_eq!(
            Granularity::ALL.map(Granularity::as_str),
            ["1s", "10s", "1m", "5m", "1h"]
        );
    }

    #[test]
    fn buckets_align_to_the_epoch() {
        let g = Granularity::M5;
        // 2025-11-21T19:15:00Z starts a 5-minute bucket; its last millisecond is still in it.
        let t = 1_763_752_500_000;
        assert_eq!(g.bucket_of(Timestamp::from_millis(t)), t / 300_000);
        assert_eq!(g.bucket_of(Timestamp::from_millis(t + 299_999)), t / 300_000);
        assert_eq!(g.bucket_of(Timestamp::from_millis(t - 1)), t / 300_000 - 1);
        assert_eq!(g.bucket_start(t / 300_000), Timestamp::from_millis(t));
        assert_eq!(next_bucket_start(t, 300_000), t + 300_000);
        assert_eq!(next_bucket_start(t - 1, 300_000), t);
        assert_eq!(bucket_of(0, 60_000), 0);
        // Floored before the epoch.
        assert_eq!(bucket_of(-1, 60_000), -1);
        // Degenerate sizes do not divide by zero.
        assert_eq!(bucket_of(42, 0), 42);
        assert_eq!(next_bucket_start(42, -5), 43);
        // Saturating ends.
        assert_eq!(bucket_start(i64::MAX, 60_000), i64::MAX);
        assert_eq!(next_bucket_start(i64::MAX, 60_000), i64::MAX);
    }

    proptest! {
        #[test]
        fn every_millisecond_lies_in_its_bucket(ms in -1_000_000_000_000i64..4_000_000_000_000, g in 0usize..2) {
            let size = Granularity::ALL[g].millis();
            let n = bucket_of(ms, size);
            prop_assert!(bucket_start(n, size) <= ms && ms < bucket_start(n + 1, size));
            prop_assert_eq!(next_bucket_start(ms, size), bucket_start(n + 1, size));
        }
    }
}
