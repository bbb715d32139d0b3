//! The checks of the `order` target: an order configuration read from the
//! input, and the promises of `recordwire::order` about it (docs/FORMAT.md §7).
//!
//! Two scales:
//!
//! - *whole*: at most [`WHOLE_MAX`] records; the unsharded epoch is
//!   enumerated and must be a permutation of `0..n` (file order in
//!   sequential mode; whole page groups in file order in page-aware mode;
//!   windows of at most `window` whole pages in quasi-random mode); the
//!   shards of every rank and worker (when there are at most
//!   [`SHARDS_MAX`]) concatenate to the epoch order as the tail policy says,
//!   else the given shard and its neighbours are contiguous stretches of it.
//! - *large*: any count in sequential and shuffle mode (up to `u64::MAX`),
//!   up to [`LARGE_PAGED_MAX`] records in the page modes; sampled positions
//!   must give ids in range, distinct, the same through `get`, `iter_from`
//!   and the shards' blocks of the unsharded order. (Quasi-random windows
//!   are at most [`LARGE_WINDOW_MAX`] pages there: random access costs a
//!   window's worth of page groups.)
//!
//! At both scales cursors resume to the same ids (within an epoch, across the
//! end of one, and at the last epoch), and invalid specifications are
//! rejected with one of the errors that apply to them.

use recordwire::order::{Cursor, Mode, Order, OrderError, OrderSpec, Tail, MAX_WINDOW};

/// The most records enumerated whole.
pub const WHOLE_MAX: u64 = 4096;

/// The most shards (ranks × workers) enumerated whole.
pub const SHARDS_MAX: u64 = 32;

/// The most records of a page mode at the large scale.
pub const LARGE_PAGED_MAX: u64 = 1 << 14;

/// The largest quasi-random window at the large scale.
pub const LARGE_WINDOW_MAX: u32 = 256;

/// Reads the input front to back; past its end every read gives 0.
struct Input<'a>(&'a [u8]);

impl Input<'_> {
    fn u8(&mut self) -> u8 {
        match self.0.split_first() {
            Some((&b, rest)) => {
                self.0 = rest;
                b
            }
            None => 0,
        }
    }

    fn u16(&mut self) -> u16 {
        u16::from_le_bytes([self.u8(), self.u8()])
    }

    fn u32(&mut self) -> u32 {
        u32::from(self.u16()) | (u32::from(self.u16()) << 16)
    }

    fn u64(&mut self) -> u64 {
        u64::from(self.u32()) | (u64::from(self.u32()) << 32)
    }

    /// A number that is often 0, 1, small or near `u64::MAX`.
    fn edgy(&mut self) -> u64 {
        let b = self.u8();
        match b % 8 {
            0 => u64::from(b / 8),
            1 => u64::MAX - u64::from(b / 8),
            2 => 1u64 << (self.u8() % 64),
            3 => (1u64 << (self.u8() % 64)) - 1,
            4 => (1u64 << (self.u8() % 64)) + 1,
            _ => self.u64(),
        }
    }
}

/// A configuration: the record count, the offsets, the spec, an epoch, and
/// the positions to look at.
#[derive(Debug, Clone)]
pub struct Config {
    /// The record count.
    pub count: u64,
    /// The record offsets (page modes only).
    pub offsets: Vec<u64>,
    /// The spec, possibly invalid.
    pub spec: OrderSpec,
    /// The epoch to check (and the next one).
    pub epoch: u64,
    /// Enumerate whole epochs (`count <= WHOLE_MAX`).
    pub whole: bool,
    /// Positions of interest, reduced modulo the length where used.
    pub probes: Vec<u64>,
}

