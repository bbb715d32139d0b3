//! Epoch orders, page-aware shuffling, and each worker's part of an epoch
//! (docs/FORMAT.md §7).
//!
//! An order is the sequence of record ids that one data-loader worker reads
//! in one epoch. It is a pure function of the record count, the record
//! start offsets (page modes only), the [`Mode`], the seed, the epoch and the
//! worker's part (rank, world, worker, workers, [`Tail`]): no I/O, no
//! floats, no hash-map iteration, no outside random number generator. The
//! algorithm below is frozen by test vectors: the same inputs give the same
//! ids on every machine and in every version of this crate.
//!
//! ```
//! use recordwire::order::{Mode, Order, OrderSpec};
//!
//! // Shuffle 10 records (the offsets only matter to the page modes).
//! let spec = OrderSpec { mode: Mode::Shuffle, seed: 42, ..OrderSpec::default() };
//! let order = Order::new(10, &[], spec)?;
//! let epoch0: Vec<u64> = order.epoch(0).iter().collect();
//! let mut sorted = epoch0.clone();
//! sorted.sort_unstable();
//! assert_eq!(sorted, (0..10).collect::<Vec<u64>>()); // a permutation
//! assert_ne!(epoch0, order.epoch(1).iter().collect::<Vec<u64>>()); // reshuffled
//! assert_eq!(order.epoch(0).get(3), Some(epoch0[3])); // any position, in O(1)
//! # Ok::<(), recordwire::order::OrderError>(())
//! ```
//!
//! One epoch's order is split into parts, one per rank, and a rank's part
//! into one per worker. With [`Tail::Keep`] the parts are disjoint and
//! together give every record once; the default, [`Tail::Pad`], gives every
//! rank as many ids (the first ids read twice), which collective training
//! steps need:
//!
//! ```
//! use recordwire::order::{order_ids, Mode, OrderSpec, Tail};
//!
//! let all = order_ids(10, &[], &OrderSpec { mode: Mode::Shuffle, ..OrderSpec::default() }, 0)?;
//! let mut parts = Vec::new();
//! for rank in 0..3 {
//!     let spec = OrderSpec { mode: Mode::Shuffle, rank, world: 3, tail: Tail::Keep, ..OrderSpec::default() };
//!     parts.push(order_ids(10, &[], &spec, 0)?);
//! }
//! // Contiguous blocks of the epoch order, sizes 4, 3, 3.
//! assert_eq!(parts.concat(), all);
//! assert_eq!(parts.iter().map(Vec::len).collect::<Vec<_>>(), [4, 3, 3]);
//! // The default pads: 4, 4, 4, the last rank reading the first id again.
//! let padded = OrderSpec { mode: Mode::Shuffle, rank: 2, world: 3, ..OrderSpec::default() };
//! assert_eq!(order_ids(10, &[], &padded, 0)?, [all[8], all[9], all[0], all[1]]);
//! # Ok::<(), recordwire::order::OrderError>(())
//! ```
//!
//! The page modes read the records' start offsets (an index's table; any
//! entries after the first `count` are ignored, such as its end offset):
//!
//! ```
//! use recordwire::order::{order_ids, Mode, OrderSpec};
//!
//! // Six records of 2000 bytes: pages of 4096 bytes hold the starts of
//! // records [0, 1, 2], [3, 4] and [5].
//! let offsets: Vec<u64> = (0..=6).map(|i| i * 2000).collect();
//! let page_aware = OrderSpec { mode: Mode::PageAware { page_size: 4096 }, ..OrderSpec::default() };
//! // Each page's records together and in file order, the pages shuffled.
//! assert_eq!(order_ids(6, &offsets, &page_aware, 0)?, [5, 3, 4, 0, 1, 2]);
//! assert_eq!(order_ids(6, &offsets, &page_aware, 1)?, [3, 4, 0, 1, 2, 5]);
//!
//! // The same page order in windows of two pages, each window shuffled:
//! // pages [5] and [3, 4], then page [0, 1, 2].
//! let quasi = OrderSpec {
//!     mode: Mode::QuasiRandom { page_size: 4096, window: 2 },
//!     ..OrderSpec::default()
//! };
//! assert_eq!(order_ids(6, &offsets, &quasi, 0)?, [5, 4, 3, 1, 0, 2]);
//! # Ok::<(), recordwire::order::OrderError>(())
//! ```
//!
//! A [`Cursor`] (epoch, position) says where a worker is, and
//! [`Order::iter_from`] resumes there, running on across epochs:
//!
//! ```
//! use recordwire::order::{Cursor, Mode, Order, OrderSpec};
//!
//! let order = Order::new(5, &[], OrderSpec { mode: Mode::Shuffle, seed: 1, ..OrderSpec::default() })?;
//! let mut run = order.epochs();
//! let first: Vec<u64> = run.by_ref().take(7).collect(); // epoch 0, then 2 ids of epoch 1
//! let saved = run.cursor();
//! assert_eq!(saved, Cursor { epoch: 1, position: 2 });
//!
//! let resumed: Vec<u64> = order.iter_from(saved)?.take(3).collect();
//! assert_eq!(resumed, order.epoch(1).iter().skip(2).collect::<Vec<u64>>());
//! assert_eq!(first[5..], order.epoch(1).iter().take(2).collect::<Vec<u64>>()[..]);
//! # Ok::<(), recordwire::order::OrderError>(())
//! ```
//!
//! # Modes
//!
//! - [`Mode::Sequential`]: file order, `id = position`.
//! - [`Mode::Shuffle`]: a uniformly distributed permutation of all records,
//!   computed position by position from a keyed bijection, in O(1) memory.
//! - [`Mode::PageAware`] (the thesis's page-aware random shuffling): records
//!   are grouped by the page in which they start (`page = offset /
//!   page_size`); the groups' order is shuffled each epoch and records keep
//!   file order inside a group, so each page is read once per epoch.
//! - [`Mode::QuasiRandom`] (FFCV's idea): the same shuffled page order, cut
//!   into consecutive *windows* of `window` pages; the records of a window
//!   are shuffled together, then the next window's. At any point of the
//!   epoch at most `window` pages are open (begun and not finished), and
//!   every record of a page is read within its window's stretch of the
//!   order. With `window = 1` it is page-aware order with each page's
//!   records shuffled.
//!
//! On the command line a mode is named by [`ModeName`] (`--mode`: the names
//! above, the page size and window being options of their own) and a tail
//! policy by [`Tail`]'s names (`--tail`); both parse with [`str::parse`].
//!
//! FFCV's sampler slides its window (a page leaves when it empties and the
//! next one enters); ours moves it in whole steps, so that the id at any
//! position can be computed directly, which is what resuming and the parts
//! need, in memory that does not grow with the epoch.
//!
//! # Parts
//!
//! The epoch order is the same for every rank and worker (it depends only on
//! the seed and the epoch). With `n` records and `world` ranks, rank `r`'s
//! part is one contiguous block of the epoch order's positions:
//!
//! - [`Tail::Keep`]: the first `n % world` ranks read `⌈n / world⌉`
//!   positions, the others `⌊n / world⌋`; rank `r` starts at
//!   `r·⌊n / world⌋ + min(r, n % world)`. Disjoint and complete; sizes differ
//!   by at most one.
//! - [`Tail::DropLast`]: every rank reads `q = ⌊n / world⌋` positions from
//!   `r·q`; the last `n - world·q` ids of the epoch order are not read this
//!   epoch (other epochs drop other ids).
//! - [`Tail::Pad`]: every rank reads `c = ⌈n / world⌉` positions from `r·c`;
//!   position `p ≥ n` reads the id at position `p mod n`, so the
//!   `world·c - n` extra reads repeat the first ids of the epoch order.
//!
//! A rank's part is then split among its `workers` the way `Keep` splits
//! the epoch among ranks: contiguous, disjoint, complete, sizes within one
//! (the tail rule equalises ranks, which take collective steps together; a
//! rank's workers feed one process, so nothing is dropped or repeated
//! there).
//!
//! Contiguous blocks rather than strides keep a page's records on one rank
//! and worker in the page modes: only the pages that straddle a block
//! boundary (at most `world·workers - 1` per epoch) are split. In
//! sequential mode they give each worker one run of the file.
//!
//! # The algorithm (frozen)
//!
//! All arithmetic is on `u64`, wrapping where it says `+` or `·` below.
//!
//! **Mixing.** `mix64(z)` is SplitMix64's output function:
//! `z ^= z >> 30; z ·= 0xbf58476d1ce4e5b9; z ^= z >> 27; z ·= 0x94d049bb133111eb;
//! z ^= z >> 31`. `GAMMA = 0x9e3779b97f4a7c15`.
//!
//! **Keys.** `absorb(h, w) = mix64(h ^ mix64(w + GAMMA))`, and the key of a
//! bijection is `absorb(absorb(absorb(seed, tag), epoch), index)`, where the
//! tag is one of the 8-byte ASCII strings `"records\0"`, `"pages\0\0\0"`,
//! `"window\0\0"` read as little-endian `u64`s, and `index` is 0 except for
//! the windows of quasi-random order (the window's number).
//!
//! **Bijection of `[0, m)`.** A generator `next()` is SplitMix64 seeded
//! with the key (`state += GAMMA; return mix64(state)`).
//!
//! - `m ≤ 64`: a table. Start from `t = [0, 1, …, m-1]`; for `i` from `m - 1`
//!   down to 1, swap `t[i]` and `t[j]` with `j = (next() · (i + 1)) >> 64`
//!   (a 128-bit product); the image of `x` is `t[x]`. This is the
//!   Fisher–Yates shuffle, uniform to within 2^-58.
//! - `m > 64`: a Feistel network with cycle walking. Let `k` be the bit
//!   width of `m - 1` (so `2^(k-1) < m ≤ 2^k`), `b = ⌊k/2⌋`, `a = k - b`.
//!   The round keys `rk_0 … rk_7` are the first eight outputs of `next()`
//!   and `swap` is bit 0 of the ninth. A pass maps a `k`-bit `x` through
//!   rounds `i = 0..8`: on even rounds the right half `R` is the low `b`
//!   bits and the left half `L` the high `a` bits, on odd rounds `R` is the
//!   low `a` bits and `L` the high `b`; with `F = mix64(R ^ rk_i)` cut to
//!   `L`'s width, the round gives `x = (R << width(L)) | (L ^ F)`. After the
//!   eighth round, if `swap` is set, 0 and 1 trade places (`x ^= 1` when
//!   `x < 2`). A pass permutes `[0, 2^k)`; the image of `x < m` is found by
//!   cycle walking: apply the pass, and again while the result is `≥ m`.
//!
//! The table is there because Feistel networks with few-bit halves mix
//! slowly (with 8 rounds, where a record of a 17-element shuffle lands is
//! visibly biased over a million seeds); the transposition because every
//! such network is an even permutation, and cycle walking would carry that
//! over as a bias in the parity of the shuffle.
//!
//! **Shuffle.** The id at position `p` is the bijection of `[0, n)` with tag
//! `"records\0"` applied to `p`.
//!
//! **Page groups.** Record `i` starts a new group when `i = 0` or
//! `offsets[i] / page_size ≠ offsets[i-1] / page_size`; group `g` is the
//! `g`-th run (in file order, `G` groups). The shuffled group order is
//! `π(j)` = the bijection of `[0, G)` with tag `"pages\0\0\0"` applied to
//! `j`. Page-aware order is the records of group `π(0)` in file order, then
//! those of `π(1)`, and so on.
//!
//! **Quasi-random.** Window `u` is the groups `π(u·w) … π(u·w + w - 1)`
//! (`w` = `window`; the last window may hold fewer). Lay its `m_u` records
//! out as group `π(u·w)` in file order, then `π(u·w + 1)`, …; the window's
//! `t`-th id is the record at index `σ_u(t)` of that layout, where `σ_u` is
//! the bijection of `[0, m_u)` with tag `"window\0\0"` and index `u`. The
//! epoch is window 0's ids, then window 1's, and so on.
//!
//! **Parts.** As in [Parts](#parts), then `id = order(p)` for the part's
//! positions `p` (reduced mod `n` with `Pad`).
//!
//! # Cost
//!
//! Sequential and shuffle orders store nothing; in shuffle order
//! [`EpochOrder::get`] costs fewer than two passes of the network on average
//! (eight `mix64` each), about 100 ns. The page modes store one bit per
//! record for the groups plus a rank directory and select samples (at most
//! 0.16 bytes per record, built once in [`Order::new`]), and per epoch one
//! `u64` checkpoint every `⌈32 / window⌉` windows (so every 32 page groups
//! or more; page-aware order counts as windows of one page), found by one
//! pass over the shuffled groups in [`Order::epoch`] (about 0.3 µs per
//! group): less than 0.45 bytes per record in all. Iterating any mode costs
//! about 100 ns per id; in the page modes `get` looks at fewer than
//! `32 + window` groups (several µs). An iterator over a quasi-random order
//! holds one window, 16 bytes per page of it (at most 1 MiB, see
//! [`MAX_WINDOW`]).

