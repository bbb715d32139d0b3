//! Bounded memory over a large GZIP shard: opening it (its checkpoint index
//! built in memory) and reading 1,000 random ids, through the library's
//! `Dataset` and through the CLI's `get`, keeps the peak resident set far
//! below the decompressed size: nothing decompresses the file whole.
//!
//! The shard (BERT-like tf.Examples: 300 MB once decompressed in an
//! optimized build, 64 MB in a debug one, `RECORDWIRE_BOUNDED_MB` sets
//! another size) is written by the test. Each path is measured in a child
//! process (this test binary run again, told by an environment variable to
//! be the child; the CLI's `get` runs there in-process, as `cli::run`),
//! which prints its own peak resident set (`VmHWM` of `/proc/self/status`)
//! before and after the work.
//!
//! What the peak is bounded by: the compressed file is mapped and read (the
//! index build touches all of it), so its pages count in the resident set
//! (clean file pages, which the kernel can drop); above them the process
//! holds the checkpoint index (a 32 KiB window per MiB of output), the
//! record offsets and a few inflated spans: tens of MB. A whole
//! decompression would add the full decompressed size.

#![cfg(target_os = "linux")]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use recordwire::dataset::{Dataset, Scratch};
use recordwire::frame::write_tfrecord_frame;
use recordwire::io::OpenOptions;

#[path = "../../benches/common/corpus.rs"]
mod corpus;

use corpus::{example, Rng, V};

/// Which work a child run does (unset: the test itself, the parent).
const CHILD: &str = "RECORDWIRE_BOUNDED_CHILD";
/// The shard and the ids file, for the child.
const FILE: &str = "RECORDWIRE_BOUNDED_FILE";
const IDS: &str = "RECORDWIRE_BOUNDED_IDS";
const OUT: &str = "RECORDWIRE_BOUNDED_OUT";
/// How many ids are read.
const READS: usize = 1000;
/// Above the child's own start, the mapped compressed file and a 16th of
/// the decompressed size (the checkpoint windows, 32 KiB a MiB, and the
/// record offsets), at most this much more may be resident: the kept
/// spans (8 of about 1 MiB) and the allocator's slack. A whole
/// decompression would add the decompressed size.
const SLACK: u64 = 48 << 20;

/// Record `i`: a BERT-like tf.Example (sequence length 128, a random
/// number of real tokens, then padding, as BERT's pretraining data has),
/// with its own id as `record_id`, generated from `i` alone.
fn record(i: u64) -> Vec<u8> {
    example(&features(i))
}

/// Record `i`'s features.
fn features(i: u64) -> Vec<(&'static str, V)> {
    let mut rng = Rng(Rng::SEED ^ (i.wrapping_add(1)).wrapping_mul(0x2545_f491_4f6c_dd1d));
    for _ in 0..4 {
        rng.next();
    }
    let len = 24 + (rng.next() % 105) as usize;
    let split = 1 + (rng.next() % (len as u64 - 1)) as usize;
    // Word pieces: frequent ones far more often than rare ones.
    let token = |rng: &mut Rng| {
        let r = rng.next();
        let a = (r % 30_000) as i64;
        let b = ((r >> 32) % 30_000) as i64;
        1_000 + a * b / 30_000
    };
    let mut ids = vec![0i64; 128];
    ids[0] = 101;
    for t in ids.iter_mut().take(len).skip(1) {
        *t = token(&mut rng);
    }
    ids[split] = 102;
    ids[len - 1] = 102;
    let mask: Vec<i64> = (0..128).map(|k| i64::from(k < len)).collect();
    let segments: Vec<i64> = (0..128).map(|k| i64::from(k >= split && k < len)).collect();
    let masked = (len * 15 / 100).clamp(1, 20);
    let mut positions: Vec<i64> = (0..masked)
        .map(|_| 1 + (rng.next() % (len as u64 - 1)) as i64)
        .collect();
    positions.sort_unstable();
    positions.resize(20, 0);
    let mut lm_ids: Vec<i64> = (0..masked).map(|_| token(&mut rng)).collect();
    lm_ids.resize(20, 0);
    let weights: Vec<f32> = (0..20)
        .map(|k| if k < masked { 1.0 } else { 0.0 })
        .collect();
    vec![
        ("input_ids", V::Int(ids)),
        ("input_mask", V::Int(mask)),
        ("segment_ids", V::Int(segments)),
        ("masked_lm_positions", V::Int(positions)),
        ("masked_lm_ids", V::Int(lm_ids)),
        ("masked_lm_weights", V::Float(weights)),
        (
            "next_sentence_labels",
            V::Int(vec![(rng.next() % 2) as i64]),
        ),
        ("record_id", V::Int(vec![i as i64])),
    ]
}

