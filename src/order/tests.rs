//! Unit tests of the orders: each mode against a naive reference that
//! materializes the epoch the way the module docs describe it, the walk of
//! the page modes against random access, and the bounds on memory.

use super::mix::{derive_key, splitmix64, Bijection, TAG_PAGES, TAG_RECORDS, TAG_WINDOW};
use super::*;

/// Offsets of `count` records whose sizes are drawn from `state` in
/// `1..=max_size`, plus the end offset.
fn offsets(count: u64, max_size: u64, mut state: u64) -> Vec<u64> {
    let mut at = 0;
    let mut out = Vec::with_capacity(count as usize + 1);
    for _ in 0..count {
        out.push(at);
        at += splitmix64(&mut state) % max_size + 1;
    }
    out.push(at);
    out
}

/// The page groups, naively: runs of records starting in one page.
fn naive_groups(count: u64, offsets: &[u64], page_size: u64) -> Vec<Vec<u64>> {
    let mut groups: Vec<Vec<u64>> = Vec::new();
    for id in 0..count {
        let page = offsets[id as usize] / page_size;
        match groups.last_mut() {
            Some(group) if offsets[group[0] as usize] / page_size == page => group.push(id),
            _ => groups.push(vec![id]),
        }
    }
    groups
}

/// One epoch of the whole order (before it is split into parts),
/// materialized as the docs say.
fn naive_epoch(count: u64, offsets: &[u64], mode: Mode, seed: u64, epoch: u64) -> Vec<u64> {
    match mode {
        Mode::Sequential => (0..count).collect(),
        Mode::Shuffle => {
            let f = Bijection::new(count, derive_key(seed, TAG_RECORDS, epoch, 0));
            (0..count).map(|p| f.apply(p)).collect()
        }
        Mode::PageAware { page_size } => {
            let groups = naive_groups(count, offsets, page_size);
            let pi = Bijection::new(groups.len() as u64, derive_key(seed, TAG_PAGES, epoch, 0));
            (0..groups.len() as u64)
                .flat_map(|j| groups[pi.apply(j) as usize].iter().copied())
                .collect()
        }
        Mode::QuasiRandom { page_size, window } => {
            let groups = naive_groups(count, offsets, page_size);
            let pi = Bijection::new(groups.len() as u64, derive_key(seed, TAG_PAGES, epoch, 0));
            let shuffled: Vec<&Vec<u64>> = (0..groups.len() as u64)
                .map(|j| &groups[pi.apply(j) as usize])
                .collect();
            let mut out = Vec::new();
            for (u, window) in shuffled.chunks(window as usize).enumerate() {
                let layout: Vec<u64> = window.iter().flat_map(|g| g.iter().copied()).collect();
                let sigma = Bijection::new(
                    layout.len() as u64,
                    derive_key(seed, TAG_WINDOW, epoch, u as u64),
                );
                out.extend((0..layout.len() as u64).map(|t| layout[sigma.apply(t) as usize]));
            }
            out
        }
    }
}

/// A worker's part, naively: rank blocks by a list of sizes, then worker
/// blocks the same way.
fn naive_part(epoch: &[u64], spec: &OrderSpec) -> Vec<u64> {
    let n = epoch.len();
    let world = spec.world as usize;
    let sizes: Vec<usize> = match spec.tail {
        Tail::Keep => (0..world)
            .map(|r| n / world + usize::from(r < n % world))
            .collect(),
        Tail::DropLast => vec![n / world; world],
        Tail::Pad => vec![n.div_ceil(world); world],
    };
    let start: usize = sizes[..spec.rank as usize].iter().sum();
    let rank: Vec<u64> = (start..start + sizes[spec.rank as usize])
        .map(|p| epoch[p % n])
        .collect();
    let workers = spec.workers as usize;
    let m = rank.len();
    let sizes: Vec<usize> = (0..workers)
        .map(|w| m / workers + usize::from(w < m % workers))
        .collect();
    let start: usize = sizes[..spec.worker as usize].iter().sum();
    rank[start..start + sizes[spec.worker as usize]].to_vec()
}

