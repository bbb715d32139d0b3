//! Telling payloads apart (docs/FORMAT.md §2.4): `view::PayloadSniffer` /
//! `detect_payload` on the reference files and on messages that are neither
//! a tf.Example nor a SequenceExample, and `PayloadRef::unknown_top_field`
//! against the generators' own knowledge of which fields they wrote.

#![allow(clippy::unwrap_used)]

use crate::support::common;
use crate::support::prost_mirror::tf;

use common::{encode, Cfg, Msg, F};
use proptest::prelude::*;
use prost::Message;
use recordwire::io::{OpenOptions, RecordFile};
use recordwire::view::{
    detect_payload, PayloadKind, PayloadRef, PayloadSniffer, SequenceExampleRef,
};
use recordwire::wire::{encode_varint, WireType};

fn payloads(path: &str) -> Vec<Vec<u8>> {
    let file = RecordFile::open(path, &OpenOptions::default()).unwrap();
    file.records().map(|r| r.unwrap().data.to_vec()).collect()
}

fn len_field(n: u32, body: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    encode_varint(((n as u64) << 3) | 2, &mut out);
    encode_varint(body.len() as u64, &mut out);
    out.extend_from_slice(body);
    out
}

fn example(name: &str, values: &[i64]) -> Vec<u8> {
    let mut features = tf::Features::default();
    features.feature.insert(
        name.into(),
        tf::Feature {
            kind: Some(tf::Kind::Int64List(tf::Int64List {
                value: values.to_vec(),
            })),
        },
    );
    tf::Example {
        features: Some(features),
    }
    .encode_to_vec()
}

#[test]
fn reference_files_are_told_apart() {
    let examples = payloads("testdata/ref/examples.tfrecord");
    assert_eq!(
        detect_payload(examples.iter().map(Vec::as_slice)),
        PayloadKind::Example
    );
    let small = payloads("testdata/ref/small.tfrecord");
    assert_eq!(
        detect_payload(small.iter().map(Vec::as_slice)),
        PayloadKind::Example
    );

    // Record 0 is empty, 1 has only a context, 2 the first feature lists.
    let sequences = payloads("testdata/ref/sequence_examples.tfrecord");
    let mut sniffer = PayloadSniffer::new();
    let mut fed = 0;
    for p in &sequences {
        fed += 1;
        if sniffer.feed(p) {
            break;
        }
    }
    assert_eq!(sniffer.kind(), PayloadKind::SequenceExample);
    assert_eq!(sniffer.evidence(), Some(2));
    assert_eq!((fed, sniffer.records()), (3, 3));
    // Only the first records count.
    let late: Vec<&[u8]> = std::iter::repeat_n(&[][..], PayloadSniffer::RECORDS)
        .chain(sequences.iter().map(Vec::as_slice))
        .collect();
    assert_eq!(detect_payload(late), PayloadKind::Example);
}

#[test]
fn a_sequence_example_written_by_prost_is_one() {
    // prost leaves out an empty key and an empty value of a map entry.
    let mut lists = tf::FeatureLists::default();
    lists
        .feature_list
        .insert(String::new(), tf::FeatureList::default());
    lists.feature_list.insert(
        "tokens".into(),
        tf::FeatureList {
            feature: vec![tf::Feature::default()],
        },
    );
    let se = tf::SequenceExample {
        context: None,
        feature_lists: Some(lists),
    }
    .encode_to_vec();
    assert_eq!(detect_payload([&se[..]]), PayloadKind::SequenceExample);
    // With only empty lists, whose values prost leaves out, the entries look
    // like those of a tf.Example read as FeatureLists: not enough.
    let mut lists = tf::FeatureLists::default();
    lists
        .feature_list
        .insert("t".into(), tf::FeatureList::default());
    let bare = tf::SequenceExample {
        context: None,
        feature_lists: Some(lists),
    }
    .encode_to_vec();
    assert_eq!(bare, [0x12, 0x05, 0x0a, 0x03, 0x0a, 0x01, b't']);
    assert_eq!(detect_payload([&bare[..]]), PayloadKind::Example);

    // Feature lists present but empty: nothing says it is not a tf.Example.
    let empty = tf::SequenceExample {
        context: Some(tf::Features::default()),
        feature_lists: Some(tf::FeatureLists::default()),
    }
    .encode_to_vec();
    assert_eq!(empty, [0x0a, 0x00, 0x12, 0x00]);
    assert_eq!(detect_payload([&empty[..]]), PayloadKind::Example);
}

