//! Faults (issue 6): a file that grows while it is read, reading with
//! `--no-mmap` against reading through the map on every test file, a writer
//! killed while it replaces an existing file, and a damaged index that must be
//! rejected rather than trusted.
//!
//! What is promised for a file being appended to (docs/FORMAT.md §8.5): every reader —
//! the map, a plain read (`--no-mmap`), and a stream over the open file —
//! delivers exactly the records complete in the bytes it saw, byte for byte,
//! and then either ends (the file ended on a frame boundary) or reports
//! `truncated_header` / `truncated_data` with the id and offset of the partial
//! frame. Never a wrong record, another error kind, or a panic.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fs::OpenOptions as FsOpen;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use recordwire::frame::{write_frame, Framing, ReadOptions};
use recordwire::index::{Index, NATIVE_HEADER_LEN};
use recordwire::io::{OpenOptions, RecordFile, Source, StreamRecords};
use recordwire::Error;

use crate::support::cli;

fn testdata(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("testdata")
        .join(rel)
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

// ---------------------------------------------------------------------------
// A file that grows while it is read
// ---------------------------------------------------------------------------

/// The payloads of a reference file (real tf.Examples or OFRecords, so that
/// `cat` decodes them too) and the frames that hold them, with each frame's
/// start offset in a file of those frames.
struct Frames {
    framing: Framing,
    payloads: Vec<Vec<u8>>,
    frames: Vec<Vec<u8>>,
    starts: Vec<u64>,
}

impl Frames {
    fn of(rel: &str, framing: Framing) -> Frames {
        let file = RecordFile::open(testdata(rel), &OpenOptions::default()).unwrap();
        assert_eq!(file.framing(), framing);
        let payloads: Vec<Vec<u8>> = file.records().map(|r| r.unwrap().data.to_vec()).collect();
        assert!(payloads.len() >= 3, "{rel}: too few records for the test");
        let mut frames = Vec::new();
        let mut starts = Vec::new();
        let mut at = 0;
        for p in &payloads {
            let mut frame = Vec::new();
            write_frame(&mut frame, framing, p);
            starts.push(at);
            at += frame.len() as u64;
            frames.push(frame);
        }
        Frames {
            framing,
            payloads,
            frames,
            starts,
        }
    }

    /// The number of whole frames in the first `len` bytes of the file.
    fn complete_in(&self, len: u64) -> usize {
        self.frames
            .iter()
            .zip(&self.starts)
            .take_while(|(f, &start)| start + f.len() as u64 <= len)
            .count()
    }

    /// Every cut point worth trying in the file's first `n` frames: each frame
    /// boundary, and inside each frame: 1 byte in, inside the header, the
    /// header whole, inside the data, one byte short.
    fn cuts(&self, n: usize) -> Vec<u64> {
        let header = self.framing.header_len() as u64;
        let mut cuts = vec![0];
        for (f, &start) in self.frames.iter().zip(&self.starts).take(n) {
            let len = f.len() as u64;
            for d in [
                1,
                header / 2,
                header - 1,
                header,
                header + 1,
                (header + len) / 2,
            ] {
                if d < len {
                    cuts.push(start + d);
                }
            }
            cuts.push(start + len - 1);
            cuts.push(start + len);
        }
        cuts.sort_unstable();
        cuts.dedup();
        cuts
    }
}

/// What one reader gave: the records (offset, data), and how it ended.
#[derive(Debug)]
struct Seen {
    records: Vec<(u64, Vec<u8>)>,
    end: Option<Error>,
}

/// Checks `seen` against the promise for a file whose reader saw its first
/// `len` bytes: exactly the whole frames in them, then a clean end at a
/// boundary or a truncation error at the partial frame. `what` names the
/// reader for messages.
fn check_prefix(frames: &Frames, seen: &Seen, len: u64, what: &str) {
    let whole = frames.complete_in(len);
    assert_eq!(
        seen.records.len(),
        whole,
        "{what}: {len} bytes hold {whole} whole frames; ended with {:?}",
        seen.end
    );
    check_records(frames, seen, what);
    let boundary = whole == frames.frames.len() || frames.starts[whole] == len;
    match (&seen.end, boundary) {
        (None, true) => {}
        (Some(e), false) => {
            let kind = e.kind().name();
            let header = frames.framing.header_len() as u64;
            let expected = if len - frames.starts[whole] < header {
                "truncated_header"
            } else {
                "truncated_data"
            };
            assert_eq!(kind, expected, "{what}: {len} bytes: {e}");
        }
        (end, _) => panic!("{what}: {len} bytes (boundary: {boundary}): ended with {end:?}"),
    }
}

/// Checks what any reader of a growing file must give, whatever it saw:
/// the first frames' records, in place and byte for byte, then nothing more
/// or a truncation error at the next frame.
fn check_records(frames: &Frames, seen: &Seen, what: &str) {
    for (i, (offset, data)) in seen.records.iter().enumerate() {
        assert_eq!(*offset, frames.starts[i], "{what}: record {i}'s offset");
        assert!(
            *data == frames.payloads[i],
            "{what}: record {i} is not what was written"
        );
    }
    if let Some(e) = &seen.end {
        let kind = e.kind().name();
        let next = seen.records.len();
        assert!(
            kind == "truncated_header" || kind == "truncated_data",
            "{what}: {e}"
        );
        assert_eq!(
            (e.record(), frames.starts.get(next).copied()),
            (Some(next as u64), e.offset()),
            "{what}: {e}"
        );
    }
}

/// Reads `path` through a [`Source`] over a whole snapshot of it: its map,
/// or with `mmap: false` the file read whole ([`RecordFile`] read into
/// memory; `Source::open` would stream it, which [`read_stream`] checks).
fn read_source(path: &Path, framing: Framing, mmap: bool) -> (Seen, u64) {
    let opts = OpenOptions::default()
        .with_framing(Some(framing))
        .with_mmap(mmap);
    let mut source = if mmap {
        Source::open(path, &opts).unwrap()
    } else {
        Source::from_file(recordwire::io::RecordFile::open(path, &opts).unwrap())
    };
    let len = source.as_file().map(|f| f.len() as u64);
    let mut seen = Seen {
        records: Vec::new(),
        end: None,
    };
    while let Some(r) = source.next_record() {
        match r {
            Ok(r) => seen.records.push((r.offset, r.data.to_vec())),
            Err(e) => {
                seen.end = Some(e);
                break;
            }
        }
    }
    (seen, len.expect("a regular file is read whole"))
}

/// Reads an open file as a stream (as a pipe would be read): it sees the
/// bytes that are there when each `read` happens.
fn read_stream(file: std::fs::File, framing: Framing) -> Seen {
    let mut stream = StreamRecords::new(file, framing, ReadOptions::default());
    let mut seen = Seen {
        records: Vec::new(),
        end: None,
    };
    while let Some(r) = stream.next_record() {
        match r {
            Ok(r) => seen.records.push((r.offset, r.data.to_vec())),
            Err(e) => {
                seen.end = Some(e);
                break;
            }
        }
    }
    seen
}

/// The file grows one piece at a time, at every cut point of its first
/// frames; after each piece all three readers, and `cat`, are checked.
#[test]
fn a_growing_file_gives_its_whole_frames_then_a_truncation_error() {
    let dir = tempfile::tempdir().unwrap();
    for (rel, framing) in [
        ("ref/examples.tfrecord", Framing::TfRecord),
        ("ref/ofrecord.part-0", Framing::OfRecord),
    ] {
        let frames = Frames::of(rel, framing);
        let all: Vec<u8> = frames.frames.concat();
        let path = dir.path().join(format!("growing-{}", framing.name()));
        std::fs::write(&path, b"").unwrap();
        let mut writer = FsOpen::new().append(true).open(&path).unwrap();
        let mut written = 0u64;
        let (mut truncated, mut clean) = (0, 0);
        for cut in frames.cuts(4) {
            writer
                .write_all(&all[written as usize..cut as usize])
                .unwrap();
            writer.flush().unwrap();
            written = cut;
            for mmap in [true, false] {
                let what = format!("{rel} at {cut} bytes, mmap {mmap}");
                let (seen, len) = read_source(&path, framing, mmap);
                assert_eq!(len, cut, "{what}: the reader's snapshot");
                check_prefix(&frames, &seen, len, &what);
                if seen.end.is_some() {
                    truncated += 1;
                } else {
                    clean += 1;
                }
            }
            let seen = read_stream(std::fs::File::open(&path).unwrap(), framing);
            check_prefix(&frames, &seen, cut, &format!("{rel} at {cut}, stream"));

            // `cat` prints the whole records, then names the partial one.
            let (code, out, err) = cli::run(&["cat", "--framing", framing.name(), s(&path)]);
            let whole = frames.complete_in(cut);
            assert_eq!(out.lines().count(), whole, "cat at {cut}: {err}");
            if whole < frames.frames.len() && frames.starts[whole] != cut {
                assert_eq!(code, 1, "cat at {cut}");
                assert!(err.starts_with("error[truncated_"), "cat at {cut}: {err}");
                assert!(
                    err.contains(&format!("record {whole} at byte {}", frames.starts[whole])),
                    "cat at {cut}: {err}"
                );
            } else {
                assert_eq!((code, err.as_str()), (0, ""), "cat at {cut}");
            }
        }
        assert!(truncated > 0 && clean > 0, "both outcomes were tried");
    }
}

/// A stream opened on a partial file reads on as the file grows: it takes
/// the records appended after it was opened, as long as each read finds
/// whole frames, and stops at the first partial frame it meets.
#[test]
fn a_stream_reads_records_appended_after_it_was_opened() {
    let dir = tempfile::tempdir().unwrap();
    let frames = Frames::of("ref/examples.tfrecord", Framing::TfRecord);
    let path = dir.path().join("appended.tfrecord");
    std::fs::write(&path, &frames.frames[0]).unwrap();
    let mut stream = StreamRecords::new(
        std::fs::File::open(&path).unwrap(),
        Framing::TfRecord,
        ReadOptions::default(),
    );
    let first = stream.next_record().unwrap().unwrap();
    assert_eq!(first.data, &frames.payloads[0][..]);
    let mut writer = FsOpen::new().append(true).open(&path).unwrap();
    writer.write_all(&frames.frames[1]).unwrap();
    let second = stream.next_record().unwrap().unwrap();
    assert_eq!((second.id, second.offset), (1, frames.starts[1]));
    assert_eq!(second.data, &frames.payloads[1][..]);
    // The third frame but its last 3 bytes: the stream reports it cut short.
    let third = &frames.frames[2];
    writer.write_all(&third[..third.len() - 3]).unwrap();
    let err = stream.next_record().unwrap().unwrap_err();
    assert_eq!(err.kind().name(), "truncated_data", "{err}");
    assert_eq!(
        (err.record(), err.offset()),
        (Some(2), Some(frames.starts[2]))
    );
    assert!(stream.next_record().is_none(), "the stream stays ended");
}

/// A writer appends frames in pieces, with pauses, while readers open and
/// read the file again and again: every read sees whole frames, then a
/// clean end or a truncation error; none sees a wrong record or another error.
#[test]
fn readers_racing_an_appending_writer_see_only_whole_records() {
    let dir = tempfile::tempdir().unwrap();
    let frames = Arc::new(Frames::of("ref/examples.tfrecord", Framing::TfRecord));
    let path = dir.path().join("racing.tfrecord");
    std::fs::write(&path, b"").unwrap();
    let done = Arc::new(AtomicBool::new(false));
    let writer = {
        let (frames, path, done) = (Arc::clone(&frames), path.clone(), Arc::clone(&done));
        std::thread::spawn(move || {
            let mut file = FsOpen::new().append(true).open(&path).unwrap();
            for frame in &frames.frames {
                // The header in two pieces, then the data and footer in two.
                let cuts = [0, 5, 12, 12 + (frame.len() - 12) / 2, frame.len()];
                for w in cuts.windows(2) {
                    file.write_all(&frame[w[0]..w[1]]).unwrap();
                    std::thread::sleep(Duration::from_micros(1500));
                }
            }
            done.store(true, Ordering::SeqCst);
        })
    };
    let (mut reads, mut partial) = (0, 0);
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let finished = done.load(Ordering::SeqCst);
        for mmap in [true, false] {
            let (seen, len) = read_source(&path, Framing::TfRecord, mmap);
            check_prefix(&frames, &seen, len, &format!("read {reads}, mmap {mmap}"));
            partial += usize::from(seen.end.is_some());
            reads += 1;
        }
        let before = std::fs::metadata(&path).unwrap().len();
        let seen = read_stream(std::fs::File::open(&path).unwrap(), Framing::TfRecord);
        let after = std::fs::metadata(&path).unwrap().len();
        // The stream saw somewhere between `before` and `after` bytes.
        let got = seen.records.len();
        assert!(
            got >= frames.complete_in(before) && got <= frames.complete_in(after),
            "stream read {reads}: {got} records between {before} and {after} bytes"
        );
        check_records(&frames, &seen, &format!("stream read {reads}"));
        if finished || Instant::now() > deadline {
            break;
        }
    }
    writer.join().unwrap();
    // The last reads, after the writer finished, saw everything.
    let (seen, len) = read_source(&path, Framing::TfRecord, true);
    assert_eq!(len, frames.frames.concat().len() as u64);
    assert_eq!(seen.records.len(), frames.frames.len());
    assert!(seen.end.is_none());
    assert!(reads > 2, "only {reads} reads");
    eprintln!("{reads} reads, {partial} of them ended at a partial frame");
}

