//! Parts: how one epoch's order is split into one part per rank, and a
//! rank's part into one per worker, with the [`Tail`] rule for what does not
//! divide evenly. The module docs of [`crate::order`] (Parts) give the rule in
//! words.

use super::OrderSpec;
use crate::names::OptionName;

/// What happens to the records left over when the epoch does not divide
/// evenly among the ranks (see [Parts](super#parts)).
///
/// Its names are those of the command line's `--tail`:
///
/// ```
/// use recordwire::order::Tail;
///
/// assert_eq!("drop-last".parse::<Tail>(), Ok(Tail::DropLast));
/// assert_eq!(Tail::Pad.to_string(), "pad");
/// let err = "drop".parse::<Tail>().unwrap_err();
/// assert_eq!(
///     err.to_string(),
///     "unknown tail policy `drop` (expected one of: keep, drop-last, pad)"
/// );
/// ```
///
/// The default is [`Tail::Pad`], as PyTorch's `DistributedSampler` does: every
/// rank of one world gets the same number of ids, so that collective training
/// steps do not wait for a rank that has run out; with one rank it is the
/// same as [`Tail::Keep`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Tail {
    /// Every record once; part sizes differ by at most one.
    Keep,
    /// Equal part sizes; the last `n % world` ids of the epoch order are
    /// not read.
    DropLast,
    /// Equal part sizes; the epoch order wraps around, so the first
    /// `(world - n % world) % world` ids are read twice.
    #[default]
    Pad,
}

impl Tail {
    /// Every tail policy, in the order the command line lists them.
    pub const ALL: [Tail; 3] = [Tail::Keep, Tail::DropLast, Tail::Pad];

    /// The name on the command line: `keep`, `drop-last` or `pad`.
    pub fn name(&self) -> &'static str {
        match self {
            Tail::Keep => "keep",
            Tail::DropLast => "drop-last",
            Tail::Pad => "pad",
        }
    }
}

/// `keep`, `drop-last` or `pad`.
impl OptionName for Tail {
    const WHAT: &'static str = "tail policy";
    const ALL: &'static [Self] = &Tail::ALL;
    fn name(self) -> &'static str {
        Tail::name(&self)
    }
}

crate::option_names!(Tail);

/// `len` split into `parts` contiguous, balanced parts: part `index`'s start
/// and length (the first `len % parts` parts are one longer).
fn split(len: u128, parts: u128, index: u128) -> (u128, u128) {
    let q = len / parts;
    let r = len % parts;
    (index * q + index.min(r), q + u128::from(index < r))
}

/// A worker's part: the first position of the epoch order it reads, and how
/// many.
pub(super) fn worker_part(count: u64, spec: &OrderSpec) -> (u128, u64) {
    let n = u128::from(count);
    let world = u128::from(spec.world);
    let rank = u128::from(spec.rank);
    let (rank_start, rank_len) = match spec.tail {
        Tail::Keep => split(n, world, rank),
        Tail::DropLast => (rank * (n / world), n / world),
        Tail::Pad => (rank * n.div_ceil(world), n.div_ceil(world)),
    };
    let (start, len) = split(rank_len, u128::from(spec.workers), u128::from(spec.worker));
    // `len <= rank_len <= ⌈n / world⌉ <= n`, so it fits.
    (rank_start + start, len as u64)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::names::ParseNameError;

    #[test]
    fn tail_names_round_trip() {
        let names: Vec<&str> = Tail::ALL.iter().map(Tail::name).collect();
        assert_eq!(names, ["keep", "drop-last", "pad"]);
        for tail in Tail::ALL {
            assert_eq!(tail.name().parse::<Tail>(), Ok(tail));
            assert_eq!(tail.to_string(), tail.name());
        }
    }

    #[test]
    fn unknown_tail_names_are_errors() {
        for bad in ["", "Keep", "drop_last", "drop", "pad "] {
            assert_eq!(
                bad.parse::<Tail>(),
                Err(ParseNameError::new(
                    "tail policy",
                    bad,
                    "keep, drop-last, pad"
                ))
            );
        }
    }

    #[test]
    fn split_is_balanced() {
        // 10 into 4: sizes 3, 3, 2, 2 from 0, 3, 6, 8.
        let got: Vec<(u128, u128)> = (0..4).map(|i| split(10, 4, i)).collect();
        assert_eq!(got, [(0, 3), (3, 3), (6, 2), (8, 2)]);
    }
}
