//! The library over remote objects: every record of every test file equals
//! the local file's, through `Shard`, `Dataset`, `get_many` and `Source`.

use std::path::Path;

use recordwire::dataset::{Dataset, IndexOrigin, Shard};
use recordwire::io::remote::StorageOptions;
use recordwire::io::{open_source, OpenOptions};

use crate::support::servers::{Moto, Origin, Proxy};

fn testdata(name: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("testdata/ref")
        .join(name)
}

fn options(endpoint: &str, cache: &Path) -> OpenOptions {
    let mut pairs = Moto::options(endpoint);
    pairs.push(("cache_dir".into(), cache.display().to_string()));
    OpenOptions::default().with_storage(StorageOptions::new(pairs))
}

/// Every record of `shard` as bytes.
fn all(shard: &Shard) -> Vec<Vec<u8>> {
    (0..shard.len())
        .map(|i| shard.get(i).expect("get").expect("in range").data.to_vec())
        .collect()
}

#[test]
fn s3_shards_read_as_the_local_files() {
    let moto = Moto::get();
    moto.bucket("library-same");
    let cache = tempfile::tempdir().unwrap();
    let names = [
        "small.tfrecord",
        "examples.tfrecord",
        "examples.tfrecord.gz",
        "examples.tfrecord.zlib",
        "sequence_examples.tfrecord",
        "ofrecord.part-0",
        "empty.tfrecord",
    ];
    for name in names {
        moto.put(
            "library-same",
            name,
            &std::fs::read(testdata(name)).unwrap(),
        );
    }
    let opts = options(&moto.base(), cache.path());
    for name in names {
        let url = format!("s3://library-same/{name}");
        let local = Shard::open(testdata(name), &OpenOptions::default()).expect("local");
        let remote = Shard::open(&url, &opts).unwrap_or_else(|e| panic!("{url}: {e}"));
        assert_eq!(remote.len(), local.len(), "{url}");
        assert_eq!(remote.framing(), local.framing(), "{url}");
        assert_eq!(remote.compression(), local.compression(), "{url}");
        assert_eq!(all(&remote), all(&local), "{url}");
        assert_eq!(remote.name(), url);
        // A stream of the object gives the same records too.
        let mut source = open_source(&url, &opts).expect("stream");
        let mut streamed = Vec::new();
        while let Some(r) = source.next_record() {
            streamed.push(r.expect("record").data.to_vec());
        }
        assert_eq!(streamed, all(&local), "{url} streamed");
    }
}

#[test]
fn an_index_built_once_is_cached_and_a_second_open_fetches_one_range() {
    let moto = Moto::get();
    moto.bucket("library-cache");
    moto.put(
        "library-cache",
        "examples.tfrecord",
        &std::fs::read(testdata("examples.tfrecord")).unwrap(),
    );
    let proxy = Proxy::start(moto.addr);
    let cache = tempfile::tempdir().unwrap();
    let opts = options(&proxy.base(), cache.path());
    let url = "s3://library-cache/examples.tfrecord";
    let first = Shard::open(url, &opts).expect("open");
    assert!(
        matches!(first.origin(), IndexOrigin::Built { rejected: None }),
        "{:?}",
        first.origin()
    );
    proxy.reset();
    let second = Shard::open(url, &opts).expect("open again");
    assert_eq!(second.origin(), &IndexOrigin::Cached);
    assert_eq!(proxy.requests(), 1, "{:?}", proxy.log());
    proxy.reset();
    let id = second.len() / 2;
    let record = second.get(id).expect("get").expect("in range");
    let local = Shard::open(testdata("examples.tfrecord"), &OpenOptions::default()).unwrap();
    assert_eq!(record.data, local.get(id).unwrap().unwrap().data);
    assert!(proxy.requests() <= 1, "{:?}", proxy.log());
}

#[test]
fn http_objects_read_with_ranges() {
    let origin = Origin::start();
    let bytes = std::fs::read(testdata("examples.tfrecord")).unwrap();
    origin.put("data/examples.tfrecord", bytes);
    let proxy = Proxy::start(origin.addr());
    let url = format!("{}/data/examples.tfrecord", proxy.base());
    let cache = tempfile::tempdir().unwrap();
    let opts = OpenOptions::default().with_storage(StorageOptions::new([
        ("allow_http", "true".to_string()),
        ("retry_timeout", "600s".to_string()),
        ("read_timeout", "600s".to_string()),
        ("cache_dir", cache.path().display().to_string()),
    ]));
    let remote = Dataset::open([&url], &opts).expect("open");
    let local = Dataset::open([testdata("examples.tfrecord")], &OpenOptions::default()).unwrap();
    assert_eq!(remote.len(), local.len());
    for i in 0..local.len() {
        assert_eq!(
            remote.get(i).unwrap().unwrap().data,
            local.get(i).unwrap().unwrap().data
        );
    }
    assert!(
        proxy.log().iter().all(|l| l.starts_with("GET")),
        "{:?}",
        proxy.log()
    );
}
