//! A warm batch decode allocates nothing: every column, every form, owned
//! and borrowed bytes, padding, sparse indices, SequenceExample frames.

#![allow(clippy::unwrap_used)]

use recordwire::batch::{decode, Batch, DType, DefaultValue, FeatureSpec, Spec};
use recordwire::encode::{Example, Feature, FeatureList, FeatureLists, Features, SequenceExample};

use crate::counting_alloc::count_allocations;

fn examples(n: i64) -> Vec<Vec<u8>> {
    (0..n)
        .map(|i| {
            let features: Features = [
                ("label", Feature::Int64(vec![i])),
                ("tokens", Feature::Int64((0..i % 7).collect())),
                ("weights", Feature::Float(vec![0.5; (i % 3) as usize * 2])),
                (
                    "image",
                    Feature::Bytes(vec![vec![i as u8; 100 + i as usize]]),
                ),
                (
                    "tags",
                    Feature::Bytes(vec![b"t".repeat(i as usize % 4); i as usize % 3]),
                ),
            ]
            .into_iter()
            .collect();
            Example::with_features(features).to_bytes().unwrap()
        })
        .collect()
}

#[test]
fn a_warm_example_batch_allocates_nothing() {
    let spec = Spec::example(vec![
        FeatureSpec::fixed_len("label", DType::Int64, &[]),
        FeatureSpec::fixed_len("missing", DType::Float32, &[2])
            .default_value(DefaultValue::Float(vec![1.0, 2.0])),
        FeatureSpec::var_len("tokens", DType::Int64).sparse(),
        FeatureSpec::fixed_len_sequence("weights", DType::Float32, &[2])
            .allow_missing(true)
            .default_value(DefaultValue::Float(vec![-1.0])),
        FeatureSpec::fixed_len("image", DType::Bytes, &[]).borrowed(),
        FeatureSpec::var_len("tags", DType::Bytes),
        FeatureSpec::fixed_len_sequence("tags2", DType::Bytes, &[]).allow_missing(true),
    ])
    .unwrap();
    let records = examples(256);
    let payloads: Vec<&[u8]> = records.iter().map(Vec::as_slice).collect();
    let mut batch = Batch::new();
    decode(&payloads, &spec, &mut batch).unwrap();
    // The next batch, no larger than the first: nothing is allocated.
    let (r, n) = count_allocations(|| decode(&payloads[..200], &spec, &mut batch));
    r.unwrap();
    assert_eq!(n, 0, "a warm batch decode allocated {n} times");
    assert_eq!(batch.rows(), 200);
    assert_eq!(
        batch.column("label").unwrap().values::<i64>().unwrap()[199],
        199
    );
    let (r, n) = count_allocations(|| decode(&payloads, &spec, &mut batch));
    r.unwrap();
    assert_eq!(n, 0, "a warm batch decode allocated {n} times");
}

#[test]
fn a_warm_sequence_example_batch_allocates_nothing() {
    let spec = Spec::sequence_example(
        vec![FeatureSpec::fixed_len("id", DType::Int64, &[])],
        vec![
            FeatureSpec::fixed_len_sequence("rgb", DType::Float32, &[4]).allow_missing(true),
            FeatureSpec::var_len("words", DType::Bytes).sparse(),
        ],
    )
    .unwrap();
    let records: Vec<Vec<u8>> = (0..128i64)
        .map(|i| {
            let context: Features = [("id", Feature::Int64(vec![i]))].into_iter().collect();
            let frames = (i % 9) as usize;
            let rgb = FeatureList {
                features: vec![Feature::Float(vec![0.25; 4]); frames],
            };
            let words = FeatureList {
                features: vec![Feature::Bytes(vec![b"ab".to_vec(); frames % 3]); frames],
            };
            let lists: FeatureLists = [("rgb", rgb), ("words", words)].into_iter().collect();
            SequenceExample {
                context: Some(context),
                feature_lists: Some(lists),
            }
            .to_bytes()
            .unwrap()
        })
        .collect();
    let payloads: Vec<&[u8]> = records.iter().map(Vec::as_slice).collect();
    let mut batch = Batch::new();
    decode(&payloads, &spec, &mut batch).unwrap();
    let (r, n) = count_allocations(|| decode(&payloads, &spec, &mut batch));
    r.unwrap();
    assert_eq!(n, 0, "a warm batch decode allocated {n} times");
    assert_eq!(batch.column("rgb").unwrap().shape(), [128, 8, 4]);
}

#[test]
fn a_recycled_batch_decodes_records_of_a_new_buffer_without_allocating() {
    let spec = Spec::example(vec![
        FeatureSpec::fixed_len("image", DType::Bytes, &[]).borrowed(),
        FeatureSpec::var_len("tokens", DType::Int64),
    ])
    .unwrap();
    let mut spare: Batch<'static> = Batch::new();
    let mut allocations = Vec::new();
    for round in 0..3 {
        // Each round's records live in a buffer of their own.
        let records = examples(64 + round);
        let payloads: Vec<&[u8]> = records.iter().map(Vec::as_slice).collect();
        let (batch, n) = count_allocations(|| {
            let mut batch = spare.recycle();
            decode(&payloads[..64], &spec, &mut batch).map(|()| batch)
        });
        let batch = batch.unwrap();
        assert_eq!(batch.rows(), 64);
        allocations.push(n);
        spare = batch.recycle();
    }
    assert_eq!(
        &allocations[1..],
        [0, 0],
        "after the first round: {allocations:?}"
    );
}
