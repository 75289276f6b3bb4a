//! Medians and quartiles of repeated measurements, and the one comparison
//! `profcompare` makes of two costs: a ratio only when both are told apart
//! from zero, never a negative one.
//!
//! Under emulation a run of the same work can take a few percent more or
//! less than the last, so a small cost measured as a difference of two
//! times comes out negative as often as not. Such a cost is reported as
//! "below what the measurement resolves" (its quartiles reach zero or
//! below), and no ratio is formed with it.

use alloc::vec::Vec;

/// The first quartile, median and third quartile of some measurements.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Quartiles {
    pub q1: f64,
    pub median: f64,
    pub q3: f64,
}

impl Quartiles {
    /// The quartiles of `values` (nearest rank), or None when there are none.
    pub fn of(values: &[f64]) -> Option<Quartiles> {
        if values.is_empty() {
            return None;
        }
        let mut v: Vec<f64> = values.to_vec();
        v.sort_by(f64::total_cmp);
        let n = v.len();
        Some(Quartiles {
            q1: v[n / 4],
            median: v[n / 2],
            q3: v[(3 * n) / 4],
        })
    }

    /// Whether the measurement tells the cost apart from nothing: its
    /// first quartile is above zero.
    pub fn resolved(&self) -> bool {
        self.q1 > 0.0
    }
}

/// How many times `cheap` goes into `dear`: the ratio of the medians, with
/// the range the quartiles allow (lowest: dear's q1 over cheap's q3;
/// highest: dear's q3 over cheap's q1). None unless both are resolved.
pub fn ratio(dear: Quartiles, cheap: Quartiles) -> Option<Quartiles> {
    if !dear.resolved() || !cheap.resolved() {
        return None;
    }
    Some(Quartiles {
        q1: dear.q1 / cheap.q3,
        median: dear.median / cheap.median,
        q3: dear.q3 / cheap.q1,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quartiles_by_nearest_rank() {
        let q = Quartiles::of(&[5.0, 1.0, 4.0, 2.0, 3.0]).unwrap();
        assert_eq!((q.q1, q.median, q.q3), (2.0, 3.0, 4.0));
        assert_eq!(Quartiles::of(&[]), None);
        let one = Quartiles::of(&[7.0]).unwrap();
        assert_eq!((one.q1, one.median, one.q3), (7.0, 7.0, 7.0));
    }

    #[test]
    fn a_cost_whose_quartiles_reach_zero_gives_no_ratio() {
        let sigprof = Quartiles::of(&[9000.0, 10000.0, 11000.0]).unwrap();
        let noisy = Quartiles::of(&[-2000.0, 300.0, 2500.0]).unwrap();
        assert!(!noisy.resolved());
        assert_eq!(ratio(sigprof, noisy), None);
        let negative = Quartiles::of(&[-900.0, -500.0, -100.0]).unwrap();
        assert_eq!(ratio(sigprof, negative), None);
        assert_eq!(ratio(negative, sigprof), None);
    }

    #[test]
    fn a_resolved_ratio_is_positive_and_brackets_the_medians() {
        let dear = Quartiles::of(&[9000.0, 10000.0, 11000.0]).unwrap();
        let cheap = Quartiles::of(&[400.0, 500.0, 600.0]).unwrap();
        let r = ratio(dear, cheap).unwrap();
        assert_eq!(r.median, 20.0);
        assert_eq!(r.q1, 15.0);
        assert_eq!(r.q3, 27.5);
        assert!(r.q1 <= r.median && r.median <= r.q3);
    }
}
