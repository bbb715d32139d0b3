//! The one error of this module: an invalid order specification.

/// Why an [`Order`](super::Order) cannot be built, or a cursor cannot be
/// used with it.
///
/// Every variant but [`UnsortedOffsets`](OrderError::UnsortedOffsets) and
/// [`TooFewOffsets`](OrderError::TooFewOffsets) is a usage error; those two
/// say that the offsets (usually an index) are not those of a record file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum OrderError {
    /// `world` is 0.
    #[error("the world size must be at least 1")]
    ZeroWorld,
    /// `rank >= world`.
    #[error(
        "rank {rank} is out of range for a world of {world} (ranks are 0 to {})",
        .world.saturating_sub(1)
    )]
    RankOutOfRange {
        /// The rank asked for.
        rank: u32,
        /// The number of ranks.
        world: u32,
    },
    /// `workers` is 0.
    #[error("the number of workers must be at least 1")]
    ZeroWorkers,
    /// `worker >= workers`.
    #[error(
        "worker {worker} is out of range for {workers} workers (workers are 0 to {})",
        .workers.saturating_sub(1)
    )]
    WorkerOutOfRange {
        /// The worker asked for.
        worker: u32,
        /// The number of workers per rank.
        workers: u32,
    },
    /// A page mode with `page_size` 0.
    #[error("the page size must be at least 1 byte")]
    ZeroPageSize,
    /// [`Mode::QuasiRandom`](super::Mode::QuasiRandom) with a `window` of 0
    /// or more than [`MAX_WINDOW`](super::MAX_WINDOW) pages.
    #[error(
        "a window of {window} pages is out of range: it must hold 1 to {} pages",
        super::MAX_WINDOW
    )]
    WindowOutOfRange {
        /// The window asked for.
        window: u32,
    },
    /// A page mode was given fewer offsets than records.
    #[error(
        "{count} records but only {offsets} offsets: a page mode needs the offset of every record"
    )]
    TooFewOffsets {
        /// The record count.
        count: u64,
        /// The number of offsets given.
        offsets: u64,
    },
    /// The offset of record `id` is smaller than the one before it.
    #[error(
        "offsets are not sorted: record {id} starts at byte {offset}, before record {} at byte {previous}",
        .id.saturating_sub(1)
    )]
    UnsortedOffsets {
        /// The record whose offset is out of order.
        id: u64,
        /// The offset of record `id - 1`.
        previous: u64,
        /// The offset of record `id`.
        offset: u64,
    },
    /// A cursor's position is past the end of its epoch.
    #[error("cursor position {position} is past the end of an epoch of {len} ids")]
    CursorOutOfRange {
        /// The cursor's position.
        position: u64,
        /// The number of ids in each epoch of this order.
        len: u64,
    },
}
