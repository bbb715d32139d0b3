//! `bench`: read throughput and random-access latency on this machine
//! (SPEC §9).
//!
//! # What is measured
//!
//! 1. **Warm-up** (not timed): one full pass over the file, which also
//!    checks it (frames, both CRCs, payloads) and counts its records and
//!    values. Damage is reported as by the other commands
//!    (`error[kind]: file: record N at byte O: ...`, exit status 1).
//! 2. **Sequential** (`--passes N`, default 5): frames with both CRCs, each
//!    payload checked the way `ParseFromString` checks it (`ExampleRef::parse`,
//!    `SequenceExampleRef::parse`, `OfRecordRef::parse`; nothing for `raw`),
//!    then every value of every feature (the effective features, each name
//!    once) visited: numeric lists copied with `copy_to_slice` into
//!    caller-owned buffers that grow once to the largest list and are reused,
//!    bytes lists iterated. No allocation per record.
//! 3. **Framing only** (`--passes N`): frames with both CRCs, payloads not
//!    looked at.
//! 4. **Random access** (uncompressed files only; `--samples N`, default
//!    100000, ids drawn uniformly by a SplitMix64 generator seeded with
//!    `--seed`): one operation is `get(id)` through the index (`--index PATH`,
//!    else the current sidecar, else one built in memory; the frame's CRCs
//!    checked), a lazy view of the payload (`ExampleRef::new` and friends, no
//!    whole-record check), the lookup of one feature by name (the first
//!    feature of record 0, chosen before timing; for a SequenceExample, of its
//!    context) and reading its list kind and length.
//! 5. **Random 64-byte reads**, the floor: the same number of reads of 64
//!    bytes at uniformly random offsets of the same bytes (summed), and the
//!    ratio of the two medians.
//!
//! Every random operation is timed on its own with [`Instant`]; ids and
//! offsets are drawn before timing. The cost of reading the clock is in
//! every latency; it is measured (the median of back-to-back readings) and
//! reported as `timer_overhead_ns`, not subtracted. Rates are over the
//! **median** pass; GB are 10^9 bytes of the file as stored (compressed when
//! it is compressed), MiB 2^20 bytes.
//!
//! A compressed file is read through the streaming decompressor, once per
//! pass; its records cannot be reached by offset, so random access is
//! reported as skipped, with the reason, and is not an error.
//!
//! # JSON keys (`--json`)
//!
//! One object on one line:
//!
//! - `file` (string), `framing`, `compression`, `payload` (names as in
//!   `inspect`), `mapped` (bool), `data_crc` (bool: data CRCs checked);
//! - `bytes`: size of the file; `stream_bytes`: size of the record stream
//!   (decompressed); `records`, `values`, `data_bytes` (payload bytes);
//! - `sequential`, `framing_only`: `passes`, `median_seconds`,
//!   `best_seconds`, `records_per_second`, `gb_per_second`,
//!   `mib_per_second` (all three over the median pass), `best_gb_per_second`;
//! - `random_access`: `skipped` (bool), and either `reason` (string), or
//!   `samples`, `seed`, `index` (`sidecar`, `built` or `given`), `feature`
//!   (string, or null when record 0 has none), `p50_ns`, `p90_ns`, `p99_ns`,
//!   `p999_ns`, `max_ns`, `mean_ns`;
//! - `random_read_64`: the same, with `bytes_per_read` instead of `index`
//!   and `feature`;
//! - `ratio_p50`: `random_access.p50_ns / random_read_64.p50_ns`;
//! - `timer_overhead_ns`.
//!
//! A value that cannot be computed (a rate over no records or no time, the
//! ratio when random access is skipped) is `null`, never NaN.

use std::hint::black_box;
use std::io::Write;
use std::path::Path;
use std::time::Instant;

use super::indexed::{data_or_fatal, open_shard};
use super::{decode_error, report, CmdResult, Failure, ReadArgs, EXIT_USAGE};
use crate::error::Error;
use crate::frame::{detect, ErrorPolicy, Framing, Record};
use crate::index::{IndexOrigin, Shard};
use crate::io::{Compression, OpenOptions, Source};
use crate::names::quoted;
use crate::view::{
    DecodeOptions, Element, ExampleRef, FeatureRef, FeaturesRef, Kind, ListRef, NumList,
    OfRecordRef, PayloadKind, SequenceExampleRef,
};
use crate::DecodeError;

