//! Properties of the epoch orders (docs/FORMAT.md §7), through the public API only.
//!
//! For random record sizes and counts, every mode, seeds, epochs and shards:
//!
//! 1. every epoch is a permutation of `0..n`, the same every time it is
//!    computed, and `get`, `iter`, `iter_from` and cursors agree;
//! 2. other epochs and other seeds give other orders;
//! 3. with `Tail::Keep` the shards of ranks and workers are disjoint,
//!    complete, contiguous blocks of the epoch order, balanced within one;
//!    `DropLast` and `Pad` give equal shards that drop the last ids or
//!    repeat the first ones;
//! 4. page-aware order keeps each page's records together and in file
//!    order; quasi-random order reads the pages in windows of at most
//!    `window` pages, each window's records in one stretch of the order;
//! 5. test vectors freeze the first ids of every mode;
//! 6. shuffle order puts each id at each position equally often over 20 000
//!    seeds (a chi-square bound, with a biased shuffle as a control).
#![allow(clippy::unwrap_used)]

use proptest::prelude::*;
use recordwire::order::{order_ids, Cursor, Mode, Order, OrderError, OrderSpec, Tail};

/// Start offsets of records of these sizes, plus the end offset (as an
/// index gives them).
fn offsets_of(sizes: &[u64]) -> Vec<u64> {
    let mut at = 0;
    let mut offsets = Vec::with_capacity(sizes.len() + 1);
    for size in sizes {
        offsets.push(at);
        at += size;
    }
    offsets.push(at);
    offsets
}

/// Record sizes: some files with many records per page, some with records
/// larger than a page.
fn sizes() -> impl Strategy<Value = Vec<u64>> {
    prop_oneof![
        prop::collection::vec(1u64..=40, 0..1500),
        prop::collection::vec(1u64..=700, 0..800),
        prop::collection::vec(1u64..=9000, 0..300),
    ]
}

fn mode() -> impl Strategy<Value = Mode> {
    let page_size = prop_oneof![Just(64u64), Just(512), Just(4096), 1u64..10_000];
    prop_oneof![
        Just(Mode::Sequential),
        Just(Mode::Shuffle),
        page_size
            .clone()
            .prop_map(|page_size| Mode::PageAware { page_size }),
        (page_size, prop_oneof![1u32..=8, Just(1000)])
            .prop_map(|(page_size, window)| Mode::QuasiRandom { page_size, window }),
    ]
}

fn spec(mode: Mode, seed: u64) -> OrderSpec {
    OrderSpec {
        mode,
        seed,
        ..OrderSpec::default()
    }
}

/// The page of each record.
fn pages(offsets: &[u64], count: usize, page_size: u64) -> Vec<u64> {
    offsets[..count].iter().map(|o| o / page_size).collect()
}

fn config(cases: u32) -> ProptestConfig {
    ProptestConfig {
        cases,
        ..ProptestConfig::default()
    }
}

