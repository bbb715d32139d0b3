//! Times the batched decoder on a record file, for BENCHMARKS.md and for
//! `benches/tf/tf_parse_batch.py`, which runs it beside TensorFlow's
//! `tf.io.parse_example` in the same run:
//!
//! ```text
//! cargo run --release --example batch_bench -- FILE SPEC.json [BATCH] [REPS]
//! ```
//!
//! The records are read into memory first (framing and CRCs are not
//! timed: TensorFlow's `parse_example` is given the serialized records
//! too). Prints one JSON object per measure: the median over REPS passes
//! (default 7) of the nanoseconds per record to decode the whole file in
//! batches of BATCH (default 256) records:
//!
//! - `decode_1`, `decode_2`: `batch::Decoder` with 1 and 2 threads;
//! - `views`: the best hand-written loop over the views for the same
//!   output (each record's effective features walked once, names matched
//!   against the spec, values copied into per-feature vectors), supporting
//!   the fixed_len and var_len forms;
//! - `copied_bytes`: bytes written into the batch's data buffers per batch
//!   (0 for borrowed bytes columns: the image bytes are not copied).

use std::process::ExitCode;
use std::time::Instant;

use recordwire::batch::{Batch, DType, Decoder, Form, Spec};
use recordwire::frame::{records, Framing};
use recordwire::view::{ExampleRef, ListRef};

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// The hand-written loop: per feature, a values vector and row splits.
struct Hand {
    ints: Vec<Vec<i64>>,
    floats: Vec<Vec<f32>>,
    bytes: Vec<Vec<u8>>,
    offsets: Vec<Vec<i64>>,
    splits: Vec<Vec<i64>>,
}

fn hand_loop(payloads: &[&[u8]], spec: &Spec, h: &mut Hand) -> usize {
    let names: Vec<&[u8]> = spec.features().iter().map(|f| f.name.as_bytes()).collect();
    let n = names.len();
    for v in h.ints.iter_mut().chain([].iter_mut()) {
        v.clear();
    }
    for i in 0..n {
        h.ints[i].clear();
        h.floats[i].clear();
        h.bytes[i].clear();
        h.offsets[i].clear();
        h.offsets[i].push(0);
        h.splits[i].clear();
        h.splits[i].push(0);
    }
    let mut total = 0;
    for p in payloads {
        let ex = ExampleRef::new(p, 0);
        for f in ex.features().iter() {
            let Ok(f) = f else { continue };
            let Some(i) = names.iter().position(|n| *n == f.name()) else {
                continue;
            };
            match f.feature.list() {
                Ok(Some(ListRef::Int64(l))) => {
                    let _ = l.extend_vec(&mut h.ints[i]);
                }
                Ok(Some(ListRef::Float(l))) => {
                    let _ = l.extend_vec(&mut h.floats[i]);
                }
                Ok(Some(ListRef::Bytes(l))) => {
                    for v in l.iter().flatten() {
                        h.bytes[i].extend_from_slice(v);
                        h.offsets[i].push(h.bytes[i].len() as i64);
                    }
                }
                _ => {}
            }
        }
        for i in 0..n {
            let len = h.ints[i].len() + h.floats[i].len() + h.offsets[i].len() - 1;
            h.splits[i].push(len as i64);
        }
        total += 1;
    }
    total
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() < 2 {
        eprintln!("usage: batch_bench FILE SPEC.json [BATCH] [REPS]");
        return ExitCode::from(2);
    }
    let file = std::fs::read(&args[0]).expect("read the record file");
    let spec_text = std::fs::read(&args[1]).expect("read the spec");
    let spec = Spec::from_json(&spec_text).expect("a valid spec");
    let batch_size: usize = args.get(2).map_or(256, |s| s.parse().expect("BATCH"));
    let reps: usize = args.get(3).map_or(7, |s| s.parse().expect("REPS"));
    let recs: Vec<&[u8]> = records(&file, Framing::TfRecord, Default::default())
        .map(|r| r.expect("a readable record").data)
        .collect();
    let n = recs.len();
    let mut out = Vec::new();
    for threads in [1usize, 2] {
        let decoder = Decoder::new(threads);
        let mut batch = Batch::new();
        let mut times = Vec::new();
        let mut copied = 0usize;
        for _ in 0..reps {
            let t = Instant::now();
            copied = 0;
            for chunk in recs.chunks(batch_size) {
                decoder.decode(chunk, &spec, &mut batch).expect("decode");
                copied += batch
                    .columns()
                    .iter()
                    .filter(|c| c.dtype() == DType::Bytes)
                    .map(|c| c.raw_values().len())
                    .sum::<usize>();
            }
            times.push(t.elapsed().as_nanos() as f64 / n as f64);
        }
        let batches = n.div_ceil(batch_size);
        out.push(format!(
            "{{\"measure\": \"decode_{threads}\", \"ns_per_record\": {:.1}, \"records\": {n}, \"batch\": {batch_size}, \"copied_bytes_per_batch\": {}}}",
            median(times),
            copied / batches.max(1)
        ));
    }
    let supported = spec.payload() == recordwire::view::PayloadKind::Example
        && spec
            .features()
            .iter()
            .all(|f| matches!(f.form, Form::FixedLen { .. } | Form::VarLen));
    if supported {
        let k = spec.features().len();
        let mut h = Hand {
            ints: vec![Vec::new(); k],
            floats: vec![Vec::new(); k],
            bytes: vec![Vec::new(); k],
            offsets: vec![Vec::new(); k],
            splits: vec![Vec::new(); k],
        };
        let mut times = Vec::new();
        for _ in 0..reps {
            let t = Instant::now();
            let mut total = 0;
            for chunk in recs.chunks(batch_size) {
                total += hand_loop(chunk, &spec, &mut h);
            }
            assert_eq!(total, n);
            times.push(t.elapsed().as_nanos() as f64 / n as f64);
        }
        out.push(format!(
            "{{\"measure\": \"views\", \"ns_per_record\": {:.1}, \"records\": {n}, \"batch\": {batch_size}}}",
            median(times)
        ));
    }
    for line in out {
        println!("{line}");
    }
    ExitCode::SUCCESS
}
