//! Requests counted at a proxy, faults injected there, and damaged, changed
//! or truncated objects: what reading over the network costs and that it
//! never gives other bytes than the local file.

use std::path::Path;

use recordwire::dataset::{Dataset, IndexOrigin, Scratch, Shard};
use recordwire::encode::{RecordWriter, WriterOptions};
use recordwire::frame::{ErrorPolicy, Framing, ReadOptions};
use recordwire::io::remote::StorageOptions;
use recordwire::io::OpenOptions;
use recordwire::order::{Mode, OrderSpec};

use crate::support::servers::{Faults, Moto, Origin, Proxy};

/// A TFRecord file of `n` records of 60 to 260 bytes (record `i` tells
/// its id), as bytes.
fn records_file(n: u64) -> Vec<u8> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("f.tfrecord");
    let mut w = RecordWriter::create(&path, WriterOptions::new(Framing::TfRecord)).unwrap();
    for i in 0..n {
        let mut record = format!("record {i} ").into_bytes();
        record.resize(60 + (i as usize * 37) % 200, b'x');
        w.write_record(&record).unwrap();
    }
    w.finish().unwrap();
    std::fs::read(&path).unwrap()
}

fn local_shard(bytes: &[u8]) -> (tempfile::TempDir, Shard) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("local.tfrecord");
    std::fs::write(&path, bytes).unwrap();
    let shard = Shard::open(&path, &OpenOptions::default()).unwrap();
    (dir, shard)
}

/// `bytes` served at `/NAME/data.tfrecord` by an origin behind a counting
/// proxy: the servers, the index cache's directory and the URL.
struct Served {
    origin: Origin,
    proxy: Proxy,
    cache: tempfile::TempDir,
    url: String,
}

fn serve(name: &str, bytes: &[u8]) -> Served {
    let origin = Origin::start();
    origin.put(&format!("{name}/data.tfrecord"), bytes.to_vec());
    let proxy = Proxy::start(origin.addr());
    let url = format!("{}/{name}/data.tfrecord", proxy.base());
    Served {
        origin,
        proxy,
        cache: tempfile::tempdir().unwrap(),
        url,
    }
}

/// Records `ids` of `remote` through `get_many`, as bytes, in `ids`' order.
fn many(remote: &Dataset, ids: &[u64]) -> Vec<Vec<u8>> {
    let mut got = vec![Vec::new(); ids.len()];
    remote
        .get_many(ids, &mut Scratch::new(), |k, r| {
            got[k] = r.unwrap().data.to_vec()
        })
        .unwrap();
    got
}

/// [`http_options`] with a span cache of `kept` spans of `span` bytes.
fn span_options(cache: &Path, span: u64, kept: u64) -> OpenOptions {
    let (size, limit) = (span.to_string(), (kept * span).to_string());
    http_options(cache, &[("span_size", &size), ("span_cache", &limit)])
}

fn http_options(cache: &Path, more: &[(&str, &str)]) -> OpenOptions {
    let mut pairs = vec![
        ("allow_http".to_string(), "true".to_string()),
        ("retry_timeout".to_string(), "600s".to_string()),
        // As the S3 tests' options (`servers::S3::options`): a read given up
        // under load and asked again would be counted twice.
        ("read_timeout".to_string(), "600s".to_string()),
        ("cache_dir".to_string(), cache.display().to_string()),
    ];
    pairs.extend(more.iter().map(|(k, v)| (k.to_string(), v.to_string())));
    OpenOptions::default().with_storage(StorageOptions::new(pairs))
}

#[test]
fn a_get_is_one_request_once_the_index_is_loaded() {
    let bytes = records_file(20_000);
    let (_d, local) = local_shard(&bytes);
    let Served {
        origin: _origin,
        proxy,
        cache,
        url,
    } = serve("a", &bytes);
    let shard = Shard::open(&url, &http_options(cache.path(), &[])).unwrap();
    proxy.reset();
    let ids: Vec<u64> = (0..50).map(|k| (k * 7919 + 13) % 20_000).collect();
    let mut counted = 0;
    for &id in &ids {
        let got = shard.get(id).unwrap().unwrap();
        assert_eq!(got.data, local.get(id).unwrap().unwrap().data);
        // Records in the first 64 KiB came with opening.
        if local.index().offset(id).unwrap() + 400 > 64 << 10 {
            counted += 1;
        }
    }
    assert_eq!(proxy.requests(), counted, "{:?}", proxy.log());
    assert!(counted > 40);
}

