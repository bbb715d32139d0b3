//! Cold-cache read throughput of one epoch, in sequential, shuffled,
//! page-aware and quasi-random order, with and without order-driven
//! readahead (`recordwire::index::Readahead`), and the major page faults
//! each run takes.
//!
//! ```text
//! cargo run --release --example readahead -- [FILE] [--records N] [--size BYTES]
//! ```
//!
//! Without FILE it writes a TFRecord file of N records of about BYTES bytes
//! each (default 200 000 × 2 KiB ≈ 400 MB) in a temporary directory. Before
//! every run the file is evicted from the page cache with
//! `posix_fadvise(POSIX_FADV_DONTNEED)` (through `python3`, which every
//! machine of this project has), so each run reads from the disk. Linux only:
//! page faults come from `/proc/self/stat`.

use std::path::{Path, PathBuf};
use std::time::Instant;

use recordwire::encode::{RecordWriter, WriterOptions};
use recordwire::frame::{Framing, ReadOptions};
use recordwire::index::{Advise, Index, Readahead};
use recordwire::io::{OpenOptions, RecordFile};
use recordwire::order::{Mode, Order, OrderSpec};

/// Which advice a run gives.
#[derive(Clone, Copy)]
enum Advice {
    /// None: the kernel's own readahead around faults.
    Off,
    /// `WillNeed` for the next records' pages, nothing else.
    WillNeedOnly,
    /// `Readahead`: `Random` (shuffled orders) or `Sequential` for the whole
    /// map, plus `WillNeed` for the next records' pages.
    Full,
}

impl Advice {
    fn name(self) -> &'static str {
        match self {
            Advice::Off => "off",
            Advice::WillNeedOnly => "willneed",
            Advice::Full => "full",
        }
    }
}

fn major_faults() -> u64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // Field 12 (majflt), counting after the command name's closing parenthesis.
    stat.rsplit_once(')')
        .and_then(|(_, rest)| rest.split_whitespace().nth(9))
        .and_then(|f| f.parse().ok())
        .unwrap_or(0)
}

fn evict(path: &Path) {
    let script = "import os,sys\nfd=os.open(sys.argv[1],os.O_RDONLY)\nos.fsync(fd)\nos.posix_fadvise(fd,0,0,os.POSIX_FADV_DONTNEED)\n";
    let ok = std::process::Command::new("python3")
        .args(["-c", script])
        .arg(path)
        .status()
        .map(|s| s.success())
        .unwrap_or(false);
    if !ok {
        eprintln!(
            "warning: could not evict {} from the page cache",
            path.display()
        );
    }
}

fn make_file(dir: &Path, records: u64, size: usize) -> PathBuf {
    let path = dir.join("readahead.tfrecord");
    let mut w = RecordWriter::create(&path, WriterOptions::new(Framing::TfRecord)).expect("create");
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    let mut buf = vec![0u8; size * 2];
    for _ in 0..records {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let n = size / 2 + (x as usize % size);
        for (i, b) in buf[..n].iter_mut().enumerate() {
            *b = (x as usize).wrapping_add(i) as u8;
        }
        w.write_record(&buf[..n]).expect("write");
    }
    w.finish().expect("finish");
    path
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let value = |flag: &str, default: u64| {
        args.iter()
            .position(|a| a == flag)
            .and_then(|i| args.get(i + 1))
            .and_then(|v| v.parse().ok())
            .unwrap_or(default)
    };
    // On disk (not a tmpfs), so that eviction from the page cache means something.
    let dir = tempfile::tempdir_in(std::env::var_os("READAHEAD_DIR").unwrap_or_else(|| ".".into()))
        .expect("tempdir");
    let path = match args.first().filter(|a| !a.starts_with("--")) {
        Some(p) => PathBuf::from(p),
        None => make_file(
            dir.path(),
            value("--records", 200_000),
            value("--size", 2048) as usize,
        ),
    };
    let (index, size) = {
        let file = RecordFile::open(&path, &OpenOptions::default()).expect("open");
        (
            Index::build(file.bytes(), file.framing(), false).expect("index"),
            file.len(),
        )
    };
    println!(
        "{}: {} records, {:.1} MB",
        path.display(),
        index.len(),
        size as f64 / 1e6
    );
    println!(
        "{:<13} {:<10} {:>10} {:>12} {:>10} {:>14}",
        "order", "readahead", "seconds", "records/s", "MB/s", "major faults"
    );
    let opts = ReadOptions::default();
    const AHEAD: usize = 256;
    for (name, mode) in [
        ("sequential", Mode::Sequential),
        ("shuffle", Mode::Shuffle),
        ("page-aware", Mode::PageAware { page_size: 4096 }),
        (
            "quasi-random",
            Mode::QuasiRandom {
                page_size: 4096,
                window: 16,
            },
        ),
    ] {
        let order = Order::new(
            index.len(),
            index.starts(),
            OrderSpec {
                mode,
                seed: 1,
                ..OrderSpec::default()
            },
        )
        .expect("order");
        let ids: Vec<u64> = order.epoch(0).iter().collect();
        for advise in [Advice::Off, Advice::WillNeedOnly, Advice::Full] {
            // The map is dropped after each run: pages mapped by this process
            // could not be evicted.
            evict(&path);
            let file = RecordFile::open(&path, &OpenOptions::default()).expect("open");
            assert!(file.is_mapped());
            let data = file.bytes();
            let faults = major_faults();
            let start = Instant::now();
            let mut ra = Readahead::new(!matches!(mode, Mode::Sequential));
            let mut bytes = 0u64;
            for (i, chunk) in ids.chunks(AHEAD).enumerate() {
                let next = ids
                    .get((i + 1) * AHEAD..((i + 2) * AHEAD).min(ids.len()))
                    .unwrap_or(&[]);
                match advise {
                    Advice::Off => {}
                    Advice::WillNeedOnly => {
                        if i == 0 {
                            Readahead::ranges(&index, chunk, 4096, |r| {
                                let _ = file.will_need(r.start as usize..r.end as usize);
                            });
                        }
                        Readahead::ranges(&index, next, 4096, |r| {
                            let _ = file.will_need(r.start as usize..r.end as usize);
                        });
                    }
                    Advice::Full => {
                        if i == 0 {
                            let _ = ra.advise(&index, &file, chunk);
                        }
                        let _ = ra.advise(&index, &file, next);
                    }
                }
                for &id in chunk {
                    let r = index
                        .get(data, id, &opts)
                        .expect("valid")
                        .expect("in range");
                    bytes += r.data.len() as u64;
                }
            }
            let secs = start.elapsed().as_secs_f64();
            println!(
                "{:<13} {:<10} {:>10.3} {:>12.0} {:>10.1} {:>14}",
                name,
                advise.name(),
                secs,
                ids.len() as f64 / secs,
                bytes as f64 / secs / 1e6,
                major_faults() - faults
            );
        }
    }
}