// ---------------------------------------------------------------------------
// --no-mmap against the map
// ---------------------------------------------------------------------------

/// Every record file under `testdata/` (reference, damaged, hostile, padded,
/// and the fuzz regressions of the frame targets).
fn every_record_file() -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut add_dir = |dir: PathBuf, keep: &dyn Fn(&str) -> bool| {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_str().unwrap().to_string();
            if path.is_file() && keep(&name) {
                files.push(path);
            }
        }
    };
    let not_text = |n: &str| {
        !(n.ends_with(".json")
            || n.ends_with(".jsonl")
            || n.ends_with(".md")
            || n.ends_with(".sh")
            || n.ends_with(".py"))
    };
    add_dir(testdata("ref"), &not_text);
    add_dir(testdata("bad"), &not_text);
    add_dir(testdata("bad/hostile"), &not_text);
    add_dir(testdata("bad/stale"), &|n: &str| {
        n.ends_with(".tfrecord") || n.ends_with(".ofrecord")
    });
    add_dir(testdata("index"), &|n: &str| n.ends_with(".tfrecord"));
    add_dir(testdata("fuzz-regressions"), &|n: &str| {
        (n.starts_with("framing-") || n.starts_with("stream-")) && n.ends_with(".bin")
    });
    files.sort();
    files
}

