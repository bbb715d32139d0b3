//! What an epoch of the loader fetches from a remote object (issue 37,
//! point 3), counted by a proxy in front of an HTTP server that honours
//! `Range`: a full shuffle fetches at most 1.1 times the bytes of the
//! records it reads (each batch's records coalesced only where little
//! between them goes unasked for), and a page order over the object's spans
//! (what the Python loader picks for remote data) at most 1.1 times the
//! object, each span once. Before, each batch of a shuffle joined its
//! records across 1 MiB gaps, and the batches' requests overlapped: an
//! epoch fetched the object many times over.

use std::sync::Arc;

use recordwire::batch::{DType, FeatureSpec, Spec};
use recordwire::dataset::Dataset;
use recordwire::encode::{Example, Feature, Features, RecordWriter, WriterOptions};
use recordwire::frame::Framing;
use recordwire::io::remote::StorageOptions;
use recordwire::io::OpenOptions;
use recordwire::loader::{Loader, LoaderOptions};
use recordwire::order::{Mode, OrderSpec};

use crate::support::servers::{Origin, Proxy};

const RECORDS: u64 = 3000;
const SPAN: u64 = 256 << 10;

/// An object of 3,000 records of 300 to 2,300 bytes (about 4 MB).
fn object() -> Vec<u8> {
    let mut w = RecordWriter::new(Vec::new(), WriterOptions::new(Framing::TfRecord));
    for i in 0..RECORDS {
        let blob = vec![(i % 251) as u8; 300 + ((i * 7919) % 2000) as usize];
        let features: Features = [
            ("label", Feature::Int64(vec![i as i64])),
            ("blob", Feature::Bytes(vec![blob])),
        ]
        .into_iter()
        .collect();
        w.write_record(&Example::with_features(features).to_bytes().unwrap())
            .unwrap();
    }
    w.finish().unwrap()
}

/// One epoch of `mode` in batches of `batch`: the labels seen, and the
/// bytes and requests the proxy counted for it (opening not counted).
fn epoch(proxy: &Proxy, url: &str, mode: Mode, batch: usize) -> (Vec<i64>, u64, u64) {
    let options = OpenOptions::default().with_storage(StorageOptions::new([
        ("allow_http", "true".to_string()),
        ("retry_timeout", "600s".to_string()),
        // A first byte later than the default 5 s (the proxy answers once
        // it has the whole answer, and the machine may be loaded) would end
        // the try and fetch the range again: bytes this count is not about.
        ("read_timeout", "600s".to_string()),
        ("cache_dir", "none".to_string()),
        ("span_size", SPAN.to_string()),
    ]));
    let dataset = Arc::new(Dataset::open([url], &options).expect("open"));
    let spec = Spec::example(vec![FeatureSpec::fixed_len("label", DType::Int64, &[])]).unwrap();
    let order = OrderSpec {
        mode,
        seed: 7,
        ..OrderSpec::default()
    };
    let mut loader = Loader::new(dataset, spec, LoaderOptions::new(batch).order(order)).unwrap();
    proxy.reset();
    let mut labels = Vec::new();
    for b in &mut loader {
        let b = b.expect("a batch");
        labels.extend_from_slice(b.column("label").unwrap().values::<i64>().unwrap());
    }
    (labels, proxy.bytes(), proxy.requests())
}

#[test]
fn an_epoch_over_a_remote_object_fetches_its_bytes_about_once() {
    let bytes = object();
    let size = bytes.len() as u64;
    let origin = Origin::start();
    origin.put("epoch/data.tfrecord", bytes);
    let proxy = Proxy::start(origin.addr());
    let url = format!("{}/epoch/data.tfrecord", proxy.base());
    // The first 64 KiB come with opening; every other record is fetched.
    let fetched_records = size - (64 << 10);
    let spans = size.div_ceil(SPAN);
    let cases = [
        ("shuffle", Mode::Shuffle, 64, fetched_records),
        ("shuffle", Mode::Shuffle, 256, fetched_records),
        (
            "quasi-random over spans",
            Mode::QuasiRandom {
                page_size: SPAN,
                window: 4,
            },
            64,
            size,
        ),
        (
            "page-aware over spans",
            Mode::PageAware { page_size: SPAN },
            256,
            size,
        ),
    ];
    for (name, mode, batch, data) in cases {
        let (mut labels, got, requests) = epoch(&proxy, &url, mode, batch);
        labels.sort_unstable();
        assert_eq!(labels, (0..RECORDS as i64).collect::<Vec<_>>(), "{name}");
        let ratio = got as f64 / data as f64;
        eprintln!("{name}, batches of {batch}: {got} bytes in {requests} requests, {ratio:.3}x");
        assert!(
            ratio <= 1.1,
            "{name}, batches of {batch}: {got} bytes fetched for {data} ({ratio:.2}x): {:?}",
            &proxy.log()[..proxy.log().len().min(20)]
        );
        if matches!(mode, Mode::QuasiRandom { .. } | Mode::PageAware { .. }) {
            // Each span once: one request each.
            assert!(
                requests <= spans,
                "{name}: {requests} requests for {spans} spans"
            );
        }
    }
}