mod error;
pub(crate) mod mix;
mod mode;
mod page_order;
mod pages;
mod part;
#[cfg(test)]
mod tests;

use std::fmt;
use std::iter::FusedIterator;

pub use error::OrderError;
use mix::{derive_key, Bijection, TAG_RECORDS};
pub use mode::{Mode, ModeName};
use page_order::{Units, Walk};
use pages::PageGroups;
use part::worker_part;
pub use part::Tail;

/// The page size the command line uses when none is given, in bytes.
pub const DEFAULT_PAGE_SIZE: u64 = 4096;

/// The window of [`Mode::QuasiRandom`] the command line uses when none is
/// given, in pages.
pub const DEFAULT_WINDOW: u32 = 8;

/// The largest window of [`Mode::QuasiRandom`], in pages: an iterator holds
/// 16 bytes per page of its window, so at most 1 MiB.
pub const MAX_WINDOW: u32 = 1 << 16;

/// Everything an order depends on besides the data and the epoch.
///
/// The default is sequential order, seed 0, one rank, one worker,
/// [`Tail::Keep`]; set the fields you need:
///
/// ```
/// use recordwire::order::{Mode, OrderSpec, Tail};
///
/// let spec = OrderSpec {
///     mode: Mode::QuasiRandom { page_size: 4096, window: 8 },
///     seed: 2024,
///     rank: 1,
///     world: 4,
///     tail: Tail::DropLast,
///     ..OrderSpec::default()
/// };
/// assert_eq!((spec.worker, spec.workers), (0, 1));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct OrderSpec {
    /// How the epoch is ordered.
    pub mode: Mode,
    /// The seed; with the epoch, it keys every shuffle.
    pub seed: u64,
    /// This process's rank, `< world`.
    pub rank: u32,
    /// The number of ranks, at least 1.
    pub world: u32,
    /// This data-loader worker, `< workers`.
    pub worker: u32,
    /// The number of data-loader workers per rank, at least 1.
    pub workers: u32,
    /// What happens to the records that do not divide among the ranks.
    pub tail: Tail,
}

