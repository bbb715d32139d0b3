use super::*;

/// The 104 bytes of the seed's tf.Example dump (testdata/seed_example.xxd,
/// docs/FORMAT.md §4.4).
const SEED: [u8; 104] = [
    0x0a, 0x66, 0x0a, 0x25, 0x0a, 0x11, b'm', b'a', b's', b'k', b'e', b'd', b'_', b'l', b'm', b'_',
    b'w', b'e', b'i', b'g', b'h', b't', b's', 0x12, 0x10, 0x12, 0x0e, 0x0a, 0x0c, 0, 0, 0x80, 0x3f,
    0, 0, 0x80, 0x3f, 0, 0, 0, 0, 0x0a, 0x1e, 0x0a, 0x13, b'm', b'a', b's', b'k', b'e', b'd', b'_',
    b'l', b'm', b'_', b'p', b'o', b's', b'i', b't', b'i', b'o', b'n', b's', 0x12, 0x07, 0x1a, 0x05,
    0x0a, 0x03, 0x02, 0x0a, 0x00, 0x0a, 0x1d, 0x0a, 0x14, b'n', b'e', b'x', b't', b'_', b's', b'e',
    b'n', b't', b'e', b'n', b'c', b'e', b'_', b'l', b'a', b'b', b'e', b'l', b's', 0x12, 0x05, 0x1a,
    0x03, 0x0a, 0x01, 0x01,
];

fn seed_example() -> Example {
    let mut f = Features::new();
    f.insert("masked_lm_weights", Feature::Float(vec![1.0, 1.0, 0.0]));
    f.insert("masked_lm_positions", Feature::Int64(vec![2, 10, 0]));
    f.insert("next_sentence_labels", Feature::Int64(vec![1]));
    Example::with_features(f)
}

#[test]
fn seed_example_is_byte_exact() {
    let ex = seed_example();
    assert_eq!(ex.encoded_len().unwrap(), 104);
    assert_eq!(ex.to_bytes().unwrap(), SEED);
}

#[test]
fn seed_round_trips_through_the_view() {
    let view = crate::view::ExampleRef::parse(&SEED, 0).unwrap();
    let owned = example_from_view(view).unwrap();
    assert_eq!(owned, seed_example());
    // Encoding straight from the borrowed features gives the same bytes.
    let mut out = Vec::new();
    for e in view.features().iter() {
        let e = e.unwrap();
        let mut feature = Vec::new();
        encode_feature_ref(e.feature, Schema::TensorFlow, e.name(), &mut feature).unwrap();
        assert_eq!(
            feature.len(),
            from_view::feature_ref_encoded_len(e.feature).unwrap()
        );
        let entry_len = entry_len(e.name().len(), feature.len());
        put_tag_len(&mut out, 1, entry_len);
        put_tag_len(&mut out, 1, e.name().len());
        out.extend_from_slice(e.name());
        put_tag_len(&mut out, 2, feature.len());
        out.extend_from_slice(&feature);
    }
    let mut whole = Vec::new();
    put_tag_len(&mut whole, 1, out.len());
    whole.extend_from_slice(&out);
    assert_eq!(whole, SEED);
}

#[test]
fn map_int64_seed_by_wire_encoder() {
    // {"test": 300} as map<string, int64> (the seed's first dump).
    let mut entry = Vec::new();
    put_tag_len(&mut entry, 1, 4);
    entry.extend_from_slice(b"test");
    entry.push(0x10);
    put_varint(300, &mut entry);
    let mut msg = Vec::new();
    put_tag_len(&mut msg, 1, entry.len());
    msg.extend_from_slice(&entry);
    assert_eq!(
        msg,
        [0x0a, 0x09, 0x0a, 0x04, b't', b'e', b's', b't', 0x10, 0xac, 0x02]
    );
}

#[test]
fn canonical_forms_of_edge_cases() {
    // Empty list: an empty list message; no kind: an empty Feature; empty key
    // and empty value are still written.
    let mut f = Features::new();
    f.insert("", Feature::Float(vec![]));
    f.insert("n", Feature::None);
    f.insert("b", Feature::Bytes(vec![vec![]]));
    let ex = Example::with_features(f);
    let b = ex.to_bytes().unwrap();
    assert_eq!(
        b,
        [
            0x0a, 0x1a, // features
            0x0a, 0x06, 0x0a, 0x00, 0x12, 0x02, 0x12, 0x00, // "" -> float_list {}
            0x0a, 0x05, 0x0a, 0x01, b'n', 0x12, 0x00, // "n" -> Feature {}
            0x0a, 0x09, 0x0a, 0x01, b'b', 0x12, 0x04, 0x0a, 0x02, 0x0a, 0x00, // "b" -> [b""]
        ]
    );
    assert_eq!(b.len(), ex.encoded_len().unwrap());
    // No features field vs an empty one.
    assert!(Example::default().to_bytes().unwrap().is_empty());
    assert_eq!(
        Example::with_features(Features::new()).to_bytes().unwrap(),
        [0x0a, 0x00]
    );
    // int32 negatives are 10-byte sign-extended varints.
    let mut f = Features::new();
    f.insert("i", Feature::Int32(vec![-1]));
    let of = OfRecord::with_features(f).to_bytes().unwrap();
    assert_eq!(of.len(), 2 + 3 + 2 + 2 + 2 + 10);
    assert_eq!(&of[of.len() - 12..of.len() - 10], [0x0a, 0x0a]);
}

#[test]
fn tf_example_rejects_ofrecord_only_kinds() {
    let mut f = Features::new();
    f.insert("d", Feature::Double(vec![1.0]));
    let e = Example::with_features(f.clone()).to_bytes().unwrap_err();
    assert_eq!(
        e,
        EncodeError::KindNotInSchema {
            name: b"d".to_vec(),
            kind: Kind::Double
        }
    );
    // fine in an OFRecord, where double_list is field 3
    let of = OfRecord::with_features(f).to_bytes().unwrap();
    assert_eq!(of[of.len() - 12], 0x1a);
}

#[test]
fn insertion_order_and_sorted_order() {
    let mut f = Features::new();
    f.insert("b", Feature::Int64(vec![1]));
    f.insert("a", Feature::Int64(vec![2]));
    f.insert("b", Feature::Int64(vec![3])); // replaces in place
    let names: Vec<_> = f.iter().map(|(n, _)| n.to_vec()).collect();
    assert_eq!(names, [b"b".to_vec(), b"a".to_vec()]);
    assert_eq!(f.get("b"), Some(&Feature::Int64(vec![3])));
    f.sort();
    let names: Vec<_> = f.iter().map(|(n, _)| n.to_vec()).collect();
    assert_eq!(names, [b"a".to_vec(), b"b".to_vec()]);
}

#[test]
fn encodes_into_any_bufmut_without_allocating_when_there_is_room() {
    let ex = seed_example();
    let mut buf = bytes::BytesMut::with_capacity(256);
    ex.encode_to(&mut buf).unwrap();
    assert_eq!(&buf[..], SEED);
    let mut v = Vec::with_capacity(200);
    v.extend_from_slice(b"prefix");
    let cap = v.capacity();
    ex.encode_to(&mut v).unwrap();
    assert_eq!(v.capacity(), cap, "no reallocation into a buffer with room");
    assert_eq!(&v[6..], SEED);
    let mut fixed = [0u8; 104];
    let mut slice: &mut [u8] = &mut fixed;
    ex.encode_to(&mut slice).unwrap();
    assert_eq!(fixed, SEED);
}