/// `cat` (failing and skipping), `verify` and `count` print the same bytes
/// and exit alike with and without `--no-mmap`, on every record file.
#[test]
fn no_mmap_reads_every_file_as_the_map_does() {
    let files = every_record_file();
    assert!(files.len() > 250, "only {} files", files.len());
    let commands: [&[&str]; 4] = [
        &["cat"],
        &["cat", "--on-error", "skip"],
        &["verify"],
        &["count"],
    ];
    let mut differing = Vec::new();
    let mut exits = [0usize; 3];
    for path in &files {
        for command in commands {
            let mut args: Vec<&str> = command.to_vec();
            args.push(s(path));
            let mapped = cli::run(&args);
            args.push("--no-mmap");
            let read = cli::run(&args);
            if mapped != read {
                differing.push(format!("{args:?}:\n  map:  {mapped:?}\n  read: {read:?}"));
            }
            exits[usize::try_from(mapped.0).unwrap().min(2)] += 1;
        }
    }
    assert!(differing.is_empty(), "{}", differing.join("\n"));
    // Both outcomes occur: the comparison covers damage as well as records.
    assert!(exits[0] > 50 && exits[1] > 50, "exit statuses {exits:?}");
}

// ---------------------------------------------------------------------------
// A writer killed over an existing file
// ---------------------------------------------------------------------------

