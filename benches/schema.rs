//! Any message by a schema given at run time (`recordwire::schema`), beside
//! its peers, in one run, on the real Waymo Open Motion `Scenario` record
//! (953 KB, proto2; `../shared/realworld/files`, or `$RECORDWIRE_REALWORLD`)
//! with Waymo's own `.proto` (`testdata/schema/waymo`).
//!
//! Group `waymo`:
//! - `parse`: the validating walk (`MessageRef::parse`: every tag, length,
//!   nested message, packed run and UTF-8 string checked);
//! - `walk`: `parse`, then every value of every field visited through the
//!   views field by field (`FieldRef::values`, which applies the parser's
//!   rules: each field is found by a walk of its message);
//! - `walk_wire`: `parse`, then every value visited in one pass over each
//!   message (`MessageRef::wire_values`): the full decode to values, no
//!   copy;
//! - `prost_reflect`: `DynamicMessage::decode` (prost-reflect's decode to
//!   owned dynamic values);
//! - `prost`: the code prost-build generates for the same `.proto`
//!   (`build.rs`), `Scenario::decode` to owned structs;
//! - `json`: the whole record as protobuf's JSON (`Schema::write_json`);
//! - `prost_reflect_json`: `DynamicMessage::decode` then serde_json through
//!   prost-reflect's `Serialize` (proto field names).
//!
//! - `column_center_x`: one nested column (`tracks.states.center_x`) to
//!   Arrow (`schema::Columns`: only the fields on the path are read).
//!
//! Group `events`: the 361 records of a real TensorBoard event file (Lingvo's
//! `events.out.tfevents.test`, small Events) as JSON, by the built-in
//! `tensorflow.Event` schema (`json`) and by prost-reflect's decode and
//! serde (`prost_reflect_json`).
//!
//! The Python peers (upb's `FromString`, `MessageToJson`, parse and project
//! one column) are timed by `benches/schema_upb.py` on the same record.
//!
//! Run: `cargo bench --manifest-path benches/Cargo.toml --bench schema`;
//! each benchmark asserts what it found (a count or a length), so one that
//! stops working fails instead of getting faster.

// criterion's macros generate undocumented functions.
#![allow(missing_docs)]

use std::hint::black_box;
use std::path::PathBuf;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use prost::Message as _;
use recordwire::io::{OpenOptions, RecordFile};
use recordwire::schema::{JsonOptions, MessageRef, Schema, ValueRef};

/// prost-build's modules, one per package, nested as the packages are.
#[allow(clippy::all, missing_docs, dead_code)]
mod open_dataset {
    include!(concat!(env!("OUT_DIR"), "/waymo.open_dataset.rs"));
    pub mod keypoints {
        include!(concat!(env!("OUT_DIR"), "/waymo.open_dataset.keypoints.rs"));
    }
}
use open_dataset as waymo;

const SCENARIO: &str = "waymo-research_waymo-open-dataset__src__waymo_open_dataset__utils__testdata__motion_data_one_scenario.tfrecord";

fn realworld() -> PathBuf {
    match std::env::var_os("RECORDWIRE_REALWORLD") {
        Some(dir) => PathBuf::from(dir),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/realworld/files"),
    }
}

fn waymo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../testdata/schema/waymo")
}

/// Every value under `m` in one pass (`wire_values`): how many there are.
fn walk_wire(m: &MessageRef<'_>) -> u64 {
    let mut n = 0u64;
    for v in m.wire_values() {
        n += match v.expect("a valid record").1 {
            ValueRef::Message(sub) => 1 + walk_wire(&sub),
            other => {
                black_box(other);
                1
            }
        };
    }
    n
}

/// Every value under `m`, field by field: how many there are.
fn walk(m: &MessageRef<'_>) -> u64 {
    let mut n = 0u64;
    for f in m.fields() {
        for v in f.values() {
            n += match v.expect("a valid record") {
                ValueRef::Message(sub) => 1 + walk(&sub),
                other => {
                    black_box(other);
                    1
                }
            };
        }
    }
    n
}