proptest! {
    #![proptest_config(config(96))]

    #[test]
    fn every_epoch_is_a_permutation(
        sizes in sizes(),
        mode in mode(),
        seed in any::<u64>(),
        epoch in prop_oneof![0u64..4, Just(u64::MAX)],
    ) {
        let n = sizes.len() as u64;
        let offsets = offsets_of(&sizes);
        let order = Order::new(n, &offsets, spec(mode, seed)).unwrap();
        prop_assert_eq!(order.len(), n);
        let e = order.epoch(epoch);
        let ids: Vec<u64> = e.iter().collect();
        prop_assert_eq!(e.iter().len() as u64, n);

        let mut sorted = ids.clone();
        sorted.sort_unstable();
        prop_assert_eq!(sorted, (0..n).collect::<Vec<_>>());

        // A pure function: built again, the same order.
        prop_assert_eq!(&order_ids(n, &offsets, &spec(mode, seed), epoch).unwrap(), &ids);
        prop_assert_eq!(&order.epoch(epoch).iter().collect::<Vec<_>>(), &ids);

        // Random access and resuming agree with iteration.
        for p in (0..n).step_by(37).chain(n.checked_sub(1)) {
            prop_assert_eq!(e.get(p), Some(ids[p as usize]));
            let rest: Vec<u64> = e.iter_from(p).unwrap().collect();
            prop_assert_eq!(&rest[..], &ids[p as usize..]);
        }
        prop_assert_eq!(e.get(n), None);
        prop_assert_eq!(e.iter_from(n).unwrap().next(), None);
        prop_assert!(e.iter_from(n + 1).is_err());
    }

    #[test]
    fn other_seeds_and_epochs_give_other_orders(
        sizes in prop::collection::vec(1u64..=3000, 200..600),
        mode in mode(),
        seed in any::<u64>(),
        epoch in 0u64..1000,
    ) {
        let n = sizes.len() as u64;
        let offsets = offsets_of(&sizes);
        let order = Order::new(n, &offsets, spec(mode, seed)).unwrap();
        // Shuffles of at least 30 things collide with probability < 1/30!.
        let shuffled = match mode {
            Mode::Sequential => false,
            Mode::Shuffle => true,
            Mode::PageAware { .. } => order.page_groups().unwrap() >= 30,
            Mode::QuasiRandom { .. } => true,
        };
        let this = order_ids(n, &offsets, &spec(mode, seed), epoch).unwrap();
        let next_epoch = order_ids(n, &offsets, &spec(mode, seed), epoch + 1).unwrap();
        let other_seed = order_ids(n, &offsets, &spec(mode, seed ^ 1), epoch).unwrap();
        prop_assert_eq!(this != next_epoch, shuffled);
        prop_assert_eq!(this != other_seed, shuffled);
    }

    #[test]
    fn keep_shards_are_disjoint_complete_and_balanced(
        sizes in sizes(),
        mode in mode(),
        seed in any::<u64>(),
        world in 1u32..=9,
        workers in 1u32..=5,
    ) {
        let n = sizes.len() as u64;
        let offsets = offsets_of(&sizes);
        let all = order_ids(n, &offsets, &spec(mode, seed), 3).unwrap();
        let mut joined = Vec::new();
        let mut rank_sizes = Vec::new();
        let mut worker_sizes = Vec::new();
        for rank in 0..world {
            let mut rank_size = 0;
            let mut these = Vec::new();
            for worker in 0..workers {
                let spec = OrderSpec { mode, seed, rank, world, worker, workers, tail: Tail::Keep };
                let ids = order_ids(n, &offsets, &spec, 3).unwrap();
                prop_assert_eq!(Order::new(n, &offsets, spec).unwrap().len(), ids.len() as u64);
                rank_size += ids.len();
                these.push(ids.len());
                joined.extend(ids);
            }
            prop_assert!(these.iter().max().unwrap() - these.iter().min().unwrap() <= 1);
            worker_sizes.extend(these);
            rank_sizes.push(rank_size);
        }
        // Contiguous blocks in rank, then worker order: together, the epoch.
        prop_assert_eq!(&joined, &all);
        prop_assert!(rank_sizes.iter().max().unwrap() - rank_sizes.iter().min().unwrap() <= 1);
        prop_assert!(worker_sizes.iter().max().unwrap() - worker_sizes.iter().min().unwrap() <= 1);
    }

    #[test]
    fn drop_last_and_pad_give_equal_shards(
        sizes in prop::collection::vec(1u64..=5000, 0..300),
        mode in mode(),
        seed in any::<u64>(),
        world in 1u32..=12,
        workers in 1u32..=3,
    ) {
        let n = sizes.len();
        let offsets = offsets_of(&sizes);
        let all = order_ids(n as u64, &offsets, &spec(mode, seed), 5).unwrap();
        let world_ = world as usize;
        for tail in [Tail::DropLast, Tail::Pad] {
            let mut joined = Vec::new();
            for rank in 0..world {
                let mut share = Vec::new();
                for worker in 0..workers {
                    let spec = OrderSpec { mode, seed, rank, world, worker, workers, tail };
                    share.extend(order_ids(n as u64, &offsets, &spec, 5).unwrap());
                }
                let expected = match tail {
                    Tail::DropLast => n / world_,
                    _ => n.div_ceil(world_),
                };
                prop_assert_eq!(share.len(), expected, "{:?} rank {}", tail, rank);
                joined.extend(share);
            }
            match tail {
                Tail::DropLast => {
                    // The last n % world ids of the epoch are the ones dropped.
                    prop_assert_eq!(&joined[..], &all[..n - n % world_]);
                }
                _ => {
                    // The epoch, then its first ids again (around and around
                    // when there are fewer records than ranks).
                    let padded: Vec<u64> = (0..joined.len()).map(|p| all[p % n]).collect();
                    prop_assert_eq!(&joined, &padded);
                    prop_assert_eq!(joined.len() - n, (world_ - n % world_) % world_);
                }
            }
        }
    }

    #[test]
    fn page_aware_order_keeps_pages_together_in_file_order(
        sizes in sizes(),
        page_size in prop_oneof![Just(64u64), Just(4096), 1u64..20_000],
        seed in any::<u64>(),
        epoch in any::<u64>(),
        world in 1u32..=4,
    ) {
        let n = sizes.len();
        let offsets = offsets_of(&sizes);
        let mode = Mode::PageAware { page_size };
        let ids = order_ids(n as u64, &offsets, &spec(mode, seed), epoch).unwrap();
        let page = pages(&offsets, n, page_size);
        let mut seen_pages = std::collections::BTreeSet::new();
        for (p, &id) in ids.iter().enumerate() {
            let continues = p > 0 && page[ids[p - 1] as usize] == page[id as usize];
            if continues {
                // Same page as the previous record: the next record of the file.
                prop_assert_eq!(id, ids[p - 1] + 1);
            } else {
                // A new page, entered at its first record, never seen before.
                prop_assert!(id == 0 || page[id as usize - 1] != page[id as usize]);
                prop_assert!(seen_pages.insert(page[id as usize]));
            }
        }
        // With sharding, each rank reads whole pages except at its ends.
        let mut start = 0;
        for rank in 0..world {
            let spec = OrderSpec { mode, seed, rank, world, tail: Tail::Keep, ..OrderSpec::default() };
            let share = order_ids(n as u64, &offsets, &spec, epoch).unwrap();
            prop_assert_eq!(&share[..], &ids[start..start + share.len()]);
            start += share.len();
        }
    }

    #[test]
    fn quasi_random_order_reads_pages_in_windows(
        sizes in sizes(),
        page_size in prop_oneof![Just(64u64), Just(4096), 1u64..20_000],
        window in prop_oneof![1u32..=6, Just(40)],
        seed in any::<u64>(),
        epoch in any::<u64>(),
    ) {
        let n = sizes.len();
        let offsets = offsets_of(&sizes);
        let mode = Mode::QuasiRandom { page_size, window };
        let ids = order_ids(n as u64, &offsets, &spec(mode, seed), epoch).unwrap();
        let page = pages(&offsets, n, page_size);
        let mut records_of = std::collections::BTreeMap::new();
        for &p in &page {
            *records_of.entry(p).or_insert(0usize) += 1;
        }
        // Pages by first appearance, cut in chunks of `window`: each chunk's
        // records fill exactly the next stretch of the order.
        let mut first_seen = Vec::new();
        let mut seen = std::collections::BTreeSet::new();
        for &id in &ids {
            if seen.insert(page[id as usize]) {
                first_seen.push(page[id as usize]);
            }
        }
        let mut at = 0;
        for chunk in first_seen.chunks(window as usize) {
            let len: usize = chunk.iter().map(|p| records_of[p]).sum();
            let members: std::collections::BTreeSet<u64> = chunk.iter().copied().collect();
            for &id in &ids[at..at + len] {
                prop_assert!(members.contains(&page[id as usize]), "position {} leaves its window", at);
            }
            at += len;
        }
        prop_assert_eq!(at, n);
        // Hence at most `window` pages are open (begun, not finished) at once.
        let mut left = records_of.clone();
        let mut open = std::collections::BTreeSet::new();
        for &id in &ids {
            let p = page[id as usize];
            open.insert(p);
            prop_assert!(open.len() <= window as usize);
            let remaining = left.get_mut(&p).unwrap();
            *remaining -= 1;
            if *remaining == 0 {
                open.remove(&p);
            }
        }
    }

    #[test]
    fn cursors_resume_across_epochs(
        sizes in prop::collection::vec(1u64..=3000, 0..120),
        mode in mode(),
        seed in any::<u64>(),
        (world, rank) in (1u32..=3).prop_flat_map(|w| (Just(w), 0..w)),
        tail in prop_oneof![Just(Tail::Keep), Just(Tail::DropLast), Just(Tail::Pad)],
        epoch in 0u64..3,
        skip in 0usize..300,
    ) {
        let n = sizes.len() as u64;
        let offsets = offsets_of(&sizes);
        let spec = OrderSpec { mode, seed, rank, world, tail, ..OrderSpec::default() };
        let order = Order::new(n, &offsets, spec).unwrap();
        let len = order.len();
        let position = if len == 0 { 0 } else { skip as u64 % (len + 1) };
        let cursor = Cursor { epoch, position };
        // The expected run: the rest of the epoch, then the next epochs.
        let mut expected: Vec<u64> = order.epoch(epoch).iter().skip(position as usize).collect();
        for e in epoch + 1..epoch + 4 {
            expected.extend(order_ids(n, &offsets, &spec, e).unwrap());
        }
        let mut run = order.iter_from(cursor).unwrap();
        let take = skip.min(expected.len());
        let got: Vec<u64> = run.by_ref().take(take).collect();
        prop_assert_eq!(&got[..], &expected[..take]);
        // The cursor after `take` ids resumes the same run.
        let resumed: Vec<u64> = order.iter_from(run.cursor()).unwrap().take(50).collect();
        let rest: Vec<u64> = run.take(50).collect();
        prop_assert_eq!(&resumed, &rest);
        if len == 0 {
            prop_assert!(rest.is_empty());
        } else {
            let at = run_cursor_expected(cursor, take as u64, len);
            prop_assert_eq!(order.iter_from(at).unwrap().take(50).collect::<Vec<_>>(), rest);
        }
        let past = Cursor { epoch, position: len + 1 };
        prop_assert!(order.iter_from(past).is_err());
    }
}

