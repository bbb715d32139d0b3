//! Decoding by ids and from read files, and the parts of a parallel decode
//! writing their rows in place.

use super::*;

#[test]
fn decode_ids_and_decode_from_read_files_and_stop_at_the_first_bad_read() {
    use crate::encode::{RecordWriter, WriterOptions};
    use crate::frame::Framing;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a.tfrecord");
    let mut w = RecordWriter::create(&path, WriterOptions::new(Framing::TfRecord)).unwrap();
    for i in 0..20i64 {
        w.write_record(&example(vec![(
            "x",
            Feature::Int64(vec![i; (i % 3) as usize]),
        )]))
        .unwrap();
    }
    w.finish().unwrap();
    let dataset = crate::dataset::Dataset::open([&path], &Default::default()).unwrap();
    let spec = Spec::example(vec![FeatureSpec::var_len("x", DType::Int64)]).unwrap();
    let mut batch = Batch::new();
    let decoder = Decoder::new(2);
    decoder
        .decode_ids(&dataset, &[5, 19, 4], &spec, &mut batch)
        .unwrap();
    assert_eq!(batch.columns()[0].values::<i64>().unwrap(), [5, 5, 19, 4]);
    assert_eq!(batch.columns()[0].row_splits().unwrap(), [0, 2, 3, 4]);
    let err = decoder
        .decode_ids(&dataset, &[1, 20, 2], &spec, &mut batch)
        .unwrap_err();
    assert_eq!(
        err.kind(),
        &crate::ErrorKind::IdOutOfRange { id: 20, len: 20 }
    );
    assert_eq!(batch.rows(), 1, "the record before the bad id is decoded");
    // From an iterator, in batches of 8.
    let file = std::fs::read(&path).unwrap();
    let mut it = crate::frame::records(&file, Framing::TfRecord, Default::default());
    let mut total = 0;
    loop {
        let n = decoder.decode_from(&mut it, 8, &spec, &mut batch).unwrap();
        assert_eq!(batch.rows(), n);
        total += n;
        if n < 8 {
            break;
        }
    }
    assert_eq!(total, 20);
}

/// A parallel decode writes the rows of numeric fixed-length columns in
/// place: the parts' own buffers of those columns stay empty (nothing is
/// copied at the join), and the batch equals one thread's, with defaults,
/// a repeated name, a failing record in a later part, and a warm batch
/// reused with fewer records.
#[test]
fn placed_columns_are_written_in_place_by_the_parts() {
    let spec = Spec::example(vec![
        FeatureSpec::fixed_len("ids", DType::Int64, &[3])
            .default_value(DefaultValue::Int(vec![7, 8, 9])),
        FeatureSpec::fixed_len("w", DType::Float32, &[2]),
        FeatureSpec::var_len("tags", DType::Bytes),
        FeatureSpec::fixed_len("name", DType::Bytes, &[]),
    ])
    .unwrap();
    let record = |i: i64| {
        let mut f = vec![
            ("w", Feature::Float(vec![i as f32, -(i as f32)])),
            ("tags", Feature::Bytes(vec![vec![b'a'; (i % 4) as usize]])),
            ("name", Feature::Bytes(vec![i.to_string().into_bytes()])),
        ];
        if i % 5 != 0 {
            f.push(("ids", Feature::Int64(vec![i, 1000 + i, -i])));
        }
        let mut rec = example(f);
        if i % 7 == 0 {
            // A later entry of the same name wins.
            rec.extend(example(vec![("ids", Feature::Int64(vec![i * 3, 0, 1]))]));
        }
        rec
    };
    let records: Vec<Vec<u8>> = (0..200).map(record).collect();
    let payloads: Vec<&[u8]> = records.iter().map(Vec::as_slice).collect();
    let (mut one, mut four) = (Batch::new(), Batch::new());
    decode(&payloads, &spec, &mut one).unwrap();
    let decoder = Decoder::new(4);
    decoder.decode(&payloads, &spec, &mut four).unwrap();
    assert!(one == four, "1 thread and 4 differ");
    assert_eq!(
        four.column("ids").unwrap().values::<i64>().unwrap()[..6],
        [0, 0, 1, 1, 1001, -1]
    );
    assert_eq!(
        four.column("ids").unwrap().values::<i64>().unwrap()[21..24],
        [21, 0, 1]
    );
    let ids = four.column("ids").unwrap().values::<i64>().unwrap();
    assert_eq!(ids[15..18], [7, 8, 9], "the default fills a missing row");
    assert!(!four.parts.is_empty(), "the decode ran in parts");
    for part in &four.parts {
        assert!(part.rows > 0);
        for name in ["ids", "w"] {
            let c = part.columns.iter().find(|c| c.name() == name).unwrap();
            assert!(c.placed_row_bytes().is_some());
            assert_eq!(c.values.len(), 0, "{name}: a part kept its own rows");
        }
        let tags = part.columns.iter().find(|c| c.name() == "tags").unwrap();
        assert!(tags.placed_row_bytes().is_none());
    }
    // A record in the third part whose "w" has one value: the batch ends
    // before it, with the same error and rows on one thread and four.
    let mut damaged = records.clone();
    damaged[130] = example(vec![("w", Feature::Float(vec![1.0]))]);
    let payloads: Vec<&[u8]> = damaged.iter().map(Vec::as_slice).collect();
    let e1 = decode(&payloads, &spec, &mut one).unwrap_err();
    let e4 = decoder.decode(&payloads, &spec, &mut four).unwrap_err();
    assert_eq!(e1.to_string(), e4.to_string());
    assert_eq!(four.rows(), 130);
    assert!(one == four, "after a failure, 1 thread and 4 differ");
    // Warm, fewer records: stale bytes of the larger batch do not show.
    let payloads: Vec<&[u8]> = payloads[..100].to_vec();
    decode(&payloads, &spec, &mut one).unwrap();
    decoder.decode(&payloads, &spec, &mut four).unwrap();
    assert_eq!(four.rows(), 100);
    assert!(one == four, "warm, 1 thread and 4 differ");
}
