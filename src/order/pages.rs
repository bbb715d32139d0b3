//! Page groups: which records start a new page, as one bit per record with a
//! rank directory and select samples.

use super::OrderError;

/// Words of the bit vector per rank-directory entry (512 records).
const WORDS_PER_BLOCK: usize = 8;

/// Records per block of the rank directory.
const BLOCK: usize = 64 * WORDS_PER_BLOCK;

/// Groups per select sample.
const SAMPLE: u64 = 512;

/// The page groups of a file: group `g` is the `g`-th run of consecutive
/// records that start in the same page.
///
/// Stored as one bit per record (set when the record starts a group), the
/// count of set bits before every block of 512 records, and the block of
/// every 512th set bit: at most 0.16 bytes per record, whatever the count.
#[derive(Clone, PartialEq, Eq)]
pub(crate) struct PageGroups {
    count: u64,
    groups: u64,
    words: Vec<u64>,
    /// `ranks[b]` = set bits in `words[..b * WORDS_PER_BLOCK]`.
    ranks: Vec<u64>,
    /// `samples[i]` = the block holding set bit number `i * SAMPLE`.
    samples: Vec<u64>,
}

impl std::fmt::Debug for PageGroups {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PageGroups")
            .field("count", &self.count)
            .field("groups", &self.groups)
            .finish_non_exhaustive()
    }
}

impl PageGroups {
    /// Groups the first `count` of `offsets` by `offset / page_size`.
    ///
    /// `page_size` is not 0 (checked by the caller).
    pub(crate) fn new(count: u64, offsets: &[u64], page_size: u64) -> Result<Self, OrderError> {
        let available = offsets.len() as u64;
        if available < count {
            return Err(OrderError::TooFewOffsets {
                count,
                offsets: available,
            });
        }
        // `count <= offsets.len()`, so it fits in usize.
        let offsets = &offsets[..count as usize];
        let mut words = vec![0u64; offsets.len().div_ceil(64)];
        let mut ranks = Vec::with_capacity(words.len().div_ceil(WORDS_PER_BLOCK));
        let mut samples = Vec::with_capacity(offsets.len().div_ceil(SAMPLE as usize));
        let mut groups = 0u64;
        let mut previous: Option<(u64, u64)> = None; // (offset, page)
        for (id, &offset) in offsets.iter().enumerate() {
            let page = offset / page_size;
            let starts = match previous {
                Some((before, _)) if offset < before => {
                    return Err(OrderError::UnsortedOffsets {
                        id: id as u64,
                        previous: before,
                        offset,
                    })
                }
                Some((_, before_page)) => page != before_page,
                None => true,
            };
            if id % BLOCK == 0 {
                ranks.push(groups);
            }
            if starts {
                if groups.is_multiple_of(SAMPLE) {
                    samples.push((id / BLOCK) as u64);
                }
                words[id / 64] |= 1 << (id % 64);
                groups += 1;
            }
            previous = Some((offset, page));
        }
        Ok(PageGroups {
            count,
            groups,
            words,
            ranks,
            samples,
        })
    }

    /// The number of groups.
    #[inline]
    pub(crate) fn len(&self) -> u64 {
        self.groups
    }

    /// The id of the first record of group `g` (`g < len()`).
    fn select(&self, g: u64) -> u64 {
        debug_assert!(g < self.groups);
        // The samples bracket the blocks to search: the last block with at
        // most `g` set bits before it lies between the blocks of set bits
        // number ⌊g / SAMPLE⌋·SAMPLE and the next sample.
        let sample = (g / SAMPLE) as usize;
        let low = self.samples.get(sample).map_or(0, |&b| b as usize);
        let high = self
            .samples
            .get(sample + 1)
            .map_or(self.ranks.len(), |&b| b as usize + 1)
            .min(self.ranks.len());
        let block = low
            + self
                .ranks
                .get(low..high)
                .map_or(0, |ranks| ranks.partition_point(|&r| r <= g))
                .saturating_sub(1);
        let mut before = self.ranks.get(block).copied().unwrap_or(0);
        for (i, &word) in self.words.iter().enumerate().skip(block * WORDS_PER_BLOCK) {
            let ones = u64::from(word.count_ones());
            if before + ones > g {
                return i as u64 * 64 + u64::from(select_in_word(word, (g - before) as u32));
            }
            before += ones;
        }
        // Unreachable for g < len(); the end is a safe answer.
        self.count
    }

    /// The first record after `id` that starts a group, or the count.
    fn next_start(&self, id: u64) -> u64 {
        let next = id + 1;
        if next >= self.count {
            return self.count;
        }
        let mut i = (next / 64) as usize;
        let mut word = self
            .words
            .get(i)
            .map_or(0, |&w| w & (u64::MAX << (next % 64)));
        while word == 0 {
            i += 1;
            match self.words.get(i) {
                Some(&w) => word = w,
                None => return self.count,
            }
        }
        (i as u64 * 64 + u64::from(word.trailing_zeros())).min(self.count)
    }