/// Where a run from `cursor` is after `taken` ids of epochs of `len`.
fn run_cursor_expected(cursor: Cursor, taken: u64, len: u64) -> Cursor {
    let absolute = cursor.position + taken;
    Cursor {
        epoch: cursor.epoch + absolute / len,
        position: absolute % len,
    }
}

/// 1000 records of 100 to 3099 bytes.
fn vector_offsets() -> Vec<u64> {
    let sizes: Vec<u64> = (0..1000u64).map(|i| 100 + (i * 7919) % 3000).collect();
    offsets_of(&sizes)
}

fn first_ids(count: u64, offsets: &[u64], spec: OrderSpec, epoch: u64, take: usize) -> Vec<u64> {
    Order::new(count, offsets, spec)
        .unwrap()
        .epoch(epoch)
        .iter()
        .take(take)
        .collect()
}

/// Test vectors: computed once by this implementation and frozen, so that
/// any change of the algorithm (docs/FORMAT.md §7.1: the same order on every machine
/// and in every version) fails here.
#[test]
fn test_vectors_freeze_every_mode() {
    let offsets = vector_offsets();
    let quasi = Mode::QuasiRandom {
        page_size: 4096,
        window: 4,
    };
    let page_aware = Mode::PageAware { page_size: 4096 };
    let cases: [(Mode, u64, [u64; 16]); 7] = [
        (
            Mode::Sequential,
            0,
            [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15],
        ),
        (
            Mode::Shuffle,
            0,
            [
                201, 400, 120, 455, 503, 422, 802, 908, 697, 652, 907, 745, 7, 718, 239, 818,
            ],
        ),
        (
            Mode::Shuffle,
            1,
            [
                265, 113, 489, 691, 756, 41, 918, 956, 477, 142, 240, 367, 847, 18, 501, 434,
            ],
        ),
        (
            page_aware,
            0,
            [
                381, 382, 383, 19, 20, 638, 639, 619, 620, 887, 888, 889, 946, 947, 948, 519,
            ],
        ),
        (
            page_aware,
            1,
            [
                808, 809, 909, 910, 911, 290, 291, 292, 887, 888, 889, 426, 427, 428, 462, 463,
            ],
        ),
        (
            quasi,
            0,
            [
                381, 620, 619, 19, 638, 382, 383, 20, 639, 50, 520, 947, 888, 519, 887, 51,
            ],
        ),
        (
            quasi,
            1,
            [
                808, 887, 290, 889, 888, 292, 809, 291, 910, 911, 909, 143, 464, 462, 142, 426,
            ],
        ),
    ];
    for (mode, epoch, expected) in cases {
        let got = first_ids(1000, &offsets, spec(mode, 42), epoch, 16);
        assert_eq!(got, expected, "{mode:?} epoch {epoch}");
    }
}

