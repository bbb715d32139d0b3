//! Writes the benchmark corpora to files, for `recordwire bench` and for the
//! TensorFlow comparison script (`benches/tf/tf_bench.py`):
//!
//! ```text
//! cargo run --release --example gen_corpus -- DIR [SCALE]
//! ```
//!
//! writes `DIR/bert.tfrecord`, `DIR/image.tfrecord` and `DIR/ctr.tfrecord`,
//! the same bytes the criterion benches read (SCALE, default 1, multiplies
//! the record counts), and `DIR/yt8m.tfrecord`: the first tenth of the
//! YouTube-8M-like corpus (200 SequenceExamples, 42 MB, times SCALE).

#[path = "../benches/common/corpus.rs"]
mod corpus;

use std::path::PathBuf;
use std::process::ExitCode;

fn main() -> ExitCode {
    let mut args = std::env::args_os().skip(1);
    let Some(dir) = args.next().map(PathBuf::from) else {
        eprintln!("usage: gen_corpus DIR [SCALE]");
        return ExitCode::from(2);
    };
    let scale: usize = match args.next().map(|s| s.to_string_lossy().parse()) {
        None => 1,
        Some(Ok(s)) if s > 0 => s,
        Some(_) => {
            eprintln!("SCALE must be a positive integer");
            return ExitCode::from(2);
        }
    };
    if let Err(e) = std::fs::create_dir_all(&dir) {
        eprintln!("{}: {e}", dir.display());
        return ExitCode::FAILURE;
    }
    for c in &corpus::CORPORA {
        let path = dir.join(format!("{}.tfrecord", c.name));
        let n = c.records * scale;
        if let Err(e) = std::fs::write(&path, c.file(n)) {
            eprintln!("{}: {e}", path.display());
            return ExitCode::FAILURE;
        }
        println!("{} ({n} records)", path.display());
    }
    let path = dir.join("yt8m.tfrecord");
    let n = corpus::YT8M_RECORDS / 10 * scale;
    if let Err(e) = std::fs::write(&path, corpus::yt8m_file(n).0) {
        eprintln!("{}: {e}", path.display());
        return ExitCode::FAILURE;
    }
    println!("{} ({n} records)", path.display());
    ExitCode::SUCCESS
}
