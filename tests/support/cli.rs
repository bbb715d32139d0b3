//! Runs the `recordwire` command line for the CLI tests: in-process
//! (`recordwire::cli::run`, the one place the tests call it) or as the built
//! binary. Each test binary uses some of these.

#![allow(dead_code)]

use std::path::Path;
use std::process::{Command, Stdio};

/// Runs `recordwire ARGS…` in-process; returns the exit status and the bytes
/// written to stdout and stderr.
fn run_raw(args: &[&str]) -> (i32, Vec<u8>, Vec<u8>) {
    let mut out = Vec::new();
    let mut err = Vec::new();
    let argv = std::iter::once("recordwire").chain(args.iter().copied());
    let code = recordwire::cli::run(argv, &mut out, &mut err);
    (code, out, err)
}

/// Runs `recordwire ARGS…` in-process; returns the exit status, the bytes
/// written to stdout, and stderr (lossy UTF-8).
pub fn run_bytes(args: &[&str]) -> (i32, Vec<u8>, String) {
    let (code, out, err) = run_raw(args);
    (code, out, String::from_utf8_lossy(&err).into_owned())
}

/// Runs `recordwire ARGS…` in-process; returns the exit status, stdout and
/// stderr (lossy UTF-8).
pub fn run(args: &[&str]) -> (i32, String, String) {
    let (code, out, err) = run_bytes(args);
    (code, String::from_utf8_lossy(&out).into_owned(), err)
}

/// What one run of the CLI gave, its output checked to be UTF-8.
#[derive(Debug)]
pub struct Out {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

/// Runs `recordwire ARGS…` in-process; panics unless stdout and stderr are
/// UTF-8.
pub fn run_utf8(args: &[&str]) -> Out {
    let (code, stdout, stderr) = run_raw(args);
    Out {
        code,
        stdout: String::from_utf8(stdout).expect("stdout is UTF-8"),
        stderr: String::from_utf8(stderr).expect("stderr is UTF-8"),
    }
}

/// Runs the built binary with `args` and `stdin` (or nothing) as its
/// standard input; panics unless it exits (rather than being killed by a
/// signal) and its output is UTF-8.
pub fn run_bin(args: &[&str], stdin: Option<&Path>) -> Out {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_recordwire"));
    cmd.args(args).stdout(Stdio::piped()).stderr(Stdio::piped());
    match stdin {
        Some(p) => cmd.stdin(std::fs::File::open(p).expect("open stdin file")),
        None => cmd.stdin(Stdio::null()),
    };
    let out = cmd.output().expect("run the recordwire binary");
    Out {
        code: out.status.code().expect("exit status, not a signal"),
        stdout: String::from_utf8(out.stdout).expect("stdout is UTF-8"),
        stderr: String::from_utf8(out.stderr).expect("stderr is UTF-8"),
    }
}

/// The real record files: see [`super::realworld`]. Used by the CLI tests;
/// the other binaries that share this module read them through
/// `realworld` or not at all.
#[allow(unused_imports)]
pub use super::realworld::real_files;