#[test]
fn test_vectors_freeze_tables_wide_networks_and_shards() {
    // 10 records: the table.
    let small = first_ids(10, &[], spec(Mode::Shuffle, 42), 0, 10);
    assert_eq!(small, [0, 9, 3, 8, 7, 2, 6, 4, 5, 1]);
    // 10^12 records: a 40-bit network.
    let wide = first_ids(1_000_000_000_000, &[], spec(Mode::Shuffle, 42), 7, 8);
    assert_eq!(
        wide,
        [
            847_967_256_071,
            544_177_501_646,
            764_895_818_041,
            392_251_432_922,
            203_873_759_542,
            149_920_879_627,
            512_914_714_683,
            502_667_493_571,
        ]
    );
    // The last worker of the last rank of a padded quasi-random order: its
    // share is positions 835 to 1001 of the epoch, and 1000 and 1001 wrap
    // around to the epoch's first two ids.
    let shard = OrderSpec {
        mode: Mode::QuasiRandom {
            page_size: 4096,
            window: 4,
        },
        seed: 42,
        rank: 2,
        world: 3,
        worker: 1,
        workers: 2,
        tail: Tail::Pad,
    };
    let order = Order::new(1000, &vector_offsets(), shard).unwrap();
    assert_eq!(order.len(), 167);
    let ids: Vec<u64> = order.epoch(2).iter().collect();
    assert_eq!(ids[..8], [73, 735, 727, 74, 782, 75, 728, 72]);
    assert_eq!(ids[159..], [184, 866, 185, 183, 182, 347, 247, 947]);
    let epoch = first_ids(1000, &vector_offsets(), spec(shard.mode, 42), 2, 2);
    assert_eq!(ids[165..], epoch[..]);
}

