//! Servers that stall, refuse or are not allowed: an open or a read ends
//! within `retry_timeout`, with one error line that names the URL, the
//! request and how long it waited; the command line notes the wait after
//! 5 s; a missing credential, a plain-HTTP endpoint and a 501 say what to
//! do, once, without retrying in vain.

use std::time::{Duration, Instant};

use recordwire::dataset::Shard;
use recordwire::io::remote::StorageOptions;
use recordwire::io::OpenOptions;

use crate::support::servers::{Faults, Moto, Origin, Proxy, Stall, Stalling};

fn options(pairs: &[(&str, &str)]) -> OpenOptions {
    let mut all = vec![("cache_dir", "none")];
    all.extend_from_slice(pairs);
    OpenOptions::default().with_storage(StorageOptions::new(all.iter().copied()))
}

/// Opens `url`, which must fail: the error's text and the time it took.
fn open_fails(url: &str, options: &OpenOptions) -> (String, Duration) {
    let start = Instant::now();
    let err = match Shard::open(url, options) {
        Ok(_) => panic!("{url} opened"),
        Err(e) => e,
    };
    let took = start.elapsed();
    assert_eq!(err.kind().name(), "io_error", "{err}");
    assert_eq!(err.file(), Some(url), "{err}");
    (err.to_string(), took)
}

/// The seconds a message gives after `after ` (`timed out after 2.0 s`).
fn seconds_after(text: &str, after: &str) -> f64 {
    let at = text
        .find(after)
        .unwrap_or_else(|| panic!("{after:?} in {text}"))
        + after.len();
    text[at..]
        .split_whitespace()
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("seconds after {after:?} in {text}"))
}

#[test]
fn a_server_that_never_answers_fails_the_open_within_retry_timeout() {
    let server = Stalling::start(Stall::Silent);
    let url = format!("{}/b/k.tfrecord", server.base());
    let (text, took) = open_fails(
        &url,
        &options(&[("allow_http", "true"), ("retry_timeout", "2s")]),
    );
    assert!(took < Duration::from_secs(5), "{took:?}: {text}");
    assert!(
        text.starts_with(&format!(
            "[io_error]: {url}: GET of bytes 0..65536 (opening the object) timed out after "
        )),
        "{text}"
    );
    let waited = seconds_after(&text, "timed out after ");
    assert!((1.9..3.0).contains(&waited), "{text}");
    assert!(text.contains("retry_timeout"), "{text}");
    assert!(!text.contains('\n'), "one line: {text}");
    // Retried within the time (each try waits 5 s for a first byte: one try).
    assert!(!server.requests().is_empty());
}

#[test]
fn a_server_that_drips_one_byte_a_second_fails_within_retry_timeout() {
    let server = Stalling::start(Stall::Drip);
    let url = format!("{}/b/k.tfrecord", server.base());
    let (text, took) = open_fails(
        &url,
        &options(&[("allow_http", "true"), ("retry_timeout", "3s")]),
    );
    assert!(took < Duration::from_secs(6), "{took:?}: {text}");
    assert!(
        text.contains(&format!(
            "{url}: GET of bytes 0..65536 (opening the object) timed out after "
        )),
        "{text}"
    );
    assert!(
        (2.9..4.0).contains(&seconds_after(&text, "timed out after ")),
        "{text}"
    );
}

#[test]
fn by_default_a_try_waits_seconds_for_a_first_byte_not_minutes() {
    // No timeouts given: the default read_timeout (5 s) ends the one try.
    let server = Stalling::start(Stall::Silent);
    let url = format!("{}/b/k.tfrecord", server.base());
    let (text, took) = open_fails(
        &url,
        &options(&[("allow_http", "true"), ("max_retries", "0")]),
    );
    assert!(
        took >= Duration::from_secs(4) && took < Duration::from_secs(12),
        "{took:?}: {text}"
    );
    assert!(
        text.contains("GET of bytes 0..65536 (opening the object) failed after "),
        "{text}"
    );
    assert_eq!(server.requests().len(), 1, "{:?}", server.requests());
}

#[test]
fn the_command_notes_the_wait_after_5_s_then_fails_with_one_line() {
    let server = Stalling::start(Stall::Silent);
    let url = format!("{}/b/k.tfrecord", server.base());
    let start = Instant::now();
    let out = crate::support::cli::run_bin(
        &[
            "count",
            &url,
            "--storage-option",
            "allow_http=true",
            "--storage-option",
            "retry_timeout=6.5s",
            "--storage-option",
            "cache_dir=none",
        ],
        None,
    );
    let took = start.elapsed();
    // Bounded by the 6.5 s asked for, plus the command's own start and end
    // (seconds on a loaded machine): not the minutes of before.
    assert!(took < Duration::from_secs(30), "{took:?}: {out:?}");
    assert_ne!(out.code, 0, "{out:?}");
    let lines: Vec<&str> = out.stderr.lines().collect();
    assert_eq!(lines.len(), 2, "{out:?}");
    assert!(
        lines[0].starts_with(&format!(
            "note: {url}: still waiting for GET of bytes 0..65536 (opening the object) after 5."
        )),
        "{out:?}"
    );
    assert!(lines[0].contains("giving up after 6.5 s"), "{out:?}");
    assert!(
        lines[1].starts_with(&format!(
            "error[io_error]: {url}: GET of bytes 0..65536 (opening the object) timed out after 6."
        )),
        "{out:?}"
    );
}

