//! Parts: how one epoch's order is split into one part per rank, and a
//! rank's part into one per worker, with the [`Tail`] rule for what does not
//! divide evenly. The module docs of [`crate::order`] (Parts) give the rule in
//! words.

use super::OrderSpec;

/// What happens to the records left over when the epoch does not divide
/// evenly among the ranks (see [Parts](super#parts)).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Tail {
    /// Every record once; part sizes differ by at most one.
    #[default]
    Keep,
    /// Equal part sizes; the last `n % world` ids of the epoch order are
    /// not read.
    DropLast,
    /// Equal part sizes; the epoch order wraps around, so the first
    /// `(world - n % world) % world` ids are read twice.
    Pad,
}

impl Tail {
    /// The name on the command line: `keep`, `drop-last` or `pad`.
    pub fn name(&self) -> &'static str {
        match self {
            Tail::Keep => "keep",
            Tail::DropLast => "drop-last",
            Tail::Pad => "pad",
        }
    }
}

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