/// The JSON keys, for `recordwire bench --help`.
pub(super) const HELP: &str = "\
What is timed: --passes full sequential passes (frames with both CRCs, each
payload checked and every value of every feature copied into reused buffers)
and as many framing-only passes; then, on uncompressed files, --samples random
gets through the index (frame, CRCs, a lazy view of the payload, the lookup of
the first feature of record 0 and its list length), each timed on its own,
beside as many random 64-byte reads of the same bytes (the floor). An untimed
pass first warms the cache and checks the file. Rates are over the median
pass; GB = 10^9 bytes of the file as stored; latencies include the cost of
reading the clock (timer_overhead_ns). Compressed files are streamed, and
their random access is reported as skipped.

JSON keys (--json), one object:
  file, framing, compression, payload, mapped, data_crc,
  bytes, stream_bytes, records, values, data_bytes,
  sequential / framing_only: {passes, median_seconds, best_seconds,
    records_per_second, gb_per_second, mib_per_second, best_gb_per_second},
  random_access: {skipped, reason} or {skipped, samples, seed, index, feature,
    p50_ns, p90_ns, p99_ns, p999_ns, max_ns, mean_ns},
  random_read_64: {skipped, reason} or {skipped, samples, seed, bytes_per_read,
    p50_ns, p90_ns, p99_ns, p999_ns, max_ns, mean_ns},
  ratio_p50, timer_overhead_ns.
What cannot be computed (a rate of an empty file, a skipped ratio) is null.";

/// The options of one run.
pub(super) struct BenchOptions<'a> {
    /// `--index`.
    pub index: Option<&'a Path>,
    /// `--passes` (at least 1).
    pub passes: u32,
    /// `--samples`.
    pub samples: u64,
    /// `--seed`.
    pub seed: u64,
    /// `--json`.
    pub json: bool,
}

/// SplitMix64: a small, good, seeded generator.
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (`n > 0`), by multiply-shift.
    fn below(&mut self, n: u64) -> u64 {
        ((u128::from(self.next()) * u128::from(n)) >> 64) as u64
    }
}

/// What a pass saw.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Counts {
    records: u64,
    values: u64,
    data_bytes: u64,
    /// Bytes of the record stream (decompressed), where the walk ended.
    stream_bytes: u64,
}

/// Caller-owned buffers the numeric lists are copied into: they grow to the
/// longest list once and are reused for every record.
#[derive(Default)]
struct Visitor {
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
        let options = self.options;
        match kind {
            PayloadKind::Example => {
                self.features(ExampleRef::parse_with(data, base, options)?.features())
            }
            PayloadKind::OfRecord => {
                self.features(OfRecordRef::parse_with(data, base, options)?.features())
            }
            PayloadKind::SequenceExample => {
                let se = SequenceExampleRef::parse_with(data, base, options)?;
                let mut n = self.features(se.context())?;
                for list in se.feature_lists().iter() {
                    for f in list?.list.iter() {
                        n += self.feature(f?)?;
                    }
                }
                Ok(n)
            }
            PayloadKind::Raw => {
                black_box(data);
                Ok(0)
            }
        }
    }
}

/// Where the records come from.
enum Input {
    /// An uncompressed file in memory (mapped or read), with its index.
    File(Box<Shard>),
    /// A compressed file, streamed again for every pass.
    Stream(OpenOptions),
}

/// One pass over the file: framing only when `visitor` is `None`.
fn pass(
    path: &Path,
    input: &Input,
    payload: PayloadKind,
    mut visitor: Option<&mut Visitor>,
) -> Result<Counts, Error> {
    let mut source = match input {
        Input::File(shard) => Source::from_file(shard.file().clone()),
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
                    .map_err(|e| decode_error(&name, &record, e))?;
            }
        }
    }
    counts.stream_bytes = source.position();
    Ok(counts)
}

/// Median and best of some pass times.
#[derive(Debug, Clone, Copy)]
struct Passes {
    passes: u32,
    median: f64,
    best: f64,
}