    /// The ids `[first, end)` of the records of group `g` (`g < len()`).
    #[inline]
    pub(crate) fn bounds(&self, g: u64) -> (u64, u64) {
        let first = self.select(g);
        (first, self.next_start(first))
    }

    /// The bytes held, for the memory bound's test.
    #[cfg(test)]
    pub(crate) fn heap_bytes(&self) -> usize {
        (self.words.capacity() + self.ranks.capacity() + self.samples.capacity()) * 8
    }
}

/// The position of set bit number `r` (from 0, `r < word.count_ones()`).
#[inline]
fn select_in_word(mut word: u64, mut r: u32) -> u32 {
    let mut base = 0;
    for width in [32, 16, 8] {
        let low = (word & ((1u64 << width) - 1)).count_ones();
        if r >= low {
            r -= low;
            word >>= width;
            base += width;
        }
    }
    for _ in 0..r {
        word &= word - 1;
    }
    base + word.trailing_zeros()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn naive(offsets: &[u64], page_size: u64) -> Vec<(u64, u64)> {
        let mut groups: Vec<(u64, u64)> = Vec::new();
        for (id, &offset) in offsets.iter().enumerate() {
            let id = id as u64;
            match groups.last_mut() {
                Some(last) if offsets[last.0 as usize] / page_size == offset / page_size => {
                    last.1 = id + 1
                }
                _ => groups.push((id, id + 1)),
            }
        }
        groups
    }

    #[test]
    fn select_agrees_with_a_naive_grouping() {
        let mut state = 99;
        for case in 0..60u64 {
            let count = (case * 37) % 2100;
            let page_size = [1, 7, 64, 4096][case as usize % 4];
            let mut offset = 0;
            let offsets: Vec<u64> = (0..count)
                .map(|_| {
                    let at = offset;
                    offset += crate::order::mix::splitmix64(&mut state) % (3 * page_size) + 1;
                    at
                })
                .collect();
            let groups = PageGroups::new(count, &offsets, page_size).unwrap();
            let expected = naive(&offsets, page_size);
            assert_eq!(groups.len(), expected.len() as u64);
            for (g, &bounds) in expected.iter().enumerate() {
                assert_eq!(groups.bounds(g as u64), bounds, "case {case}, group {g}");
            }
        }
    }

    #[test]
    fn select_in_word_finds_every_bit() {
        let mut state = 1;
        for _ in 0..2000 {
            let word = crate::order::mix::splitmix64(&mut state)
                & crate::order::mix::splitmix64(&mut state);
            let positions: Vec<u32> = (0..64).filter(|b| word >> b & 1 == 1).collect();
            for (r, &p) in positions.iter().enumerate() {
                assert_eq!(select_in_word(word, r as u32), p, "{word:#x} bit {r}");
            }
        }
        assert_eq!(select_in_word(u64::MAX, 63), 63);
        assert_eq!(select_in_word(1 << 63, 0), 63);
    }

    #[test]
    fn large_and_sparse_groups() {
        // 5000 records in 3 groups, then 3000 records each in its own group:
        // samples, blocks and long scans between starts.
        let mut offsets: Vec<u64> = (0..5000).map(|i| (i / 2000) * 100_000 + i).collect();
        offsets.extend((0..3000).map(|i| 1_000_000 + i * 5000));
        let groups = PageGroups::new(8000, &offsets, 4096).unwrap();
        let expected = naive(&offsets, 4096);
        assert_eq!(groups.len(), expected.len() as u64);
        for (g, &bounds) in expected.iter().enumerate() {
            assert_eq!(groups.bounds(g as u64), bounds, "group {g}");
        }
    }

    #[test]
    fn extra_offsets_are_ignored_and_equal_offsets_share_a_group() {
        let groups = PageGroups::new(3, &[0, 0, 5000, 1], 4096).unwrap();
        assert_eq!(groups.len(), 2);
        assert_eq!(groups.bounds(0), (0, 2));
        assert_eq!(groups.bounds(1), (2, 3));
    }

    #[test]
    fn bad_offsets_are_errors() {
        assert_eq!(
            PageGroups::new(3, &[0, 10], 4096),
            Err(OrderError::TooFewOffsets {
                count: 3,
                offsets: 2
            })
        );
        assert_eq!(
            PageGroups::new(3, &[0, 10, 9], 4096),
            Err(OrderError::UnsortedOffsets {
                id: 2,
                previous: 10,
                offset: 9
            })
        );
    }

    #[test]
    fn memory_is_at_most_0_16_bytes_per_record() {
        // One record per page: as many groups, and samples, as can be.
        let offsets: Vec<u64> = (0..100_000u64).map(|i| i * 5000).collect();
        let groups = PageGroups::new(100_000, &offsets, 4096).unwrap();
        assert_eq!(groups.len(), 100_000);
        assert!(groups.heap_bytes() <= 16_000, "{}", groups.heap_bytes());
    }
}
