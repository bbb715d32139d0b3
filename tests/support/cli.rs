//! Runs the `recordwire` command line in-process, for the CLI tests.

/// Runs `recordwire ARGS…`; returns the exit status, stdout and stderr.
pub fn run(args: &[&str]) -> (i32, String, String) {
    let mut out = Vec::new();
    let mut err = Vec::new();
    let mut argv = vec!["recordwire"];
    argv.extend_from_slice(args);
    let code = recordwire::cli::run(argv, &mut out, &mut err);
    (
        code,
        String::from_utf8_lossy(&out).into_owned(),
        String::from_utf8_lossy(&err).into_owned(),
    )
}
