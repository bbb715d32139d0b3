//! The batched decoder against a naive decoder built on the views, for
//! random records and random specs; threads; reuse; spec JSON.

use proptest::prelude::*;

use super::*;
use crate::encode::{
    Example, Feature, FeatureList, FeatureLists, Features, OfRecord, SequenceExample,
};
use crate::error::{ErrorKind, FeatureProblem};
use crate::view::{ExampleRef, ListRef};

/// A value of any column, comparable (floats by their bits).
#[derive(Debug, Clone, PartialEq)]
enum V {
    I(i64),
    F(u32),
    B(Vec<u8>),
}

fn column_values(c: &Column<'_>) -> Vec<V> {
    match c.dtype() {
        DType::Int64 => c
            .values::<i64>()
            .unwrap()
            .iter()
            .map(|&v| V::I(v))
            .collect(),
        DType::Float32 => c
            .values::<f32>()
            .unwrap()
            .iter()
            .map(|v| V::F(v.to_bits()))
            .collect(),
        DType::Bytes => (0..c.len())
            .map(|i| V::B(c.bytes_value(i).unwrap().to_vec()))
            .collect(),
        d => panic!("no test values for {d}"),
    }
}

fn list_values(l: Option<ListRef<'_>>) -> Result<(Option<DType>, Vec<V>), ()> {
    Ok(match l {
        None => (None, vec![]),
        Some(ListRef::Int64(l)) => (
            Some(DType::Int64),
            l.iter().map(|v| V::I(v.unwrap())).collect(),
        ),
        Some(ListRef::Float(l)) => (
            Some(DType::Float32),
            l.iter().map(|v| V::F(v.unwrap().to_bits())).collect(),
        ),
        Some(ListRef::Bytes(l)) => (
            Some(DType::Bytes),
            l.iter().map(|v| V::B(v.unwrap().to_vec())).collect(),
        ),
        Some(_) => return Err(()),
    })
}

fn default_values(f: &FeatureSpec) -> Option<Vec<V>> {
    let d = match &f.form {
        Form::FixedLen { default, .. } | Form::FixedLenSequence { default, .. } => {
            default.as_ref()?
        }
        _ => return None,
    };
    Some(match (d, f.dtype) {
        (DefaultValue::Int(v), DType::Int64) => v.iter().map(|&x| V::I(x)).collect(),
        (DefaultValue::Int(v), DType::Float32) => {
            v.iter().map(|&x| V::F((x as f32).to_bits())).collect()
        }
        (DefaultValue::Float(v), _) => v.iter().map(|&x| V::F((x as f32).to_bits())).collect(),
        (DefaultValue::Bytes(v), _) => v.iter().map(|b| V::B(b.clone())).collect(),
        _ => unreachable!(),
    })
}

fn zero(d: DType) -> V {
    match d {
        DType::Int64 => V::I(0),
        DType::Float32 => V::F(0),
        _ => V::B(vec![]),
    }
}

/// What the naive decoder expects of one feature over the batch.
#[derive(Debug, Default)]
struct Expected {
    rows: Vec<Vec<V>>,
}