#[test]
fn get_many_coalesces_neighbours_into_few_requests() {
    let bytes = records_file(20_000);
    let (_d, local) = local_shard(&bytes);
    let Served {
        origin: _origin,
        proxy,
        cache,
        url,
    } = serve("b", &bytes);
    let remote = Dataset::open([&url], &http_options(cache.path(), &[])).unwrap();
    proxy.reset();
    // 2,000 ids in two runs far apart: two requests (gaps under 1 MiB).
    let ids: Vec<u64> = (1000..2000).chain(15_000..16_000).rev().collect();
    let got = many(&remote, &ids);
    for (k, &id) in ids.iter().enumerate() {
        assert_eq!(got[k], local.get(id).unwrap().unwrap().data.to_vec());
    }
    assert!(proxy.requests() <= 2, "{:?}", proxy.log());
}

#[test]
fn a_quasi_random_epoch_with_a_span_cache_fetches_each_span_once() {
    let bytes = records_file(40_000);
    let data_len = bytes.len() as u64;
    let (_d, local) = local_shard(&bytes);
    let Served {
        origin: _origin,
        proxy,
        cache,
        url,
    } = serve("c", &bytes);
    let span = 256u64 << 10;
    let options = span_options(cache.path(), span, 8);
    let remote = Dataset::open([&url], &options).unwrap();
    let spec = OrderSpec {
        mode: Mode::QuasiRandom {
            page_size: span,
            window: 4,
        },
        seed: 11,
        ..OrderSpec::default()
    };
    let order = remote.order(spec).unwrap();
    let ids: Vec<u64> = order.epoch(0).iter().collect();
    assert_eq!(ids.len() as u64, local.len());
    assert_ne!(ids, (0..local.len()).collect::<Vec<_>>());
    proxy.reset();
    let mut scratch = Scratch::new();
    for batch in ids.chunks(256) {
        let mut got = vec![Vec::new(); batch.len()];
        remote
            .get_many(batch, &mut scratch, |k, r| {
                got[k] = r.unwrap().data.to_vec()
            })
            .unwrap();
        for (k, &id) in batch.iter().enumerate() {
            assert_eq!(got[k], local.get(id).unwrap().unwrap().data.to_vec());
        }
    }
    let spans = data_len.div_ceil(span);
    // Each span once (the first, within the opening request's 64 KiB, may
    // still be fetched whole).
    assert!(
        proxy.requests() <= spans,
        "{} requests for {spans} spans: {:?}",
        proxy.requests(),
        proxy.log()
    );
    assert!(proxy.requests() >= spans - 1);
    assert!(
        proxy.bytes() as f64 <= 1.1 * data_len as f64,
        "{} bytes fetched for {data_len}",
        proxy.bytes()
    );
}

#[test]
fn opening_a_100_shard_glob_costs_about_one_request_per_shard() {
    let moto = Moto::get();
    moto.bucket("hundred");
    let bytes = records_file(300);
    for i in 0..100 {
        moto.put("hundred", &format!("train-{i:03}.tfrecord"), &bytes);
    }
    let proxy = Proxy::start(moto.addr);
    let cache = tempfile::tempdir().unwrap();
    let mut pairs = Moto::options(&proxy.base());
    pairs.push(("cache_dir".into(), cache.path().display().to_string()));
    let options = OpenOptions::default().with_storage(StorageOptions::new(pairs.clone()));
    let open = || {
        let files = recordwire::io::remote::glob("s3://hundred/train-*.tfrecord", &options.storage)
            .unwrap();
        assert_eq!(files.len(), 100);
        Dataset::open(&files, &options).unwrap()
    };
    let first = open();
    assert_eq!(first.len(), 300 * 100);
    // The first open: one listing, then per shard its first bytes (the whole
    // of these small shards) and a look for a sidecar.
    let cold = proxy.requests();
    assert!(cold <= 1 + 2 * 100, "{cold}: {:?}", proxy.log());
    proxy.reset();
    let second = open();
    assert_eq!(second.len(), first.len());
    let warm = proxy.requests();
    assert!(warm <= 1 + 100, "{warm}: {:?}", proxy.log());
    println!("opening 100 shards: {cold} requests cold, {warm} with the index cache");
}