/// The default order is a shuffle of every id (seed 0, one rank, one
/// worker, ranks padded): what PyTorch's `DistributedSampler` users expect,
/// and the default of the command line's `order` and Python's
/// `Dataset.order` too.
impl Default for OrderSpec {
    fn default() -> Self {
        OrderSpec {
            mode: Mode::Shuffle,
            seed: 0,
            rank: 0,
            world: 1,
            worker: 0,
            workers: 1,
            tail: Tail::Pad,
        }
    }
}

/// Where a worker is: the next position to read in an epoch.
///
/// Positions count from 0 in the worker's own part of the epoch, so a
/// cursor is meaningful only with the spec that made it. Cursors order by
/// epoch, then position.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Cursor {
    /// The epoch.
    pub epoch: u64,
    /// The position in the worker's part of that epoch.
    pub position: u64,
}

/// One worker's orders over a dataset, for every epoch.
///
/// Built once (for the page modes this groups the records by page); then
/// [`epoch`](Order::epoch) gives one epoch's order and
/// [`iter_from`](Order::iter_from) runs across epochs. Every epoch has the
/// same length, [`len`](Order::len).
#[derive(Clone)]
pub struct Order {
    count: u64,
    spec: OrderSpec,
    groups: Option<PageGroups>,
    /// The first position of the epoch order this worker reads (may be past
    /// `count` with `Tail::Pad`, hence u128).
    start: u128,
    len: u64,
}