/// The naive decoder: each feature looked up by name (the last entry wins),
/// the rules written out plainly. Returns the columns of the rows before the
/// first failing record, and that record's id and feature.
fn naive(records: &[Vec<u8>], spec: &Spec) -> (Vec<Expected>, Option<(usize, String)>) {
    let mut cols: Vec<Expected> = spec
        .features()
        .iter()
        .map(|_| Expected::default())
        .collect();
    for (r, bytes) in records.iter().enumerate() {
        let ex = ExampleRef::new(bytes, 0);
        let entries: Vec<_> = ex.features().entries().map(Result::unwrap).collect();
        let mut row = Vec::new();
        // Errors of present features: (offset of the entry, feature); the
        // last on the wire is reported, before any missing feature.
        let mut present_errors = Vec::new();
        let mut missing = None;
        for f in spec.features() {
            // The last entry of the name; for fixed_len, the last one that
            // holds a list (a Feature with none counts as no entry).
            let fixed = matches!(f.form, Form::FixedLen { .. });
            let got = entries.iter().rev().find(|e| {
                e.name() == f.name.as_bytes() && !(fixed && e.feature.list().unwrap().is_none())
            });
            let values = match got {
                None => None,
                Some(e) => {
                    let (kind, values) = list_values(e.feature.list().unwrap()).unwrap();
                    if kind.is_some_and(|k| k != f.dtype) {
                        present_errors.push((e.entry.offset, f.name.clone()));
                    }
                    Some((e.entry.offset, values))
                }
            };
            let elems = f.elements();
            let row_values = match (&f.form, values) {
                (Form::FixedLen { .. }, None) => match default_values(f) {
                    Some(d) => d,
                    None => {
                        missing = missing.or(Some(f.name.clone()));
                        vec![]
                    }
                },
                (Form::FixedLen { .. }, Some((at, v))) if v.len() != elems => {
                    present_errors.push((at, f.name.clone()));
                    vec![]
                }
                (Form::FixedLenSequence { .. }, Some((at, v)))
                    if v.len().checked_rem(elems).unwrap_or(v.len()) != 0 =>
                {
                    present_errors.push((at, f.name.clone()));
                    vec![]
                }
                (_, v) => v.map(|(_, v)| v).unwrap_or_default(),
            };
            row.push(row_values);
        }
        if let Some((_, name)) = present_errors.iter().max_by_key(|(at, _)| *at) {
            return (cols, Some((r, name.clone())));
        }
        if let Some(name) = missing {
            return (cols, Some((r, name)));
        }
        for (c, v) in cols.iter_mut().zip(row) {
            c.rows.push(v);
        }
    }
    (cols, None)
}

fn check_against_naive(
    records: &[Vec<u8>],
    spec: &Spec,
    batch: &Batch<'_>,
    result: Result<(), crate::Error>,
) {
    let (want, fail) = naive(records, spec);
    match (&fail, &result) {
        (None, Ok(())) => {}
        (Some((r, name)), Err(e)) => {
            assert_eq!(e.record(), Some(*r as u64), "{e}");
            match e.kind() {
                ErrorKind::Feature { feature, .. } => assert_eq!(&**feature, name, "{e}"),
                other => panic!("{other:?}"),
            }
        }
        _ => panic!("naive {fail:?}, batch {result:?}"),
    }
    let rows = want.first().map_or(batch.rows(), |c| c.rows.len());
    assert_eq!(batch.rows(), rows);
    for ((f, c), w) in spec.features().iter().zip(batch.columns()).zip(&want) {
        let got = column_values(c);
        match &f.form {
            Form::FixedLen { shape, .. } => {
                let flat: Vec<V> = w.rows.concat();
                assert_eq!(got, flat, "{}", f.name);
                let mut s = vec![rows];
                s.extend(shape);
                assert_eq!(c.shape(), s);
            }
            Form::VarLen => {
                assert_eq!(got, w.rows.concat(), "{}", f.name);
                let mut splits = vec![0i64];
                for r in &w.rows {
                    splits.push(splits.last().unwrap() + r.len() as i64);
                }
                assert_eq!(c.row_splits().unwrap(), splits);
                if let Some(sp) = c.sparse() {
                    let mut idx = vec![];
                    for (i, r) in w.rows.iter().enumerate() {
                        for j in 0..r.len() {
                            idx.extend([i as i64, j as i64]);
                        }
                    }
                    assert_eq!(sp.indices, idx);
                    let max = w.rows.iter().map(Vec::len).max().unwrap_or(0);
                    assert_eq!(sp.dense_shape, [rows, max]);
                }
            }
            Form::FixedLenSequence { shape, .. } => {
                let elems = f.elements();
                let lens: Vec<i64> = w
                    .rows
                    .iter()
                    .map(|r| r.len().checked_div(elems).unwrap_or(0) as i64)
                    .collect();
                let max = lens.iter().copied().max().unwrap_or(0) as usize;
                let pad = default_values(f).map_or(zero(f.dtype), |d| d[0].clone());
                let mut flat = vec![];
                for r in &w.rows {
                    flat.extend(r.iter().cloned());
                    flat.extend(std::iter::repeat_n(pad.clone(), max * elems - r.len()));
                }
                assert_eq!(got, flat, "{}", f.name);
                assert_eq!(c.lengths().unwrap(), lens);
                let mut s = vec![rows, max];
                s.extend(shape);
                assert_eq!(c.shape(), s);
            }
            Form::OfRecordRaw { .. } => unreachable!(),
        }
    }
}