#[test]
fn faults_are_retried_and_the_records_are_exactly_the_local_ones() {
    let bytes = records_file(20_000);
    let (_d, local) = local_shard(&bytes);
    let origin = Origin::start();
    origin.put("d/data.tfrecord", bytes.clone());
    for faults in [
        Faults {
            fail_every: 3,
            status: 503,
            ..Faults::default()
        },
        Faults {
            fail_every: 4,
            status: 429,
            ..Faults::default()
        },
        Faults {
            drop_every: 3,
            ..Faults::default()
        },
        Faults {
            latency: std::time::Duration::from_millis(20),
            ..Faults::default()
        },
    ] {
        let proxy = Proxy::with_faults(origin.addr(), faults.clone());
        let cache = tempfile::tempdir().unwrap();
        let url = format!("{}/d/data.tfrecord", proxy.base());
        let options = http_options(cache.path(), &[("request_size", "262144")]);
        let remote = Dataset::open([&url], &options).unwrap_or_else(|e| panic!("{faults:?}: {e}"));
        assert_eq!(remote.len(), local.len());
        let ids: Vec<u64> = (0..40).map(|k| (k * 4099 + 7) % 20_000).collect();
        for &id in &ids {
            let got = remote
                .get(id)
                .unwrap_or_else(|e| panic!("{faults:?}: {e}"))
                .unwrap();
            assert_eq!(got.data, local.get(id).unwrap().unwrap().data, "{faults:?}");
        }
        let got = many(&remote, &ids);
        for (k, &id) in ids.iter().enumerate() {
            assert_eq!(got[k], local.get(id).unwrap().unwrap().data.to_vec());
        }
        // A stream (cat, verify) gets every record too.
        let mut source = recordwire::io::open_source(&url, &options).unwrap();
        let mut n = 0;
        while let Some(r) = source.next_record() {
            assert_eq!(r.unwrap().data, &local.get(n).unwrap().unwrap().data[..]);
            n += 1;
        }
        assert_eq!(n, local.len());
        assert!(proxy.failed() + proxy.dropped() > 0 || faults.latency > std::time::Duration::ZERO);
    }
}

#[test]
fn an_object_replaced_mid_epoch_is_an_error_not_other_bytes() {
    let bytes = records_file(20_000);
    let origin = Origin::start();
    origin.put("e/data.tfrecord", bytes.clone());
    let cache = tempfile::tempdir().unwrap();
    let url = format!("{}/e/data.tfrecord", origin.base());
    let shard = Shard::open(&url, &http_options(cache.path(), &[])).unwrap();
    assert!(shard.get(19_999).is_ok());
    // The same size, other bytes: a new ETag.
    let mut other = bytes.clone();
    let at = other.len() - 100;
    other[at] ^= 1;
    origin.put("e/data.tfrecord", other);
    let err = shard.get(19_999).unwrap_err();
    assert_eq!(err.kind().name(), "io_error");
    assert_eq!(err.file(), Some(url.as_str()));
    assert!(err.to_string().contains("changed"), "{err}");
}

#[test]
fn damaged_and_truncated_objects_give_the_local_files_errors() {
    let bytes = records_file(2_000);
    let (_d, local) = local_shard(&bytes);
    let origin = Origin::start();
    let cache = tempfile::tempdir().unwrap();
    let damaged_at = local.index().offset(1_500).unwrap() + 20;
    let mut damaged = bytes.clone();
    damaged[damaged_at as usize] ^= 0x40;
    let truncated = bytes[..bytes.len() - 50].to_vec();
    let dir = tempfile::tempdir().unwrap();
    for (name, content) in [
        ("damaged.tfrecord", damaged),
        ("truncated.tfrecord", truncated),
    ] {
        origin.put(&format!("f/{name}"), content.clone());
        let path = dir.path().join(name);
        std::fs::write(&path, &content).unwrap();
        let url = format!("{}/f/{name}", origin.base());
        let options = http_options(cache.path(), &[]);
        let remote = Shard::open(&url, &options);
        let local = Shard::open(&path, &OpenOptions::default());
        match (&remote, &local) {
            (Ok(r), Ok(l)) => {
                // Damage inside a record: found when the record is read.
                let (re, le) = (r.get(1_500).unwrap_err(), l.get(1_500).unwrap_err());
                assert_eq!(re.kind().name(), le.kind().name(), "{name}");
                assert_eq!(
                    (re.record(), re.offset()),
                    (le.record(), le.offset()),
                    "{name}"
                );
                assert_eq!(re.file(), Some(url.as_str()));
            }
            (Err(re), Err(le)) => {
                assert_eq!(re.kind().name(), le.kind().name(), "{name}");
                assert_eq!(
                    (re.record(), re.offset()),
                    (le.record(), le.offset()),
                    "{name}"
                );
            }
            _ => panic!("{name}: remote {remote:?}, local {local:?}"),
        }
        // Skipping: the other records read, as from the local file.
        let skip = ReadOptions::default().with_policy(ErrorPolicy::skip());
        let r = Shard::open(&url, &options.clone().with_read(skip)).unwrap();
        let l = Shard::open(&path, &OpenOptions::default().with_read(skip)).unwrap();
        assert_eq!(r.len(), l.len(), "{name}");
        assert!(r.len() >= 1_998);
        for id in [0, 1_000, r.len() - 1] {
            assert_eq!(
                r.get(id).unwrap().unwrap().data,
                l.get(id).unwrap().unwrap().data
            );
        }
    }
}