/// `pack` writes to a temporary file and renames it over the target only when
/// done: killed midway, it leaves the existing file as it was.
#[test]
fn a_killed_pack_leaves_the_existing_file_intact() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("existing.tfrecord");
    let original = std::fs::read(testdata("ref/examples.tfrecord")).unwrap();
    std::fs::write(&out, &original).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_recordwire"))
        .args(["pack", "-", s(&out)])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let line = "{\"features\": {\"feature\": {\"v\": {\"bytes_list\": {\"value\": [\"".to_string()
        + &"QUJD".repeat(5000)
        + "\"]}}}}}\n";
    // Keep the writer busy (the pipe stays open: it cannot finish), and
    // wait until its temporary file has data.
    let temp_has_data = || {
        std::fs::read_dir(dir.path()).unwrap().any(|e| {
            let e = e.unwrap();
            e.file_name().to_string_lossy().contains(".tmp-")
                && e.metadata().is_ok_and(|m| m.len() > 100_000)
        })
    };
    let deadline = Instant::now() + Duration::from_secs(30);
    while !temp_has_data() {
        assert!(Instant::now() < deadline, "pack wrote nothing in 30 s");
        stdin.write_all(line.as_bytes()).unwrap();
        stdin.flush().unwrap();
    }
    // The existing file is untouched while the writer works…
    assert!(std::fs::read(&out).unwrap() == original);
    child.kill().unwrap();
    let _ = child.wait();
    drop(stdin);
    // …and after it was killed.
    assert!(
        std::fs::read(&out).unwrap() == original,
        "a killed writer changed the existing file"
    );
    let (code, out_lines, err) = cli::run(&["count", s(&out)]);
    assert_eq!((code, out_lines.trim(), err.as_str()), (0, "40", ""));
}