/// Pearson's statistic of the position-by-id counts of `n`-element
/// permutations, times `E = seeds / n`: `Σ (O - E)²` over the `n²` cells.
fn spread(n: usize, seeds: u64, mut permutation: impl FnMut(u64) -> Vec<u64>) -> (u64, u64) {
    let mut counts = vec![0u64; n * n];
    for seed in 0..seeds {
        let ids = permutation(seed);
        for (position, &id) in ids.iter().enumerate() {
            counts[position * n + id as usize] += 1;
        }
    }
    let e = seeds / n as u64;
    let sum = counts.iter().map(|&o| o.abs_diff(e).pow(2)).sum();
    let worst = counts.iter().map(|&o| o.abs_diff(e)).max().unwrap_or(0);
    (sum, worst)
}

/// Shuffle order over 20 000 seeds: where each of 10 ids lands.
///
/// If every seed gave an independent uniform permutation, the 100 counts
/// `O` (id at position) would have mean `E = 2000`, and Pearson's
/// `X² = Σ (O - E)² / E` scaled by `(n - 1)/n` would follow a chi-square
/// law with `(n - 1)² = 81` degrees of freedom (the rows and columns of a
/// permutation matrix each sum to 1, and the covariance is the same in
/// every remaining direction). `P(χ²₈₁ > 180) ≈ 1.7e-9`, so the bound
/// `X² ≤ 200` fails a correct shuffle about once in 600 million seed sets:
/// never, for these fixed seeds, unless the algorithm changes. Each count is
/// also within 6 standard deviations (`sqrt(20000 · 0.1 · 0.9) ≈ 42.4`) of
/// 2000. A shuffle that swaps each position with any position (the classic
/// biased one) gives `X²` above 2000, so the test can fail.
#[test]
fn shuffle_is_uniform_over_seeds() {
    const N: usize = 10;
    const SEEDS: u64 = 20_000;
    const E: u64 = SEEDS / N as u64;
    // X² ≤ 200 ⇔ Σ (O - E)² ≤ 200 · E.
    const BOUND: u64 = 200 * E;
    const WORST: u64 = 6 * 42 + 3;

    let (sum, worst) = spread(N, SEEDS, |seed| {
        order_ids(N as u64, &[], &spec(Mode::Shuffle, seed), 0).unwrap()
    });
    println!(
        "shuffle over seeds: X² = {}, worst cell {worst} off",
        sum / E
    );
    assert!(sum <= BOUND, "X² = {} > 200", sum / E);
    assert!(worst <= WORST);

    // The same over epochs of one seed.
    let (sum, worst) = spread(N, SEEDS, |epoch| {
        order_ids(N as u64, &[], &spec(Mode::Shuffle, 12_345), epoch).unwrap()
    });
    println!(
        "shuffle over epochs: X² = {}, worst cell {worst} off",
        sum / E
    );
    assert!(sum <= BOUND, "X² = {} > 200", sum / E);
    assert!(worst <= WORST);

    // The control: swap each position with a uniformly drawn one.
    let (sum, _) = spread(N, SEEDS, |seed| {
        let mut state = seed;
        let mut ids: Vec<u64> = (0..N as u64).collect();
        for i in 0..N {
            state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^= z >> 31;
            ids.swap(i, (z % N as u64) as usize);
        }
        ids
    });
    println!("biased control: X² = {}", sum / E);
    assert!(
        sum > BOUND,
        "the bound cannot tell a biased shuffle: X² = {}",
        sum / E
    );
}

