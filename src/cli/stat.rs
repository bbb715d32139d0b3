//! [`Stat`]: the count, sum, least and greatest of a series of sizes, as
//! `inspect` reports them.

/// Running min / max / sum (and count) of the values added.
#[derive(Debug, Clone, Copy)]
pub(super) struct Stat {
    pub(super) min: u64,
    pub(super) max: u64,
    pub(super) sum: u64,
    pub(super) n: u64,
}

impl Default for Stat {
    fn default() -> Self {
        Stat {
            min: u64::MAX,
            max: 0,
            sum: 0,
            n: 0,
        }
    }
}

impl Stat {
    pub(super) fn add(&mut self, v: u64) {
        self.min = self.min.min(v);
        self.max = self.max.max(v);
        self.sum += v;
        self.n += 1;
    }

    /// Adds the values `other` saw.
    pub(super) fn merge(&mut self, other: &Stat) {
        self.min = self.min.min(other.min);
        self.max = self.max.max(other.max);
        self.sum += other.sum;
        self.n += other.n;
    }

    pub(super) fn mean(&self) -> f64 {
        if self.n == 0 {
            0.0
        } else {
            self.sum as f64 / self.n as f64
        }
    }

    pub(super) fn min(&self) -> u64 {
        if self.n == 0 {
            0
        } else {
            self.min
        }
    }
}
