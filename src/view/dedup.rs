//! Finding the map keys that repeat, in one walk of the entries and without
//! allocating: which entries a later entry with the same key replaces (for
//! [`Effective`](super::Effective) and the maps' `len`), and strict mode's
//! first duplicate key.
//!
//! The names of a window of up to [`WINDOW`] consecutive entries go into an
//! open-addressing table on the stack, keyed by a hash of the name (the
//! names' bytes are compared when the hashes match, so colliding names stay
//! apart). The table starts with 32 slots and grows to 128, 512 and then 2 048
//! as new names arrive, so a small map initialises a small table. Entries
//! after the window are only looked up in it, since they can replace a
//! window entry but nothing the window needs to remember.
//!
//! A map of at most [`WINDOW`] entries is thus one walk and one hash
//! lookup per entry. A larger one takes one walk per
//! window, each over the entries from that window on: about n / WINDOW
//! walks, n² / (2 · WINDOW) lookups. That is the price of a table of fixed
//! size (the read path allocates nothing), and maps that wide are rare.
//!
//! Probing is linear, at most half the slots are used, and a name's hash is
//! fixed: names built to collide make lookups slower (at most one probe per
//! name in the window, as for the comparison of every pair), never wrong.

use super::entry::Entries;
use super::hash::hash_name;
use crate::wire::DecodeError;

/// Entries whose names one table holds: maps of up to this many entries
/// are checked in one walk.
pub(super) const WINDOW: usize = 1024;

/// Words of the bit set of replaced entries in a window.
pub(super) const WORDS: usize = WINDOW / 64;

/// A name in the table: its hash, and the window position of its last
/// entry so far (for the effective map) or of its first (for strict mode).
#[derive(Clone, Copy)]
struct Row<'a> {
    name: &'a [u8],
    hash: u32,
    pos: u32,
}

impl Row<'_> {
    const EMPTY: Row<'static> = Row {
        name: &[],
        hash: 0,
        pos: 0,
    };
}

/// An open-addressing table of up to `CAP` distinct names in `SLOTS`
/// slots (a power of two, at least twice `CAP`), each slot 0 (empty) or
/// the index of its row plus one.
struct Table<'a, const CAP: usize, const SLOTS: usize> {
    rows: [Row<'a>; CAP],
    slots: [u16; SLOTS],
    len: usize,
}

impl<'a, const CAP: usize, const SLOTS: usize> Table<'a, CAP, SLOTS> {
    const SHAPE: () = assert!(
        SLOTS.is_power_of_two() && SLOTS >= 2 * CAP && CAP < u16::MAX as usize && CAP <= WINDOW
    );

    #[inline]
    fn new() -> Self {
        let () = Self::SHAPE;
        Table {
            rows: [Row::EMPTY; CAP],
            slots: [0; SLOTS],
            len: 0,
        }
    }

    /// The row of `name`, or the empty slot where it would go.
    #[inline]
    fn find(&self, name: &[u8], hash: u32) -> Result<usize, usize> {
        let mask = SLOTS - 1;
        let mut s = hash as usize & mask;
        loop {
            let r = self.slots[s] as usize;
            if r == 0 {
                return Err(s);
            }
            if let Some(row) = self.rows.get(r - 1) {
                if row.hash == hash && row.name == name {
                    return Ok(r - 1);
                }
            }
            s = (s + 1) & mask;
        }
    }

    /// Puts a new name in the empty slot `slot` (from [`find`](Self::find));
    /// gives it back when the table is full.
    #[inline]
    fn add(&mut self, slot: usize, row: Row<'a>) -> Result<(), Row<'a>> {
        let Some(r) = self.rows.get_mut(self.len) else {
            return Err(row);
        };
        *r = row;
        self.len += 1;
        self.slots[slot & (SLOTS - 1)] = self.len as u16;
        Ok(())
    }

    /// A larger table holding the same rows.
    fn grown<const CAP2: usize, const SLOTS2: usize>(&self) -> Table<'a, CAP2, SLOTS2> {
        let mut t = Table::new();
        for &row in &self.rows[..self.len] {
            if let Err(slot) = t.find(row.name, row.hash) {
                let _ = t.add(slot, row);
            }
        }
        t
    }
}

/// What a walk looks for.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Goal {
    /// The window's entries that a later entry replaces.
    Replaced,
    /// The first entry (in wire order) that a later entry repeats, and that
    /// later entry.
    FirstDuplicate,
}