#[test]
fn with_coalescing_off_a_shuffled_batch_fetches_exactly_its_records() {
    let bytes = records_file(20_000);
    let (_d, local) = local_shard(&bytes);
    let Served {
        origin: _origin,
        proxy,
        cache,
        url,
    } = serve("g", &bytes);
    let remote = Dataset::open(
        [&url],
        &http_options(cache.path(), &[("coalesce_gap", "0")]),
    )
    .unwrap();
    let order = remote
        .order(OrderSpec {
            mode: Mode::Shuffle,
            seed: 5,
            ..OrderSpec::default()
        })
        .unwrap();
    let ids: Vec<u64> = order.epoch(0).iter().take(256).collect();
    proxy.reset();
    let got = many(&remote, &ids);
    let mut asked = 0;
    let mut requests = 0;
    for (k, &id) in ids.iter().enumerate() {
        assert_eq!(got[k], local.get(id).unwrap().unwrap().data.to_vec());
        let frame = local.index().frame_range(id).unwrap();
        // Records within the first 64 KiB came with opening.
        if frame.end > 64 << 10 {
            asked += frame.end - frame.start;
            requests += 1;
        }
    }
    // Adjacent records still share a request (a gap of 0).
    assert!(proxy.requests() <= requests && proxy.requests() >= requests - 5);
    assert_eq!(proxy.bytes(), asked);
}

#[test]
fn prefetched_spans_are_read_without_waiting_for_a_request() {
    let bytes = records_file(20_000);
    let (_d, local) = local_shard(&bytes);
    let Served {
        origin: _origin,
        proxy,
        cache,
        url,
    } = serve("h", &bytes);
    let span = 128u64 << 10;
    let options = span_options(cache.path(), span, 64);
    let remote = Dataset::open([&url], &options).unwrap();
    let ids: Vec<u64> = (5_000..5_500).collect();
    proxy.reset();
    remote.prefetch(&ids);
    // The spans arrive in the background; prefetching again asks for none.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    let spans = {
        let first = local.index().frame_range(5_000).unwrap().start / span;
        let last = local.index().frame_range(5_499).unwrap().start / span;
        last - first + 1
    };
    while proxy.requests() < spans && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert_eq!(proxy.requests(), spans, "{:?}", proxy.log());
    std::thread::sleep(std::time::Duration::from_millis(200));
    remote.prefetch(&ids);
    let got = many(&remote, &ids);
    for (k, &id) in ids.iter().enumerate() {
        assert_eq!(got[k], local.get(id).unwrap().unwrap().data.to_vec());
    }
    assert_eq!(proxy.requests(), spans, "{:?}", proxy.log());
}

/// `records_file(n)`'s records of incompressible-ish bytes, GZIP-compressed
/// by the writer.
fn gzip_records_file(n: u64) -> Vec<u8> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("f.tfrecord.gz");
    let options =
        WriterOptions::new(Framing::TfRecord).with_compression(recordwire::io::Compression::Gzip);
    let mut w = RecordWriter::create(&path, options).unwrap();
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    for i in 0..n {
        let mut record = format!("record {i} ").into_bytes();
        while record.len() < 400 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            record.push(b'a' + (x % 16) as u8);
        }
        w.write_record(&record).unwrap();
    }
    w.finish().unwrap();
    std::fs::read(&path).unwrap()
}

