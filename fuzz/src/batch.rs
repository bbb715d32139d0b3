//! The batched decoder on any bytes: every form of every payload kind, one
//! thread and two, a cold and a warm batch. Never a panic; an error names
//! the record where the batch stops; the columns are consistent with the
//! rows; two threads give what one gives.

use std::sync::OnceLock;

use recordwire::batch::{
    decode, Batch, Column, DType, Decoder, DefaultValue, FeatureSpec, Layout, Spec,
};

/// The specs the first input byte picks from: names of the reference files'
/// features (the seeds hold them) and one-letter names.
fn specs() -> &'static [Spec] {
    static SPECS: OnceLock<Vec<Spec>> = OnceLock::new();
    SPECS.get_or_init(|| {
        use DType::*;
        let example = |fs: Vec<FeatureSpec>| Spec::example(fs).expect("a valid spec");
        vec![
            example(vec![
                FeatureSpec::fixed_len("label", Int64, &[])
                    .default_value(DefaultValue::Int(vec![-1])),
                FeatureSpec::fixed_len("image", Bytes, &[])
                    .default_value(DefaultValue::Bytes(vec![b"x".to_vec()])),
                FeatureSpec::var_len("w", Float32).sparse(),
                FeatureSpec::fixed_len_sequence("a", Float32, &[2]).allow_missing(true),
                FeatureSpec::var_len("b", Bytes).borrowed(),
            ]),
            example(vec![
                FeatureSpec::fixed_len("label", Int64, &[]),
                FeatureSpec::fixed_len("w", Float32, &[2]),
                FeatureSpec::fixed_len_sequence("image", Bytes, &[])
                    .allow_missing(true)
                    .borrowed(),
                FeatureSpec::var_len("a", Int64),
            ]),
            Spec::sequence_example(
                vec![
                    FeatureSpec::fixed_len("id", Bytes, &[])
                        .default_value(DefaultValue::Bytes(vec![vec![]])),
                    FeatureSpec::var_len("score", Float32),
                ],
                vec![
                    FeatureSpec::var_len("tokens", Int64).sparse(),
                    FeatureSpec::fixed_len_sequence("a", Float32, &[]).allow_missing(true),
                    FeatureSpec::fixed_len_sequence("b", Bytes, &[2]).allow_missing(false),
                ],
            )
            .expect("a valid spec"),
            Spec::ofrecord(vec![
                FeatureSpec::ofrecord_raw("images", Float32, &[4]).ofrecord_flags(true, false),
                FeatureSpec::ofrecord_raw("labels", UInt8, &[]).ofrecord_flags(false, true),
                FeatureSpec::var_len("a", Float64),
                FeatureSpec::fixed_len("b", Int32, &[1]).default_value(DefaultValue::Int(vec![3])),
            ])
            .expect("a valid spec"),
        ]
    })
}

fn two_threads() -> &'static Decoder {
    static DECODER: OnceLock<Decoder> = OnceLock::new();
    DECODER.get_or_init(|| Decoder::new(2))
}

/// The column's buffers agree with each other and with `rows`.
fn check_column(c: &Column<'_>, rows: usize) {
    let n = c.len();
    if c.dtype() == DType::Bytes {
        if let Some(o) = c.offsets() {
            assert_eq!(o[0], 0);
            assert!(o.windows(2).all(|w| w[0] <= w[1]), "{}: offsets", c.name());
            assert_eq!(
                *o.last().expect("offsets start with 0") as usize,
                c.raw_values().len()
            );
        }
    }
    match c.layout() {
        Layout::Dense => {
            assert_eq!(c.shape()[0], rows, "{}", c.name());
            assert_eq!(c.shape().iter().product::<usize>(), n, "{}", c.name());
            if let Some(l) = c.lengths() {
                assert_eq!(l.len(), rows);
                if c.shape().len() >= 2 {
                    assert!(l.iter().all(|&x| x >= 0 && x as usize <= c.shape()[1]));
                }
            }
        }
        Layout::Ragged | Layout::RaggedFrames => {
            let s = c.row_splits().expect("a ragged column has row splits");
            assert_eq!(s.len(), rows + 1, "{}", c.name());
            assert_eq!(s[0], 0);
            assert!(s.windows(2).all(|w| w[0] <= w[1]));
            let end = match c.frame_splits() {
                Some(f) => {
                    assert_eq!(
                        *s.last().expect("splits start with 0") as usize + 1,
                        f.len()
                    );
                    assert!(f.windows(2).all(|w| w[0] <= w[1]));
                    *f.last().expect("frame splits start with 0")
                }
                None => *s.last().expect("splits start with 0"),
            };
            assert_eq!(end as usize, n, "{}", c.name());
            if let Some(sp) = c.sparse() {
                assert_eq!(sp.indices.len(), n * sp.dense_shape.len());
                assert_eq!(sp.dense_shape[0], rows);
            }
        }
    }
}

/// The first byte picks the spec; the rest is the payload, decoded as a
/// batch of 40 records (the payload, its halves, and again), so that two
/// threads split it.
pub fn batch_decode(data: &[u8]) {
    let Some((&pick, payload)) = data.split_first() else {
        return;
    };
    let spec = &specs()[pick as usize % specs().len()];
    let (front, back) = payload.split_at(payload.len() / 2);
    let records: Vec<&[u8]> = [payload, front, payload, back]
        .iter()
        .copied()
        .cycle()
        .take(40)
        .collect();
    let mut one = Batch::new();
    let r1 = decode(&records, spec, &mut one);
    match &r1 {
        Ok(()) => assert_eq!(one.rows(), records.len()),
        Err(e) => assert_eq!(e.record(), Some(one.rows() as u64), "{e}"),
    }
    for c in one.columns().iter().chain(one.sequence()) {
        check_column(c, one.rows());
    }
    // Warm: the same again.
    let mut warm = one.clone();
    let r1b = decode(&records, spec, &mut warm);
    assert_eq!(
        r1.as_ref().map_err(ToString::to_string),
        r1b.as_ref().map_err(ToString::to_string)
    );
    assert!(one == warm, "a warm batch decodes otherwise");
    let mut two = Batch::new();
    let r2 = two_threads().decode(&records, spec, &mut two);
    assert_eq!(
        r1.as_ref().map_err(ToString::to_string),
        r2.as_ref().map_err(ToString::to_string)
    );
    assert!(one == two, "two threads decode otherwise");
}
