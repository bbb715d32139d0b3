//! What `bench` measures: the passes over the file (with the payload
//! visitor, or framing only), their median and best times, and the timed
//! random accesses beside random 64-byte reads (see the docs of
//! [`super`]).

use crate::frame::OwnedRecord;
use crate::io::RecordFile;
use std::hint::black_box;
use std::io::Write;
use std::path::Path;
use std::time::Instant;

use super::BenchOptions;
use crate::cli::{report, Failure};
use crate::dataset::{IndexOrigin, Shard};
use crate::error::Error;
use crate::frame::Record;
use crate::io::{OpenOptions, Source};
use crate::order::mix::splitmix64;
use crate::view::{
    DecodeOptions, Element, FeatureRef, FeaturesRef, Kind, ListRef, NumList, PayloadKind,
    PayloadRef,
};
use crate::DecodeError;

/// The next draw of the SplitMix64 generator whose state is `state`, made
/// uniform in `0..n` (`n > 0`) by multiply-shift.
fn below(state: &mut u64, n: u64) -> u64 {
    ((u128::from(splitmix64(state)) * u128::from(n)) >> 64) as u64
}

/// What a pass saw.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Counts {
    pub(super) records: u64,
    pub(super) values: u64,
    pub(super) data_bytes: u64,
    /// Bytes of the record stream (decompressed), where the walk ended.
    pub(super) stream_bytes: u64,
}

/// Caller-owned buffers the numeric lists are copied into: they grow to the
/// longest list once and are reused for every record.
#[derive(Default)]
pub(super) struct Visitor {
    int64: Vec<i64>,
    int32: Vec<i32>,
    float: Vec<f32>,
    double: Vec<f64>,
    options: DecodeOptions,
}

/// Copies `list` into `buf`, growing it first when it is too short; returns
/// the number of values.
fn copy_list<T: Element>(list: NumList<'_, T>, buf: &mut Vec<T>) -> Result<u64, DecodeError> {
    let mut n = list.copy_to_slice(buf)?;
    if n > buf.len() {
        buf.resize(n, T::default());
        n = list.copy_to_slice(buf)?;
    }
    black_box(&buf[..n]);
    Ok(n as u64)
}

impl Visitor {
    /// A visitor that checks payloads with `options`, its buffers empty.
    pub(super) fn new(options: DecodeOptions) -> Visitor {
        Visitor {
            options,
            ..Visitor::default()
        }
    }

    fn feature(&mut self, f: FeatureRef<'_>) -> Result<u64, DecodeError> {
        Ok(match f.list()? {
            None => 0,
            Some(ListRef::Int64(l)) => copy_list(l, &mut self.int64)?,
            Some(ListRef::Int32(l)) => copy_list(l, &mut self.int32)?,
            Some(ListRef::Float(l)) => copy_list(l, &mut self.float)?,
            Some(ListRef::Double(l)) => copy_list(l, &mut self.double)?,
            Some(ListRef::Bytes(l)) => {
                let mut n = 0;
                for b in l.iter() {
                    black_box(b?);
                    n += 1;
                }
                n
            }
        })
    }

    fn features(&mut self, features: FeaturesRef<'_>) -> Result<u64, DecodeError> {
        let mut n = 0;
        for f in features.iter() {
            n += self.feature(f?.feature)?;
        }
        Ok(n)
    }

    /// Checks the payload and visits every value; returns the number of values.
    fn payload(&mut self, kind: PayloadKind, data: &[u8], base: u64) -> Result<u64, DecodeError> {
        let payload = PayloadRef::parse_with(kind, data, base, self.options)?;
        let Some(features) = payload.features() else {
            black_box(data);
            return Ok(0);
        };
        let mut n = self.features(features)?;
        for list in payload
            .feature_lists()
            .iter()
            .flat_map(|lists| lists.iter())
        {
            for f in list?.list.iter() {
                n += self.feature(f?)?;
            }
        }
        Ok(n)
    }
}

/// Where the records come from.
pub(super) enum Input {
    /// An uncompressed file in memory (mapped or read), with its index.
    File(Box<RecordFile>),
    /// A compressed file, streamed again for every pass.
    Stream(OpenOptions),
}

