//! The epoch order of the page modes ([`Mode::PageAware`](super::Mode::PageAware)
//! and [`Mode::QuasiRandom`](super::Mode::QuasiRandom)): the shuffled page
//! groups cut into units of `window` groups, reached by position through
//! checkpoints ([`Units`]), and the state that lets an iterator step through
//! them without seeking ([`Walk`]). The module docs of [`crate::order`]
//! describe the order in words (page groups, quasi-random windows, cost).

use super::mix::{derive_key, Bijection, TAG_PAGES, TAG_WINDOW};
use super::pages::PageGroups;

/// The page modes keep a checkpoint every `⌈32 / window⌉` windows, so every
/// 32 groups or more.
const GROUPS_PER_CHECKPOINT: u64 = 32;

/// The page modes' epoch order: the shuffled page groups cut into units of
/// `window` groups (1 for page-aware), each unit's records in file order or
/// shuffled.
#[derive(Clone)]
pub(super) struct Units<'a> {
    groups: &'a PageGroups,
    /// π: shuffled position of a group to its number.
    pages: Bijection,
    window: u64,
    /// Shuffle each unit's records (quasi-random) or keep file order.
    shuffled: bool,
    seed: u64,
    epoch: u64,
    /// Units per checkpoint.
    stride: u64,
    /// `checkpoints[i]` = the first position of unit `i * stride`.
    pub(super) checkpoints: Vec<u64>,
}

impl<'a> Units<'a> {
    pub(super) fn new(
        groups: &'a PageGroups,
        seed: u64,
        epoch: u64,
        window: u64,
        shuffled: bool,
    ) -> Self {
        let mut units = Units {
            groups,
            pages: Bijection::new(groups.len(), derive_key(seed, TAG_PAGES, epoch, 0)),
            window,
            shuffled,
            seed,
            epoch,
            stride: GROUPS_PER_CHECKPOINT.div_ceil(window),
            checkpoints: Vec::new(),
        };
        let count = units.count();
        let mut checkpoints =
            Vec::with_capacity(usize::try_from(count.div_ceil(units.stride)).unwrap_or(0));
        let mut position = 0;
        for unit in 0..count {
            if unit % units.stride == 0 {
                checkpoints.push(position);
            }
            position += units.size(unit);
        }
        units.checkpoints = checkpoints;
        units
    }

    /// The number of units.
    fn count(&self) -> u64 {
        self.pages.len().div_ceil(self.window)
    }

    /// The shuffled positions of the groups of `unit`.
    fn members(&self, unit: u64) -> std::ops::Range<u64> {
        let first = unit * self.window;
        first..first.saturating_add(self.window).min(self.pages.len())
    }

    /// The record ids `[first, end)` of the group at shuffled position `j`.
    #[inline]
    fn group(&self, j: u64) -> (u64, u64) {
        self.groups.bounds(self.pages.apply(j))
    }

    /// The number of records in `unit`.
    fn size(&self, unit: u64) -> u64 {
        self.members(unit)
            .map(|j| {
                let (first, end) = self.group(j);
                end - first
            })
            .sum()
    }

    /// The order of `unit`'s records: `None` for file order.
    fn within(&self, unit: u64, size: u64) -> Option<Bijection> {
        self.shuffled
            .then(|| Bijection::new(size, derive_key(self.seed, TAG_WINDOW, self.epoch, unit)))
    }

    /// The unit holding position `p < count` of the epoch order, its first
    /// position and its size.
    fn locate(&self, p: u64) -> (u64, u64, u64) {
        let i = self
            .checkpoints
            .partition_point(|&c| c <= p)
            .saturating_sub(1);
        let mut unit = i as u64 * self.stride;
        let mut start = self.checkpoints.get(i).copied().unwrap_or(0);
        loop {
            let size = self.size(unit);
            if p - start < size || unit + 1 >= self.count() {
                return (unit, start, size);
            }
            start += size;
            unit += 1;
        }
    }

    /// The id at position `p < count` of the epoch order.
    pub(super) fn get(&self, p: u64) -> u64 {
        let (unit, start, size) = self.locate(p);
        let t = p - start;
        let mut index = self.within(unit, size).map_or(t, |f| f.apply(t));
        for j in self.members(unit) {
            let (first, end) = self.group(j);
            if index < end - first {
                return first + index;
            }
            index -= end - first;
        }
        // Unreachable: `t < size`.
        self.groups.len()
    }
}

/// The state of an iterator over a page-mode epoch: the current unit, its
/// groups' first ids and running sizes, and the next position expected.
#[derive(Debug, Clone, Default)]
pub(super) struct Walk {
    /// The position the cached unit is ready for; `None` before the first
    /// id or after a reset.
    next: Option<u64>,
    unit: u64,
    start: u64,
    size: u64,
    within: Option<Bijection>,
    /// (first id, running size after this group), in the unit's layout.
    groups: Vec<(u64, u64)>,
}

impl Walk {
    /// Forgets the cached unit (keeps the allocation).
    pub(super) fn reset(&mut self) {
        self.next = None;
    }

    fn load(&mut self, units: &Units<'_>, unit: u64, start: u64) {
        self.groups.clear();
        let mut size = 0;
        for j in units.members(unit) {
            let (first, end) = units.group(j);
            size += end - first;
            self.groups.push((first, size));
        }
        self.unit = unit;
        self.start = start;
        self.size = size;
        self.within = units.within(unit, size);
    }

    /// The id at position `p < count` of the epoch order.
    #[inline]
    pub(super) fn id_at(&mut self, units: &Units<'_>, p: u64) -> u64 {
        if self.next != Some(p) {
            let (unit, start, _) = units.locate(p);
            self.load(units, unit, start);
        } else if p - self.start >= self.size {
            self.load(units, self.unit + 1, self.start + self.size);
        }
        self.next = Some(p + 1);
        let t = p - self.start;
        let index = self.within.as_ref().map_or(t, |f| f.apply(t));
        let i = self.groups.partition_point(|&(_, end)| end <= index);
        let before = match i {
            0 => 0,
            _ => self.groups[i - 1].1,
        };
        self.groups
            .get(i)
            .map_or(units.groups.len(), |&(first, _)| first + (index - before))
    }
}
