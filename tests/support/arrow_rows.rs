//! Row values read back from Arrow arrays (Parquet read with arrow-rs, or
//! `recordwire::arrow`'s record batches) in the form of `rows.rs`, for the
//! tests that include both files; the includer has `V` in scope.

use arrow_array::cast::AsArray;
use arrow_array::types::{Float32Type, Float64Type, Int32Type, Int64Type, Int8Type, UInt8Type};
use arrow_array::Array;
use arrow_schema::DataType as T;

use super::V;

/// Value `i` of `a`, nested for list types.
pub fn arrow_value(a: &dyn Array, i: usize) -> V {
    match a.data_type() {
        T::Int64 => V::I(a.as_primitive::<Int64Type>().value(i)),
        T::Int32 => V::I(a.as_primitive::<Int32Type>().value(i).into()),
        T::Int8 => V::I(a.as_primitive::<Int8Type>().value(i).into()),
        T::UInt8 => V::I(a.as_primitive::<UInt8Type>().value(i).into()),
        T::Float32 => V::F(f64::from(a.as_primitive::<Float32Type>().value(i)).to_bits()),
        T::Float64 => V::F(a.as_primitive::<Float64Type>().value(i).to_bits()),
        T::LargeBinary => V::B(a.as_binary::<i64>().value(i).to_vec()),
        T::FixedSizeList(..) => {
            let l = a.as_fixed_size_list().value(i);
            V::L((0..l.len()).map(|k| arrow_value(&l, k)).collect())
        }
        T::LargeList(_) => {
            let l = a.as_list::<i64>().value(i);
            V::L((0..l.len()).map(|k| arrow_value(&l, k)).collect())
        }
        t => panic!("unexpected type {t}"),
    }
}