/// A completed `pack` over an existing file replaces it whole.
#[test]
fn a_finished_pack_replaces_the_existing_file() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("existing.tfrecord");
    std::fs::write(&out, b"old bytes").unwrap();
    let jsonl = testdata("ref/small.jsonl");
    let (code, _, err) = cli::run(&["pack", s(&jsonl), s(&out)]);
    assert_eq!((code, err.as_str()), (0, ""));
    assert!(
        std::fs::read(&out).unwrap() == std::fs::read(testdata("ref/small.tfrecord")).unwrap(),
        "pack of small.jsonl reproduces small.tfrecord"
    );
    let leftovers: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .filter(|n| n != "existing.tfrecord")
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

// ---------------------------------------------------------------------------
// A damaged index
// ---------------------------------------------------------------------------

/// In a large file the open samples only some index entries (the
/// fingerprint), so a damaged entry may pass the open. It is still never
/// trusted: `get` checks each frame against the span the index gives it, so
/// the records next to the damage fail — `stale_index` when the frame found
/// does not fill the span the index gives it, `length_crc_mismatch` when no
/// valid frame starts where it points — and every other record comes back
/// right.
#[test]
fn a_damaged_index_entry_fails_the_records_it_touches_and_no_other() {
    let payloads: Vec<Vec<u8>> = (0..2000u32)
        .map(|i| format!("record {i} {}", "x".repeat((i % 37) as usize)).into_bytes())
        .collect();
    let data = recordwire::frame::file_of(Framing::TfRecord, payloads.iter().map(Vec::as_slice));
    let index = Index::build(&data, Framing::TfRecord, true).unwrap();
    let mut good = Vec::new();
    index.write_native(&mut good).unwrap();
    let table = NATIVE_HEADER_LEN;
    let opts = ReadOptions::default();
    let (mut opened, mut refused) = (0, 0);
    let mut kinds = Vec::new();
    for victim in (1..payloads.len()).step_by(97).chain([32, 64, 1024]) {
        let entry = table + 8 * victim;
        for damage in [1u64, 12, 1 << 20] {
            let mut bad = good.clone();
            let old = u64::from_le_bytes(bad[entry..entry + 8].try_into().unwrap());
            bad[entry..entry + 8].copy_from_slice(&(old ^ damage).to_le_bytes());
            let index = match Index::open_native(Bytes::from(bad), &data) {
                Ok(index) => index,
                Err(e) => {
                    assert_eq!(e.kind().name(), "stale_index", "{e}");
                    refused += 1;
                    continue;
                }
            };
            opened += 1;
            // The whole-table check sees every one.
            let err = index.verify_table().unwrap_err();
            assert_eq!(err.kind().name(), "stale_index", "{err}");
            for id in 0..payloads.len() as u64 {
                match index.get(&data, id, &opts) {
                    Ok(Some(r)) => {
                        assert!(
                            r.data == payloads[id as usize],
                            "entry {victim} ^ {damage}: get({id}) gave another record"
                        );
                        assert!(
                            id + 1 < victim as u64 || id > victim as u64,
                            "entry {victim} ^ {damage}: get({id}) trusted it"
                        );
                    }
                    Ok(None) => panic!("get({id}) of {} found nothing", payloads.len()),
                    Err(e) => {
                        // The index's span does not hold the frame found
                        // there, or no valid frame starts where it says.
                        let kind = e.kind().name();
                        assert!(
                            kind == "stale_index" || kind == "length_crc_mismatch",
                            "get({id}): {e}"
                        );
                        assert_eq!(e.offset(), index.offset(id), "{e}");
                        kinds.push(kind);
                        assert!(
                            id + 1 == victim as u64 || id == victim as u64,
                            "entry {victim} ^ {damage}: get({id}) failed: {e}"
                        );
                    }
                }
            }
        }
    }
    // Both paths were taken.
    assert!(
        opened > 0 && refused > 0,
        "opened {opened}, refused {refused}"
    );
    assert!(kinds.contains(&"stale_index") && kinds.contains(&"length_crc_mismatch"));
}