/// One pass over the file: framing only when `visitor` is `None`.
pub(super) fn pass(
    path: &Path,
    input: &Input,
    payload: PayloadKind,
    mut visitor: Option<&mut Visitor>,
) -> Result<Counts, Error> {
    let mut source = match input {
        Input::File(file) => Source::from_file((**file).clone()),
        Input::Stream(options) => Source::open(path, options)?,
    };
    let name = source.name().to_string();
    let mut counts = Counts::default();
    loop {
        let record: Record<'_> = match source.next_record() {
            None => break,
            Some(Ok(r)) => r,
            Some(Err(e)) => {
                return Err(if e.file().is_none() {
                    e.with_file(name.as_str())
                } else {
                    e
                })
            }
        };
        counts.records += 1;
        counts.data_bytes += record.data.len() as u64;
        match visitor.as_deref_mut() {
            None => {
                black_box(record.data);
            }
            Some(v) => {
                counts.values += v
                    .payload(payload, record.data, record.data_offset)
                    .map_err(|e| record.context(e))?;
            }
        }
    }
    counts.stream_bytes = source.position();
    Ok(counts)
}

/// Median and best of some pass times.
#[derive(Debug, Clone, Copy)]
pub(super) struct Passes {
    pub(super) passes: u32,
    pub(super) median: f64,
    pub(super) best: f64,
}

impl Passes {
    pub(super) fn of(mut secs: Vec<f64>) -> Passes {
        secs.sort_by(f64::total_cmp);
        let n = secs.len();
        let median = match n {
            0 => 0.0,
            _ if n % 2 == 1 => secs[n / 2],
            _ => (secs[n / 2 - 1] + secs[n / 2]) / 2.0,
        };
        Passes {
            passes: n as u32,
            median,
            best: secs.first().copied().unwrap_or(0.0),
        }
    }
}

/// Percentiles of some latencies, in nanoseconds.
#[derive(Debug, Clone, Copy)]
pub(super) struct Latency {
    pub(super) p50: u64,
    pub(super) p90: u64,
    pub(super) p99: u64,
    pub(super) p999: u64,
    pub(super) max: u64,
    pub(super) mean: f64,
}

impl Latency {
    /// Nearest-rank percentiles of `ns` (not empty), which it sorts.
    fn of(ns: &mut [u64]) -> Latency {
        ns.sort_unstable();
        let n = ns.len();
        let at = |p: f64| {
            let rank = ((p * n as f64).ceil() as usize).clamp(1, n);
            ns[rank - 1]
        };
        Latency {
            p50: at(0.50),
            p90: at(0.90),
            p99: at(0.99),
            p999: at(0.999),
            max: ns[n - 1],
            mean: ns.iter().map(|&x| x as f64).sum::<f64>() / n as f64,
        }
    }
}

/// The random-access results, or why there are none.
pub(super) enum Random {
    Skipped(String),
    Done {
        index: &'static str,
        feature: Option<Vec<u8>>,
        get: Latency,
        floor: Latency,
        floor_width: usize,
    },
}

/// Nanoseconds of one `elapsed()` reading right after `now()`: the median of
/// many.
pub(super) fn timer_overhead() -> u64 {
    let mut ns: Vec<u64> = (0..10_001)
        .map(|_| {
            let t = Instant::now();
            black_box(t).elapsed().as_nanos() as u64
        })
        .collect();
    ns.sort_unstable();
    ns[ns.len() / 2]
}

/// The list kind and length of feature `name` of `data`, through a lazy view.
fn lookup(
    payload: PayloadKind,
    data: &[u8],
    base: u64,
    name: Option<&[u8]>,
) -> Result<Option<(Kind, usize)>, DecodeError> {
    let Some(name) = name else {
        black_box(data);
        return Ok(None);
    };
    let feature = match PayloadRef::new(payload, data, base).features() {
        Some(features) => features.get(name)?,
        None => None,
    };
    match feature.map(|f| f.list()).transpose()?.flatten() {
        Some(list) => Ok(Some((list.kind(), list.len()?))),
        None => Ok(None),
    }
}

/// The name of the first feature of record 0 (of its context for a
/// SequenceExample), if it has one.
fn first_feature(payload: PayloadKind, data: &[u8], base: u64) -> Option<Vec<u8>> {
    let features = PayloadRef::new(payload, data, base).features()?;
    let first = features.iter().next()?.ok()?;
    Some(first.name().to_vec())
}

/// Record `id` of `shard`; an error is reported on `stderr`.
fn fetch(shard: &Shard, id: u64, stderr: &mut dyn Write) -> Result<OwnedRecord, Failure> {
    match shard.get(id) {
        Ok(Some(r)) => Ok(r),
        Ok(None) => {
            let _ = writeln!(
                stderr,
                "error[stale_index]: {}: record {id}: the index has {} records but gives none for this id",
                shard.name(),
                shard.len()
            );
            Err(Failure::Data)
        }
        Err(e) => {
            report(stderr, &e);
            Err(Failure::Data)
        }
    }
}