#[test]
fn invalid_specs_are_errors() {
    let ok = OrderSpec::default();
    let cases = [
        (
            OrderSpec { world: 0, ..ok },
            OrderError::ZeroWorld,
            "the world size must be at least 1",
        ),
        (
            OrderSpec {
                rank: 2,
                world: 2,
                ..ok
            },
            OrderError::RankOutOfRange { rank: 2, world: 2 },
            "rank 2 is out of range for a world of 2 (ranks are 0 to 1)",
        ),
        (
            OrderSpec { workers: 0, ..ok },
            OrderError::ZeroWorkers,
            "the number of workers must be at least 1",
        ),
        (
            OrderSpec {
                worker: 4,
                workers: 4,
                ..ok
            },
            OrderError::WorkerOutOfRange {
                worker: 4,
                workers: 4,
            },
            "worker 4 is out of range for 4 workers (workers are 0 to 3)",
        ),
        (
            OrderSpec {
                mode: Mode::PageAware { page_size: 0 },
                ..ok
            },
            OrderError::ZeroPageSize,
            "the page size must be at least 1 byte",
        ),
        (
            OrderSpec {
                mode: Mode::QuasiRandom {
                    page_size: 0,
                    window: 1,
                },
                ..ok
            },
            OrderError::ZeroPageSize,
            "the page size must be at least 1 byte",
        ),
        (
            OrderSpec {
                mode: Mode::QuasiRandom {
                    page_size: 4096,
                    window: 0,
                },
                ..ok
            },
            OrderError::WindowOutOfRange { window: 0 },
            "a window of 0 pages is out of range: it must hold 1 to 65536 pages",
        ),
        (
            OrderSpec {
                mode: Mode::QuasiRandom {
                    page_size: 4096,
                    window: 65537,
                },
                ..ok
            },
            OrderError::WindowOutOfRange { window: 65537 },
            "a window of 65537 pages is out of range: it must hold 1 to 65536 pages",
        ),
    ];
    for (spec, error, message) in cases {
        assert_eq!(Order::new(3, &[0, 10, 20], spec).unwrap_err(), error);
        assert_eq!(error.to_string(), message);
    }

    let page = OrderSpec {
        mode: Mode::PageAware { page_size: 4096 },
        ..ok
    };
    let err = Order::new(3, &[0, 10], page).unwrap_err();
    assert_eq!(
        err,
        OrderError::TooFewOffsets {
            count: 3,
            offsets: 2
        }
    );
    assert_eq!(
        err.to_string(),
        "3 records but only 2 offsets: a page mode needs the offset of every record"
    );
    let err = Order::new(3, &[0, 10, 5], page).unwrap_err();
    assert_eq!(
        err,
        OrderError::UnsortedOffsets {
            id: 2,
            previous: 10,
            offset: 5
        }
    );
    assert_eq!(
        err.to_string(),
        "offsets are not sorted: record 2 starts at byte 5, before record 1 at byte 10"
    );
    // Only the first `count` offsets are read; the other modes read none.
    assert!(Order::new(2, &[0, 10, 5], page).is_ok());
    assert!(Order::new(
        3,
        &[9, 1],
        OrderSpec {
            mode: Mode::Shuffle,
            ..ok
        }
    )
    .is_ok());

    let order = Order::new(3, &[], ok).unwrap();
    let err = order
        .iter_from(Cursor {
            epoch: 0,
            position: 4,
        })
        .unwrap_err();
    assert_eq!(
        err,
        OrderError::CursorOutOfRange {
            position: 4,
            len: 3
        }
    );
    assert_eq!(
        err.to_string(),
        "cursor position 4 is past the end of an epoch of 3 ids"
    );
    assert!(order.epoch(0).iter_from(4).is_err());
}

