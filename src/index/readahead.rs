//! Readahead that follows an order: advice to the kernel about the pages the
//! next records need.

use std::io;
use std::ops::Range;

use super::table::Index;

/// Something mapped that can take access advice (`madvise`) for its bytes:
/// a memory map ([`memmap2::Mmap`], on Unix), or a type that holds one.
///
/// Advice is only a hint: implementations may do nothing (non-Unix, data read
/// into memory rather than mapped), and errors are worth ignoring.
pub trait Advise {
    /// The mapped bytes will be needed soon (`MADV_WILLNEED`: start reading
    /// them in). `range` is within the map; it need not be page-aligned.
    fn will_need(&self, range: Range<usize>) -> io::Result<()>;

    /// The whole map will be read in random order (`MADV_RANDOM`: no
    /// kernel readahead around faults).
    fn random(&self) -> io::Result<()>;

    /// The whole map will be read in order (`MADV_SEQUENTIAL`: aggressive
    /// readahead).
    fn sequential(&self) -> io::Result<()>;
}

/// Whatever may hold a map takes advice through it: a value without one
/// (data read into memory, a compressed file's inflated spans, non-Unix)
/// ignores it.
impl Advise for Option<&memmap2::Mmap> {
    fn will_need(&self, range: Range<usize>) -> io::Result<()> {
        match self {
            #[cfg(unix)]
            Some(m) => m.will_need(range),
            _ => Ok(()),
        }
    }

    fn random(&self) -> io::Result<()> {
        match self {
            #[cfg(unix)]
            Some(m) => m.random(),
            _ => Ok(()),
        }
    }

    fn sequential(&self) -> io::Result<()> {
        match self {
            #[cfg(unix)]
            Some(m) => m.sequential(),
            _ => Ok(()),
        }
    }
}

/// A record file takes advice through its map, when it is mapped.
impl Advise for crate::io::RecordFile {
    fn will_need(&self, range: Range<usize>) -> io::Result<()> {
        self.mmap().will_need(range)
    }

    fn random(&self) -> io::Result<()> {
        self.mmap().random()
    }

    fn sequential(&self) -> io::Result<()> {
        self.mmap().sequential()
    }
}

/// A byte source takes advice through its map, when it has one.
impl Advise for dyn crate::io::ByteSource + '_ {
    fn will_need(&self, range: Range<usize>) -> io::Result<()> {
        self.mmap().will_need(range)
    }

    fn random(&self) -> io::Result<()> {
        self.mmap().random()
    }

    fn sequential(&self) -> io::Result<()> {
        self.mmap().sequential()
    }
}

#[cfg(unix)]
impl Advise for memmap2::Mmap {
    fn will_need(&self, range: Range<usize>) -> io::Result<()> {
        let end = range.end.min(self.len());
        let start = range.start.min(end);
        if start == end {
            return Ok(());
        }
        self.advise_range(memmap2::Advice::WillNeed, start, end - start)
    }

    fn random(&self) -> io::Result<()> {
        self.advise(memmap2::Advice::Random)
    }

    fn sequential(&self) -> io::Result<()> {
        self.advise(memmap2::Advice::Sequential)
    }
}

/// How the records of a mapped data file are about to be read, for the
/// kernel's readahead ([`Shard::advise`](crate::dataset::Shard::advise),
/// [`Dataset::advise`](crate::dataset::Dataset::advise)).
///
/// Reading by id in a shuffled order wants [`Access::Random`]: without it a
/// cold read of one record makes the kernel read ahead a window of pages
/// around it that the next, far-away id does not want (on a cold 2 GB file,
/// 1000 random `get`s read 2 GB from disk without the advice, 0.3 GB with
/// it). Reading in file order wants [`Access::Sequential`]. A shard opens
/// advised for random access.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Access {
    /// By id in any order (`MADV_RANDOM`: no readahead around a fault).
    Random,
    /// In file order (`MADV_SEQUENTIAL`: aggressive readahead).
    Sequential,
}