#[test]
fn no_aws_credentials_says_so_and_names_what_would_give_them() {
    let moto = Moto::get();
    // A metadata endpoint that never answers, and one that refuses at once.
    let silent = Stalling::start(Stall::Silent);
    let origin = Origin::start();
    let refusing = Proxy::with_faults(
        origin.addr(),
        Faults {
            fail_every: 1,
            status: 403,
            ..Faults::default()
        },
    );
    // Bounds: the 2 s asked for (or none), plus the command's own start and
    // end, seconds on a loaded machine; without them it was minutes.
    for (metadata, bound) in [(silent.base(), 25), (refusing.base(), 20)] {
        let start = Instant::now();
        let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_recordwire"));
        for (k, _) in std::env::vars() {
            if k.starts_with("AWS_") {
                cmd.env_remove(k);
            }
        }
        let out = cmd
            .args([
                "count",
                "s3://no-credentials/k.tfrecord",
                "--storage-option",
                &format!("aws_endpoint={}", moto.base()),
                "--storage-option",
                "allow_http=true",
                "--storage-option",
                &format!("aws_metadata_endpoint={metadata}"),
                "--storage-option",
                "retry_timeout=2s",
                "--storage-option",
                "cache_dir=none",
            ])
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap();
        let took = start.elapsed();
        let stderr = String::from_utf8(out.stderr).unwrap();
        assert!(took < Duration::from_secs(bound), "{took:?}: {stderr}");
        assert_ne!(out.status.code(), Some(0), "{stderr}");
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        for needed in [
            "error[io_error]: s3://no-credentials/k.tfrecord: no AWS credentials were found",
            "AWS_ACCESS_KEY_ID",
            "AWS_SECRET_ACCESS_KEY",
            "aws_skip_signature=true",
            &format!("the instance metadata endpoint {metadata} gave none"),
        ] {
            assert!(stderr.contains(needed), "{needed:?} in {stderr}");
        }
    }
}

#[test]
fn a_plain_http_endpoint_without_allow_http_names_the_option() {
    let moto = Moto::get();
    let url = "s3://plain-http/k.tfrecord";
    let mut pairs = Moto::options(&moto.base());
    pairs.retain(|(k, _)| k != "allow_http");
    pairs.push(("cache_dir".into(), "none".into()));
    let opts = OpenOptions::default().with_storage(StorageOptions::new(pairs));
    let (text, _) = open_fails(url, &opts);
    assert!(text.contains("allow_http=true"), "{text}");
    assert!(text.contains("AWS_ALLOW_HTTP=true"), "{text}");
    assert!(!text.contains("builder error"), "{text}");
}

#[test]
fn an_answer_of_501_is_not_retried() {
    let origin = Origin::start();
    origin.put("d/k.tfrecord", vec![0; 100]);
    let proxy = Proxy::with_faults(
        origin.addr(),
        Faults {
            fail_every: 1,
            status: 501,
            ..Faults::default()
        },
    );
    let url = format!("{}/d/k.tfrecord", proxy.base());
    let (err, _) = open_fails(
        &url,
        &options(&[("allow_http", "true"), ("max_retries", "5")]),
    );
    assert_eq!(proxy.requests(), 1, "{err}: {:?}", proxy.log());
    assert!(
        err.contains("(opening the object) failed after ")
            && err.contains("the server does not implement GET (HTTP 501 Not Implemented)"),
        "{err}"
    );
    assert!(!err.contains("retries"), "{err}");
}

#[test]
fn a_retried_failure_says_the_real_time_it_took() {
    let origin = Origin::start();
    origin.put("r/k.tfrecord", vec![0; 100]);
    let proxy = Proxy::with_faults(
        origin.addr(),
        Faults {
            fail_every: 1,
            status: 503,
            ..Faults::default()
        },
    );
    let url = format!("{}/r/k.tfrecord", proxy.base());
    let (text, took) = open_fails(
        &url,
        &options(&[("allow_http", "true"), ("max_retries", "4")]),
    );
    assert!(text.contains(" and 4 retries: "), "{text}");
    let said = seconds_after(&text, "failed after ");
    let took = took.as_secs_f64();
    assert!(
        said <= took + 0.05 && said >= took - 0.3,
        "{took} s: {text}"
    );
    // The open asked once (and its retries): no second question that would
    // meet the same answer.
    assert_eq!(proxy.requests(), 5, "{:?}", proxy.log());
}

#[test]
fn a_failed_read_of_a_stream_is_said_once() {
    let mut bytes = Vec::new();
    for i in 0..10_000u32 {
        let mut record = format!("record {i} ").into_bytes();
        record.resize(100, b'x');
        bytes.extend_from_slice(&recordwire::frame::tfrecord_frame(&record));
    }
    let origin = Origin::start();
    origin.put("s/k.tfrecord", bytes.clone());
    let url = format!("{}/s/k.tfrecord", origin.base());
    let opts = options(&[("allow_http", "true"), ("request_size", "65536")]);
    let mut source = recordwire::io::open_source(&url, &opts).unwrap();
    // Replaced after opening: the next request's If-Match fails.
    bytes[900_000] ^= 1;
    origin.put("s/k.tfrecord", bytes);
    let err = loop {
        match source.next_record() {
            Some(Ok(_)) => continue,
            Some(Err(e)) => break e.to_string(),
            None => panic!("read to the end of a replaced object"),
        }
    };
    assert_eq!(err.matches("[io_error]").count(), 1, "{err}");
    assert_eq!(err.matches(url.as_str()).count(), 1, "{err}");
    assert!(err.contains("changed"), "{err}");
}