#[test]
fn other_messages_with_a_field_2_are_not_sequence_examples() {
    // TF Ranking's ExampleListWithContext: `repeated Example examples = 1;
    // Example context = 2;`. It parses as a SequenceExample (and as a
    // tf.Example), but its context read as FeatureLists has entries without
    // values.
    let mut elwc = len_field(1, &example("document_tokens", &[1, 2]));
    elwc.extend(len_field(1, &example("document_tokens", &[3])));
    elwc.extend(len_field(2, &example("query_tokens", &[4, 5])));
    assert!(SequenceExampleRef::parse(&elwc, 0).is_ok());
    assert_eq!(detect_payload([&elwc[..]]), PayloadKind::Example);
    let unknown = PayloadRef::new(PayloadKind::Example, &elwc, 0)
        .unknown_top_field()
        .unwrap()
        .unwrap();
    assert_eq!((unknown.number, unknown.wire_type), (2, WireType::Len));

    // TensorBoard's Event: `double wall_time = 1; int64 step = 2;
    // string file_version = 3;`.
    let mut event = vec![0x09];
    event.extend_from_slice(&1.5f64.to_le_bytes());
    event.extend_from_slice(&[0x10, 0x07]);
    event.extend(len_field(3, b"brain.Event:2"));
    assert_eq!(detect_payload([&event[..]]), PayloadKind::Example);
    let unknown = PayloadRef::new(PayloadKind::Example, &event, 0)
        .unknown_top_field()
        .unwrap()
        .unwrap();
    assert_eq!(
        (unknown.number, unknown.wire_type, unknown.offset),
        (1, WireType::Fixed64, 0)
    );

    // A field 2 with a third field beside it.
    let mut three = tf::SequenceExample {
        context: None,
        feature_lists: Some(tf::FeatureLists {
            feature_list: [(
                "t".to_string(),
                tf::FeatureList {
                    feature: vec![tf::Feature::default()],
                },
            )]
            .into(),
        }),
    }
    .encode_to_vec();
    assert_eq!(detect_payload([&three[..]]), PayloadKind::SequenceExample);
    three.extend(len_field(3, b"x"));
    assert_eq!(detect_payload([&three[..]]), PayloadKind::Example);

    // Raw bytes (magenta's test file).
    for raw in [&b"hello world"[..], b"12345", b"success"] {
        assert_eq!(detect_payload([raw]), PayloadKind::Example);
    }
}

#[test]
fn unknown_top_fields_by_kind() {
    let se_only = len_field(2, &[]);
    let check = |kind, bytes: &[u8]| {
        PayloadRef::new(kind, bytes, 100)
            .unknown_top_field()
            .unwrap()
            .map(|f| (f.number, f.wire_type as u8, f.offset))
    };
    assert_eq!(check(PayloadKind::Example, &se_only), Some((2, 2, 100)));
    assert_eq!(check(PayloadKind::SequenceExample, &se_only), None);
    assert_eq!(check(PayloadKind::OfRecord, &se_only), Some((2, 2, 100)));
    assert_eq!(check(PayloadKind::Raw, &se_only), None);
    // A known number with another wire type is unknown (docs/FORMAT.md §3.3).
    assert_eq!(
        check(PayloadKind::Example, &[0x0a, 0x00, 0x08, 0x01]),
        Some((1, 0, 102))
    );
    // A top level that does not decode is an error.
    assert!(PayloadRef::new(PayloadKind::Example, &[0x0f], 0)
        .unknown_top_field()
        .is_err());
}

/// The first field of `top` that message `m` does not have.
fn first_unknown(m: Msg, top: &[F]) -> Option<(u32, u8)> {
    top.iter().find_map(|f| {
        let (n, w) = match f {
            F::Varint { n, .. } | F::I32 { n, .. } | F::I64 { n, .. } => (*n, f.wire_type()),
            F::Len { n, .. } | F::Group { n, .. } => (*n, f.wire_type()),
            F::Raw(_) => return None,
        };
        (!m.known(n, w)).then_some((n, w))
    })
}

proptest! {
    #![proptest_config(common::config(common::cases(256)))]

    /// `unknown_top_field` finds the first top-level field the generator
    /// wrote as unknown, and detection says SequenceExample only of records
    /// that are one and have feature lists.
    #[test]
    fn unknown_fields_and_detection((kind, fields) in common::any_record(Cfg::default())) {
        let bytes = encode(&fields);
        let m = match kind {
            PayloadKind::Example => Msg::Example,
            PayloadKind::SequenceExample => Msg::Seq,
            _ => Msg::Field1IsMessage,
        };
        let got = PayloadRef::new(kind, &bytes, 0)
            .unknown_top_field()
            .unwrap()
            .map(|f| (f.number, f.wire_type as u8));
        prop_assert_eq!(got, first_unknown(m, &fields));

        if detect_payload([&bytes[..]]) == PayloadKind::SequenceExample {
            let se = SequenceExampleRef::parse(&bytes, 0);
            prop_assert!(se.is_ok());
            prop_assert!(!se.unwrap().feature_lists().is_empty().unwrap());
        }
    }
}