impl Order {
    /// The orders of the records of several files as one id space (the
    /// first file's ids first): `files` gives each file's record start
    /// offsets (its records' count is their number) and its size. The page
    /// modes keep each file's pages apart (a file starts on a fresh page,
    /// with a gap page between files); the others need only the counts.
    ///
    /// # Errors
    ///
    /// As [`Order::new`].
    pub fn of_files(files: &[(&[u64], u64)], spec: OrderSpec) -> Result<Order, OrderError> {
        let count = files.iter().map(|f| f.0.len() as u64).sum();
        let Some(page) = spec.mode.page_size() else {
            return Order::for_count(count, spec);
        };
        let page = page.max(1);
        let mut offsets = Vec::with_capacity(usize::try_from(count).unwrap_or(0));
        let mut base = 0u64;
        for &(starts, size) in files {
            offsets.extend(starts.iter().map(|&o| base.saturating_add(o)));
            base = base
                .saturating_add(size.div_ceil(page).saturating_mul(page))
                .saturating_add(page);
        }
        Order::new(count, &offsets, spec)
    }

    /// The orders of `count` records for `spec`.
    ///
    /// `offsets` holds the start offset of each record, sorted, as an index
    /// gives it; only the page modes read it (the first `count` entries; any
    /// more are ignored), the other modes accept `&[]`.
    ///
    /// # Errors
    ///
    /// [`OrderError`] for `world` or `workers` 0, a rank or worker out of
    /// range, a page size of 0, a window of 0 or more than [`MAX_WINDOW`]
    /// pages, and, in the page modes, fewer offsets than records or offsets
    /// that decrease.
    pub fn new(count: u64, offsets: &[u64], spec: OrderSpec) -> Result<Order, OrderError> {
        if spec.world == 0 {
            return Err(OrderError::ZeroWorld);
        }
        if spec.rank >= spec.world {
            return Err(OrderError::RankOutOfRange {
                rank: spec.rank,
                world: spec.world,
            });
        }
        if spec.workers == 0 {
            return Err(OrderError::ZeroWorkers);
        }
        if spec.worker >= spec.workers {
            return Err(OrderError::WorkerOutOfRange {
                worker: spec.worker,
                workers: spec.workers,
            });
        }
        let groups = match spec.mode {
            Mode::Sequential | Mode::Shuffle => None,
            Mode::PageAware { page_size } | Mode::QuasiRandom { page_size, .. } => {
                if page_size == 0 {
                    return Err(OrderError::ZeroPageSize);
                }
                if let Mode::QuasiRandom { window, .. } = spec.mode {
                    if window == 0 || window > MAX_WINDOW {
                        return Err(OrderError::WindowOutOfRange { window });
                    }
                }
                Some(PageGroups::new(count, offsets, page_size)?)
            }
        };
        let (start, len) = worker_part(count, &spec);
        Ok(Order {
            count,
            spec,
            groups,
            start,
            len,
        })
    }