impl Passes {
    fn of(mut secs: Vec<f64>) -> Passes {
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

/// `n / secs`, when there is something to divide.
fn rate(n: u64, secs: f64, records: u64) -> Option<f64> {
    (records > 0 && secs > 0.0).then(|| n as f64 / secs)
}

/// Percentiles of some latencies, in nanoseconds.
#[derive(Debug, Clone, Copy)]
struct Latency {
    p50: u64,
    p90: u64,
    p99: u64,
    p999: u64,
    max: u64,
    mean: f64,
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
enum Random {
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
fn timer_overhead() -> u64 {
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
    let feature = match payload {
        PayloadKind::Example => ExampleRef::new(data, base).get(name)?,
        PayloadKind::SequenceExample => SequenceExampleRef::new(data, base).context().get(name)?,
        PayloadKind::OfRecord => OfRecordRef::new(data, base).get(name)?,
        PayloadKind::Raw => None,
    };
    match feature.map(|f| f.list()).transpose()?.flatten() {
        Some(list) => Ok(Some((list.kind(), list.len()?))),
        None => Ok(None),
    }
}

/// The name of the first feature of record 0 (of its context for a
/// SequenceExample), if it has one.
fn first_feature(payload: PayloadKind, data: &[u8], base: u64) -> Option<Vec<u8>> {
    let features = match payload {
        PayloadKind::Example => ExampleRef::new(data, base).features(),
        PayloadKind::SequenceExample => SequenceExampleRef::new(data, base).context(),
        PayloadKind::OfRecord => OfRecordRef::new(data, base).features(),
        PayloadKind::Raw => return None,
    };
    let first = features.iter().next()?.ok()?;
    Some(first.name().to_vec())
}

/// Record `id` of `shard`; an error is reported on `stderr`.
fn fetch<'s>(shard: &'s Shard, id: u64, stderr: &mut dyn Write) -> Result<Record<'s>, Failure> {
    match shard.get(id) {
        Ok(Some(r)) => Ok(r),
        Ok(None) => {
            let _ = writeln!(
                stderr,
                "error: {}: the index has {} records but no record {id}",
                shard.file().name(),
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

/// Times `samples` random gets and as many random 64-byte reads.
fn random_access(
    shard: &Shard,
    payload: PayloadKind,
    opts: &BenchOptions<'_>,
    stderr: &mut dyn Write,
) -> Result<Random, Failure> {
    let n = shard.len();
    let bytes: &[u8] = shard.file().bytes();
    if n == 0 || bytes.is_empty() {
        return Ok(Random::Skipped("the file has no records".into()));
    }
    if opts.samples == 0 {
        return Ok(Random::Skipped("--samples 0".into()));
    }
    let name = shard.file().name().to_string();
    let index = match shard.origin() {
        IndexOrigin::Sidecar => "sidecar",
        IndexOrigin::Built { .. } => "built",
        IndexOrigin::Given => "given",
    };
    let first = fetch(shard, 0, stderr)?;
    let feature = first_feature(payload, first.data, first.data_offset);
    let samples = opts.samples as usize;

    // Draw everything before timing anything.
    let mut rng = SplitMix(opts.seed);
    let ids: Vec<u64> = (0..samples).map(|_| rng.below(n)).collect();
    let width = bytes.len().min(64);
    let span = (bytes.len() - width) as u64 + 1;
    let offsets: Vec<usize> = (0..samples).map(|_| rng.below(span) as usize).collect();
    let mut ns = vec![0u64; samples];

    for (slot, &id) in ns.iter_mut().zip(&ids) {
        let t = Instant::now();
        let record = shard.get(black_box(id));
        let found = match &record {
            Ok(Some(r)) => Some(lookup(payload, r.data, r.data_offset, feature.as_deref())),
            _ => None,
        };
        black_box(&found);
        *slot = t.elapsed().as_nanos() as u64;
        let record = match record {
            Ok(Some(r)) => r,
            _ => fetch(shard, id, stderr)?,
        };
        if let Some(Err(e)) = found {
            report(stderr, &decode_error(&name, &record, e));
            return Err(Failure::Data);
        }
    }
    let get = Latency::of(&mut ns);

    for (slot, &at) in ns.iter_mut().zip(&offsets) {
        let t = Instant::now();
        let chunk = black_box(&bytes[at..at + width]);
        let sum: u64 = chunk.iter().map(|&b| u64::from(b)).sum();
        black_box(sum);
        *slot = t.elapsed().as_nanos() as u64;
    }
    let floor = Latency::of(&mut ns);
    Ok(Random::Done {
        index,
        feature,
        get,
        floor,
        floor_width: width,
    })
}

/// Runs `bench` on one file.
pub(super) fn bench(
    path: &Path,
    read: &ReadArgs,
    opts: &BenchOptions<'_>,
    stdout: &mut dyn Write,
    stderr: &mut dyn Write,
) -> CmdResult {
    if path == Path::new("-") {
        return Err(Failure::Usage(
            "bench reads its input several times: give a file, not stdin".into(),
        ));
    }
    let options = read.open_options(ErrorPolicy::Fail);
    let shown = path.display().to_string();
    let meta = std::fs::metadata(path)
        .map_err(|e| Failure::Fatal(Error::io(e).with_file(shown.as_str()), EXIT_USAGE))?;
    if !meta.is_file() {
        return Err(Failure::Usage(format!(
            "{shown}: bench reads its input several times: give a regular file"
        )));
    }
    let (compression, framing) = resolve(path, &options)?;
    let payload = read.payload_for(framing);
    let input = match compression {
        Compression::Gzip | Compression::Zlib => Input::Stream(options),
        Compression::None | Compression::Auto => {
            let shard = open_shard(path, read, opts.index).map_err(|e| data_or_fatal(e, stderr))?;
            Input::File(Box::new(shard))
        }
    };
    let (mapped, file_bytes) = match &input {
        Input::File(shard) => (shard.file().is_mapped(), shard.file().len() as u64),
        Input::Stream(_) => (false, meta.len()),
    };
    let mut visitor = Visitor {
        options: DecodeOptions {
            strict: read.strict,
        },
        ..Visitor::default()
    };
    let fail = |e: Error, stderr: &mut dyn Write| {
        report(stderr, &e);
        Failure::Data
    };

    // Warm-up: reads (and checks) everything once, untimed.
    let counts = pass(path, &input, payload, Some(&mut visitor)).map_err(|e| fail(e, stderr))?;

    let mut time = |full: bool, stderr: &mut dyn Write| -> Result<Passes, Failure> {
        let mut secs = Vec::with_capacity(opts.passes as usize);
        for _ in 0..opts.passes {
            let v = if full { Some(&mut visitor) } else { None };
            let t = Instant::now();
            let c = pass(path, &input, payload, v).map_err(|e| fail(e, stderr))?;
            secs.push(t.elapsed().as_secs_f64());
            black_box(c);
        }
        Ok(Passes::of(secs))
    };
    let framing_only = time(false, stderr)?;
    let sequential = time(true, stderr)?;

    let random = match &input {
        Input::Stream(_) => Random::Skipped(format!(
            "the file is {}-compressed: records cannot be reached by offset without \
             decompressing the stream up to them (random access needs an uncompressed file{})",
            compression.name(),
            if opts.index.is_some() {
                "; --index is not used"
            } else {
                ""
            }
        )),
        Input::File(shard) => random_access(shard, payload, opts, stderr)?,
    };
    let timer = timer_overhead();

    let report = Report {
        file: &shown,
        framing,
        compression,
        payload,
        mapped,
        data_crc: options.read.check_data_crc,
        bytes: file_bytes,
        counts,
        sequential,
        framing_only,
        random,
        samples: opts.samples,
        seed: opts.seed,
        timer,
    };
    let text = if opts.json {
        report.json()
    } else {
        report.text()
    };
    stdout.write_all(text.as_bytes())?;
    Ok(())
}

/// The compression and framing of `path`, from its first bytes and the options.
fn resolve(path: &Path, options: &OpenOptions) -> Result<(Compression, Framing), Failure> {
    use std::io::Read;
    let shown = path.display().to_string();
    let mut prefix = Vec::with_capacity(crate::frame::TFRECORD_HEADER_LEN);
    std::fs::File::open(path)
        .and_then(|f| {
            f.take(crate::frame::TFRECORD_HEADER_LEN as u64)
                .read_to_end(&mut prefix)
        })
        .map_err(|e| Failure::Fatal(Error::io(e).with_file(shown.as_str()), EXIT_USAGE))?;
    Ok(crate::io::resolve(detect(&prefix), options))
}

/// Everything measured, ready to print.
struct Report<'a> {
    file: &'a str,
    framing: Framing,
    compression: Compression,
    payload: PayloadKind,
    mapped: bool,
    data_crc: bool,
    bytes: u64,
    counts: Counts,
    sequential: Passes,
    framing_only: Passes,
    random: Random,
    samples: u64,
    seed: u64,
    timer: u64,
}

/// A JSON number, or `null` for what is missing or not finite.
fn num(x: Option<f64>) -> String {
    match x {
        Some(x) if x.is_finite() => format!("{x}"),
        _ => "null".into(),
    }
}

/// `1.23 M` and the like (SI prefixes).
fn si(x: f64) -> String {
    if x >= 1e9 {
        format!("{:.2} G", x / 1e9)
    } else if x >= 1e6 {
        format!("{:.2} M", x / 1e6)
    } else if x >= 1e3 {
        format!("{:.2} k", x / 1e3)
    } else {
        format!("{x:.1}")
    }
}

fn secs_text(s: f64) -> String {
    if s >= 1.0 {
        format!("{s:.3} s")
    } else if s >= 1e-3 {
        format!("{:.3} ms", s * 1e3)
    } else {
        format!("{:.1} µs", s * 1e6)
    }
}

impl Report<'_> {
    fn rates(&self, p: &Passes) -> (Option<f64>, Option<f64>, Option<f64>, Option<f64>) {
        let records = self.counts.records;
        (
            rate(records, p.median, records),
            rate(self.bytes, p.median, records).map(|b| b / 1e9),
            rate(self.bytes, p.median, records).map(|b| b / f64::from(1 << 20)),
            rate(self.bytes, p.best, records).map(|b| b / 1e9),
        )
    }

    fn passes_json(&self, p: &Passes) -> String {
        let (rps, gbps, mibps, best_gbps) = self.rates(p);
        format!(
            "{{\"passes\":{},\"median_seconds\":{},\"best_seconds\":{},\"records_per_second\":{},\"gb_per_second\":{},\"mib_per_second\":{},\"best_gb_per_second\":{}}}",
            p.passes,
            num(Some(p.median)),
            num(Some(p.best)),
            num(rps),
            num(gbps),
            num(mibps),
            num(best_gbps)
        )
    }

    fn latency_json(l: &Latency) -> String {
        format!(
            "\"p50_ns\":{},\"p90_ns\":{},\"p99_ns\":{},\"p999_ns\":{},\"max_ns\":{},\"mean_ns\":{}",
            l.p50,
            l.p90,
            l.p99,
            l.p999,
            l.max,
            num(Some(l.mean))
        )
    }

    fn json(&self) -> String {
        let c = &self.counts;
        let (random, floor, ratio) = match &self.random {
            Random::Skipped(why) => {
                let s = format!("{{\"skipped\":true,\"reason\":{}}}", quoted(why.as_bytes()));
                (s.clone(), s, None)
            }
            Random::Done {
                index,
                feature,
                get,
                floor,
                floor_width,
            } => (
                format!(
                    "{{\"skipped\":false,\"samples\":{},\"seed\":{},\"index\":\"{index}\",\"feature\":{},{}}}",
                    self.samples,
                    self.seed,
                    feature
                        .as_deref()
                        .map_or_else(|| "null".into(), quoted),
                    Self::latency_json(get)
                ),
                format!(
                    "{{\"skipped\":false,\"samples\":{},\"seed\":{},\"bytes_per_read\":{floor_width},{}}}",
                    self.samples,
                    self.seed,
                    Self::latency_json(floor)
                ),
                (floor.p50 > 0).then(|| get.p50 as f64 / floor.p50 as f64),
            ),
        };
        format!(
            "{{\"file\":{},\"framing\":\"{}\",\"compression\":\"{}\",\"payload\":\"{}\",\"mapped\":{},\"data_crc\":{},\"bytes\":{},\"stream_bytes\":{},\"records\":{},\"values\":{},\"data_bytes\":{},\"sequential\":{},\"framing_only\":{},\"random_access\":{},\"random_read_64\":{},\"ratio_p50\":{},\"timer_overhead_ns\":{}}}\n",
            quoted(self.file.as_bytes()),
            self.framing.name(),
            self.compression.name(),
            self.payload.name(),
            self.mapped,
            self.data_crc,
            self.bytes,
            c.stream_bytes,
            c.records,
            c.values,
            c.data_bytes,
            self.passes_json(&self.sequential),
            self.passes_json(&self.framing_only),
            random,
            floor,
            num(ratio),
            self.timer
        )
    }

    fn passes_text(&self, p: &Passes) -> String {
        let (rps, gbps, mibps, best_gbps) = self.rates(p);
        let opt = |x: Option<f64>, f: &dyn Fn(f64) -> String| x.map_or_else(|| "-".into(), f);
        format!(
            "{} records/s, {} GB/s ({} MiB/s), best {} GB/s; median {}, best {} of {} pass{}",
            opt(rps, &si),
            opt(gbps, &|x| format!("{x:.3}")),
            opt(mibps, &|x| format!("{x:.1}")),
            opt(best_gbps, &|x| format!("{x:.3}")),
            secs_text(p.median),
            secs_text(p.best),
            p.passes,
            if p.passes == 1 { "" } else { "es" }
        )
    }

    fn text(&self) -> String {
        use std::fmt::Write as _;
        let c = &self.counts;
        let mut s = String::new();
        let _ = writeln!(s, "file:            {}", self.file);
        let _ = writeln!(
            s,
            "format:          {} frames, {}, {} payloads, {}{}",
            self.framing.name(),
            match self.compression {
                Compression::Gzip => "GZIP stream",
                Compression::Zlib => "ZLIB stream",
                _ => "uncompressed",
            },
            self.payload.name(),
            if self.mapped {
                "memory-mapped"
            } else if matches!(self.compression, Compression::Gzip | Compression::Zlib) {
                "streamed"
            } else {
                "read into memory"
            },
            if self.data_crc {
                ""
            } else {
                ", data CRCs not checked"
            }
        );
        let _ = writeln!(
            s,
            "size:            {} bytes{}, {} records, {} values",
            self.bytes,
            if c.stream_bytes != self.bytes {
                format!(" ({} decompressed)", c.stream_bytes)
            } else {
                String::new()
            },
            c.records,
            c.values
        );
        let _ = writeln!(s, "sequential:      {}", self.passes_text(&self.sequential));
        let _ = writeln!(
            s,
            "framing only:    {}",
            self.passes_text(&self.framing_only)
        );
        let lat = |l: &Latency| {
            format!(
                "p50 {} ns, p90 {}, p99 {}, p99.9 {}, max {}",
                l.p50, l.p90, l.p99, l.p999, l.max
            )
        };
        match &self.random {
            Random::Skipped(why) => {
                let _ = writeln!(s, "random access:   skipped: {why}");
            }
            Random::Done {
                index,
                feature,
                get,
                floor,
                floor_width,
            } => {
                let _ = writeln!(
                    s,
                    "random access:   {} samples, seed {}, index {}, feature {}",
                    self.samples,
                    self.seed,
                    match *index {
                        "built" => "built in memory",
                        other => other,
                    },
                    feature.as_deref().map_or_else(|| "(none)".into(), quoted)
                );
                let _ = writeln!(s, "  get+lookup:    {}", lat(get));
                let _ = writeln!(s, "  {floor_width}-byte read:  {}", lat(floor));
                if floor.p50 > 0 {
                    let _ = writeln!(
                        s,
                        "  ratio (p50):   {:.2}× the random read",
                        get.p50 as f64 / floor.p50 as f64
                    );
                }
            }
        }
        let _ = writeln!(
            s,
            "timer:           {} ns per reading (included in the latencies)",
            self.timer
        );
        s
    }
}