const MODES: [Mode; 7] = [
    Mode::Sequential,
    Mode::Shuffle,
    Mode::PageAware { page_size: 4096 },
    Mode::PageAware { page_size: 100 },
    Mode::QuasiRandom {
        page_size: 4096,
        window: 1,
    },
    Mode::QuasiRandom {
        page_size: 4096,
        window: 3,
    },
    Mode::QuasiRandom {
        page_size: 512,
        window: 40,
    },
];

#[test]
fn every_mode_matches_its_naive_reference() {
    let mut state = 5;
    for case in 0..16u64 {
        let count = splitmix64(&mut state) % 700;
        let max_size = [10, 300, 5000, 20_000][case as usize % 4];
        let offsets = offsets(count, max_size, case);
        let seed = splitmix64(&mut state);
        for mode in MODES {
            for epoch in [1, u64::MAX] {
                let expected = naive_epoch(count, &offsets, mode, seed, epoch);
                let spec = OrderSpec {
                    mode,
                    seed,
                    ..OrderSpec::default()
                };
                let order = Order::new(count, &offsets, spec).unwrap();
                let e = order.epoch(epoch);
                let walked: Vec<u64> = e.iter().collect();
                assert_eq!(walked, expected, "{mode:?} count {count} epoch {epoch}");
                for p in (0..count).step_by(5) {
                    assert_eq!(e.get(p), Some(expected[p as usize]), "get, {mode:?}");
                }
                assert_eq!(e.get(count), None);
            }
        }
    }
}

#[test]
fn parts_match_the_naive_split() {
    let mut state = 11;
    for case in 0..60u64 {
        let count = splitmix64(&mut state) % 90;
        let world = (splitmix64(&mut state) % 7 + 1) as u32;
        let workers = (splitmix64(&mut state) % 4 + 1) as u32;
        let offsets = offsets(count, 3000, case);
        let mode = MODES[case as usize % MODES.len()];
        let tail = [Tail::Keep, Tail::DropLast, Tail::Pad][case as usize % 3];
        let epoch = naive_epoch(count, &offsets, mode, case, 2);
        for rank in 0..world {
            for worker in 0..workers {
                let spec = OrderSpec {
                    mode,
                    seed: case,
                    rank,
                    world,
                    worker,
                    workers,
                    tail,
                };
                let order = Order::new(count, &offsets, spec).unwrap();
                let e = order.epoch(2);
                let expected = if count == 0 {
                    Vec::new()
                } else {
                    naive_part(&epoch, &spec)
                };
                assert_eq!(e.iter().collect::<Vec<_>>(), expected, "{spec:?} n {count}");
                assert_eq!(e.len(), expected.len() as u64);
                for (p, &id) in expected.iter().enumerate() {
                    assert_eq!(e.get(p as u64), Some(id));
                }
            }
        }
    }
}

#[test]
fn iterating_from_any_position_matches_random_access() {
    // Seeking lands on checkpoints and in the middle of units and groups.
    let offsets = offsets(3000, 700, 3);
    for mode in MODES {
        let spec = OrderSpec {
            mode,
            seed: 9,
            tail: Tail::Pad,
            rank: 2,
            world: 3,
            ..OrderSpec::default()
        };
        let order = Order::new(3000, &offsets, spec).unwrap();
        let e = order.epoch(4);
        let all: Vec<u64> = e.iter().collect();
        for start in [0, 1, 31, 32, 33, 500, 999, 1000] {
            let tail: Vec<u64> = e.iter_from(start).unwrap().collect();
            assert_eq!(tail[..], all[start as usize..], "{mode:?} from {start}");
        }
    }
}