impl Access {
    /// Gives this advice for all of `mapped`.
    pub fn advise(self, mapped: &(impl Advise + ?Sized)) -> io::Result<()> {
        match self {
            Access::Random => mapped.random(),
            Access::Sequential => mapped.sequential(),
        }
    }
}

/// Order-driven readahead over a mapped data file: before reading the next
/// records of an epoch's order, tell the kernel which byte ranges they need.
///
/// On the first call it advises the whole map once: `Random` for a shuffled
/// order (kernel readahead around a fault would read pages the order does not
/// want next), `Sequential` for file order. Then each call advises `WillNeed`
/// for the frames of the ids it is given, merging ranges that touch the same
/// or adjacent pages as they come (no allocation, no sorting: orders that are
/// sequential inside a page group give one range per group).
///
/// ```
/// use recordwire::frame::{file_of, Framing};
/// use recordwire::index::{Index, Readahead};
///
/// let data = file_of(Framing::TfRecord, [&[0u8; 10000][..], &[1; 100], &[2; 10000], &[3; 100]]);
/// let index = Index::build(&data, Framing::TfRecord, false)?;
/// assert_eq!(index.offsets(), [0, 10016, 10132, 20148, 20264]);
/// let mut ranges = Vec::new();
/// // Record 3 is alone in page 4; records 1 and 0 touch pages 0 to 2.
/// Readahead::ranges(&index, &[3, 1, 0], 4096, |r| ranges.push(r));
/// assert_eq!(ranges, [20148..20264, 0..10132]);
/// # Ok::<(), recordwire::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Readahead {
    shuffled: bool,
    page: u64,
    mode_advised: bool,
}

impl Readahead {
    /// Readahead for an order that is `shuffled` (or in file order), with
    /// pages of 4096 bytes for merging.
    pub fn new(shuffled: bool) -> Self {
        Readahead {
            shuffled,
            page: 4096,
            mode_advised: false,
        }
    }

    /// Sets the page size used to merge ranges (a power of two; default 4096).
    #[must_use]
    pub fn with_page_size(mut self, page: u64) -> Self {
        self.page = page.max(1);
        self
    }

    /// Advises `map` (the mapped data file of `index`) of the records
    /// `next_ids` (ids past the end are ignored), and of the order's kind on
    /// the first call. Returns the first error advice gave, after trying every
    /// range.
    pub fn advise<A: Advise + ?Sized>(
        &mut self,
        index: &Index,
        map: &A,
        next_ids: &[u64],
    ) -> io::Result<()> {
        let mut first_err = None;
        if !self.mode_advised {
            self.mode_advised = true;
            let r = if self.shuffled {
                map.random()
            } else {
                map.sequential()
            };
            first_err = r.err();
        }
        Readahead::ranges(index, next_ids, self.page, |range| {
            let (Ok(start), Ok(end)) = (usize::try_from(range.start), usize::try_from(range.end))
            else {
                return;
            };
            if let Err(e) = map.will_need(start..end) {
                first_err.get_or_insert(e);
            }
        });
        first_err.map_or(Ok(()), Err)
    }

    /// The byte ranges [`advise`](Self::advise) asks for: the frame ranges
    /// ([`Index::frame_range`]) of `ids`, in the order given, merged when the
    /// next one starts in the same page as the current one ends, or the page
    /// after.
    pub fn ranges(index: &Index, ids: &[u64], page: u64, mut each: impl FnMut(Range<u64>)) {
        let page = page.max(1);
        let mut current: Option<Range<u64>> = None;
        for &id in ids {
            let Some(r) = index.frame_range(id) else {
                continue;
            };
            if r.end <= r.start {
                continue;
            }
            current = match current {
                Some(c)
                    if r.start / page <= c.end / page + 1 && c.start / page <= r.end / page + 1 =>
                {
                    Some(c.start.min(r.start)..c.end.max(r.end))
                }
                Some(c) => {
                    each(c);
                    Some(r)
                }
                None => Some(r),
            };
        }
        if let Some(c) = current {
            each(c);
        }
    }
}
