//! The one error of this module: an invalid order specification.

use std::fmt;

/// Why an [`Order`](super::Order) cannot be built, or a cursor cannot be
/// used with it.
///
/// Every variant but [`UnsortedOffsets`](OrderError::UnsortedOffsets) and
/// [`TooFewOffsets`](OrderError::TooFewOffsets) is a usage error; those two
/// say that the offsets (usually an index) are not those of a record file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum OrderError {
    /// `world` is 0.
    ZeroWorld,
    /// `rank >= world`.
    RankOutOfRange {
        /// The rank asked for.
        rank: u32,
        /// The number of ranks.
        world: u32,
    },
    /// `workers` is 0.
    ZeroWorkers,
    /// `worker >= workers`.
    WorkerOutOfRange {
        /// The worker asked for.
        worker: u32,
        /// The number of workers per rank.
        workers: u32,
    },
    /// A page mode with `page_size` 0.
    ZeroPageSize,
    /// [`Mode::QuasiRandom`](super::Mode::QuasiRandom) with a `window` of 0
    /// or more than [`MAX_WINDOW`](super::MAX_WINDOW) pages.
    WindowOutOfRange {
        /// The window asked for.
        window: u32,
    },
    /// A page mode was given fewer offsets than records.
    TooFewOffsets {
        /// The record count.
        count: u64,
        /// The number of offsets given.
        offsets: u64,
    },
    /// The offset of record `id` is smaller than the one before it.
    UnsortedOffsets {
        /// The record whose offset is out of order.
        id: u64,
        /// The offset of record `id - 1`.
        previous: u64,
        /// The offset of record `id`.
        offset: u64,
    },
    /// A cursor's position is past the end of its epoch.
    CursorOutOfRange {
        /// The cursor's position.
        position: u64,
        /// The number of ids in each epoch of this order.
        len: u64,
    },
}

impl fmt::Display for OrderError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            OrderError::ZeroWorld => f.write_str("the world size must be at least 1"),
            OrderError::RankOutOfRange { rank, world } => write!(
                f,
                "rank {rank} is out of range for a world of {world} (ranks are 0 to {})",
                world.saturating_sub(1)
            ),
            OrderError::ZeroWorkers => f.write_str("the number of workers must be at least 1"),
            OrderError::WorkerOutOfRange { worker, workers } => write!(
                f,
                "worker {worker} is out of range for {workers} workers (workers are 0 to {})",
                workers.saturating_sub(1)
            ),
            OrderError::ZeroPageSize => f.write_str("the page size must be at least 1 byte"),
            OrderError::WindowOutOfRange { window } => write!(
                f,
                "a window of {window} pages is out of range: it must hold 1 to {} pages",
                super::MAX_WINDOW
            ),
            OrderError::TooFewOffsets { count, offsets } => write!(
                f,
                "{count} records but only {offsets} offsets: a page mode needs the offset of every record"
            ),
            OrderError::UnsortedOffsets {
                id,
                previous,
                offset,
            } => write!(
                f,
                "offsets are not sorted: record {id} starts at byte {offset}, before record {} at byte {previous}",
                id.saturating_sub(1)
            ),
            OrderError::CursorOutOfRange { position, len } => write!(
                f,
                "cursor position {position} is past the end of an epoch of {len} ids"
            ),
        }
    }
}

impl std::error::Error for OrderError {}