    /// The order of `count` records in a mode that needs no offsets
    /// ([`Mode::Sequential`], [`Mode::Shuffle`]); a page mode is refused with
    /// [`OrderError::TooFewOffsets`] (use [`Order::new`], or
    /// `Shard::order` / `Dataset::order` of [`crate::index`], which pass the
    /// offsets).
    ///
    /// ```
    /// use recordwire::order::{Mode, Order, OrderSpec};
    ///
    /// let order = Order::for_count(5, OrderSpec { mode: Mode::Shuffle, ..OrderSpec::default() })?;
    /// assert_eq!(order.epoch(0).len(), 5);
    /// # Ok::<(), recordwire::order::OrderError>(())
    /// ```
    pub fn for_count(count: u64, spec: OrderSpec) -> Result<Order, OrderError> {
        Order::new(count, &[], spec)
    }

    /// The spec this order was built with.
    pub fn spec(&self) -> &OrderSpec {
        &self.spec
    }

    /// The number of records in the dataset.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// The number of ids this worker reads in each epoch.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether this worker reads nothing (no records, or fewer records than
    /// parts).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The number of page groups, in the page modes.
    pub fn page_groups(&self) -> Option<u64> {
        self.groups.as_ref().map(PageGroups::len)
    }

    /// The order of `epoch`.
    ///
    /// In the page modes this makes one pass over the shuffled page groups
    /// (O(groups) time, one `u64` per 32 groups or more); the other modes cost
    /// nothing here.
    pub fn epoch(&self, epoch: u64) -> EpochOrder<'_> {
        let seed = self.spec.seed;
        let base = match (self.spec.mode, &self.groups) {
            (Mode::Shuffle, _) => Base::Shuffle(Bijection::new(
                self.count,
                derive_key(seed, TAG_RECORDS, epoch, 0),
            )),
            (Mode::PageAware { .. }, Some(groups)) => {
                Base::Units(Units::new(groups, seed, epoch, 1, false))
            }
            (Mode::QuasiRandom { window, .. }, Some(groups)) => {
                Base::Units(Units::new(groups, seed, epoch, u64::from(window), true))
            }
            // Page modes always have groups (see `new`).
            _ => Base::Sequential,
        };
        EpochOrder {
            order: self,
            epoch,
            base,
        }
    }

    /// An endless run of ids from epoch 0, position 0 (see
    /// [`iter_from`](Order::iter_from)).
    pub fn epochs(&self) -> Epochs<'_> {
        Epochs {
            order: self,
            current: self.epoch(0),
            position: 0,
            walk: Walk::default(),
        }
    }

    /// An endless run of ids from `cursor`: the rest of its epoch, then every
    /// following epoch (it ends only after epoch `u64::MAX`, or at once when
    /// [`is_empty`](Order::is_empty)).
    ///
    /// # Errors
    ///
    /// [`OrderError::CursorOutOfRange`] when the position is past the
    /// epoch's length (a position equal to it is the start of the next
    /// epoch).
    pub fn iter_from(&self, cursor: Cursor) -> Result<Epochs<'_>, OrderError> {
        if cursor.position > self.len {
            return Err(OrderError::CursorOutOfRange {
                position: cursor.position,
                len: self.len,
            });
        }
        Ok(Epochs {
            order: self,
            current: self.epoch(cursor.epoch),
            position: cursor.position,
            walk: Walk::default(),
        })
    }

    /// The position in the epoch order of this worker's `position`
    /// (`position < len`).
    #[inline]
    fn global(&self, position: u64) -> u64 {
        let p = self.start + u128::from(position);
        let n = u128::from(self.count);
        // Only `Tail::Pad` reaches past the end, and then `n > 0`.
        if p < n || n == 0 {
            p as u64
        } else {
            (p % n) as u64
        }
    }
}