#[test]
fn a_compressed_object_with_a_cached_index_is_read_by_checkpoint_span() {
    let bytes = gzip_records_file(40_000);
    let size = bytes.len() as u64;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("local.tfrecord.gz");
    std::fs::write(&path, &bytes).unwrap();
    let local = Shard::open(&path, &OpenOptions::default()).unwrap();
    let Served {
        origin,
        proxy,
        cache,
        url,
    } = serve("gz", &bytes);
    let url = format!("{url}.gz");
    origin.put("gz/data.tfrecord.gz", bytes.clone());
    let options = http_options(cache.path(), &[]);
    // The first open builds the checkpoint index (one streaming pass, the
    // only whole read) and keeps it in the cache.
    let built = Shard::open(&url, &options).unwrap();
    assert!(matches!(built.origin(), IndexOrigin::Built { .. }));
    let points = built.gz_index().unwrap().checkpoints().len() as u64;
    assert!(points >= 4, "{points} checkpoints");
    proxy.reset();
    let shard = Shard::open(&url, &options).unwrap();
    assert!(
        matches!(shard.origin(), IndexOrigin::Cached),
        "{:?}",
        shard.origin()
    );
    // Opening: the first 64 KiB, nothing more (the cached index is kept
    // for this URL, size and ETag).
    assert_eq!(proxy.requests(), 1, "{:?}", proxy.log());
    proxy.reset();
    // With the sidecar beside the object instead: its fingerprint's samples
    // (the last 4 KiB and 16 bytes at each checkpoint) are fetched
    // concurrently, not joined into requests of the bytes between them.
    let mut sidecar = Vec::new();
    shard
        .gz_index()
        .unwrap()
        .write_native(&mut sidecar)
        .unwrap();
    origin.put("gz/data.tfrecord.gz.rwindex", sidecar);
    let uncached = tempfile::tempdir().unwrap();
    let beside = Shard::open(&url, &http_options(uncached.path(), &[])).unwrap();
    assert!(
        matches!(beside.origin(), IndexOrigin::Sidecar),
        "{:?}",
        beside.origin()
    );
    assert!(proxy.requests() <= 3 + points.min(65), "{:?}", proxy.log());
    let opened = proxy.bytes();
    let wanted = (64 << 10) + 4096 + 16 * points + beside.gz_index().unwrap().native_len() as u64;
    assert!(
        opened <= wanted,
        "{opened} bytes to open, {wanted} wanted: {:?}",
        proxy.log()
    );
    proxy.reset();
    let widest = size.div_ceil(points - 1) * 3;
    let ids: Vec<u64> = (0..40).map(|k| (k * 7919 + 13) % 40_000).collect();
    for &id in &ids {
        let before = proxy.bytes();
        let got = shard.get(id).unwrap().unwrap();
        assert_eq!(
            got.data,
            local.get(id).unwrap().unwrap().data,
            "record {id}"
        );
        let fetched = proxy.bytes() - before;
        assert!(
            fetched <= widest,
            "record {id}: {fetched} bytes fetched, a span is about {}: {:?}",
            size / points,
            proxy.log()
        );
    }
    assert!(proxy.requests() <= ids.len() as u64, "{:?}", proxy.log());
    assert!(
        proxy.bytes() < size,
        "{} bytes fetched for 40 records of a {size}-byte object",
        proxy.bytes()
    );
}

