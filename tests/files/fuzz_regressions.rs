//! The fuzz targets' own checks, without libFuzzer or nightly: the checks of
//! `fuzz/src/` (included below as a module; each target is a function of
//! `fuzz/src/targets.rs`) run over
//!
//! - every input that once made a target fail,
//!   `testdata/fuzz-regressions/<target>-*.bin` (see its README), and
//! - the small minimized corpus kept in the repository,
//!   `testdata/fuzz-corpus/<target>/` (the inputs, found by the fuzzer, that
//!   cover the most of each target; see `fuzz/CAMPAIGN.md`).
//!
//! A failure names the target and the file; `cargo +nightly fuzz run <target>
//! <file>` reproduces it with the fuzz build.
#![allow(unexpected_cfgs)]

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};

#[path = "../../fuzz/src/lib.rs"]
#[allow(dead_code, unreachable_pub, missing_docs, clippy::all)]
mod fuzz;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).to_path_buf()
}

/// The files of `dir` (sorted; none when it does not exist) whose names pass
/// `keep`.
fn files(dir: &Path, keep: impl Fn(&str) -> bool) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut out: Vec<PathBuf> = entries
        .map(|e| e.expect("a directory entry").path())
        .filter(|p| p.is_file() && p.file_name().and_then(|n| n.to_str()).is_some_and(&keep))
        .collect();
    out.sort();
    out
}

/// The saved crashes and the kept corpus of `target`.
fn inputs(target: &str) -> Vec<PathBuf> {
    let prefix = format!("{target}-");
    let mut all = files(&root().join("testdata/fuzz-regressions"), |name| {
        name.starts_with(&prefix) && name.ends_with(".bin")
    });
    all.extend(files(
        &root().join("testdata/fuzz-corpus").join(target),
        |_| true,
    ));
    all
}

/// Runs `target`'s checks on each of its inputs; fails listing every input
/// that fails, with the panic message.
fn replay(target: &str) {
    let inputs = inputs(target);
    let mut failures = Vec::new();
    for path in &inputs {
        let data = std::fs::read(path).expect("readable input");
        let result = catch_unwind(AssertUnwindSafe(|| {
            assert!(fuzz::targets::run(target, &data), "no target {target}");
        }));
        if let Err(panic) = result {
            let message = panic
                .downcast_ref::<String>()
                .map(String::as_str)
                .or_else(|| panic.downcast_ref::<&str>().copied())
                .unwrap_or("(no message)");
            failures.push(format!("{}: {message}", path.display()));
        }
    }
    assert!(
        failures.is_empty(),
        "{target}: {} of {} inputs fail:\n{}",
        failures.len(),
        inputs.len(),
        failures.join("\n")
    );
}

macro_rules! targets {
    ($($name:ident),* $(,)?) => {
        $(
            #[test]
            fn $name() {
                replay(stringify!($name));
            }
        )*

        /// The targets above are every target of `fuzz/Cargo.toml`, and
        /// `fuzz::targets::NAMES`.
        #[test]
        fn every_target_is_replayed() {
            let here = [$(stringify!($name)),*];
            assert_eq!(here, fuzz::targets::NAMES);
            let manifest = std::fs::read_to_string(root().join("fuzz/Cargo.toml"))
                .expect("fuzz/Cargo.toml");
            let mut bins: Vec<&str> = manifest
                .split("[[bin]]")
                .skip(1)
                .filter_map(|bin| {
                    let line = bin.lines().find(|l| l.trim_start().starts_with("name"))?;
                    line.split('"').nth(1)
                })
                .collect();
            bins.sort_unstable();
            let mut names = here.to_vec();
            names.sort_unstable();
            assert_eq!(bins, names);
        }
    };
}

targets!(
    framing,
    stream,
    example_view,
    sequence_example_view,
    ofrecord_view,
    json,
    json_read,
    dump,
    roundtrip,
    index,
    order,
    batch_decode,
    arch_kernels,
    deflate,
    gz_index,
    schema_json,
);

/// Every saved crash belongs to a target.
#[test]
fn every_regression_names_its_target() {
    for path in files(&root().join("testdata/fuzz-regressions"), |n| {
        n.ends_with(".bin")
    }) {
        let name = path.file_name().and_then(|n| n.to_str()).expect("a name");
        assert!(
            fuzz::targets::NAMES
                .iter()
                .any(|t| name.starts_with(&format!("{t}-"))),
            "{name}: not <target>-<what>.bin"
        );
    }
}

/// `testdata/fuzz-regressions/stream-zlib-*.bin`: a ZLIB stream damaged
/// after whole records. Read from a file, fewer records (or a shorter skipped
/// range) came out before the `compression_error` than fed in reads of a few
/// KiB (a pipe), because flate2's `read` dropped what it decompressed in a
/// call that ended in an error; `io::Inflater` keeps it, so file and pipe
/// now agree byte for byte.
#[test]
fn stream_zlib_keeps_the_records_before_the_damage() {
    use recordwire::io::Compression;
    for name in [
        "stream-zlib-lost-record.bin",
        "stream-zlib-lost-record-found.bin",
        "stream-zlib-skip-end.bin",
    ] {
        let data = std::fs::read(root().join("testdata/fuzz-regressions").join(name))
            .expect("the reproducer");
        for policy in fuzz::POLICIES {
            let (file, _) = fuzz::file_walk(&data, policy, Compression::Auto);
            for step in [1, 7, 4096, usize::MAX] {
                let (piped, _) = fuzz::stream_walk(&data, policy, step, Compression::Auto);
                assert_eq!(file, piped, "{name}, {policy:?}, {step} bytes per read");
            }
        }
    }
}
