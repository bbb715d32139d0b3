//! What a URL may name, and where the commands write (issue 37, points
//! 8-12 and 14): a bucket root is a usage error, index files among remote
//! inputs are passed over as local ones are, `file://` URLs behave as their
//! paths, the writing commands write to a store, and what cannot work
//! (an HTTP glob, a write to an HTTP server, a scheme recordwire does not
//! read) is refused before any request.

use std::path::{Path, PathBuf};

use recordwire::dataset::Dataset;
use recordwire::io::remote::StorageOptions;
use recordwire::io::OpenOptions;

use crate::support::cli::{run_bin, Out};
use crate::support::servers::{Moto, Origin};

fn testdata(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("testdata/ref")
        .join(name)
}

/// The moto options as `--storage-option` arguments, with a cache of its own.
fn storage_args(moto: &Moto, cache: &Path) -> Vec<String> {
    let mut pairs = Moto::options(&moto.base());
    pairs.push(("cache_dir".into(), cache.display().to_string()));
    pairs
        .into_iter()
        .flat_map(|(k, v)| ["--storage-option".to_string(), format!("{k}={v}")])
        .collect()
}

fn run(args: &[String]) -> Out {
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    run_bin(&args, None)
}

/// `recordwire COMMAND ARGS… --storage-option …` against moto.
fn run_s3(moto: &Moto, command: &str, args: &[&str]) -> Out {
    let cache = tempfile::tempdir().unwrap();
    let mut all = vec![command.to_string()];
    all.extend(args.iter().map(|a| a.to_string()));
    all.extend(storage_args(moto, cache.path()));
    run(&all)
}

fn s3_options(moto: &Moto) -> OpenOptions {
    let mut pairs = Moto::options(&moto.base());
    pairs.push(("cache_dir".into(), "none".into()));
    OpenOptions::default().with_storage(StorageOptions::new(pairs))
}

/// The bytes of moto's object `bucket/key`, or `None` when there is none,
/// read through the store client (signed requests: moto answers an unsigned
/// GET of an object written with credentials with 403).
fn object(moto: &Moto, bucket: &str, key: &str) -> Option<Vec<u8>> {
    use recordwire::io::remote::{exists, read_whole, RemoteSource};
    let mut pairs = Moto::options(&moto.base());
    pairs.push(("cache_dir".into(), "none".into()));
    let storage = StorageOptions::new(pairs);
    let url = format!("s3://{bucket}/{key}");
    if !exists(&url, &storage).unwrap() {
        return None;
    }
    let source = RemoteSource::open(&url, &storage).unwrap();
    Some(read_whole(&std::sync::Arc::new(source)).unwrap().to_vec())
}

#[test]
fn a_bucket_root_or_folder_is_a_usage_error_wherever_a_url_is_opened_or_written() {
    let moto = Moto::get();
    moto.bucket("u-root");
    moto.put(
        "u-root",
        "examples.tfrecord",
        &std::fs::read(testdata("examples.tfrecord")).unwrap(),
    );
    for (url, what, glob) in [
        ("s3://u-root/", "a bucket", "s3://u-root/*"),
        ("s3://u-root", "a bucket", "s3://u-root/*"),
        ("s3://u-root/dir/", "a folder", "s3://u-root/dir/*"),
        ("gs://b/", "a bucket", "gs://b/*"),
        ("az://c/", "a container", "az://c/*"),
    ] {
        let want = format!("error[usage_error]: {url}: names {what}, not an object: use {glob}\n");
        for command in ["count", "cat"] {
            let got = run_s3(moto, command, &[url]);
            assert_eq!(
                (got.code, got.stderr.as_str()),
                (2, want.as_str()),
                "{command} {url}"
            );
            assert_eq!(got.stdout, "");
        }
        let err = recordwire::dataset::Shard::open(url, &s3_options(moto)).unwrap_err();
        assert_eq!(err.kind().name(), "usage_error", "{url}: {err}");
        // A write is refused before its PUT (which the server answered
        // with 500, retried ten times).
        let err = recordwire::io::write_whole(Path::new(url), b"x".to_vec(), &s3_options(moto))
            .unwrap_err();
        assert_eq!(err.kind().name(), "usage_error", "{url}: {err}");
        let got = run_s3(
            moto,
            "pack",
            &[testdata("small.jsonl").to_str().unwrap(), url],
        );
        assert_eq!(
            (got.code, got.stderr.as_str()),
            (2, want.as_str()),
            "pack {url}"
        );
    }
    // The glob the message suggests works.
    let got = run_s3(moto, "count", &["s3://u-root/*"]);
    assert_eq!(got.code, 0, "{}", got.stderr);
    assert_eq!(got.stdout, "40\n");
}