fn arb_dtype() -> impl Strategy<Value = DType> {
    prop_oneof![Just(DType::Int64), Just(DType::Float32), Just(DType::Bytes)]
}

fn arb_default(dtype: DType, n: usize) -> BoxedStrategy<Option<DefaultValue>> {
    let d = match dtype {
        DType::Int64 => prop::collection::vec(any::<i64>(), n)
            .prop_map(DefaultValue::Int)
            .boxed(),
        DType::Float32 => prop::collection::vec(-10.0f64..10.0, n)
            .prop_map(DefaultValue::Float)
            .boxed(),
        _ => prop::collection::vec(prop::collection::vec(any::<u8>(), 0..4), n)
            .prop_map(DefaultValue::Bytes)
            .boxed(),
    };
    prop::option::of(d).boxed()
}

fn arb_feature(i: usize) -> impl Strategy<Value = FeatureSpec> {
    (
        arb_dtype(),
        0..3u8,
        prop::sample::select(vec![vec![], vec![2usize], vec![1, 2]]),
        any::<bool>(),
        any::<bool>(),
    )
        .prop_flat_map(move |(dtype, form, shape, flag, borrow)| {
            let n: usize = shape.iter().product();
            let name = format!("f{i}");
            arb_default(dtype, if form == 0 { n } else { 1 }).prop_map(move |default| {
                let mut f = match form {
                    0 => FeatureSpec::fixed_len(name.clone(), dtype, &shape),
                    1 => {
                        let f = FeatureSpec::var_len(name.clone(), dtype);
                        if flag {
                            f.sparse()
                        } else {
                            f
                        }
                    }
                    _ => FeatureSpec::fixed_len_sequence(name.clone(), dtype, &shape)
                        .allow_missing(true),
                };
                if let Some(d) = default.clone() {
                    f = f.default_value(d);
                }
                if borrow && dtype == DType::Bytes {
                    f = f.borrowed();
                }
                f
            })
        })
}

fn arb_spec() -> impl Strategy<Value = Spec> {
    prop::collection::vec(0..6usize, 1..5)
        .prop_flat_map(|ids| {
            let mut ids = ids;
            ids.sort_unstable();
            ids.dedup();
            ids.into_iter().map(arb_feature).collect::<Vec<_>>()
        })
        .prop_map(|fs| Spec::example(fs).unwrap())
}

fn arb_feature_value() -> impl Strategy<Value = Feature> {
    // Mostly lists of 0..5 values of any kind; sometimes no kind at all.
    prop_oneof![
        1 => Just(Feature::None),
        4 => prop::collection::vec(any::<i64>(), 0..5).prop_map(Feature::Int64),
        4 => prop::collection::vec(any::<f32>(), 0..5).prop_map(Feature::Float),
        4 => prop::collection::vec(prop::collection::vec(any::<u8>(), 0..6), 0..5).prop_map(Feature::Bytes),
        // The shapes the specs like: 1 and 2 values.
        3 => any::<i64>().prop_map(|v| Feature::Int64(vec![v])),
        3 => (any::<i64>(), any::<i64>()).prop_map(|(a, b)| Feature::Int64(vec![a, b])),
        3 => (any::<f32>(), any::<f32>()).prop_map(|(a, b)| Feature::Float(vec![a, b])),
        3 => prop::collection::vec(any::<u8>(), 0..4).prop_map(|b| Feature::Bytes(vec![b.clone(), b])),
    ]
}