impl fmt::Debug for Order {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Order")
            .field("count", &self.count)
            .field("spec", &self.spec)
            .field("page_groups", &self.page_groups())
            .field("start", &self.start)
            .field("len", &self.len)
            .finish()
    }
}

/// One epoch of an [`Order`]: the ids this worker reads, by position.
#[derive(Clone)]
pub struct EpochOrder<'a> {
    order: &'a Order,
    epoch: u64,
    base: Base<'a>,
}

impl<'a> EpochOrder<'a> {
    /// The epoch.
    pub fn epoch(&self) -> u64 {
        self.epoch
    }

    /// The order this epoch belongs to.
    pub fn order(&self) -> &'a Order {
        self.order
    }

    /// The number of ids this worker reads in the epoch.
    pub fn len(&self) -> u64 {
        self.order.len
    }

    /// Whether the worker reads nothing.
    pub fn is_empty(&self) -> bool {
        self.order.len == 0
    }

    /// The id at `position` of this worker's part, or `None` past the end.
    ///
    /// O(1) in sequential and shuffle order; in the page modes it looks at
    /// fewer than `32 + window` page groups (`window` is 1 in page-aware
    /// order).
    pub fn get(&self, position: u64) -> Option<u64> {
        (position < self.order.len).then(|| self.base.get(self.order.global(position)))
    }

    /// The ids of the epoch, in order.
    pub fn iter(&self) -> Iter<'_> {
        Iter {
            epoch: self,
            position: 0,
            walk: Walk::default(),
        }
    }

    /// The ids from `position` to the end of the epoch.
    ///
    /// # Errors
    ///
    /// [`OrderError::CursorOutOfRange`] when `position > len()`.
    pub fn iter_from(&self, position: u64) -> Result<Iter<'_>, OrderError> {
        if position > self.order.len {
            return Err(OrderError::CursorOutOfRange {
                position,
                len: self.order.len,
            });
        }
        Ok(Iter {
            epoch: self,
            position,
            walk: Walk::default(),
        })
    }

    /// The id at `position < len()`, moving `walk` along.
    #[inline]
    fn next_id(&self, walk: &mut Walk, position: u64) -> u64 {
        let p = self.order.global(position);
        match &self.base {
            Base::Units(units) => walk.id_at(units, p),
            base => base.get(p),
        }
    }
}