/// The state of one walk over the entries from a window on.
#[derive(Clone, Debug)]
pub(super) struct Walk<'a> {
    entries: Entries<'a>,
    /// Position of the window's first entry (counted from the map's first).
    pub(super) start: usize,
    /// Position of the next entry `entries` yields.
    pos: usize,
    /// Entries before the first damaged one (all of them when none is):
    /// `usize::MAX` until the walk has found where they end.
    pub(super) limit: usize,
    /// The first damaged entry's error (at position `limit`).
    pub(super) error: Option<DecodeError>,
    /// Bit i: the window's entry i is replaced by a later entry.
    pub(super) replaced: [u64; WORDS],
    /// The entries from the window's end on (when the map goes on past it).
    pub(super) rest: Option<Entries<'a>>,
    /// Window positions of the first entry with a later duplicate, and the
    /// offset of its next entry.
    first_duplicate: Option<(u32, u64)>,
}

impl<'a> Walk<'a> {
    /// A walk of the window of entries starting at `entries` (at position
    /// `start`); `limit` and `error` as far as known.
    pub(super) fn new(
        entries: Entries<'a>,
        start: usize,
        limit: usize,
        error: Option<DecodeError>,
    ) -> Self {
        Walk {
            entries,
            start,
            pos: start,
            limit,
            error,
            replaced: [0; WORDS],
            rest: None,
            first_duplicate: None,
        }
    }

    /// Where the window ends (exclusive): after [`WINDOW`] entries or at
    /// the limit. Valid after a walk.
    pub(super) fn end(&self) -> usize {
        self.limit.min(self.start.saturating_add(WINDOW))
    }

    /// Entries of the window that no later entry replaces.
    pub(super) fn effective_in_window(&self) -> usize {
        let replaced: u32 = self.replaced.iter().map(|w| w.count_ones()).sum();
        self.end() - self.start - replaced as usize
    }

    /// The next entry's name and offset before the limit, finding the limit
    /// on the way.
    #[inline(always)]
    fn next(&mut self) -> Option<(&'a [u8], u64)> {
        if self.pos >= self.limit {
            return None;
        }
        match self.entries.next_name() {
            Some(Ok(e)) => {
                self.pos += 1;
                if self.pos - self.start == WINDOW {
                    self.rest = Some(self.entries.clone());
                }
                Some(e)
            }
            Some(Err(e)) => {
                self.limit = self.pos;
                self.error = Some(e);
                None
            }
            None => {
                self.limit = self.pos;
                None
            }
        }
    }

    /// Marks the window's entries that a later entry replaces: the rest of
    /// the entries (up to the first damaged one) walked once.
    pub(super) fn mark_replaced(&mut self) {
        self.run::<{ Goal::Replaced as u8 }>();
    }

    /// Strict mode's duplicate check of the map whose entries are
    /// `entries`: the offset of the entry that repeats the first entry (in
    /// wire order) to have a later duplicate, or `None`.
    ///
    /// When an entry is damaged it answers as the check of every later
    /// entry for each entry did: the duplicate of the map's first entry
    /// when one comes before the damaged entry, else the damaged entry's
    /// error.
    pub(super) fn first_duplicate(mut entries: Entries<'a>) -> Result<Option<u64>, DecodeError> {
        let mut start = 0;
        loop {
            let mut w = Walk::new(entries, start, usize::MAX, None);
            w.run::<{ Goal::FirstDuplicate as u8 }>();
            match (w.first_duplicate, w.error) {
                (Some((0, offset)), _) if start == 0 => return Ok(Some(offset)),
                (_, Some(e)) => return Err(e),
                (Some((_, offset)), None) => return Ok(Some(offset)),
                (None, None) => {}
            }
            let end = w.end();
            match w.rest {
                Some(rest) if w.limit > end => {
                    entries = rest;
                    start = end;
                }
                _ => return Ok(None),
            }
        }
    }

    /// The walk, with a table grown as the window's names need: 16 names in
    /// 32 slots, then 64, 256 and [`WINDOW`] names (each table is
    /// initialised when it is needed, so a small map pays for a small one).
    #[inline]
    fn run<const GOAL: u8>(&mut self) {
        let mut t = Table::<16, 32>::new();
        if let Err(row) = self.fill::<16, 32, GOAL>(&mut t) {
            self.run_64::<GOAL>(&t, row);
        }
    }

    /// The walk once more than 16 names are in the window.
    #[inline(never)]
    fn run_64<const GOAL: u8>(&mut self, smaller: &Table<'a, 16, 32>, row: Row<'a>) {
        let mut t = smaller.grown::<64, 128>();
        if t.add_new(row).is_ok() {
            if let Err(row) = self.fill::<64, 128, GOAL>(&mut t) {
                self.run_256::<GOAL>(&t, row);
            }
        }
    }

    /// The walk once more than 64 names are in the window.
    #[inline(never)]
    fn run_256<const GOAL: u8>(&mut self, smaller: &Table<'a, 64, 128>, row: Row<'a>) {
        let mut t = smaller.grown::<256, 512>();
        if t.add_new(row).is_ok() {
            if let Err(row) = self.fill::<256, 512, GOAL>(&mut t) {
                self.run_widest::<GOAL>(&t, row);
            }
        }
    }

