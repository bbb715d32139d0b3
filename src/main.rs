//! The `recordwire` command: see `recordwire --help` and the crate's `cli` module.

fn main() {
    let stdout = std::io::stdout();
    let stderr = std::io::stderr();
    let code = recordwire::cli::run(std::env::args_os(), &mut stdout.lock(), &mut stderr.lock());
    std::process::exit(code);
}