/// A splitmix64 step, to stretch a short input into record sizes.
fn splitmix(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

impl Config {
    /// Reads a configuration from the fuzzer's bytes.
    pub fn read(data: &[u8]) -> Config {
        let mut input = Input(data);
        let flags = input.u8();
        let whole = flags & 0x80 == 0;
        let valid = flags & 0x40 == 0; // else the spec may be out of range
        let tail = [Tail::Keep, Tail::DropLast, Tail::Pad][usize::from(flags % 3)];
        let kind = flags / 3 % 4;
        let seed = input.u64();
        let epoch = input.edgy();
        let page_size = match input.u8() % 4 {
            0 => u64::from(input.u8()) + 1,
            1 => 1u64 << (input.u8() % 20),
            2 => input.edgy().max(1),
            _ => 4096,
        };
        let window_byte = input.u16();
        let window = u32::from(window_byte % 64) + 1;
        let window = match window_byte >> 14 {
            0 | 1 => window,
            2 => window * 1024,
            _ => u32::from(window_byte) + 1,
        };
        let mode = match kind {
            0 => Mode::Sequential,
            1 => Mode::Shuffle,
            2 => Mode::PageAware { page_size },
            _ => Mode::QuasiRandom { page_size, window },
        };
        let paged = kind >= 2;
        let (world, rank, workers, worker);
        let shape = input.u8();
        if valid {
            world = match shape % 4 {
                0 | 1 => u32::from(shape / 4 % 8) + 1,
                2 => u32::from(input.u8()) + 1,
                _ => input.u32().max(1),
            };
            workers = match shape / 32 % 4 {
                0 | 1 => 1,
                2 => u32::from(input.u8() % 8) + 1,
                _ => u32::from(input.u16()) + 1,
            };
            rank = input.u32() % world;
            worker = input.u32() % workers;
        } else {
            world = u32::from(input.u8() % 4);
            rank = u32::from(input.u8() % 5);
            workers = u32::from(input.u8() % 4);
            worker = u32::from(input.u8() % 5);
        }
        let spec = OrderSpec {
            mode: if valid {
                match mode {
                    Mode::PageAware { page_size } => Mode::PageAware {
                        page_size: page_size.max(1),
                    },
                    // (At the large scale every `get` looks at `window`
                    // page groups: keep it small there, for speed.)
                    Mode::QuasiRandom { page_size, window } => Mode::QuasiRandom {
                        page_size: page_size.max(1),
                        window: window.clamp(1, if whole { MAX_WINDOW } else { LARGE_WINDOW_MAX }),
                    },
                    m => m,
                }
            } else {
                match mode {
                    Mode::PageAware { .. } => Mode::PageAware {
                        page_size: page_size * u64::from(shape & 1),
                    },
                    Mode::QuasiRandom { .. } => Mode::QuasiRandom {
                        page_size: page_size * u64::from(shape & 1),
                        window: [0, 1, MAX_WINDOW, MAX_WINDOW + 1][usize::from(shape / 2 % 4)],
                    },
                    m => m,
                }
            },
            seed,
            rank,
            world,
            worker,
            workers,
            tail,
        };
        let count = if whole {
            u64::from(input.u16()) % (WHOLE_MAX + 1)
        } else if paged {
            input.edgy() % (LARGE_PAGED_MAX + 1)
        } else {
            input.edgy()
        };
        let mut offsets = Vec::new();
        if paged {
            // Record sizes: the scale, then one byte per record (0 puts two
            // records at the same offset), stretched with splitmix once
            // the input runs out; the first offset may be large, the
            // following ones saturate at u64::MAX.
            let scale = match input.u8() % 4 {
                0 => 1,
                1 => 16,
                2 => page_size / 8 + 1,
                _ => page_size.saturating_mul(2),
            };
            let mut at = match input.u8() % 4 {
                0 => input.edgy(),
                _ => 0,
            };
            let extra = input.u8();
            let n_probes = usize::from(input.u8() % 16);
            let probes: Vec<u64> = (0..n_probes).map(|_| input.edgy()).collect();
            let mut state = seed ^ count;
            for _ in 0..count {
                offsets.push(at);
                let b = match input.0.split_first() {
                    Some((&b, rest)) => {
                        input.0 = rest;
                        b
                    }
                    None => (splitmix(&mut state) >> 56) as u8,
                };
                at = at.saturating_add(u64::from(b).saturating_mul(scale));
            }
            match extra % 8 {
                // Too few offsets, or one out of order: both errors.
                0 if !valid && count > 0 => {
                    offsets.pop();
                }
                1 if !valid && count > 1 => {
                    let i = usize::from(extra / 8) % (count as usize - 1) + 1;
                    if offsets[i - 1] > 0 {
                        offsets[i] = offsets[i - 1] - 1;
                    } else {
                        offsets[i - 1] = 1;
                        offsets[i] = 0;
                    }
                }
                // The end offset, as an index gives it, or more.
                2..=5 => offsets.push(at),
                6 => offsets.extend([at, 0, 7]),
                _ => {}
            }
            return Config {
                count,
                offsets,
                spec,
                epoch,
                whole,
                probes,
            };
        }
        let n_probes = usize::from(input.u8() % 16);
        let probes = (0..n_probes).map(|_| input.edgy()).collect();
        Config {
            count,
            offsets,
            spec,
            epoch,
            whole,
            probes,
        }
    }

    /// The errors that apply to this configuration (empty when it is valid).
    pub fn errors(&self) -> Vec<OrderError> {
        let s = &self.spec;
        let mut errors = Vec::new();
        if s.world == 0 {
            errors.push(OrderError::ZeroWorld);
        } else if s.rank >= s.world {
            errors.push(OrderError::RankOutOfRange {
                rank: s.rank,
                world: s.world,
            });
        }
        if s.workers == 0 {
            errors.push(OrderError::ZeroWorkers);
        } else if s.worker >= s.workers {
            errors.push(OrderError::WorkerOutOfRange {
                worker: s.worker,
                workers: s.workers,
            });
        }
        if let Some(page_size) = s.mode.page_size() {
            if page_size == 0 {
                errors.push(OrderError::ZeroPageSize);
            }
            if let Mode::QuasiRandom { window, .. } = s.mode {
                if window == 0 || window > MAX_WINDOW {
                    errors.push(OrderError::WindowOutOfRange { window });
                }
            }
            if (self.offsets.len() as u64) < self.count {
                errors.push(OrderError::TooFewOffsets {
                    count: self.count,
                    offsets: self.offsets.len() as u64,
                });
            } else {
                let offsets = &self.offsets[..self.count as usize];
                if let Some(i) = (1..offsets.len()).find(|&i| offsets[i] < offsets[i - 1]) {
                    errors.push(OrderError::UnsortedOffsets {
                        id: i as u64,
                        previous: offsets[i - 1],
                        offset: offsets[i],
                    });
                }
            }
        }
        errors
    }

    /// The same configuration for another shard.
    fn with_shard(&self, rank: u32, worker: u32) -> OrderSpec {
        OrderSpec {
            rank,
            worker,
            ..self.spec
        }
    }

    /// The unsharded spec.
    fn unsharded(&self) -> OrderSpec {
        OrderSpec {
            rank: 0,
            world: 1,
            worker: 0,
            workers: 1,
            tail: Tail::Keep,
            ..self.spec
        }
    }

    fn order(&self, spec: OrderSpec) -> Order {
        Order::new(self.count, &self.offsets, spec).expect("a valid spec")
    }
}

/// Whether `RECORDWIRE_FUZZ_DEBUG` is set: then [`check`] prints the
/// configuration it read.
fn debug() -> bool {
    static DEBUG: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *DEBUG.get_or_init(|| std::env::var_os("RECORDWIRE_FUZZ_DEBUG").is_some())
}

/// The `order` target: reads a configuration and checks it.
pub fn check(data: &[u8]) {
    let config = Config::read(data);
    if debug() {
        eprintln!(
            "order: count {} offsets {} whole {} epoch {} probes {:?} {:?}",
            config.count,
            config.offsets.len(),
            config.whole,
            config.epoch,
            config.probes,
            config.spec
        );
    }
    let errors = config.errors();
    let built = Order::new(config.count, &config.offsets, config.spec);
    match built {
        Err(e) => {
            assert!(
                errors.contains(&e),
                "{e:?} ({e}) is not among the errors that apply: {errors:?} for {config:?}"
            );
            assert!(!e.to_string().is_empty());
            return;
        }
        Ok(order) => {
            assert!(errors.is_empty(), "accepted despite {errors:?}: {config:?}");
            let _ = format!("{order:?} {:?}", order.epoch(config.epoch));
            assert_eq!(order.count(), config.count);
            assert_eq!(order.spec(), &config.spec);
            let len = order.len();
            assert_eq!(order.is_empty(), len == 0);
            let _ = (config.spec.mode.name(), config.spec.tail.name());
        }
    }
    if config.whole {
        whole(&config);
    } else {
        large(&config);
    }
}

/// The number of ids a rank reads and the number of positions of the epoch
/// order the ranks read together, by the tail policy.
fn shard_sizes(n: u64, world: u32, tail: Tail) -> (u64, u128) {
    let world = u64::from(world);
    match tail {
        Tail::Keep => (n.div_ceil(world), u128::from(n)),
        Tail::DropLast => (n / world, u128::from(n / world * world)),
        Tail::Pad => (
            n.div_ceil(world),
            u128::from(n.div_ceil(world)) * u128::from(world),
        ),
    }
}

/// The unsharded epoch, enumerated and checked for the mode's promises.
fn epoch_ids(config: &Config, order: &Order, epoch: u64) -> Vec<u64> {
    let n = config.count;
    let e = order.epoch(epoch);
    assert_eq!(e.epoch(), epoch);
    assert_eq!(e.len(), n);
    let it = e.iter();
    assert_eq!(it.len() as u64, n, "size_hint");
    let ids: Vec<u64> = it.collect();
    assert_eq!(ids.len() as u64, n);
    let mut seen = vec![false; n as usize];
    for (p, &id) in ids.iter().enumerate() {
        assert!(id < n, "epoch {epoch}: id {id} at {p} of {n}");
        assert!(!seen[id as usize], "epoch {epoch}: id {id} twice");
        seen[id as usize] = true;
    }
    let groups = || -> Vec<usize> {
        // The page group of each record: runs of records starting in one page.
        let page_size = config.spec.mode.page_size().expect("a page mode");
        let mut group = Vec::with_capacity(n as usize);
        let mut g = 0;
        for i in 0..n as usize {
            if i > 0 && config.offsets[i] / page_size != config.offsets[i - 1] / page_size {
                g += 1;
            }
            group.push(g);
        }
        group
    };
    match config.spec.mode {
        Mode::Sequential => assert!(ids.iter().enumerate().all(|(p, &id)| p as u64 == id)),
        Mode::Shuffle => {}
        Mode::PageAware { .. } => {
            let group = groups();
            for p in 1..ids.len() {
                let id = ids[p] as usize;
                if id > 0 && group[id - 1] == group[id] {
                    assert_eq!(ids[p - 1] as usize, id - 1, "a page split at {p}");
                }
            }
            if let Some(&first) = ids.first() {
                assert!(first == 0 || group[first as usize - 1] != group[first as usize]);
            }
        }
        Mode::QuasiRandom { window, .. } => {
            let group = groups();
            let groups_n = group.last().map_or(0, |&g| g + 1);
            let mut left = vec![0u64; groups_n];
            for &g in &group {
                left[g] += 1;
            }
            // Cut the order into stretches of `window` whole pages: a
            // stretch ends when it has begun `window` pages (fewer at the
            // end) and finished them all.
            let (mut stretch, mut member) = (1u32, vec![0u32; groups_n]);
            let (mut begun, mut open) = (0u64, 0u64);
            for (p, &id) in ids.iter().enumerate() {
                let g = group[id as usize];
                if member[g] != stretch {
                    assert_eq!(member[g], 0, "page {g} read in two windows (at {p})");
                    member[g] = stretch;
                    begun += 1;
                    open += 1;
                    assert!(
                        begun <= u64::from(window),
                        "more than {window} pages in one window at {p}"
                    );
                }
                left[g] -= 1;
                if left[g] == 0 {
                    open -= 1;
                }
                if begun == u64::from(window) && open == 0 {
                    stretch += 1;
                    begun = 0;
                }
            }
            assert_eq!(open, 0);
        }
    }
    ids
}

/// The ids of `order`'s epoch, with `get`, `iter_from` and cursors checked
/// against `iter` at a few positions.
fn shard_ids(config: &Config, order: &Order, epoch: u64) -> Vec<u64> {
    let e = order.epoch(epoch);
    let len = order.len();
    let ids: Vec<u64> = e.iter().collect();
    assert_eq!(ids.len() as u64, len);
    let mut probes: Vec<u64> = config
        .probes
        .iter()
        .take(6)
        .map(|p| p % (len + 1))
        .collect();
    probes.extend([0, len / 2, len.saturating_sub(1), len]);
    for p in probes {
        assert_eq!(e.get(p), ids.get(p as usize).copied(), "get({p})");
        let mut rest = e.iter_from(p).expect("p <= len");
        assert_eq!(rest.cursor(), Cursor { epoch, position: p });
        let got: Vec<u64> = rest.by_ref().take(40).collect();
        let end = (p as usize + 40).min(ids.len());
        assert_eq!(got[..], ids[p as usize..end], "iter_from({p})");
        assert_eq!(rest.cursor().position, end as u64);
    }
    assert!(e.iter_from(len + 1).is_err());
    ids
}

fn whole(config: &Config) -> Vec<u64> {
    let n = config.count;
    let unsharded = config.order(config.unsharded());
    let full = epoch_ids(config, &unsharded, config.epoch);
    // Computed again from scratch: the same.
    let again = config.order(config.unsharded());
    assert!(again.epoch(config.epoch).iter().eq(full.iter().copied()));
    assert_eq!(unsharded.page_groups(), again.page_groups());

    let spec = config.spec;
    let (rank_len, total) = shard_sizes(n, spec.world, spec.tail);
    let expected = |position: u128| full[(position % u128::from(n.max(1))) as usize];
    let shards = u64::from(spec.world) * u64::from(spec.workers);
    if shards <= SHARDS_MAX {
        // Every shard: they concatenate to the epoch order as the policy says.
        let mut at = 0u128;
        for rank in 0..spec.world {
            let mut rank_ids = 0u64;
            for worker in 0..spec.workers {
                let order = config.order(config.with_shard(rank, worker));
                let ids: Vec<u64> = order.epoch(config.epoch).iter().collect();
                assert_eq!(ids.len() as u64, order.len());
                assert!(
                    ids.len() as u64 <= rank_len.div_ceil(u64::from(spec.workers)),
                    "worker shard too large"
                );
                for (i, &id) in ids.iter().enumerate() {
                    assert_eq!(
                        id,
                        expected(at + i as u128),
                        "rank {rank} worker {worker} #{i}"
                    );
                }
                at += ids.len() as u128;
                rank_ids += ids.len() as u64;
            }
            match spec.tail {
                Tail::Keep => {
                    assert!(rank_ids == n / u64::from(spec.world) || rank_ids == rank_len)
                }
                _ => assert_eq!(rank_ids, rank_len),
            }
        }
        assert_eq!(at, total, "the shards together");
    } else {
        // This shard, and the shards next to it, are stretches of the epoch
        // order that meet.
        let mut position = vec![0u64; n as usize];
        for (p, &id) in full.iter().enumerate() {
            position[id as usize] = p as u64;
        }
        let mut neighbours = vec![(spec.rank, spec.worker)];
        if spec.worker + 1 < spec.workers {
            neighbours.push((spec.rank, spec.worker + 1));
        } else if spec.rank + 1 < spec.world {
            neighbours.push((spec.rank + 1, 0));
        }
        let mut previous_end: Option<u64> = None;
        for (rank, worker) in neighbours {
            let order = config.order(config.with_shard(rank, worker));
            let ids = shard_ids(config, &order, config.epoch);
            assert!(ids.len() as u64 <= rank_len);
            for w in ids.windows(2) {
                assert_eq!(
                    (position[w[0] as usize] + 1) % n,
                    position[w[1] as usize],
                    "rank {rank} worker {worker}: not a stretch"
                );
            }
            if let (Some(end), Some(&first)) = (previous_end, ids.first()) {
                assert_eq!(
                    (end + 1) % n,
                    position[first as usize],
                    "shards do not meet"
                );
            }
            if let Some(&last) = ids.last() {
                previous_end = Some(position[last as usize]);
            }
        }
    }

    // Cursors, on the given shard.
    let order = config.order(spec);
    let ids = shard_ids(config, &order, config.epoch);
    cursors(config, &order, &ids);
    full
}

/// Cursors of `order` (whose epoch `config.epoch` is `ids`): saved from a
/// run, they resume it; across the end of an epoch the run goes on with the
/// next one (none after `u64::MAX`).
fn cursors(config: &Config, order: &Order, ids: &[u64]) {
    let len = order.len();
    let epoch = config.epoch;
    let next: Option<Vec<u64>> = epoch
        .checked_add(1)
        .map(|e| order.epoch(e).iter().take(50).collect());
    let k = config.probes.first().map_or(len / 3, |p| p % (len + 1));
    // Through an epoch's iterator.
    let this = order.epoch(epoch);
    let mut it = this.iter();
    assert!(it
        .by_ref()
        .take(k as usize)
        .eq(ids[..k as usize].iter().copied()));
    let saved = it.cursor();
    assert_eq!(saved, Cursor { epoch, position: k });
    // Through the endless run, from the saved cursor: the rest of the epoch,
    // then the next.
    let mut run = order.iter_from(saved).expect("in range");
    let rest: Vec<u64> = run.by_ref().take(ids.len() - k as usize).collect();
    assert_eq!(rest[..], ids[k as usize..]);
    let after_end = run.cursor();
    match (&next, len) {
        (_, 0) => {
            assert_eq!(run.next(), None);
            assert_eq!(after_end, Cursor { epoch, position: 0 });
        }
        (None, _) => {
            assert_eq!(run.next(), None, "a run past epoch u64::MAX");
            assert_eq!(run.next(), None);
        }
        (Some(next), _) => {
            assert_eq!(
                after_end,
                Cursor {
                    epoch: epoch + 1,
                    position: 0
                }
            );
            let more: Vec<u64> = run.by_ref().take(next.len()).collect();
            assert_eq!(&more, next, "the next epoch");
            let resumed: Vec<u64> = order
                .iter_from(after_end)
                .expect("start of an epoch")
                .take(next.len())
                .collect();
            assert_eq!(&resumed, next);
            // A cursor at the end of an epoch is the next one's start.
            let at_end: Vec<u64> = order
                .iter_from(Cursor {
                    epoch,
                    position: len,
                })
                .expect("position == len")
                .take(next.len())
                .collect();
            assert_eq!(&at_end, next);
        }
    }
    assert!(matches!(
        order.iter_from(Cursor {
            epoch,
            position: len + 1
        }),
        Err(OrderError::CursorOutOfRange { .. })
    ));
    if epoch == 0 {
        assert!(order.epochs().take(ids.len()).eq(ids.iter().copied()));
    }
}

/// The large scale: sampled positions only.
fn large(config: &Config) {
    let n = config.count;
    let spec = config.spec;
    let unsharded = config.order(config.unsharded());
    let full = unsharded.epoch(config.epoch);
    let order = config.order(spec);
    let e = order.epoch(config.epoch);
    let len = order.len();
    let (rank_len, _) = shard_sizes(n, spec.world, spec.tail);
    assert!(len <= rank_len.div_ceil(u64::from(spec.workers)));

    let probe = |p: u64| if len == 0 { 0 } else { p % len };
    let mut positions: Vec<u64> = config.probes.iter().take(6).map(|&p| probe(p)).collect();
    positions.extend([0, len / 2, len.saturating_sub(1)]);
    positions.retain(|&p| p < len);
    let mut seen: Vec<(u64, u64)> = Vec::new();
    for &p in &positions {
        let id = e.get(p).expect("p < len");
        assert!(id < n, "id {id} of {n} at {p}");
        assert!(
            seen.iter().all(|&(q, other)| q == p || other != id),
            "id {id} at {p} and elsewhere"
        );
        seen.push((p, id));
        // (In the page modes `get` costs up to `window` page groups, so
        // only the first run is checked id by id.)
        let run: Vec<u64> = e.iter_from(p).expect("p < len").take(8).collect();
        assert_eq!(run.first(), Some(&id), "iter_from({p})");
        if seen.len() == 1 {
            for (i, &id) in run.iter().enumerate() {
                assert_eq!(Some(id), e.get(p + i as u64), "iter_from({p}) #{i}");
            }
        }
        if spec.mode == Mode::Sequential && spec.world == 1 && spec.workers == 1 {
            assert_eq!(id, p);
        }
    }
    assert_eq!(e.get(len), None);

    // The shards of the first ranks and workers are consecutive blocks of
    // the unsharded order (positions reduced modulo n with `Pad`).
    let paged = spec.mode.page_size().is_some();
    let max_shards = if paged { 2 } else { 64 };
    let mut at = 0u128;
    let mut checked = 0;
    'ranks: for rank in 0..spec.world {
        for worker in 0..spec.workers {
            if checked >= max_shards {
                break 'ranks;
            }
            checked += 1;
            let shard = config.order(config.with_shard(rank, worker));
            let se = shard.epoch(config.epoch);
            let slen = shard.len();
            for i in [0, slen / 2, slen.saturating_sub(1)] {
                if i < slen {
                    let global = ((at + u128::from(i)) % u128::from(n)) as u64;
                    assert_eq!(
                        se.get(i),
                        full.get(global),
                        "rank {rank} worker {worker} #{i}"
                    );
                }
            }
            at += u128::from(slen);
        }
    }
    // Cursors across the end of the epoch, from its last few ids.
    let tail_from = len.saturating_sub(3);
    let tail: Vec<u64> = e.iter_from(tail_from).expect("in range").collect();
    let mut run = order
        .iter_from(Cursor {
            epoch: config.epoch,
            position: tail_from,
        })
        .expect("in range");
    assert!(run.by_ref().take(tail.len()).eq(tail.iter().copied()));
    match config.epoch.checked_add(1) {
        Some(next) if len > 0 => {
            assert_eq!(
                run.cursor(),
                Cursor {
                    epoch: next,
                    position: 0
                }
            );
            // (Fewer than 3 ids when the epoch is shorter.)
            let b: Vec<u64> = order.epoch(next).iter().take(3).collect();
            let a: Vec<u64> = run.take(b.len()).collect();
            assert_eq!(a, b);
        }
        _ => assert_eq!(run.next(), None),
    }
}