/// A record: features f0..f5 present or not, sometimes with a second entry
/// of the same name (two Examples concatenated: their maps merge).
fn arb_record() -> impl Strategy<Value = Vec<u8>> {
    (
        prop::collection::vec((0..7usize, arb_feature_value()), 0..7),
        prop::collection::vec((0..7usize, arb_feature_value()), 0..2),
    )
        .prop_map(|(a, b)| {
            let encode = |fs: Vec<(usize, Feature)>| {
                let features: Features =
                    fs.into_iter().map(|(i, f)| (format!("f{i}"), f)).collect();
                Example::with_features(features).to_bytes().unwrap()
            };
            let mut bytes = encode(a);
            if !b.is_empty() {
                bytes.extend(encode(b));
            }
            bytes
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn decode_equals_the_naive_decoder(spec in arb_spec(), records in prop::collection::vec(arb_record(), 0..40)) {
        let payloads: Vec<&[u8]> = records.iter().map(Vec::as_slice).collect();
        let mut batch = Batch::new();
        let r = decode(&payloads, &spec, &mut batch);
        check_against_naive(&records, &spec, &batch, r);
        // Reused: the same result from a warm batch.
        let r = decode(&payloads, &spec, &mut batch);
        check_against_naive(&records, &spec, &batch, r);
    }

    #[test]
    fn threads_give_the_same_batch(spec in arb_spec(), records in prop::collection::vec(arb_record(), 0..120)) {
        let payloads: Vec<&[u8]> = records.iter().map(Vec::as_slice).collect();
        let mut one = Batch::new();
        let r1 = decode(&payloads, &spec, &mut one);
        let mut four = Batch::new();
        let r4 = Decoder::new(4).decode(&payloads, &spec, &mut four);
        prop_assert_eq!(r1.map_err(|e| e.to_string()), r4.map_err(|e| e.to_string()));
        prop_assert!(one == four, "1 thread and 4 differ");
        let r3 = Decoder::new(3).decode(&payloads, &spec, &mut four);
        check_against_naive(&records, &spec, &four, r3);
    }
}

fn example(features: Vec<(&str, Feature)>) -> Vec<u8> {
    let features: Features = features.into_iter().collect();
    Example::with_features(features).to_bytes().unwrap()
}

#[test]
fn the_last_entry_of_a_name_wins_and_earlier_ones_are_not_checked() {
    let spec = Spec::example(vec![
        FeatureSpec::fixed_len("a", DType::Int64, &[]),
        FeatureSpec::var_len("b", DType::Bytes),
    ])
    .unwrap();
    // First entries of the wrong kind and count; the last ones fit.
    let mut rec = example(vec![
        ("a", Feature::Float(vec![1.0, 2.0])),
        ("b", Feature::Int64(vec![1])),
    ]);
    rec.extend(example(vec![
        ("a", Feature::Int64(vec![7])),
        ("b", Feature::Bytes(vec![b"x".to_vec()])),
    ]));
    let recs = [rec.as_slice()];
    let mut batch = Batch::new();
    decode(&recs, &spec, &mut batch).unwrap();
    assert_eq!(batch.column("a").unwrap().values::<i64>().unwrap(), [7]);
    assert_eq!(batch.column("b").unwrap().bytes_value(0).unwrap(), b"x");
    // And the other way round: a good first entry does not hide a bad last one.
    let mut rec = example(vec![("a", Feature::Int64(vec![7]))]);
    rec.extend(example(vec![("a", Feature::Int64(vec![1, 2]))]));
    let recs = [rec.as_slice()];
    let err = decode(&recs, &spec, &mut batch).unwrap_err();
    assert_eq!(
        err.kind(),
        &ErrorKind::Feature {
            feature: "a".into(),
            problem: FeatureProblem::WrongCount {
                expected: 1,
                found: 2
            }
        }
    );
}

#[test]
fn errors_name_the_feature_record_file_and_offset_and_keep_the_rows_before() {
    let spec = Spec::example(vec![FeatureSpec::fixed_len("label", DType::Int64, &[])]).unwrap();
    let good = example(vec![("label", Feature::Int64(vec![1]))]);
    let bad = example(vec![("other", Feature::Int64(vec![1]))]);
    let mut file = Vec::new();
    for r in [&good, &good, &bad, &good] {
        crate::frame::write_tfrecord_frame(&mut file, r);
    }
    let name: std::sync::Arc<str> = "train.tfrecord".into();
    let records: Vec<_> =
        crate::frame::records(&file, crate::frame::Framing::TfRecord, Default::default())
            .with_file_of_records(&name)
            .map(Result::unwrap)
            .collect();
    let mut batch = Batch::new();
    let err = decode(&records, &spec, &mut batch).unwrap_err();
    assert_eq!(err.kind().name(), "feature_error");
    assert_eq!(err.record(), Some(2));
    assert_eq!(err.file(), Some("train.tfrecord"));
    assert_eq!(err.offset(), Some(records[2].data_offset));
    assert!(
        err.to_string().contains("feature \"label\": missing"),
        "{err}"
    );
    assert_eq!(batch.rows(), 2);
    assert_eq!(batch.columns()[0].values::<i64>().unwrap(), [1, 1]);
    assert_eq!(batch.columns()[0].shape(), [2]);
}

#[test]
fn a_broken_record_is_a_decode_error_at_its_byte() {
    let spec = Spec::example(vec![FeatureSpec::var_len("x", DType::Int64)]).unwrap();
    let good = example(vec![("x", Feature::Int64(vec![5]))]);
    let truncated = &good[..good.len() - 2];
    let recs = [good.as_slice(), truncated];
    let mut batch = Batch::new();
    let err = decode(&recs, &spec, &mut batch).unwrap_err();
    assert_eq!(err.kind().name(), "decode_error");
    assert_eq!(err.record(), Some(1));
    assert!(err.offset().is_some());
    assert_eq!(batch.rows(), 1);
    assert_eq!(batch.columns()[0].row_splits().unwrap(), [0, 1]);
}

#[test]
fn sequence_examples_pad_frames_and_keep_ragged_frames() {
    let spec = Spec::sequence_example(
        vec![FeatureSpec::fixed_len("id", DType::Int64, &[])],
        vec![
            FeatureSpec::fixed_len_sequence("pos", DType::Float32, &[2]).allow_missing(true),
            FeatureSpec::var_len("words", DType::Bytes).sparse(),
        ],
    )
    .unwrap();
    let rec = |id: i64, frames: usize| {
        let context: Features = [("id", Feature::Int64(vec![id]))].into_iter().collect();
        let pos = FeatureList {
            features: (0..frames)
                .map(|i| Feature::Float(vec![i as f32, -(i as f32)]))
                .collect(),
        };
        let words = FeatureList {
            features: (0..frames)
                .map(|i| Feature::Bytes(vec![b"w".repeat(i); i]))
                .collect(),
        };
        let lists: FeatureLists = [("pos", pos), ("words", words)].into_iter().collect();
        SequenceExample {
            context: Some(context),
            feature_lists: Some(lists),
        }
        .to_bytes()
        .unwrap()
    };
    let records = [rec(10, 2), rec(11, 0), rec(12, 3)];
    let payloads: Vec<&[u8]> = records.iter().map(Vec::as_slice).collect();
    let mut batch = Batch::new();
    decode(&payloads, &spec, &mut batch).unwrap();
    let pos = batch.column("pos").unwrap();
    assert_eq!(pos.shape(), [3, 3, 2]);
    assert_eq!(pos.lengths().unwrap(), [2, 0, 3]);
    assert_eq!(
        pos.values::<f32>().unwrap(),
        [0., -0., 1., -1., 0., 0., 0., 0., 0., 0., 0., 0., 0., -0., 1., -1., 2., -2.]
    );
    let words = batch.column("words").unwrap();
    assert_eq!(words.row_splits().unwrap(), [0, 2, 2, 5]);
    assert_eq!(words.frame_splits().unwrap(), [0, 0, 1, 1, 2, 4]);
    let sparse = words.sparse().unwrap();
    assert_eq!(sparse.dense_shape, [3, 3, 2]);
    assert_eq!(sparse.indices, [0, 1, 0, 2, 1, 0, 2, 2, 0, 2, 2, 1]);
    // A frame of the wrong size.
    let bad = {
        let lists: FeatureLists = [(
            "pos",
            FeatureList {
                features: vec![Feature::Float(vec![1.0])],
            },
        )]
        .into_iter()
        .collect();
        let context: Features = [("id", Feature::Int64(vec![1]))].into_iter().collect();
        SequenceExample {
            context: Some(context),
            feature_lists: Some(lists),
        }
        .to_bytes()
        .unwrap()
    };
    let err = decode(&[bad.as_slice()], &spec, &mut batch).unwrap_err();
    assert_eq!(
        err.kind(),
        &ErrorKind::Feature {
            feature: "pos".into(),
            problem: FeatureProblem::WrongFrameCount {
                frame: 0,
                expected: 2,
                found: 1
            }
        }
    );
}

#[test]
fn ofrecord_raw_follows_oneflow() {
    // Hand-computed from OneFlow's OFRecordRawDecoder: exact count unless a
    // flag allows fewer; values cast like static_cast; a bytes list of one
    // value read as int8s; the rest zero.
    let of = |f: Vec<(&str, Feature)>| {
        let features: Features = f.into_iter().collect();
        OfRecord::with_features(features).to_bytes().unwrap()
    };
    let spec = Spec::ofrecord(vec![
        FeatureSpec::ofrecord_raw("x", DType::Float32, &[3]),
        FeatureSpec::ofrecord_raw("y", DType::Int32, &[4]).ofrecord_flags(false, true),
        FeatureSpec::ofrecord_raw("img", DType::UInt8, &[2, 2]).ofrecord_flags(true, false),
    ])
    .unwrap();
    let r1 = of(vec![
        ("x", Feature::Int64(vec![1, -2, 3])),
        ("y", Feature::Float(vec![1.9, -2.7])),
        ("img", Feature::Bytes(vec![vec![255, 1, 128]])),
    ]);
    let r2 = of(vec![
        ("x", Feature::Double(vec![0.5, 1e300, -0.0])),
        ("y", Feature::Int32(vec![9, 8, 7, 6])),
        ("img", Feature::Bytes(vec![vec![1, 2, 3, 4, 5]])),
    ]);
    let mut batch = Batch::new();
    decode(&[r1.as_slice(), r2.as_slice()], &spec, &mut batch).unwrap();
    let x = batch.column("x").unwrap();
    assert_eq!(x.shape(), [2, 3]);
    assert_eq!(
        x.values::<f32>().unwrap(),
        [1.0, -2.0, 3.0, 0.5, f32::INFINITY, -0.0]
    );
    let y = batch.column("y").unwrap();
    assert_eq!(y.values::<i32>().unwrap(), [1, -2, 0, 0, 9, 8, 7, 6]);
    assert_eq!(y.lengths().unwrap(), [2, 4]);
    let img = batch.column("img").unwrap();
    assert_eq!(img.values::<u8>().unwrap(), [255, 1, 128, 0, 1, 2, 3, 4]);
    assert_eq!(img.lengths().unwrap(), [3, 4]);
    // Too many values, the wrong count, two bytes values, a missing field.
    let cases = [
        (
            of(vec![
                ("x", Feature::Int64(vec![1, 2])),
                ("y", Feature::Int32(vec![])),
                ("img", Feature::Bytes(vec![vec![]])),
            ]),
            "x",
            FeatureProblem::WrongCount {
                expected: 3,
                found: 2,
            },
        ),
        (
            of(vec![
                ("x", Feature::Int64(vec![1, 2, 3])),
                ("y", Feature::Int32(vec![1; 5])),
                ("img", Feature::Bytes(vec![vec![]])),
            ]),
            "y",
            FeatureProblem::TooMany { max: 4, found: 5 },
        ),
        (
            of(vec![
                ("x", Feature::Int64(vec![1, 2, 3])),
                ("y", Feature::Int32(vec![])),
                ("img", Feature::Bytes(vec![vec![], vec![]])),
            ]),
            "img",
            FeatureProblem::NotOneBytesValue { found: 2 },
        ),
        (
            of(vec![
                ("x", Feature::Int64(vec![1, 2, 3])),
                ("y", Feature::Int32(vec![])),
            ]),
            "img",
            FeatureProblem::Missing,
        ),
    ];
    for (rec, name, problem) in &cases {
        let (name, problem) = (*name, problem.clone());
        let err = decode(&[rec.as_slice()], &spec, &mut batch).unwrap_err();
        assert_eq!(
            err.kind(),
            &ErrorKind::Feature {
                feature: name.into(),
                problem
            },
            "{err}"
        );
    }
}

#[test]
fn borrowed_bytes_point_into_the_input() {
    let spec = Spec::example(vec![
        FeatureSpec::fixed_len("image", DType::Bytes, &[]).borrowed()
    ])
    .unwrap();
    let records: Vec<Vec<u8>> = (0..3u8)
        .map(|i| example(vec![("image", Feature::Bytes(vec![vec![i; 1000]]))]))
        .collect();
    let payloads: Vec<&[u8]> = records.iter().map(Vec::as_slice).collect();
    let mut batch = Batch::new();
    decode(&payloads, &spec, &mut batch).unwrap();
    let col = batch.column("image").unwrap();
    assert!(col.raw_values().is_empty(), "no image byte is copied");
    for (v, r) in col.borrowed().unwrap().iter().zip(&records) {
        let inside = r.as_ptr_range();
        assert!(inside.contains(&v.as_ptr()));
    }
}

#[test]
fn buffers_are_64_byte_aligned() {
    let spec = Spec::example(vec![
        FeatureSpec::var_len("a", DType::Int64),
        FeatureSpec::var_len("b", DType::Bytes),
    ])
    .unwrap();
    let records: Vec<Vec<u8>> = (0..50i64)
        .map(|i| {
            example(vec![
                ("a", Feature::Int64(vec![i; 3])),
                ("b", Feature::Bytes(vec![vec![1; i as usize]])),
            ])
        })
        .collect();
    let payloads: Vec<&[u8]> = records.iter().map(Vec::as_slice).collect();
    let mut batch = Batch::new();
    decode(&payloads, &spec, &mut batch).unwrap();
    for c in batch.columns() {
        assert_eq!(c.raw_values().as_ptr() as usize % ALIGN, 0);
        assert_eq!(c.row_splits().unwrap().as_ptr() as usize % ALIGN, 0);
    }
    assert_eq!(
        batch.columns()[1].offsets().unwrap().as_ptr() as usize % ALIGN,
        0
    );
}

#[test]
fn batches_compare_by_what_they_hold() {
    let spec = Spec::example(vec![FeatureSpec::var_len("x", DType::Int64)]).unwrap();
    let a = example(vec![("x", Feature::Int64(vec![1, 2]))]);
    let b = example(vec![("x", Feature::Int64(vec![1, 3]))]);
    let (mut one, mut two) = (Batch::new(), Batch::new());
    decode(&[a.as_slice()], &spec, &mut one).unwrap();
    decode(&[b.as_slice(), a.as_slice()], &spec, &mut two).unwrap();
    assert!(one != two);
    // The same content in a batch that held more before: equal.
    decode(&[a.as_slice()], &spec, &mut two).unwrap();
    assert!(one == two);
    decode(&[b.as_slice()], &spec, &mut two).unwrap();
    assert!(one != two, "a different value");
}

#[test]
fn a_batch_reused_with_another_shape_or_default_follows_the_new_spec() {
    let two = Spec::example(vec![FeatureSpec::fixed_len("x", DType::Int64, &[2])
        .default_value(DefaultValue::Int(vec![1, 2]))])
    .unwrap();
    let three = Spec::example(vec![FeatureSpec::fixed_len("x", DType::Int64, &[3])
        .default_value(DefaultValue::Int(vec![7, 8, 9]))])
    .unwrap();
    let missing = example(vec![("y", Feature::Int64(vec![0]))]);
    let recs = [missing.as_slice()];
    let mut batch = Batch::new();
    decode(&recs, &two, &mut batch).unwrap();
    assert_eq!(batch.columns()[0].values::<i64>().unwrap(), [1, 2]);
    decode(&recs, &three, &mut batch).unwrap();
    assert_eq!(batch.columns()[0].shape(), [1, 3]);
    assert_eq!(batch.columns()[0].values::<i64>().unwrap(), [7, 8, 9]);
}

mod spec;
mod threads;