/// The ids of the random gets (below `n`) and the offsets of the random
/// reads of `len` bytes (and their width, 64 or less), drawn before timing
/// anything, in this order, from `--seed`.
fn draws(opts: &BenchOptions<'_>, n: u64, len: usize) -> (Vec<u64>, Vec<usize>, usize) {
    let samples = opts.samples as usize;
    let mut rng = opts.seed;
    let ids: Vec<u64> = (0..samples).map(|_| below(&mut rng, n)).collect();
    let width = len.min(64);
    let span = (len - width) as u64 + 1;
    let offsets: Vec<usize> = (0..samples)
        .map(|_| below(&mut rng, span) as usize)
        .collect();
    (ids, offsets, width)
}

/// The floor: `width` bytes read (summed) at each of `offsets`, each timed
/// on its own into `ns`.
fn floor_latency(bytes: &[u8], offsets: &[usize], width: usize, ns: &mut [u64]) -> Latency {
    for (slot, &at) in ns.iter_mut().zip(offsets) {
        let t = Instant::now();
        let chunk = black_box(&bytes[at..at + width]);
        let sum: u64 = chunk.iter().map(|&b| u64::from(b)).sum();
        black_box(sum);
        *slot = t.elapsed().as_nanos() as u64;
    }
    Latency::of(ns)
}

/// Times `samples` random gets (of a compressed file: through its
/// checkpoint index, a get in another span inflating from that checkpoint)
/// and as many random 64-byte reads of `stored`, the file's bytes as stored
/// (compressed, for a compressed file).
pub(super) fn random_access(
    shard: &Shard,
    stored: &[u8],
    payload: PayloadKind,
    opts: &BenchOptions<'_>,
    stderr: &mut dyn Write,
) -> Result<Random, Failure> {
    let n = shard.len();
    if n == 0 || stored.is_empty() {
        return Ok(Random::Skipped("the file has no records".into()));
    }
    if opts.samples == 0 {
        return Ok(Random::Skipped("--samples 0".into()));
    }
    let index = match (shard.origin(), shard.is_compressed()) {
        (IndexOrigin::Sidecar, false) => "sidecar",
        (IndexOrigin::Built { .. }, false) => "built",
        (IndexOrigin::Given, false) => "given",
        (IndexOrigin::Sidecar, true) => "checkpoint sidecar",
        (IndexOrigin::Built { .. }, true) => "checkpoints built",
        (IndexOrigin::Given, true) => "checkpoints given",
        (IndexOrigin::Cached, false) => "cached",
        (IndexOrigin::Cached, true) => "checkpoints cached",
    };
    let first = fetch(shard, 0, stderr)?;
    let feature = first_feature(payload, &first.data, first.data_offset);
    let (ids, offsets, width) = draws(opts, n, stored.len());
    let mut ns = vec![0u64; ids.len()];

    // A shard in memory lends its records (`get_ref`: a slice of the map,
    // nothing counted or cloned), the path a latency-sensitive reader takes;
    // other shards hand out owned records (`get`).
    let in_memory = shard.bytes().is_some();
    for (slot, &id) in ns.iter_mut().zip(&ids) {
        let t = Instant::now();
        let found = if in_memory {
            match shard.get_ref(black_box(id)) {
                Ok(Some(r)) => Some(lookup(payload, r.data, r.data_offset, feature.as_deref())),
                _ => None,
            }
        } else {
            match shard.get(black_box(id)) {
                Ok(Some(r)) => Some(lookup(payload, &r.data, r.data_offset, feature.as_deref())),
                _ => None,
            }
        };
        black_box(&found);
        *slot = t.elapsed().as_nanos() as u64;
        match found {
            Some(Ok(_)) => {}
            Some(Err(e)) => {
                let record = fetch(shard, id, stderr)?;
                report(stderr, &record.as_record().context(e));
                return Err(Failure::Data);
            }
            None => {
                fetch(shard, id, stderr)?;
            }
        }
    }
    let get = Latency::of(&mut ns);

    Ok(Random::Done {
        index,
        feature,
        get,
        floor: floor_latency(stored, &offsets, width, &mut ns),
        floor_width: width,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn draws_are_those_of_the_former_private_generator() {
        // The first draws that bench's own copy of SplitMix64 (replaced by
        // the crate's) made for seeds 0 and 42: benchmark choices are unchanged.
        let mut state = 0;
        let mut got: Vec<u64> = (0..5).map(|_| below(&mut state, 10)).collect();
        got.extend((0..3).map(|_| below(&mut state, 1000)));
        assert_eq!(got, [8, 4, 0, 9, 1, 327, 173, 771]);
        let mut state = 42;
        let got: Vec<u64> = (0..4).map(|_| below(&mut state, 1_000_000)).collect();
        assert_eq!(got, [741_564, 159_910, 278_601, 344_190]);
    }
}