    /// The walk once more than 256 names are in the window.
    #[inline(never)]
    fn run_widest<const GOAL: u8>(&mut self, smaller: &Table<'a, 256, 512>, row: Row<'a>) {
        let mut t = smaller.grown::<WINDOW, { 2 * WINDOW }>();
        if t.add_new(row).is_ok() {
            // A window of WINDOW entries has at most WINDOW names: never full.
            let full = self.fill::<WINDOW, { 2 * WINDOW }, GOAL>(&mut t);
            debug_assert!(full.is_ok());
        }
    }

    /// Walks the window into `t`, then looks the later entries up in it.
    /// Returns the row of a new name that does not fit in `t` (the entry
    /// has been read; its name goes into the next table).
    #[inline]
    fn fill<const CAP: usize, const SLOTS: usize, const GOAL: u8>(
        &mut self,
        t: &mut Table<'a, CAP, SLOTS>,
    ) -> Result<(), Row<'a>> {
        let first = GOAL == Goal::FirstDuplicate as u8;
        while self.pos - self.start < WINDOW {
            let Some((name, offset)) = self.next() else {
                return Ok(());
            };
            let hash = hash_name(name);
            let pos = (self.pos - 1 - self.start) as u32;
            match t.find(name, hash) {
                Ok(r) => {
                    let row = &mut t.rows[r];
                    if first {
                        if self.found_duplicate(row.pos, offset) {
                            return Ok(());
                        }
                    } else {
                        mark(&mut self.replaced, row.pos);
                        row.pos = pos;
                    }
                }
                Err(slot) => t.add(slot, Row { name, hash, pos })?,
            }
        }
        // The window is full: later entries can only repeat its names.
        while let Some((name, offset)) = self.next() {
            if let Ok(r) = t.find(name, hash_name(name)) {
                let at = t.rows[r].pos;
                if first {
                    if self.found_duplicate(at, offset) {
                        return Ok(());
                    }
                } else {
                    mark(&mut self.replaced, at);
                }
            }
        }
        Ok(())
    }

    /// Records that the window's entry at `first` repeats at `offset`;
    /// returns whether the check is settled (nothing can come before it).
    #[inline]
    fn found_duplicate(&mut self, first: u32, offset: u64) -> bool {
        match self.first_duplicate {
            Some((f, _)) if f <= first => {}
            _ => self.first_duplicate = Some((first, offset)),
        }
        first == 0
    }
}

/// Whether a map of at most 64 entries repeats no name, found by another
/// walk of it (validation) as it meets the names: one hash and one probe
/// of a small table of hashes per entry, no walk of its own. The views made
/// by `parse` keep the answer (see [`Effective`](super::Effective)), so
/// iterating and counting a validated map whose names are all distinct does
/// not walk it once more to look for replaced entries.
///
/// Only the 32-bit hashes are kept (no names to compare), so two names
/// with the same hash count as a repeat: the answer is then "not known" and
/// the map is walked as before, which compares the names. Never wrong,
/// at worst slower for maps that do repeat a name.
pub(super) struct Seen {
    /// Open addressing, linear probing: 0 empty, else a hash (0 kept as 1).
    slots: [u32; 128],
    /// Entries met so far.
    count: usize,
    /// Two entries had the same hash.
    repeat: bool,
}

impl Seen {
    pub(super) fn new() -> Self {
        Seen {
            slots: [0; 128],
            count: 0,
            repeat: false,
        }
    }

    /// The next entry's name.
    #[inline]
    pub(super) fn add(&mut self, name: &[u8]) {
        self.count += 1;
        if self.count > 64 || self.repeat {
            return;
        }
        let h = hash_name(name).max(1);
        let mut s = h as usize;
        loop {
            let slot = &mut self.slots[s % 128];
            if *slot == 0 {
                *slot = h;
                return;
            }
            if *slot == h {
                self.repeat = true;
                return;
            }
            s += 1;
        }
    }

    /// Entries met so far.
    pub(super) fn count(&self) -> usize {
        self.count
    }

    /// Bit i set for each entry i when the map has 1 to 64 entries and no
    /// two of their names have the same hash (every entry is effective);
    /// else 0, for not known.
    pub(super) fn effective(&self) -> u64 {
        match (self.count, self.repeat) {
            (1..=64, false) => u64::MAX >> (64 - self.count),
            _ => 0,
        }
    }
}

impl<'a, const CAP: usize, const SLOTS: usize> Table<'a, CAP, SLOTS> {
    /// Adds a name known not to be in the table.
    fn add_new(&mut self, row: Row<'a>) -> Result<(), Row<'a>> {
        match self.find(row.name, row.hash) {
            Err(slot) => self.add(slot, row),
            Ok(_) => Ok(()),
        }
    }
}

#[inline]
fn mark(bits: &mut [u64; WORDS], pos: u32) {
    let pos = pos as usize % WINDOW;
    bits[pos / 64] |= 1 << (pos % 64);
}