/// Puts `examples.tfrecord` and `examples.tfrecord.gz` under `real/` and
/// indexes them there in every format `index` writes.
fn indexed_folder(moto: &Moto, bucket: &str) {
    moto.bucket(bucket);
    for name in ["examples.tfrecord", "examples.tfrecord.gz"] {
        let key = format!("real/{name}");
        moto.put(bucket, &key, &std::fs::read(testdata(name)).unwrap());
        let url = format!("s3://{bucket}/{key}");
        let formats: &[&str] = if name.ends_with(".gz") {
            &["native"]
        } else {
            &["native", "dali", "lirs"]
        };
        for format in formats {
            let got = run_s3(moto, "index", &["--format", format, &url]);
            assert_eq!(got.code, 0, "index --format {format} {url}: {}", got.stderr);
        }
    }
    for suffix in [".rwindex", ".idx", ".offsets"] {
        let key = format!("real/examples.tfrecord{suffix}");
        assert!(object(moto, bucket, &key).is_some(), "{key}");
    }
    // The checkpoint index of the GZIP object.
    let gz = object(moto, bucket, "real/examples.tfrecord.gz.rwindex").unwrap();
    assert!(gz.starts_with(b"RWGZIDX\0"));
}

#[test]
fn index_files_in_a_remote_glob_or_named_are_passed_over_with_the_local_note() {
    let moto = Moto::get();
    indexed_folder(moto, "u-idx");
    let note = |url: &str, format: &str| {
        format!("note: passing over {url}: an index file ({format}), not a record file\n")
    };
    // A glob: the sidecars by name, the DALI and raw tables with a note.
    let got = run_s3(moto, "count", &["s3://u-idx/real/*"]);
    assert_eq!(got.code, 0, "{}", got.stderr);
    assert_eq!(
        got.stdout,
        "40\ts3://u-idx/real/examples.tfrecord\n40\ts3://u-idx/real/examples.tfrecord.gz\n80\ttotal\n"
    );
    assert_eq!(
        got.stderr,
        note("s3://u-idx/real/examples.tfrecord.idx", "dali")
            + &note("s3://u-idx/real/examples.tfrecord.offsets", "lirs")
    );
    // Named: each format, the checkpoint index too.
    for (index, data, format) in [
        ("examples.tfrecord.rwindex", "examples.tfrecord", "native"),
        ("examples.tfrecord.idx", "examples.tfrecord", "dali"),
        ("examples.tfrecord.offsets", "examples.tfrecord", "lirs"),
        (
            "examples.tfrecord.gz.rwindex",
            "examples.tfrecord.gz",
            "native",
        ),
    ] {
        let (index, data) = (
            format!("s3://u-idx/real/{index}"),
            format!("s3://u-idx/real/{data}"),
        );
        let got = run_s3(moto, "count", &[&index, &data]);
        assert_eq!(got.code, 0, "{index}: {}", got.stderr);
        assert_eq!(got.stdout, "40\n", "{index}");
        assert_eq!(got.stderr, note(&index, format));
        // Alone, it is the usage error it is locally.
        let got = run_s3(moto, "count", &[&index]);
        assert_eq!(got.code, 2, "{index}: {}", got.stderr);
        assert!(got.stderr.starts_with(&format!(
            "error[usage_error]: {index}: this is an index file"
        )));
    }
    // The library (and so Python's Dataset) leaves them out of a glob.
    let found = Dataset::expand("s3://u-idx/real/*", &s3_options(moto)).unwrap();
    assert_eq!(
        found,
        [
            PathBuf::from("s3://u-idx/real/examples.tfrecord"),
            PathBuf::from("s3://u-idx/real/examples.tfrecord.gz")
        ]
    );
    let dataset = Dataset::open(&found, &s3_options(moto)).unwrap();
    assert_eq!(dataset.len(), 80);
}

