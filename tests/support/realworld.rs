//! The real record files (TFX, Lingvo, Waymo, OneFlow, ... as
//! `../shared/realworld/SOURCES.md` lists them), which live beside the
//! repository, not in it: the folder `RECORDWIRE_REALWORLD` names (relative
//! to the repository root when relative), by default
//! `../shared/realworld/files`. Every test that reads them goes through
//! [`real_files`]; without them it prints one `SKIP:` line and goes on with
//! what the repository holds.

use std::io::Write;
use std::path::{Path, PathBuf};

/// The variable that names the folder of the real files.
pub const VAR: &str = "RECORDWIRE_REALWORLD";

/// Where the real files are looked for: `$RECORDWIRE_REALWORLD`, or
/// `../shared/realworld/files`, relative to the repository root.
pub fn dir() -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    match std::env::var_os(VAR) {
        Some(d) if !d.is_empty() => root.join(d),
        _ => root.join("../shared/realworld/files"),
    }
}

/// The real record files, sorted, or `None`, with one visible line saying
/// they were not read, when their folder is not there. The line goes to the
/// process's stderr itself, not through `eprintln!`, which the test harness
/// captures and hides for a test that passes; it names the test (the
/// harness names each test's thread after it).
pub fn real_files() -> Option<Vec<String>> {
    let dir = dir();
    let Ok(entries) = std::fs::read_dir(&dir) else {
        let test = std::thread::current().name().unwrap_or("?").to_string();
        let _ = writeln!(
            std::io::stderr(),
            "SKIP: real files not read: {} missing; set {VAR} ({test})",
            dir.display()
        );
        return None;
    };
    let mut files: Vec<String> = entries
        .map(|e| {
            let path = e.expect("a readable folder entry").path();
            path.to_string_lossy().into_owned()
        })
        .collect();
    files.sort();
    Some(files)
}

/// Runs the tests named `tests` (full names, `module::test`) of this very
/// test binary once more, in a child process whose `RECORDWIRE_REALWORLD`
/// names a folder that is not there, as on a clone without `../shared`:
/// each must pass, and each must say in one `SKIP:` line that it did not
/// read the real files.
pub fn rerun_without_real_files(tests: &[&str]) {
    let folder = tempfile::tempdir().expect("a temporary folder");
    let missing = folder.path().join("no-real-files");
    let this = std::env::current_exe().expect("the test binary's path");
    let out = std::process::Command::new(this)
        .args(tests)
        .arg("--exact")
        .env(VAR, &missing)
        .output()
        .expect("the test binary runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(
        stdout.contains(&format!("test result: ok. {} passed", tests.len())),
        "{stdout}"
    );
    for test in tests {
        let line = format!(
            "SKIP: real files not read: {} missing; set {VAR} ({test})",
            missing.display()
        );
        assert!(stderr.contains(&line), "no line {line:?} in:\n{stderr}");
    }
}
