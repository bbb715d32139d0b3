//! Page groups: which records start a new page, as one bit per record with a
//! rank directory for `select`.

use super::OrderError;

/// Words of the bit vector per rank-directory entry (512 records).
const WORDS_PER_BLOCK: usize = 8;

/// The page groups of a file: group `g` is the `g`-th run of consecutive
/// records that start in the same page.
///
/// Stored as one bit per record (set when the record starts a group) plus
/// the count of set bits before every 512 records: about 0.14 bytes per
/// record, whatever the count.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PageGroups {
    count: u64,
    groups: u64,
    words: Vec<u64>,
    /// `ranks[b]` = set bits in `words[..b * WORDS_PER_BLOCK]`.
    ranks: Vec<u64>,
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
            if id % (64 * WORDS_PER_BLOCK) == 0 {
                ranks.push(groups);
            }
            if starts {
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
        // The last block with at most `g` set bits before it (block 0 has 0).
        let block = self.ranks.partition_point(|&r| r <= g).saturating_sub(1);
        let mut before = self.ranks.get(block).copied().unwrap_or(0);
        for (i, &word) in self.words.iter().enumerate().skip(block * WORDS_PER_BLOCK) {
            let ones = u64::from(word.count_ones());
            if before + ones > g {
                let mut w = word;
                for _ in 0..g - before {
                    w &= w - 1;
                }
                return i as u64 * 64 + u64::from(w.trailing_zeros());
            }
            before += ones;
        }
        // Unreachable for g < len(); the end is a safe answer.
        self.count
    }

    /// The ids `[first, end)` of the records of group `g` (`g < len()`).
    #[inline]
    pub(crate) fn bounds(&self, g: u64) -> (u64, u64) {
        let first = self.select(g);
        let end = if g + 1 < self.groups {
            self.select(g + 1)
        } else {
            self.count
        };
        (first, end)
    }

    /// The bytes held, for the memory bound's test.
    #[cfg(test)]
    pub(crate) fn heap_bytes(&self) -> usize {
        (self.words.capacity() + self.ranks.capacity()) * 8
    }
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
                    offset += super::super::mix::splitmix64(&mut state) % (3 * page_size) + 1;
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
    fn memory_is_under_a_quarter_byte_per_record() {
        let offsets: Vec<u64> = (0..100_000u64).map(|i| i * 5000).collect();
        let groups = PageGroups::new(100_000, &offsets, 4096).unwrap();
        assert_eq!(groups.len(), 100_000);
        assert!(
            groups.heap_bytes() <= 100_000 / 4,
            "{}",
            groups.heap_bytes()
        );
    }
}