#[test]
fn a_local_checkpoint_index_is_passed_over_as_the_other_formats_are() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("examples.tfrecord.gz");
    std::fs::copy(testdata("examples.tfrecord.gz"), &data).unwrap();
    let got = run(&["index".into(), data.display().to_string()]);
    assert_eq!(got.code, 0, "{}", got.stderr);
    let index = dir.path().join("examples.tfrecord.gz.rwindex");
    let got = run(&[
        "count".into(),
        index.display().to_string(),
        data.display().to_string(),
    ]);
    assert_eq!(got.code, 0, "{}", got.stderr);
    assert_eq!(got.stdout, "40\n");
    assert_eq!(
        got.stderr,
        format!(
            "note: passing over {}: an index file (native), not a record file\n",
            index.display()
        )
    );
}

#[test]
fn file_urls_behave_as_their_local_paths_globs_included() {
    let dir = tempfile::tempdir().unwrap();
    for name in ["a-1.tfrecord", "a-2.tfrecord"] {
        std::fs::copy(testdata("examples.tfrecord"), dir.path().join(name)).unwrap();
    }
    let got = run(&[
        "index".into(),
        "--format".into(),
        "dali".into(),
        dir.path().join("a-1.tfrecord").display().to_string(),
    ]);
    assert_eq!(got.code, 0, "{}", got.stderr);
    let base = url::Url::from_directory_path(dir.path())
        .unwrap()
        .to_string();
    for pattern in ["*", "a-?.tfrecord", "a-*"] {
        let got = run(&["count".into(), format!("{base}{pattern}")]);
        assert_eq!(got.code, 0, "{pattern}: {}", got.stderr);
        assert_eq!(
            got.stdout,
            format!("40\t{base}a-1.tfrecord\n40\t{base}a-2.tfrecord\n80\ttotal\n"),
            "{pattern}"
        );
    }
    // The DALI index the glob matched is passed over with the note.
    let got = run(&["count".into(), format!("{base}*")]);
    assert_eq!(
        got.stderr,
        format!(
            "note: passing over {base}a-1.tfrecord.idx: an index file (dali), not a record file\n"
        )
    );
    let got = run(&["count".into(), format!("{base}b-*")]);
    assert_eq!(got.code, 2);
    assert_eq!(
        got.stderr,
        format!("error[usage_error]: {base}b-*: no file matches\n")
    );
    // The library: a glob, and a folder, as their paths.
    let found = Dataset::expand(format!("{base}a-*"), &OpenOptions::default()).unwrap();
    assert_eq!(found.len(), 2);
    assert_eq!(
        Dataset::open(&found, &OpenOptions::default())
            .unwrap()
            .len(),
        80
    );
    let err = Dataset::expand(format!("{base}b-*"), &OpenOptions::default()).unwrap_err();
    assert_eq!(err.kind().name(), "usage_error");
    let by_url = recordwire::dataset::Shard::open(&base, &OpenOptions::default()).unwrap_err();
    let by_path =
        recordwire::dataset::Shard::open(dir.path(), &OpenOptions::default()).unwrap_err();
    assert_eq!(by_url.kind(), by_path.kind(), "{by_url} / {by_path}");
    // Writing to a file:// URL writes the local file.
    let out = format!("{base}packed.tfrecord");
    let got = run(&[
        "pack".into(),
        testdata("small.jsonl").display().to_string(),
        out,
    ]);
    assert_eq!(got.code, 0, "{}", got.stderr);
    let local = dir.path().join("local.tfrecord");
    let got = run(&[
        "pack".into(),
        testdata("small.jsonl").display().to_string(),
        local.display().to_string(),
    ]);
    assert_eq!(got.code, 0, "{}", got.stderr);
    assert_eq!(
        std::fs::read(dir.path().join("packed.tfrecord")).unwrap(),
        std::fs::read(local).unwrap()
    );
}

