//! Depth: the size resting on the first levels of a ladder.

use super::Level;
use crate::Amount;

/// The total size of the first `levels` levels of a best-first ladder (all of them when it is shorter),
/// exact in micro-units and saturating.
pub fn depth(ladder: &[Level], levels: usize) -> Amount {
    ladder
        .iter()
        .take(levels)
        .fold(Amount::ZERO, |sum, l| sum.saturating_add(l.size))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Price;

    fn lv(size_micros: i64) -> Level {
        Level {
            price: Price(500_000),
            size: Amount(size_micros),
        }
    }

    #[test]
    fn sums_the_first_levels_exactly() {
        let ladder: Vec<Level> = [1_500_000, 2_250_001, 3, 4_000_000, 5_000_000, 6_000_000]
            .into_iter()
            .map(lv)
            .collect();
        assert_eq!(depth(&ladder, 5), Amount(12_750_004), "the sixth level is not counted");
        assert_eq!(depth(&ladder, 1), Amount(1_500_000));
        assert_eq!(depth(&ladder, 0), Amount::ZERO);
        assert_eq!(depth(&ladder[..2], 5), Amount(3_750_001), "a short ladder counts whole");
        assert_eq!(depth(&[], 5), Amount::ZERO);
        assert_eq!(depth(&[lv(i64::MAX), lv(1)], 5), Amount(i64::MAX), "saturates");
    }
}