impl fmt::Debug for EpochOrder<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("EpochOrder")
            .field("mode", &self.order.spec.mode)
            .field("epoch", &self.epoch)
            .field("len", &self.order.len)
            .finish()
    }
}

impl<'e, 'a: 'e> IntoIterator for &'e EpochOrder<'a> {
    type Item = u64;
    type IntoIter = Iter<'e>;

    fn into_iter(self) -> Iter<'e> {
        self.iter()
    }
}

/// The ids of one [`EpochOrder`], from [`EpochOrder::iter`].
#[derive(Debug, Clone)]
pub struct Iter<'e> {
    epoch: &'e EpochOrder<'e>,
    position: u64,
    walk: Walk,
}

impl Iter<'_> {
    /// The position of the next id (the cursor to save to resume here).
    pub fn cursor(&self) -> Cursor {
        Cursor {
            epoch: self.epoch.epoch,
            position: self.position,
        }
    }
}

impl Iterator for Iter<'_> {
    type Item = u64;

    #[inline]
    fn next(&mut self) -> Option<u64> {
        if self.position >= self.epoch.order.len {
            return None;
        }
        let id = self.epoch.next_id(&mut self.walk, self.position);
        self.position += 1;
        Some(id)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let left = self.epoch.order.len.saturating_sub(self.position);
        let left = usize::try_from(left).unwrap_or(usize::MAX);
        (left, Some(left))
    }
}

impl ExactSizeIterator for Iter<'_> {}

impl FusedIterator for Iter<'_> {}

/// An endless run of ids across epochs, from [`Order::epochs`] or
/// [`Order::iter_from`].
#[derive(Debug, Clone)]
pub struct Epochs<'a> {
    order: &'a Order,
    current: EpochOrder<'a>,
    position: u64,
    walk: Walk,
}

impl Epochs<'_> {
    /// Where the next id comes from: save it to resume with
    /// [`Order::iter_from`]. At the end of an epoch this is position 0 of
    /// the next one.
    pub fn cursor(&self) -> Cursor {
        match self.current.epoch.checked_add(1) {
            Some(next) if self.position >= self.order.len && self.order.len > 0 => Cursor {
                epoch: next,
                position: 0,
            },
            _ => Cursor {
                epoch: self.current.epoch,
                position: self.position,
            },
        }
    }
}

impl Iterator for Epochs<'_> {
    type Item = u64;

    #[inline]
    fn next(&mut self) -> Option<u64> {
        if self.order.len == 0 {
            return None;
        }
        if self.position >= self.order.len {
            let next = self.current.epoch.checked_add(1)?;
            self.current = self.order.epoch(next);
            self.position = 0;
            self.walk.reset();
        }
        let id = self.current.next_id(&mut self.walk, self.position);
        self.position += 1;
        Some(id)
    }
}

impl FusedIterator for Epochs<'_> {}

/// One epoch's ids for one worker, collected: a convenience for tests and
/// the command line (8 bytes per id; iterate [`Order::epoch`] to stream).
///
/// # Errors
///
/// As [`Order::new`].
pub fn order_ids(
    count: u64,
    offsets: &[u64],
    spec: &OrderSpec,
    epoch: u64,
) -> Result<Vec<u64>, OrderError> {
    let order = Order::new(count, offsets, *spec)?;
    let ids = order.epoch(epoch).iter().collect();
    Ok(ids)
}

/// The whole epoch order, before it is split into parts: position to id.
#[derive(Clone)]
enum Base<'a> {
    Sequential,
    Shuffle(Bijection),
    Units(Units<'a>),
}

impl Base<'_> {
    /// The id at position `p < count` of the epoch order.
    #[inline]
    fn get(&self, p: u64) -> u64 {
        match self {
            Base::Sequential => p,
            Base::Shuffle(feistel) => feistel.apply(p),
            Base::Units(units) => units.get(p),
        }
    }
}