#[test]
fn a_window_wider_than_the_file_is_one_shuffle_of_all_pages() {
    let offsets = offsets(500, 2000, 1);
    let spec = OrderSpec {
        mode: Mode::QuasiRandom {
            page_size: 4096,
            window: MAX_WINDOW,
        },
        seed: 3,
        ..OrderSpec::default()
    };
    let order = Order::new(500, &offsets, spec).unwrap();
    assert!(order.page_groups().unwrap() < u64::from(MAX_WINDOW));
    let e = order.epoch(0);
    let mut ids: Vec<u64> = e.iter().collect();
    assert_eq!(ids, naive_epoch(500, &offsets, spec.mode, 3, 0));
    ids.sort_unstable();
    assert_eq!(ids, (0..500).collect::<Vec<_>>());
}

#[test]
fn epoch_memory_is_a_checkpoint_per_32_groups() {
    // One record per page: as many groups as records.
    let offsets: Vec<u64> = (0..40_000u64).map(|i| i * 4096).collect();
    for (mode, per) in [
        (Mode::PageAware { page_size: 4096 }, 32),
        (
            Mode::QuasiRandom {
                page_size: 4096,
                window: 8,
            },
            32,
        ),
        (
            Mode::QuasiRandom {
                page_size: 4096,
                window: 100,
            },
            100,
        ),
    ] {
        let spec = OrderSpec {
            mode,
            ..OrderSpec::default()
        };
        let order = Order::new(40_000, &offsets, spec).unwrap();
        assert_eq!(order.page_groups(), Some(40_000));
        let e = order.epoch(0);
        let Base::Units(units) = &e.base else {
            panic!("a page mode")
        };
        assert_eq!(units.checkpoints.len(), 40_000usize.div_ceil(per));
    }
}

#[test]
fn epochs_run_on_across_epoch_boundaries() {
    let offsets = offsets(50, 3000, 8);
    for mode in MODES {
        let spec = OrderSpec {
            mode,
            seed: 77,
            rank: 1,
            world: 2,
            worker: 1,
            workers: 2,
            ..OrderSpec::default()
        };
        let order = Order::new(50, &offsets, spec).unwrap();
        assert_eq!(order.len(), 12);
        let expected: Vec<u64> = (3..6)
            .flat_map(|e| order.epoch(e).iter().collect::<Vec<_>>())
            .skip(5)
            .collect();
        let mut run = order
            .iter_from(Cursor {
                epoch: 3,
                position: 5,
            })
            .unwrap();
        let got: Vec<u64> = run.by_ref().take(expected.len()).collect();
        assert_eq!(got, expected, "{mode:?}");
        assert_eq!(
            run.cursor(),
            Cursor {
                epoch: 6,
                position: 0
            }
        );
    }
}

#[test]
fn the_last_epoch_ends_the_run() {
    let sequential = OrderSpec {
        mode: Mode::Sequential,
        ..OrderSpec::default()
    };
    let order = Order::new(3, &[], sequential).unwrap();
    let run = order
        .iter_from(Cursor {
            epoch: u64::MAX,
            position: 1,
        })
        .unwrap();
    assert_eq!(run.collect::<Vec<_>>(), [1, 2]);
}

#[test]
fn debug_output_is_short() {
    let offsets: Vec<u64> = (0..10_000u64).map(|i| i * 100).collect();
    let spec = OrderSpec {
        mode: Mode::PageAware { page_size: 4096 },
        ..OrderSpec::default()
    };
    let order = Order::new(10_000, &offsets, spec).unwrap();
    assert!(format!("{order:?}").len() < 300);
    let e = order.epoch(1);
    assert!(format!("{e:?}").len() < 200);
    assert!(format!("{:?}", e.iter()).len() < 1000);
}

#[test]
fn the_default_order_is_a_shuffle() {
    // The command line's `order` and Python's `Dataset.order` default to it too.
    assert_eq!(OrderSpec::default().mode, Mode::Shuffle);
    let order = Order::new(1000, &[], OrderSpec::default()).unwrap();
    let ids: Vec<u64> = order.epoch(0).iter().collect();
    let mut sorted = ids.clone();
    sorted.sort_unstable();
    assert_eq!(sorted, (0..1000).collect::<Vec<u64>>());
    assert_ne!(ids, sorted);
}