#[test]
fn building_an_index_streams_the_object_once_and_reports_its_progress() {
    use recordwire::io::remote::{observe_fetches, Fetch};
    use std::sync::{Arc, Mutex};
    let bytes = records_file(20_000);
    let size = bytes.len() as u64;
    let Served {
        origin: _origin,
        proxy,
        cache,
        url,
    } = serve("progress", &bytes);
    // What is reported for this object (other tests' objects may report too).
    let seen: Arc<Mutex<(u64, u64, Vec<u64>)>> = Arc::default();
    let (record, mine) = (Arc::clone(&seen), url.clone());
    observe_fetches(Some(Arc::new(move |e: Fetch<'_>| {
        let mut s = record.lock().unwrap();
        match e {
            Fetch::Started { url, len } if url == mine => s.0 += len,
            Fetch::Read { url, n } if url == mine => s.1 += n,
            Fetch::Ended { url, unread } if url == mine => s.2.push(unread),
            _ => {}
        }
    })));
    let request = 512u64 << 10;
    let options = http_options(cache.path(), &[("request_size", &request.to_string())]);
    let shard = Shard::open(&url, &options).unwrap();
    assert!(matches!(shard.origin(), IndexOrigin::Built { .. }));
    assert_eq!(*seen.lock().unwrap(), (size, size, vec![0]));
    // Large requests read ahead: about one per `request_size` (the first
    // 64 KiB came with opening, the sidecar was looked for).
    let requests = proxy.requests();
    assert!(
        requests <= size.div_ceil(request) + 3,
        "{requests}: {:?}",
        proxy.log()
    );
    // A second open uses the cached index: nothing streamed, nothing reported.
    *seen.lock().unwrap() = Default::default();
    let again = Shard::open(&url, &options).unwrap();
    assert_eq!(again.origin(), &IndexOrigin::Cached);
    assert_eq!(*seen.lock().unwrap(), (0, 0, vec![]));
    observe_fetches(None);
}

/// Bytes of span files under `cache`'s `spans/`.
fn spans_on_disk(cache: &Path) -> u64 {
    std::fs::read_dir(cache.join("spans"))
        .map(|d| d.map(|e| e.unwrap().metadata().unwrap().len()).sum())
        .unwrap_or(0)
}

/// Reads every record of `remote` in `ids`' order, in batches, and checks
/// each against `local`.
fn read_epoch(remote: &Dataset, local: &Shard, ids: &[u64]) {
    for batch in ids.chunks(256) {
        for (k, got) in many(remote, batch).into_iter().enumerate() {
            assert_eq!(got, local.get(batch[k]).unwrap().unwrap().data.to_vec());
        }
    }
}

#[test]
fn spans_kept_on_disk_serve_the_next_run_and_stay_within_their_limit() {
    let bytes = records_file(40_000);
    let data_len = bytes.len() as u64;
    let (_d, local) = local_shard(&bytes);
    let Served {
        origin: _origin,
        proxy,
        cache,
        url,
    } = serve("disk", &bytes);
    let span = 256u64 << 10;
    let spans = data_len.div_ceil(span);
    let on_disk = |limit: u64, dir: &Path| {
        let (size, memory, disk) = (span.to_string(), (2 * span).to_string(), limit.to_string());
        http_options(
            dir,
            &[
                ("span_size", &size),
                ("span_cache", &memory),
                ("span_disk", &disk),
            ],
        )
    };
    let options = on_disk(2 * data_len, cache.path());
    let remote = Dataset::open([&url], &options).unwrap();
    let spec = OrderSpec {
        mode: Mode::QuasiRandom {
            page_size: span,
            window: 2,
        },
        seed: 5,
        ..OrderSpec::default()
    };
    let ids: Vec<u64> = remote.order(spec).unwrap().epoch(0).iter().collect();
    proxy.reset();
    read_epoch(&remote, &local, &ids);
    assert!(proxy.requests() <= spans, "{:?}", proxy.log());
    let kept = spans_on_disk(cache.path());
    assert!(
        kept >= data_len - (64 << 10) && kept <= 2 * data_len,
        "{kept}"
    );
    // The next run (a new process, the same machine): the index from the
    // index cache, every span from disk; only opening makes a request.
    drop(remote);
    proxy.reset();
    let next = Dataset::open([&url], &options).unwrap();
    read_epoch(&next, &local, &ids);
    assert_eq!(proxy.requests(), 1, "{:?}", proxy.log());
    // A limit of 4 spans: the directory stays within it, and reads go on.
    let small = tempfile::tempdir().unwrap();
    let limit = 4 * (span + (span / 16).min(64 << 10));
    let bounded = Dataset::open([&url], &on_disk(limit, small.path())).unwrap();
    read_epoch(&bounded, &local, &ids);
    let held = spans_on_disk(small.path());
    assert!(
        held > 0 && held <= limit,
        "{held} bytes kept, limit {limit}"
    );
    // A limit smaller than one span: nothing kept, everything still read.
    let tiny = tempfile::tempdir().unwrap();
    let none = Dataset::open([&url], &on_disk(span / 2, tiny.path())).unwrap();
    read_epoch(&none, &local, &ids);
    assert_eq!(spans_on_disk(tiny.path()), 0);
}
