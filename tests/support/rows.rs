//! A naive reading of a decoded batch, row by row through the column
//! accessors, dropping padding by the lengths: what an export of the batch
//! (Parquet, Arrow) should hold. Shared by the Arrow mapping's unit tests
//! (`src/arrow/tests.rs`) and the export tests (`tests/cli/export.rs`),
//! which include this file, with the SequenceExample records both decode;
//! the includer imports `Column`, `DType`, `FeatureSpec`, `Form` and the
//! `encode` messages.

#![allow(dead_code, clippy::unwrap_used)]

use super::{
    Column, DType, Feature, FeatureList, FeatureLists, FeatureSpec, Features, Form, SequenceExample,
};

/// One record's value: scalars and lists of them.
#[derive(Debug, Clone, PartialEq)]
pub enum V {
    I(i64),
    /// A float's bits (NaN compares).
    F(u64),
    B(Vec<u8>),
    L(Vec<V>),
}

pub fn scalar(col: &Column<'_>, slot: usize) -> V {
    match col.dtype() {
        DType::Int64 => V::I(col.values::<i64>().unwrap()[slot]),
        DType::Int32 => V::I(col.values::<i32>().unwrap()[slot].into()),
        DType::Int8 => V::I(col.values::<i8>().unwrap()[slot].into()),
        DType::UInt8 => V::I(col.values::<u8>().unwrap()[slot].into()),
        DType::Float32 => V::F(f64::from(col.values::<f32>().unwrap()[slot]).to_bits()),
        DType::Float64 => V::F(col.values::<f64>().unwrap()[slot].to_bits()),
        DType::Bytes => V::B(col.bytes_value(slot).unwrap().to_vec()),
    }
}

pub fn element(col: &Column<'_>, dims: &[usize], slot: usize) -> V {
    match dims {
        [] => scalar(col, slot),
        [d, rest @ ..] => {
            let size: usize = rest.iter().product();
            V::L(
                (0..*d)
                    .map(|k| element(col, rest, slot + k * size))
                    .collect(),
            )
        }
    }
}

/// Row `r` of a column, read naively: what the mapping should give.
pub fn naive_row(f: &FeatureSpec, sequence: bool, col: &Column<'_>, r: usize) -> V {
    let dims = f.form.shape().unwrap_or_default();
    let elems: usize = dims.iter().product();
    match (&f.form, sequence) {
        (Form::FixedLen { .. }, _) => element(col, dims, r * elems),
        (
            Form::OfRecordRaw {
                dim1_varying_length,
                auto_zero_padding,
                ..
            },
            _,
        ) => {
            if *dim1_varying_length || *auto_zero_padding {
                let n = col.lengths().unwrap()[r] as usize;
                V::L((0..n).map(|k| scalar(col, r * elems + k)).collect())
            } else {
                element(col, dims, r * elems)
            }
        }
        (Form::FixedLenSequence { .. }, _) => {
            let row_slots = col.shape()[1] * elems;
            let n = col.lengths().unwrap()[r] as usize;
            V::L(
                (0..n)
                    .map(|k| element(col, dims, r * row_slots + k * elems))
                    .collect(),
            )
        }
        (Form::VarLen, false) => {
            let s = col.row_splits().unwrap();
            V::L((s[r]..s[r + 1]).map(|k| scalar(col, k as usize)).collect())
        }
        (Form::VarLen, true) => {
            let rows = col.row_splits().unwrap();
            let frames = col.frame_splits().unwrap();
            V::L(
                (rows[r]..rows[r + 1])
                    .map(|fr| {
                        let fr = fr as usize;
                        V::L(
                            (frames[fr]..frames[fr + 1])
                                .map(|k| scalar(col, k as usize))
                                .collect(),
                        )
                    })
                    .collect(),
            )
        }
    }
}

/// SequenceExample record `i`: context `id` and `name`, feature lists of
/// every kind, some frames empty, one list named as a context feature.
pub fn sequence_example(i: usize) -> Vec<u8> {
    let n = i as i64;
    let context: Features = [
        ("id", Feature::Int64(vec![1000 + n])),
        (
            "name",
            Feature::Bytes(vec![format!("clip-{i}").into_bytes(); i % 3]),
        ),
    ]
    .into_iter()
    .collect();
    let fl = |frames: Vec<Feature>| FeatureList { features: frames };
    let mut lists: Vec<(&str, FeatureList)> = vec![
        (
            "notes",
            fl((0..i % 4)
                .map(|f| Feature::Int64((0..(f + i) % 3).map(|k| k as i64 + n).collect()))
                .collect()),
        ),
        (
            "words",
            fl((0..i % 3)
                .map(|f| Feature::Bytes(vec![format!("w{f}").into_bytes(); (f + i) % 3]))
                .collect()),
        ),
        (
            "labels",
            fl((0..i % 3)
                .map(|f| Feature::Bytes(vec![format!("l{f}").into_bytes()]))
                .collect()),
        ),
        ("id", fl(vec![Feature::Int64(vec![n, -n])])),
    ];
    if i % 4 != 1 {
        lists.push((
            "frames",
            fl((0..i % 5)
                .map(|f| Feature::Float((0..3).map(|k| (f * 3 + k) as f32 + n as f32).collect()))
                .collect()),
        ));
    }
    SequenceExample {
        context: Some(context),
        feature_lists: Some(lists.into_iter().collect::<FeatureLists>()),
    }
    .to_bytes()
    .unwrap()
}
