//! The order modes: how one epoch's ids are ordered (see the module docs of
//! [`crate::order`], Modes).

/// How one epoch's ids are ordered before the epoch is split into parts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Mode {
    /// File order.
    #[default]
    Sequential,
    /// A uniformly distributed permutation of all records.
    Shuffle,
    /// Records grouped by the page in which they start, the groups shuffled,
    /// file order inside each group.
    PageAware {
        /// The page size in bytes (see [`DEFAULT_PAGE_SIZE`](super::DEFAULT_PAGE_SIZE)); not 0.
        page_size: u64,
    },
    /// The page-aware group order cut into windows of `window` pages, the
    /// records of each window shuffled together.
    QuasiRandom {
        /// The page size in bytes; not 0.
        page_size: u64,
        /// The number of pages shuffled together (open at once): 1 to
        /// [`MAX_WINDOW`](super::MAX_WINDOW).
        window: u32,
    },
}

impl Mode {
    /// The mode's name on the command line: `sequential`, `shuffle`,
    /// `page-aware` or `quasi-random`.
    pub fn name(&self) -> &'static str {
        match self {
            Mode::Sequential => "sequential",
            Mode::Shuffle => "shuffle",
            Mode::PageAware { .. } => "page-aware",
            Mode::QuasiRandom { .. } => "quasi-random",
        }
    }

    /// The page size of the page modes.
    pub fn page_size(&self) -> Option<u64> {
        match *self {
            Mode::PageAware { page_size } | Mode::QuasiRandom { page_size, .. } => Some(page_size),
            Mode::Sequential | Mode::Shuffle => None,
        }
    }
}