/// Writes records until their frames hold `bytes` bytes, GZIP-compressed
/// at level 1 (by `gzip -1` when there is one: CI's debug build of a
/// compressor would take most of the test's time); returns the path, the
/// number of records and the decompressed size.
fn write_shard(dir: &Path, bytes: u64) -> (PathBuf, u64, u64) {
    let path = dir.join("big.tfrecord.gz");
    let out = std::fs::File::create(&path).expect("create the shard");
    let gzip = Command::new("gzip")
        .arg("-1")
        .stdin(Stdio::piped())
        .stdout(out.try_clone().expect("clone the file"))
        .spawn();
    let (mut sink, child): (Box<dyn Write>, _) = match gzip {
        Ok(mut child) => {
            let stdin = child.stdin.take().expect("gzip's stdin");
            (Box::new(std::io::BufWriter::new(stdin)), Some(child))
        }
        Err(_) => (
            Box::new(flate2::write::GzEncoder::new(
                std::io::BufWriter::new(out),
                flate2::Compression::new(1),
            )),
            None,
        ),
    };
    let (mut n, mut size) = (0u64, 0u64);
    let mut frame = Vec::new();
    while size < bytes {
        frame.clear();
        write_tfrecord_frame(&mut frame, &record(n));
        sink.write_all(&frame).expect("write a frame");
        size += frame.len() as u64;
        n += 1;
    }
    sink.flush().expect("flush");
    drop(sink);
    if let Some(mut child) = child {
        assert!(
            child.wait().expect("wait for gzip").success(),
            "gzip failed"
        );
    }
    (path, n, size)
}

/// `READS` ids in `0..n`, in a random order (a few repeat).
fn random_ids(n: u64) -> Vec<u64> {
    let mut rng = Rng(Rng::SEED);
    (0..READS).map(|_| rng.next() % n).collect()
}

/// This process's peak resident set so far, in bytes.
fn peak_rss() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").expect("read /proc/self/status");
    let line = status
        .lines()
        .find(|l| l.starts_with("VmHWM:"))
        .expect("a VmHWM line");
    let kb: u64 = line
        .split_whitespace()
        .nth(1)
        .and_then(|v| v.parse().ok())
        .expect("VmHWM in kB");
    kb << 10
}

fn env_path(name: &str) -> PathBuf {
    PathBuf::from(std::env::var_os(name).expect("set by the parent"))
}

/// The child's work: `dataset` reads every id through
/// `Dataset::get` (in the random order) and checks each record against its
/// generator; `cli` runs `recordwire get FILE --ids-file IDS` (in-process,
/// stdout to the `OUT` file, checked by the parent). Prints the peak
/// before and after.
fn child(mode: &str) {
    let before = peak_rss();
    let t0 = std::time::Instant::now();
    let mut times: Vec<String> = Vec::new();
    let file = env_path(FILE);
    let ids: Vec<u64> = std::fs::read_to_string(env_path(IDS))
        .expect("read the ids")
        .split_whitespace()
        .map(|w| w.parse().expect("an id"))
        .collect();
    match mode {
        "dataset" => {
            let ds = Dataset::open([&file], &OpenOptions::default()).expect("open the shard");
            times.push(format!("open {:?} peak {}", t0.elapsed(), peak_rss()));
            for &id in &ids {
                let r = ds.get(id).expect("read").expect("an id in range");
                assert!(r.data[..] == record(id)[..], "record {id} differs");
            }
            times.push(format!("gets {:?} peak {}", t0.elapsed(), peak_rss()));
            let source = ds.shards()[0].gz_source().expect("a compressed shard");
            times.push(format!("held {}", source.held()));
        }
        "get_many" => {
            let ds = Dataset::open([&file], &OpenOptions::default()).expect("open the shard");
            times.push(format!("open {:?} peak {}", t0.elapsed(), peak_rss()));
            // The ids as one batch (each span inflated once).
            let mut seen = 0;
            ds.get_many(&ids, &mut Scratch::new(), |pos, r| {
                let r = r.expect("an id in range");
                assert!(
                    r.data[..] == record(ids[pos])[..],
                    "record {} differs",
                    ids[pos]
                );
                seen += 1;
            })
            .expect("get_many");
            assert_eq!(seen, ids.len());
            times.push(format!("get_many {:?} peak {}", t0.elapsed(), peak_rss()));
        }
        "cli" => {
            let out = std::fs::File::create(env_path(OUT)).expect("create the output");
            let mut out = std::io::BufWriter::new(out);
            let mut err = Vec::new();
            let file = file.to_str().expect("a UTF-8 path");
            let ids = env_path(IDS);
            let ids = ids.to_str().expect("a UTF-8 path");
            let args = ["recordwire", "get", file, "--ids-file", ids];
            let code = recordwire::cli::run(args, &mut out, &mut err);
            out.flush().expect("flush");
            assert_eq!(code, 0, "{}", String::from_utf8_lossy(&err));
        }
        other => panic!("unknown child mode {other}"),
    }
    println!("times {}", times.join(" "));
    println!("peak_before {before}");
    println!("peak_after {}", peak_rss());
}

