//! Specs: their JSON, the OneFlow decoders they print as, inference from
//! records, and their errors.

use super::*;

#[test]
fn spec_json_round_trips_and_rejects_mistakes() {
    let text = br#"{"payload": "sequence_example",
        "features": {"label": {"form": "fixed_len", "dtype": "int64", "shape": [], "default": -3},
                     "w": {"form": "fixed_len", "dtype": "float", "shape": [2], "default": ["NaN", "-Infinity"]},
                     "s": {"form": "fixed_len", "dtype": "string", "shape": [], "default": "un\u00e9k"}},
        "sequence": {"frames": {"form": "fixed_len_sequence", "dtype": "float32", "shape": [3], "allow_missing": true},
                     "words": {"form": "var_len", "dtype": "bytes", "sparse": true, "borrow": true}}}"#;
    let spec = Spec::from_json(text).unwrap();
    assert_eq!(spec.features().len(), 3);
    assert_eq!(spec.features()[1].dtype, DType::Float32);
    let again = Spec::from_json(spec.to_json().as_bytes()).unwrap();
    assert_eq!(again.to_json(), spec.to_json());
    // (NaN defaults: compared by their text, NaN != NaN.)
    assert_eq!(
        format!("{:?}", again.features()),
        format!("{:?}", spec.features())
    );
    let tf = spec.to_tensorflow();
    assert!(
        tf.contains(r#""label": tf.io.FixedLenFeature([], tf.int64, default_value=-3),"#),
        "{tf}"
    );
    assert!(
        tf.contains(r#""s": tf.io.FixedLenFeature([], tf.string, default_value=b"un\xc3\xa9k"),"#),
        "{tf}"
    );
    assert!(tf.contains("sequence_features = {"), "{tf}");
    for (bad, says) in [
        (&br#"{"features": {"a": {"form": "fixed", "dtype": "int64", "shape": []}}}"#[..], "unknown form"),
        (br#"{"features": {"a": {"form": "fixed_len", "dtype": "int16", "shape": []}}}"#, "unknown dtype"),
        (br#"{"features": {"a": {"form": "fixed_len", "dtype": "int64"}}}"#, "shape is missing"),
        (br#"{"features": {"a": {"form": "fixed_len", "dtype": "int64", "shape": [2], "default": 1}}}"#, "the shape needs 2"),
        (br#"{"features": {"a": {"form": "var_len", "dtype": "int64", "borrow": true}}}"#, "borrow is only"),
        (br#"{"features": {"a": {"form": "var_len", "dtype": "int32"}}}"#, "not allowed"),
        (br#"{"features": {"a": {"form": "var_len", "dtype": "int64", "colour": 1}}}"#, "unknown member"),
        (br#"{"payload": "example", "sequence": {}}"#, "only a sequence_example"),
        (br#"{"features": {"a": {"form": "fixed_len", "dtype": "int64", "shape": [-1]}}}"#, "not a size"),
        (br#"[1]"#, "a JSON object"),
        (br#"{"features": {"a": {"form": "fixed_len_sequence", "dtype": "int64", "shape": []}}}"#, "needs allow_missing"),
        (br#"{"payload": "sequence_example", "sequence": {"a": {"form": "fixed_len_sequence", "dtype": "int64", "shape": [], "allow_missing": true, "default": 1}}}"#, "takes no default"),
    ] {
        let err = Spec::from_json(bad).unwrap_err().to_string();
        assert!(err.contains(says), "{err} lacks {says}");
    }
}

#[test]
fn ofrecord_specs_print_as_oneflow_decoders() {
    let spec = Spec::ofrecord(vec![
        FeatureSpec::ofrecord_raw("images", DType::Float32, &[28, 28]).ofrecord_flags(false, true),
        FeatureSpec::var_len("labels", DType::Int32),
    ])
    .unwrap();
    let py = spec.to_tensorflow();
    assert!(py.starts_with("import oneflow as flow\n"), "{py}");
    assert!(
        py.contains(r#""images": flow.nn.OFRecordRawDecoder("images", shape=(28, 28), dtype=flow.float32, dim1_varying_length=False, auto_zero_padding=True),"#),
        "{py}"
    );
    assert!(
        py.contains(r#"# "labels": var_len int32 (no OneFlow decoder"#),
        "{py}"
    );
    assert!(!py.contains("tf."), "{py}");
}

#[test]
fn inference_gives_fixed_len_where_every_record_agrees() {
    let mut inf = SpecInference::new(crate::view::PayloadKind::SequenceExample);
    for i in 0..4usize {
        let mut context = vec![
            ("id", Feature::Int64(vec![i as i64])),
            ("w", Feature::Float(vec![0.5; 2])),
        ];
        if i % 2 == 0 {
            context.push(("sometimes", Feature::Int64(vec![1])));
        }
        context.push((
            "mixed",
            if i == 0 {
                Feature::Int64(vec![1])
            } else {
                Feature::Float(vec![1.0])
            },
        ));
        context.push(("nokind", Feature::None));
        let context: Features = context.into_iter().collect();
        let mut lists = vec![
            (
                "rgb",
                FeatureList {
                    features: vec![Feature::Float(vec![0.0; 3]); i],
                },
            ),
            (
                "mixed_frames",
                FeatureList {
                    features: vec![Feature::Int64(vec![1]), Feature::Bytes(vec![vec![]])],
                },
            ),
            (
                "words",
                FeatureList {
                    features: (0..i).map(|j| Feature::Bytes(vec![vec![]; j])).collect(),
                },
            ),
        ];
        // Frames of two kinds within one record.
        lists.push((
            "mixed_frames",
            FeatureList {
                features: vec![Feature::Int64(vec![1]), Feature::Bytes(vec![vec![]])],
            },
        ));
        if i > 0 {
            lists.push((
                "always",
                FeatureList {
                    features: vec![Feature::Int64(vec![7]); 2],
                },
            ));
        }
        let lists: FeatureLists = lists.into_iter().collect();
        let bytes = SequenceExample {
            context: Some(context),
            feature_lists: Some(lists),
        }
        .to_bytes()
        .unwrap();
        inf.add(&bytes, 0).unwrap();
    }
    let (spec, notes) = inf.finish();
    let json = spec.to_json();
    assert!(
        json.contains(r#""id": {"form": "fixed_len", "dtype": "int64", "shape": []}"#),
        "{json}"
    );
    assert!(
        json.contains(r#""w": {"form": "fixed_len", "dtype": "float32", "shape": [2]}"#),
        "{json}"
    );
    assert!(
        json.contains(r#""sometimes": {"form": "var_len", "dtype": "int64"}"#),
        "{json}"
    );
    assert!(json.contains(r#""rgb": {"form": "fixed_len_sequence", "dtype": "float32", "shape": [3], "allow_missing": false}"#), "{json}");
    assert!(
        json.contains(r#""words": {"form": "var_len", "dtype": "bytes"}"#),
        "{json}"
    );
    assert!(json.contains(r#""always": {"form": "fixed_len_sequence", "dtype": "int64", "shape": [], "allow_missing": true}"#), "{json}");
    assert!(
        !json.contains("mixed") && !json.contains("nokind"),
        "{json}"
    );
    assert_eq!(notes.len(), 3, "{notes:?}");
    assert!(
        notes[2].contains("\"mixed_frames\": left out, it holds bytes_list and int64_list"),
        "{notes:?}"
    );
    assert!(
        notes[0].contains("\"mixed\": left out, it holds float_list and int64_list"),
        "{notes:?}"
    );
    assert!(notes[1].contains("\"nokind\": left out"), "{notes:?}");
}

#[test]
fn spec_errors_read_as_english() {
    let e = Spec::example(vec![FeatureSpec::var_len("x", DType::Int32)]).unwrap_err();
    assert!(
        e.to_string()
            .contains("dtype int32 is not allowed for var_len in an example spec"),
        "{e}"
    );
    let e = Spec::sequence_example(vec![FeatureSpec::var_len("x", DType::Float64)], vec![])
        .unwrap_err();
    assert!(
        e.to_string()
            .contains("is not allowed for var_len in a sequence_example spec"),
        "{e}"
    );
}