fn waymo(c: &mut Criterion) {
    let path = realworld().join(SCENARIO);
    let file = RecordFile::open(&path, &OpenOptions::default()).unwrap_or_else(|e| {
        panic!(
            "the schema bench reads the real Waymo file {} (set RECORDWIRE_REALWORLD): {e}",
            path.display()
        )
    });
    let record = file
        .records()
        .next()
        .expect("one record")
        .expect("readable");
    let bytes = record.data.to_vec();
    let root = waymo_root();
    let proto = root.join("waymo_open_dataset/protos/scenario.proto");
    let schema = Schema::from_proto(&[&proto], &[&root], "waymo.open_dataset.Scenario")
        .expect("Waymo's protos compile");
    let desc = schema
        .pool()
        .get_message_by_name("waymo.open_dataset.Scenario")
        .expect("Scenario");
    let values = walk(&MessageRef::parse(&schema, &bytes, 0).expect("valid"));
    let wire_values = walk_wire(&MessageRef::parse(&schema, &bytes, 0).expect("valid"));
    let json_len = {
        let mut out = Vec::new();
        schema
            .write_json(&mut out, &bytes, 0, &JsonOptions::default())
            .expect("printable");
        out.len()
    };
    let tracks = waymo::Scenario::decode(bytes.as_slice())
        .expect("prost decodes it")
        .tracks
        .len();

    let mut g = c.benchmark_group("waymo");
    g.throughput(Throughput::Bytes(bytes.len() as u64));
    g.bench_function("parse", |b| {
        b.iter(|| {
            let m = MessageRef::parse(&schema, black_box(&bytes), 0).expect("valid");
            black_box(m);
        })
    });
    g.bench_function("walk", |b| {
        b.iter(|| {
            let m = MessageRef::parse(&schema, black_box(&bytes), 0).expect("valid");
            assert_eq!(walk(&m), values);
        })
    });
    g.bench_function("walk_wire", |b| {
        b.iter(|| {
            let m = MessageRef::parse(&schema, black_box(&bytes), 0).expect("valid");
            assert_eq!(walk_wire(&m), wire_values);
        })
    });
    g.bench_function("prost_reflect", |b| {
        b.iter(|| {
            let m =
                prost_reflect::DynamicMessage::decode(desc.clone(), black_box(bytes.as_slice()))
                    .expect("valid");
            black_box(m);
        })
    });
    g.bench_function("prost", |b| {
        b.iter(|| {
            let m = waymo::Scenario::decode(black_box(bytes.as_slice())).expect("valid");
            assert_eq!(m.tracks.len(), tracks);
        })
    });
    let mut out = Vec::with_capacity(json_len * 2);
    g.bench_function("json", |b| {
        b.iter(|| {
            out.clear();
            schema
                .write_json(&mut out, black_box(&bytes), 0, &JsonOptions::default())
                .expect("printable");
            assert_eq!(out.len(), json_len);
        })
    });
    let options = prost_reflect::SerializeOptions::new().use_proto_field_name(true);
    g.bench_function("prost_reflect_json", |b| {
        b.iter(|| {
            out.clear();
            let m =
                prost_reflect::DynamicMessage::decode(desc.clone(), black_box(bytes.as_slice()))
                    .expect("valid");
            let mut s = serde_json::Serializer::new(&mut out);
            m.serialize_with_options(&mut s, &options)
                .expect("serializable");
            assert!(out.len() > json_len / 2);
        })
    });
    let columns = recordwire::schema::Columns::new(
        &schema,
        &["tracks.states.center_x"],
        &recordwire::schema::ColumnOptions::default(),
    )
    .expect("the path");
    let rows = columns
        .decode([(bytes.as_slice(), 0u64)])
        .expect("decodable")
        .num_rows();
    g.bench_function("column_center_x", |b| {
        b.iter(|| {
            let batch = columns
                .decode([(black_box(bytes.as_slice()), 0u64)])
                .expect("decodable");
            assert_eq!(batch.num_rows(), rows);
        })
    });
    g.finish();
}

const EVENTS: &str = "tensorflow_lingvo__lingvo__core__ops__testdata__events.out.tfevents.test";

fn events(c: &mut Criterion) {
    let path = realworld().join(EVENTS);
    let file = RecordFile::open(&path, &OpenOptions::default())
        .unwrap_or_else(|e| panic!("the schema bench reads {} : {e}", path.display()));
    let records: Vec<Vec<u8>> = file
        .records()
        .map(|r| r.expect("readable").data.to_vec())
        .collect();
    let total: usize = records.iter().map(Vec::len).sum();
    let schema = Schema::builtin("tensorflow.Event").expect("built in");
    let desc = schema
        .pool()
        .get_message_by_name("tensorflow.Event")
        .expect("Event");
    let mut g = c.benchmark_group("events");
    g.throughput(Throughput::Bytes(total as u64));
    let mut out = Vec::with_capacity(total * 4);
    g.bench_function("json", |b| {
        b.iter(|| {
            out.clear();
            for r in &records {
                schema
                    .write_json(&mut out, black_box(r), 0, &JsonOptions::default())
                    .expect("printable");
                out.push(b'\n');
            }
            assert!(out.len() > total);
        })
    });
    let options = prost_reflect::SerializeOptions::new().use_proto_field_name(true);
    g.bench_function("prost_reflect_json", |b| {
        b.iter(|| {
            out.clear();
            for r in &records {
                let m =
                    prost_reflect::DynamicMessage::decode(desc.clone(), black_box(r.as_slice()))
                        .expect("valid");
                let mut s = serde_json::Serializer::new(&mut out);
                m.serialize_with_options(&mut s, &options)
                    .expect("serializable");
                out.push(b'\n');
            }
            assert!(out.len() > total);
        })
    });
    g.finish();
}

criterion_group!(benches, waymo, events);
criterion_main!(benches);
