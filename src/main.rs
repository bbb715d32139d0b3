//! The `recordwire` command: see `recordwire --help` and the crate's `cli` module.

fn main() {
    let stdout = std::io::stdout();
    // stderr is not locked for the whole run: the note on a slow remote
    // request is written from the I/O runtime's threads while the command
    // waits.
    let code = recordwire::cli::run(
        std::env::args_os(),
        &mut stdout.lock(),
        &mut std::io::stderr(),
    );
    std::process::exit(code);
}
