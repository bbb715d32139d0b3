//! Records and batches that own their bytes: a record's `Bytes` and an owned
//! batch's borrowing columns outlive the dataset, cross threads, share the
//! file's map (no copy) and, warm, allocate nothing.

use recordwire::batch::{Batch, DType, Decoder, DefaultValue, FeatureSpec, Spec};
use recordwire::dataset::{Dataset, Scratch};
use recordwire::encode::{Example, Feature, Features, RecordWriter, WriterOptions};
use recordwire::frame::{Framing, OwnedRecord};
use recordwire::io::{Compression, OpenOptions};

use crate::counting_alloc::count_allocations;

/// Record `i`: an image (bytes), 0 to 2 tags, a label; every fifth record
/// has no `image`, so its slot takes the spec's default.
fn example(i: usize) -> Vec<u8> {
    let mut features: Features = [
        ("label", Feature::Int64(vec![i as i64])),
        (
            "tags",
            Feature::Bytes(
                (0..i % 3)
                    .map(|t| format!("tag{i}.{t}").into_bytes())
                    .collect(),
            ),
        ),
    ]
    .into_iter()
    .collect();
    if !i.is_multiple_of(5) {
        features.insert("image", Feature::Bytes(vec![vec![i as u8; 50 + i]]));
    }
    Example::with_features(features).to_bytes().expect("encode")
}

fn write(
    dir: &std::path::Path,
    name: &str,
    compression: Compression,
    n: usize,
) -> std::path::PathBuf {
    let path = dir.join(name);
    let options = WriterOptions::new(Framing::TfRecord).with_compression(compression);
    let mut w = RecordWriter::create(&path, options).expect("create");
    for i in 0..n {
        w.write_record(&example(i)).expect("write");
    }
    w.finish().expect("finish");
    path
}

fn spec() -> Spec {
    Spec::example(vec![
        FeatureSpec::fixed_len("label", DType::Int64, &[]),
        FeatureSpec::fixed_len("image", DType::Bytes, &[])
            .default_value(DefaultValue::Bytes(vec![b"no image".to_vec()]))
            .borrowed(),
        FeatureSpec::var_len("tags", DType::Bytes).borrowed(),
    ])
    .expect("spec")
}

/// What `ids` should decode to: (label, image, tags) per row.
fn expected(ids: &[u64]) -> Vec<(i64, Vec<u8>, Vec<Vec<u8>>)> {
    ids.iter()
        .map(|&id| {
            let i = id as usize;
            let image = if i.is_multiple_of(5) {
                b"no image".to_vec()
            } else {
                vec![i as u8; 50 + i]
            };
            let tags = (0..i % 3)
                .map(|t| format!("tag{i}.{t}").into_bytes())
                .collect();
            (i as i64, image, tags)
        })
        .collect()
}

/// The rows of an owned batch, read through `shared()` only.
fn rows_of(batch: &Batch<'static>) -> Vec<(i64, Vec<u8>, Vec<Vec<u8>>)> {
    let labels = batch
        .column("label")
        .expect("label")
        .values::<i64>()
        .expect("i64");
    let image = batch.column("image").expect("image");
    let tags = batch.column("tags").expect("tags");
    assert!(
        image.borrowed().is_none(),
        "an owned column lends no slices"
    );
    let (images, tag_values) = (
        image.shared().expect("shared"),
        tags.shared().expect("shared"),
    );
    (0..batch.rows())
        .map(|r| {
            let t = tags.row_values(r).expect("row");
            (
                labels[r],
                images[r].to_vec(),
                tag_values[t].iter().map(|b| b.to_vec()).collect(),
            )
        })
        .collect()
}

#[test]
fn an_owned_batch_outlives_its_dataset_and_is_read_on_another_thread() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = write(dir.path(), "plain.tfrecord", Compression::None, 200);
    let ids: Vec<u64> = (0..200).rev().step_by(3).collect();
    let (batch, record, map) = {
        let dataset = Dataset::open([&path], &OpenOptions::default()).expect("open");
        let map = dataset.shards()[0].bytes().expect("mapped").as_ptr_range();
        let mut batch: Batch<'static> = Batch::new();
        Decoder::new(2)
            .decode_ids_owned(&dataset, &ids, &spec(), &mut batch)
            .expect("decode");
        let record = dataset.get(7).expect("read").expect("record 7");
        (batch, record, (map.start as usize, map.end as usize))
        // The dataset (its handle on the map) is dropped here.
    };
    // Zero copy: each value read from the file is a share of its map.
    let image = batch
        .column("image")
        .expect("image")
        .shared()
        .expect("shared");
    let in_map = |b: &bytes::Bytes| {
        let p = b.as_ptr() as usize;
        map.0 <= p && p + b.len() <= map.1
    };
    for (r, v) in image.iter().enumerate() {
        assert_eq!(
            in_map(v),
            !ids[r].is_multiple_of(5),
            "row {r} (id {}): {v:?}",
            ids[r]
        );
    }
    assert!(in_map(&record.data), "the record is a share of the map");
    let got = std::thread::spawn(move || (rows_of(&batch), record.data.to_vec()))
        .join()
        .expect("reader thread");
    assert_eq!(got.0, expected(&ids));
    assert_eq!(got.1, example(7));
}

#[test]
fn a_compressed_shards_records_and_batch_outlive_the_dataset() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = write(dir.path(), "packed.tfrecord.gz", Compression::Gzip, 300);
    let ids: Vec<u64> = (0..300).step_by(7).chain([299, 0, 150]).collect();
    let batch = {
        let dataset = Dataset::open([&path], &OpenOptions::default()).expect("open");
        assert!(dataset.shards()[0].is_compressed());
        let mut slots: Vec<Option<OwnedRecord>> = vec![None; ids.len()];
        dataset
            .get_many(&ids, &mut Scratch::new(), |pos, r| slots[pos] = r)
            .expect("read");
        let records: Vec<OwnedRecord> = slots.into_iter().map(|r| r.expect("record")).collect();
        let mut batch: Batch<'static> = Batch::new();
        Decoder::new(1)
            .decode_owned(&records, &spec(), &mut batch)
            .expect("decode");
        batch
    };
    let rows = std::thread::spawn(move || rows_of(&batch))
        .join()
        .expect("reader thread");
    assert_eq!(rows, expected(&ids));
}

#[test]
fn a_warm_owned_decode_of_a_mapped_file_allocates_nothing() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = write(dir.path(), "plain.tfrecord", Compression::None, 256);
    let dataset = Dataset::open([&path], &OpenOptions::default()).expect("open");
    let (spec, decoder) = (spec(), Decoder::new(1));
    let ids: Vec<u64> = (0..256).map(|i| (i * 37) % 256).collect();
    let mut batch: Batch<'static> = Batch::new();
    decoder
        .decode_ids_owned(&dataset, &ids, &spec, &mut batch)
        .expect("decode");
    let (r, n) =
        count_allocations(|| decoder.decode_ids_owned(&dataset, &ids[..200], &spec, &mut batch));
    r.expect("decode");
    assert_eq!(n, 0, "a warm owned decode allocated {n} times");
    assert_eq!(rows_of(&batch), expected(&ids[..200]));
}