/// A child run: this test binary again, running `test` as the child
/// doing `mode`.
fn spawn_child(test: &str, mode: &str, shard: &Written) -> std::process::Child {
    let exe = std::env::current_exe().expect("the test binary");
    Command::new(exe)
        .args([
            test,
            "--exact",
            "--include-ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD, mode)
        .env(FILE, &shard.file)
        .env(IDS, &shard.ids_path)
        .env(OUT, &shard.out)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run the child")
}

/// Waits for the child doing `mode`; returns its peak resident set before
/// and after the work.
fn wait_child(mode: &str, child: std::process::Child) -> (u64, u64) {
    let run = child.wait_with_output().expect("wait for the child");
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert!(
        run.status.success(),
        "{mode} child failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let value = |key: &str| -> u64 {
        stdout
            .lines()
            .find_map(|l| l.strip_prefix(key)?.strip_prefix(' ')?.trim().parse().ok())
            .unwrap_or_else(|| panic!("no {key} in the child's output:\n{stdout}"))
    };
    for line in stdout.lines().filter(|l| l.starts_with("times")) {
        eprintln!("{mode}: {line}");
    }
    (value("peak_before"), value("peak_after"))
}

/// The shard a test reads, and what its children are given.
struct Written {
    _dir: tempfile::TempDir,
    file: PathBuf,
    /// Records, decompressed and compressed bytes.
    n: u64,
    size: u64,
    compressed: u64,
    ids: Vec<u64>,
    ids_path: PathBuf,
    out: PathBuf,
}

/// Writes the shard: `RECORDWIRE_BOUNDED_MB` MiB decompressed, by default
/// the 300 in an optimized build and 64 in a debug one (where
/// each of the 1,000 reads inflates about half a span ten times slower;
/// `cargo test --release` runs the full size).
fn written() -> Written {
    let default = if cfg!(debug_assertions) { 64 } else { 300 };
    let mb: u64 = std::env::var("RECORDWIRE_BOUNDED_MB")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default);
    let dir = tempfile::tempdir().expect("tempdir");
    let (file, n, size) = write_shard(dir.path(), mb << 20);
    let compressed = std::fs::metadata(&file).expect("stat").len();
    let ids = random_ids(n);
    let ids_path = dir.path().join("ids.txt");
    let text: Vec<String> = ids.iter().map(u64::to_string).collect();
    std::fs::write(&ids_path, text.join("\n")).expect("write the ids");
    let out = dir.path().join("get.jsonl");
    Written {
        file,
        n,
        size,
        compressed,
        ids,
        ids_path,
        out,
        _dir: dir,
    }
}

/// Runs the children of `modes` at once; checks each one's peak.
fn measure(test: &str, modes: &[&str], shard: &Written) {
    let start = std::time::Instant::now();
    let children: Vec<_> = modes
        .iter()
        .map(|mode| (mode, spawn_child(test, mode, shard)))
        .collect();
    let Written {
        n,
        size,
        compressed,
        ..
    } = *shard;
    for (mode, child) in children {
        let (before, after) = wait_child(mode, child);
        let grown = after.saturating_sub(before);
        eprintln!(
            "{mode}: {n} records, {size} bytes decompressed, {compressed} compressed; \
             peak RSS {after} bytes ({before} at the child's start, {grown} more); \
             {:?}",
            start.elapsed()
        );
        let bound = compressed + size / 16 + SLACK;
        assert!(
            grown < bound,
            "{mode}: the peak grew by {grown} bytes (more than {bound}) reading a shard of \
             {compressed} compressed, {size} decompressed bytes"
        );
    }
}

#[test]
fn gzip_shard_read_by_id_in_bounded_memory() {
    if let Ok(mode) = std::env::var(CHILD) {
        return child(&mode);
    }
    let shard = written();
    measure(
        "bounded_memory::gzip_shard_read_by_id_in_bounded_memory",
        &["dataset", "cli"],
        &shard,
    );
    let (ids, out) = (&shard.ids, &shard.out);

    // What `get` printed: one line per id, in the order given, each the
    // generated record (its id, and all the values of a sample).
    let text = std::fs::read_to_string(out).expect("read get's output");
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), ids.len());
    for (k, (line, &id)) in lines.iter().zip(ids).enumerate() {
        let v: serde_json::Value = serde_json::from_str(line).expect("a JSON line");
        let got = &v["features"]["feature"];
        let value = |name: &str| got[name]["int64_list"]["value"].clone();
        assert_eq!(
            value("record_id"),
            serde_json::json!([id.to_string()]),
            "{line}"
        );
        if k % 50 == 0 {
            for (name, want) in features(id) {
                if let V::Int(want) = want {
                    let want: Vec<String> = want.iter().map(i64::to_string).collect();
                    assert_eq!(value(name), serde_json::json!(want), "{name} of {id}");
                }
            }
        }
    }
}

/// `Shard::get_many` over a compressed shard: each range it hands out is a
/// slice that keeps its whole inflated span alive, so it reads a group of
/// ranges at a time and drops them before the next; reading the whole
/// batch first held every span a spread batch touches (434 MB for 1,000
/// ids of a 300 MB shard, more than the decompressed size).
#[test]
fn gzip_shard_get_many_in_bounded_memory() {
    if let Ok(mode) = std::env::var(CHILD) {
        return child(&mode);
    }
    let shard = written();
    measure(
        "bounded_memory::gzip_shard_get_many_in_bounded_memory",
        &["get_many"],
        &shard,
    );
}
