//! `examples/loader.rs`, run on testdata/: every rank of a world gets as
//! many records, together every record of the two shards at least once, the
//! workers of a rank split its part, and each label is the one `cat` prints.

#![allow(clippy::unwrap_used)]

#[path = "../../examples/loader.rs"]
#[allow(dead_code)]
mod loader;

use crate::support::cli::run;
use loader::{load, Job};

fn paths() -> Vec<std::path::PathBuf> {
    vec![
        "testdata/ref/small.tfrecord".into(),
        "testdata/bad/base5.tfrecord".into(),
    ]
}

/// Every record's label, from `cat`, in global id order.
fn labels_from_cat() -> Vec<i64> {
    let mut labels = Vec::new();
    for path in paths() {
        let (code, out, err) = run(&["cat", "--features", "label", path.to_str().unwrap()]);
        assert_eq!(code, 0, "{err}");
        for line in out.lines() {
            let at = line.find("\"value\":[\"").expect("an int64 label") + 10;
            let end = at + line[at..].find('"').expect("closing quote");
            labels.push(line[at..end].parse().expect("a number"));
        }
    }
    labels
}

#[test]
fn the_loader_example_covers_the_dataset_with_equal_parts() {
    let expected = labels_from_cat();
    assert_eq!(expected.len(), 15);
    let (world, workers) = (4, 2);
    let mut seen = Vec::new();
    let mut lengths = Vec::new();
    for rank in 0..world {
        let job = Job {
            rank,
            world,
            workers,
            epoch: 1,
            seed: 5,
        };
        let batches = load(&paths(), job).expect("load");
        assert_eq!(batches.len(), workers as usize);
        lengths.push(batches.iter().map(|b| b.ids.len()).sum::<usize>());
        for batch in &batches {
            for (&id, &label) in batch.ids.iter().zip(&batch.labels) {
                assert_eq!(label, expected[id as usize], "id {id}");
                seen.push(id);
            }
        }
    }
    // 15 records among 4 ranks: 4 each (Tail::Pad), one read twice.
    assert_eq!(lengths, [4, 4, 4, 4]);
    seen.sort_unstable();
    seen.dedup();
    assert_eq!(seen, (0..15).collect::<Vec<u64>>());
    // Another epoch, another order; the same epoch, the same one.
    let job = |epoch| Job {
        rank: 0,
        world: 1,
        workers: 1,
        epoch,
        seed: 5,
    };
    let a = load(&paths(), job(0)).unwrap();
    assert_eq!(a, load(&paths(), job(0)).unwrap());
    assert_ne!(a[0].ids, load(&paths(), job(1)).unwrap()[0].ids);
}