#[test]
fn the_writing_commands_write_to_a_store_and_export_says_so_only_when_it_did() {
    let moto = Moto::get();
    moto.bucket("u-write");
    let small = testdata("small.jsonl").display().to_string();
    let work = tempfile::tempdir().unwrap();
    // Where `./s3:/u-write/` exists the output still goes to the store.
    std::fs::create_dir_all(work.path().join("s3:/u-write")).unwrap();
    let local_pack = work.path().join("small.tfrecord");
    assert_eq!(
        run(&[
            "pack".into(),
            small.clone(),
            local_pack.display().to_string()
        ])
        .code,
        0
    );
    let cwd_args = |args: &[&str]| {
        let cache = tempfile::tempdir().unwrap();
        let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_recordwire"));
        cmd.current_dir(work.path())
            .args(args)
            .args(storage_args(moto, cache.path()));
        let out = cmd.output().unwrap();
        (
            out.status.code().unwrap(),
            String::from_utf8(out.stderr).unwrap(),
        )
    };
    let (code, stderr) = cwd_args(&["pack", &small, "s3://u-write/x.tfrecord"]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(
        object(moto, "u-write", "x.tfrecord").unwrap(),
        std::fs::read(&local_pack).unwrap()
    );
    assert!(std::fs::read_dir(work.path().join("s3:/u-write"))
        .unwrap()
        .next()
        .is_none());

    // encode, convert, import, export and index alike.
    let one = work.path().join("one.json");
    std::fs::write(
        &one,
        r#"{"features": {"feature": {"x": {"int64_list": {"value": ["7"]}}}}}"#,
    )
    .unwrap();
    let got = run_s3(
        moto,
        "encode",
        &[one.to_str().unwrap(), "s3://u-write/one.pb"],
    );
    assert_eq!(got.code, 0, "{}", got.stderr);
    assert!(object(moto, "u-write", "one.pb").is_some_and(|b| !b.is_empty()));
    let got = run_s3(
        moto,
        "convert",
        &["s3://u-write/x.tfrecord", "s3://u-write/x.ofrecord"],
    );
    assert_eq!(got.code, 0, "{}", got.stderr);
    let local_convert = work.path().join("x.ofrecord");
    assert_eq!(
        run(&[
            "convert".into(),
            local_pack.display().to_string(),
            local_convert.display().to_string()
        ])
        .code,
        0
    );
    assert_eq!(
        object(moto, "u-write", "x.ofrecord").unwrap(),
        std::fs::read(&local_convert).unwrap()
    );
    let got = run_s3(
        moto,
        "export",
        &[
            "--spec",
            "auto",
            "s3://u-write/x.tfrecord",
            "s3://u-write/x.parquet",
        ],
    );
    assert_eq!(got.code, 0, "{}", got.stderr);
    assert!(
        got.stderr.contains("written to s3://u-write/x.parquet"),
        "{}",
        got.stderr
    );
    let parquet = object(moto, "u-write", "x.parquet").unwrap();
    assert!(parquet.starts_with(b"PAR1"));
    // Not replaced without --force, as a local file is not.
    let got = run_s3(
        moto,
        "export",
        &[
            "--spec",
            "auto",
            "s3://u-write/x.tfrecord",
            "s3://u-write/x.parquet",
        ],
    );
    assert_eq!(got.code, 2, "{}", got.stderr);
    assert!(got.stderr.contains("exists"), "{}", got.stderr);
    let local_parquet = work.path().join("x.parquet");
    std::fs::write(&local_parquet, &parquet).unwrap();
    let got = run_s3(
        moto,
        "import",
        &[
            local_parquet.to_str().unwrap(),
            "s3://u-write/back.tfrecord",
        ],
    );
    assert_eq!(got.code, 0, "{}", got.stderr);
    let got = run_s3(moto, "count", &["s3://u-write/back.tfrecord"]);
    assert_eq!(
        (got.code, got.stdout.as_str()),
        (0, "10\n"),
        "{}",
        got.stderr
    );
    let got = run_s3(
        moto,
        "index",
        &[
            &local_pack.display().to_string(),
            "--out",
            "s3://u-write/x.idx",
            "--format",
            "dali",
        ],
    );
    assert_eq!(got.code, 0, "{}", got.stderr);
    assert!(object(moto, "u-write", "x.idx").is_some());

    // A failed upload (no such bucket) is an error, and export does not
    // say it wrote anything.
    let got = run_s3(
        moto,
        "export",
        &[
            "--spec",
            "auto",
            "s3://u-write/x.tfrecord",
            "s3://u-none/x.parquet",
        ],
    );
    assert_ne!(got.code, 0);
    assert!(!got.stderr.contains("written to"), "{}", got.stderr);
    assert!(
        got.stderr
            .contains("error[io_error]: s3://u-none/x.parquet"),
        "{}",
        got.stderr
    );
    // npy is a directory: not one object.
    let got = run_s3(
        moto,
        "export",
        &[
            "--spec",
            "auto",
            "s3://u-write/x.tfrecord",
            "s3://u-write/npy",
        ],
    );
    assert_eq!(got.code, 2, "{}", got.stderr);
    assert!(
        got.stderr
            .starts_with("error[usage_error]: s3://u-write/npy: --format npy"),
        "{}",
        got.stderr
    );
    // bench says it reads local files only.
    let got = run_s3(moto, "bench", &["s3://u-write/x.tfrecord"]);
    assert_eq!(got.code, 2);
    assert!(
        got.stderr.contains("bench reads local files only"),
        "{}",
        got.stderr
    );
}

#[test]
fn a_large_output_is_uploaded_in_parts() {
    let moto = Moto::get();
    moto.bucket("u-multi");
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big");
    let len = recordwire::io::remote::MULTIPART_ABOVE as usize + (3 << 20) + 17;
    let bytes: Vec<u8> = (0..len)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    std::fs::write(&path, &bytes).unwrap();
    let options = StorageOptions::new(Moto::options(&moto.base()));
    recordwire::io::remote::put_file("s3://u-multi/big", &path, &options).unwrap();
    assert!(object(moto, "u-multi", "big").unwrap() == bytes);
}

#[test]
fn http_globs_and_http_writes_are_refused_before_any_request() {
    let origin = Origin::start();
    origin.put(
        "d/data.tfrecord",
        std::fs::read(testdata("examples.tfrecord")).unwrap(),
    );
    let base = origin.base();
    let got = run(&["count".into(), format!("{base}/d/*.tfrecord")]);
    assert_eq!(got.code, 2);
    assert_eq!(
        got.stderr,
        format!(
            "error[usage_error]: {base}/d/*.tfrecord: an HTTP server cannot be listed, so a URL of \
             http:// or https:// takes no wildcard: name each object\n"
        )
    );
    let err = Dataset::expand(format!("{base}/d/*"), &OpenOptions::default()).unwrap_err();
    assert_eq!(err.kind().name(), "usage_error");
    let url = format!("{base}/d/data.tfrecord");
    for args in [
        vec!["index".to_string(), url.clone()],
        vec![
            "pack".to_string(),
            testdata("small.jsonl").display().to_string(),
            format!("{base}/d/x.tfrecord"),
        ],
        vec![
            "convert".to_string(),
            url.clone(),
            format!("{base}/d/x.tfrecord"),
        ],
    ] {
        let got = run(&args);
        assert_eq!(got.code, 2, "{args:?}: {}", got.stderr);
        assert!(
            got.stderr.contains("[usage_error]")
                && got
                    .stderr
                    .contains("cannot write to an http:// or https:// URL"),
            "{args:?}: {}",
            got.stderr
        );
    }
    assert_eq!(origin.requests(), 0);
    // Reading it still works (a plain http:// URL, allowed).
    let got = run(&[
        "count".into(),
        url,
        "--storage-option".into(),
        "allow_http=true".into(),
    ]);
    assert_eq!(
        (got.code, got.stdout.as_str()),
        (0, "40\n"),
        "{}",
        got.stderr
    );
}

#[test]
fn an_unsupported_scheme_is_a_usage_error_not_a_missing_file() {
    for command in ["count", "cat"] {
        let got = run(&[command.into(), "ftp://example.com/x.tfrecord".into()]);
        assert_eq!(got.code, 2, "{}", got.stderr);
        assert!(
            got.stderr.starts_with(
                "error[usage_error]: ftp://example.com/x.tfrecord: unsupported scheme ftp://"
            ),
            "{}",
            got.stderr
        );
    }
    let err = recordwire::dataset::Shard::open("ftp://example.com/x", &OpenOptions::default())
        .unwrap_err();
    assert_eq!(err.kind().name(), "usage_error");
    let err = Dataset::expand("ftp://example.com/*", &OpenOptions::default()).unwrap_err();
    assert_eq!(err.kind().name(), "usage_error");
}