#[test]
fn empty_and_tiny_datasets() {
    let modes = [
        Mode::Sequential,
        Mode::Shuffle,
        Mode::PageAware { page_size: 4096 },
        Mode::QuasiRandom {
            page_size: 4096,
            window: 2,
        },
    ];
    for mode in modes {
        for tail in [Tail::Keep, Tail::DropLast, Tail::Pad] {
            // No records: every worker reads nothing, forever.
            let spec = OrderSpec {
                mode,
                tail,
                rank: 1,
                world: 2,
                ..OrderSpec::default()
            };
            let order = Order::new(0, &[], spec).unwrap();
            assert!(order.is_empty());
            assert_eq!(order.epochs().next(), None);
            assert_eq!(order.epoch(0).get(0), None);
        }
        // Two records, five ranks: padding wraps around more than once.
        let ids: Vec<Vec<u64>> = (0..5)
            .map(|rank| {
                let spec = OrderSpec {
                    mode,
                    tail: Tail::Pad,
                    rank,
                    world: 5,
                    ..OrderSpec::default()
                };
                order_ids(2, &[0, 5000, 10_000], &spec, 0).unwrap()
            })
            .collect();
        let all = order_ids(2, &[0, 5000], &spec(mode, 0), 0).unwrap();
        assert_eq!(
            ids.concat(),
            [all[0], all[1], all[0], all[1], all[0]],
            "{mode:?}"
        );
        // DropLast with fewer records than ranks drops them all.
        let spec = OrderSpec {
            mode,
            tail: Tail::DropLast,
            world: 3,
            ..OrderSpec::default()
        };
        assert!(Order::new(2, &[0, 5000], spec).unwrap().is_empty());
    }
}

#[test]
fn orders_can_be_shared_between_threads() {
    fn shared<T: Send + Sync>() {}
    shared::<Order>();
    shared::<recordwire::order::EpochOrder<'static>>();
    shared::<recordwire::order::Iter<'static>>();
    shared::<recordwire::order::Epochs<'static>>();
    shared::<OrderError>();
}

#[test]
fn names_and_defaults() {
    assert_eq!(Mode::default(), Mode::Sequential);
    // Equal parts by default, as collective training steps need.
    assert_eq!(Tail::default(), Tail::Pad);
    assert_eq!(OrderSpec::default().tail, Tail::Pad);
    let names: Vec<&str> = [
        Mode::Sequential,
        Mode::Shuffle,
        Mode::PageAware { page_size: 1 },
        Mode::QuasiRandom {
            page_size: 1,
            window: 1,
        },
    ]
    .iter()
    .map(Mode::name)
    .collect();
    assert_eq!(
        names,
        ["sequential", "shuffle", "page-aware", "quasi-random"]
    );
    assert_eq!(
        Mode::QuasiRandom {
            page_size: 512,
            window: 3
        }
        .page_size(),
        Some(512)
    );
    assert_eq!(Mode::Shuffle.page_size(), None);
    let tails: Vec<&str> = [Tail::Keep, Tail::DropLast, Tail::Pad]
        .iter()
        .map(Tail::name)
        .collect();
    assert_eq!(tails, ["keep", "drop-last", "pad"]);
    assert_eq!(recordwire::order::DEFAULT_PAGE_SIZE, 4096);
    assert_eq!(recordwire::order::MAX_WINDOW, 65_536);
}