/// An index *file* is checked whole when it is loaded (the sidecar, or
/// `--index`): a damaged entry the fingerprint does not sample makes the
/// sidecar rejected — the index is built again from the data, and every
/// command answers as without it — and an explicit `--index` an error.
#[test]
fn a_damaged_index_file_is_rejected_whole() {
    use recordwire::dataset::{IndexOrigin, Shard};
    let dir = tempfile::tempdir().unwrap();
    let frames = Frames::of("ref/examples.tfrecord", Framing::TfRecord);
    let payloads: Vec<&[u8]> = (0..2000).map(|i| &frames.payloads[i % 40][..]).collect();
    let data = recordwire::frame::file_of(Framing::TfRecord, payloads.iter().copied());
    let path = dir.path().join("big.tfrecord");
    std::fs::write(&path, &data).unwrap();
    let commands: [&[&str]; 3] = [
        &["get", "FILE", "0", "499", "500", "1999"],
        &["order", "FILE", "--mode", "page-aware", "--seed", "7"],
        &["count", "FILE"],
    ];
    let run_all = || {
        commands
            .iter()
            .map(|c| {
                let args: Vec<&str> = c
                    .iter()
                    .map(|&a| if a == "FILE" { s(&path) } else { a })
                    .collect();
                cli::run(&args)
            })
            .collect::<Vec<_>>()
    };
    let without = run_all();
    assert!(without
        .iter()
        .all(|(code, out, _)| *code == 0 && !out.is_empty()));

    let (code, _, err) = cli::run(&["index", s(&path)]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("2000 records indexed"), "{err}");
    let sidecar = recordwire::index::sidecar_path(&path);
    let good = std::fs::read(&sidecar).unwrap();
    let shard = Shard::open(&path, &OpenOptions::default()).unwrap();
    assert_eq!(shard.origin(), &IndexOrigin::Sidecar);
    assert_eq!(run_all(), without, "the good sidecar answers alike");

    for entry in [500usize, 1234] {
        let mut bad = good.clone();
        bad[NATIVE_HEADER_LEN + 8 * entry] ^= 12;
        // The open alone (it samples at most 65 entries) does not see it.
        assert!(Index::open_native(Bytes::from(bad.clone()), &data).is_ok());
        std::fs::write(&sidecar, &bad).unwrap();
        let shard = Shard::open(&path, &OpenOptions::default()).unwrap();
        match shard.origin() {
            IndexOrigin::Built { rejected: Some(e) } => {
                assert_eq!(e.kind().name(), "stale_index", "{e}");
                assert!(e.to_string().contains("table CRC"), "{e}");
            }
            other => panic!("entry {entry}: the damaged sidecar was used: {other:?}"),
        }
        // The same answers, and a note on stderr.
        let with_bad = run_all();
        for ((got, expected), command) in with_bad.iter().zip(&without).zip(&commands) {
            assert_eq!(
                (got.0, &got.1),
                (expected.0, &expected.1),
                "entry {entry}: {command:?}"
            );
            // Each command says on stderr that it passed over the sidecar.
            assert!(
                got.2.starts_with("note: ") && got.2.contains("table CRC"),
                "entry {entry}: {command:?}: {}",
                got.2
            );
        }

        let (code, out, err) = cli::run(&["get", s(&path), "0", "--index", s(&sidecar)]);
        assert_eq!((code, out.as_str()), (1, ""), "{err}");
        assert!(err.starts_with("error[stale_index]: "), "{err}");
        assert!(err.contains("table CRC"), "{err}");
    }
}
