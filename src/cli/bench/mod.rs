//! `bench`: read throughput and random-access latency on this machine
//! (docs/FORMAT.md §9).
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
//! 4. **Random access** (`--samples N`, default
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
//! pass; its random gets go through its checkpoint index (`--index`, else
//! the current sidecar that `recordwire index` writes, else one built in
//! memory), with one inflate cache as a reader keeps one: a get in another
//! checkpoint span inflates from that checkpoint. Its floor is 64-byte reads
//! of the compressed bytes.
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

mod measure;
mod report;

use std::hint::black_box;
use std::io::Write;
use std::path::Path;
use std::time::Instant;

use super::indexed::{data_or_fatal, open_shard};
use super::{report, BenchCommand, CmdResult, Failure, ReadArgs, EXIT_USAGE};
use crate::dataset::Shard;
use crate::error::Error;
use crate::frame::{ErrorPolicy, Framing};
use crate::io::{Compression, OpenOptions, RecordFile};
use crate::view::DecodeOptions;
use measure::{pass, random_access, timer_overhead, Input, Passes, Visitor};
use report::Report;

/// The JSON keys, for `recordwire bench --help`.
pub(super) const HELP: &str = "\
What is timed: --passes full sequential passes (frames with both CRCs, each
payload checked and every value of every feature copied into reused buffers)
and as many framing-only passes; then --samples random gets through the index
(frame, CRCs, a lazy view of the payload, the lookup of the first feature of
record 0 and its list length), each timed on its own, beside as many random
64-byte reads of the same bytes (the floor). An untimed pass first warms the
cache and checks the file. Rates are over the median pass; GB = 10^9 bytes of
the file as stored; latencies include the cost of reading the clock
(timer_overhead_ns). Compressed files are streamed; their random gets inflate
from the checkpoint index (the sidecar `recordwire index` writes, or built).

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

/// Runs `bench` as the command line gave it.
pub(super) fn run(c: &BenchCommand, stdout: &mut dyn Write, stderr: &mut dyn Write) -> CmdResult {
    bench(
        &c.file,
        &c.read,
        &BenchOptions {
            index: c.index.as_deref(),
            passes: c.passes,
            samples: c.samples,
            seed: c.seed,
            json: c.json,
        },
        stdout,
        stderr,
    )
}

/// Runs `bench` on one file.
fn bench(
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
    #[cfg(feature = "remote")]
    if crate::io::remote::is_remote(path) {
        return Err(Failure::Usage(format!(
            "{}: bench reads local files only (it times this machine's reads of a file several \
             times over, through the page cache): copy the object here and bench the copy",
            path.display()
        )));
    }
    #[cfg(feature = "remote")]
    let local = crate::io::remote::file_url_path(path);
    #[cfg(feature = "remote")]
    let path = local.as_deref().unwrap_or(path);
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
    let input = match compression {
        Compression::Gzip | Compression::Zlib => Input::Stream(options.clone()),
        Compression::None | Compression::Auto => Input::File(Box::new(
            RecordFile::open(path, &options).map_err(|e| data_or_fatal(e, stderr))?,
        )),
    };
    // Random access through the index (plain: opened now) or the checkpoint
    // index (compressed: opened after the passes, which report damage
    // where the streaming reader meets it): `--index`, the sidecar, or built.
    let open = |stderr: &mut dyn Write| -> Result<Shard, Failure> {
        let shard = open_shard(path, read, opts.index).map_err(|e| data_or_fatal(e, stderr))?;
        super::indexed::note_rejected_sidecar(&shard, stderr);
        Ok(shard)
    };
    let (mut shard, payload) = match &input {
        Input::File(_) => {
            let mut shard = open(stderr)?;
            let payload = read.payload_of_shard(&mut shard, stderr).kind;
            (Some(shard), payload)
        }
        Input::Stream(options) => (None, read.open_payload(path, options, stderr)?.1.kind),
    };
    let (mapped, file_bytes) = match &input {
        Input::File(file) => (file.is_mapped(), file.len() as u64),
        Input::Stream(_) => (false, meta.len()),
    };
    let mut visitor = Visitor::new(DecodeOptions {
        strict: read.strict,
    });
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

    let stored = match &input {
        Input::File(file) => file.bytes().clone(),
        Input::Stream(_) => {
            RecordFile::stored_bytes(path, options.mmap).map_err(|e| fail(e, stderr))?
        }
    };
    let shard = match shard.take() {
        Some(shard) => shard,
        None => open(stderr)?.with_payload(payload),
    };
    let random = random_access(&shard, &stored, payload, opts, stderr)?;
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
    let resolved = crate::io::resolve(&prefix, crate::io::framing_hint(path), options);
    Ok((resolved.compression, resolved.framing))
}
