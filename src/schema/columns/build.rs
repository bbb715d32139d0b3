//! The column builders of [`super`]: one per Arrow field, made from the
//! field itself (so that the arrays always have the types the schema says),
//! appended to row by row, nested as the Arrow type nests.

use std::sync::Arc;

use arrow_array::types::{Float32Type, Float64Type, Int32Type, Int64Type, UInt32Type, UInt64Type};
use arrow_array::{
    ArrayRef, BooleanArray, LargeBinaryArray, LargeListArray, LargeStringArray, MapArray,
    PrimitiveArray, StructArray,
};
use arrow_buffer::{Buffer, NullBuffer, OffsetBuffer, ScalarBuffer};
use arrow_schema::{ArrowError, DataType, FieldRef, Fields};

/// The values of one column, by its Arrow type.
enum Data {
    Bool(Vec<bool>),
    I32(Vec<i32>),
    I64(Vec<i64>),
    U32(Vec<u32>),
    U64(Vec<u64>),
    F32(Vec<f32>),
    F64(Vec<f64>),
    /// `LargeUtf8` (`utf8`) or `LargeBinary`.
    Bytes {
        offsets: Vec<i64>,
        data: Vec<u8>,
        utf8: bool,
    },
    List {
        offsets: Vec<i64>,
        item: Box<Col>,
        field: FieldRef,
    },
    Struct {
        children: Vec<Col>,
        fields: Fields,
    },
    Map {
        offsets: Vec<i64>,
        keys: Box<Col>,
        values: Box<Col>,
        field: FieldRef,
        entries: Fields,
    },
}

/// A column being built: its values and, per row, whether it is valid.
pub(super) struct Col {
    data: Data,
    valid: Vec<bool>,
    nullable: bool,
}

/// A scalar to append, as the column's type holds it.
#[derive(Clone, Copy)]
pub(super) enum Cell<'a> {
    Bool(bool),
    I32(i32),
    I64(i64),
    U32(u32),
    U64(u64),
    F32(f32),
    F64(f64),
    /// UTF-8 text (checked by the caller) or bytes.
    Bytes(&'a [u8]),
}

fn unsupported(t: &DataType) -> ArrowError {
    ArrowError::NotYetImplemented(format!("schema columns: no builder for {t}"))
}

impl Col {
    /// An empty column for `data_type` (`nullable`: what the field says).
    pub(super) fn new(data_type: &DataType, nullable: bool) -> Result<Col, ArrowError> {
        let data = match data_type {
            DataType::Boolean => Data::Bool(Vec::new()),
            DataType::Int32 => Data::I32(Vec::new()),
            DataType::Int64 => Data::I64(Vec::new()),
            DataType::UInt32 => Data::U32(Vec::new()),
            DataType::UInt64 => Data::U64(Vec::new()),
            DataType::Float32 => Data::F32(Vec::new()),
            DataType::Float64 => Data::F64(Vec::new()),
            DataType::LargeUtf8 | DataType::LargeBinary => Data::Bytes {
                offsets: vec![0],
                data: Vec::new(),
                utf8: matches!(data_type, DataType::LargeUtf8),
            },
            DataType::LargeList(field) => Data::List {
                offsets: vec![0],
                item: Box::new(Col::new(field.data_type(), field.is_nullable())?),
                field: Arc::clone(field),
            },
            DataType::Struct(fields) => Data::Struct {
                children: fields
                    .iter()
                    .map(|f| Col::new(f.data_type(), f.is_nullable()))
                    .collect::<Result<_, _>>()?,
                fields: fields.clone(),
            },
            DataType::Map(field, _) => {
                let DataType::Struct(entries) = field.data_type() else {
                    return Err(unsupported(data_type));
                };
                let [key, value] = &entries.iter().collect::<Vec<_>>()[..] else {
                    return Err(unsupported(data_type));
                };
                Data::Map {
                    offsets: vec![0],
                    keys: Box::new(Col::new(key.data_type(), key.is_nullable())?),
                    values: Box::new(Col::new(value.data_type(), value.is_nullable())?),
                    field: Arc::clone(field),
                    entries: entries.clone(),
                }
            }
            other => return Err(unsupported(other)),
        };
        Ok(Col {
            data,
            valid: Vec::new(),
            nullable,
        })
    }

    /// Appends a scalar (of the column's type: a cell of another type
    /// appends the column's zero, which the walker never asks for).
    pub(super) fn push(&mut self, cell: Cell<'_>) {
        self.valid.push(true);
        match (&mut self.data, cell) {
            (Data::Bool(v), Cell::Bool(x)) => v.push(x),
            (Data::I32(v), Cell::I32(x)) => v.push(x),
            (Data::I64(v), Cell::I64(x)) => v.push(x),
            (Data::U32(v), Cell::U32(x)) => v.push(x),
            (Data::U64(v), Cell::U64(x)) => v.push(x),
            (Data::F32(v), Cell::F32(x)) => v.push(x),
            (Data::F64(v), Cell::F64(x)) => v.push(x),
            (Data::Bytes { offsets, data, .. }, Cell::Bytes(b)) => {
                data.extend_from_slice(b);
                offsets.push(data.len() as i64);
            }
            _ => {
                self.valid.pop();
                self.filler(true);
            }
        }
    }

    /// Appends null, or where the column is not nullable (a child of a null
    /// struct, which Arrow masks) the zero of its type.
    pub(super) fn push_null(&mut self) {
        let nullable = self.nullable;
        self.filler(!nullable);
    }

    /// Appends the zero of the type (an empty list or map, a struct of the
    /// children's fillers), valid or not.
    fn filler(&mut self, valid: bool) {
        self.valid.push(valid);
        match &mut self.data {
            Data::Bool(v) => v.push(false),
            Data::I32(v) => v.push(0),
            Data::I64(v) => v.push(0),
            Data::U32(v) => v.push(0),
            Data::U64(v) => v.push(0),
            Data::F32(v) => v.push(0.0),
            Data::F64(v) => v.push(0.0),
            Data::Bytes { offsets, .. }
            | Data::List { offsets, .. }
            | Data::Map { offsets, .. } => {
                let last = offsets.last().copied().unwrap_or(0);
                offsets.push(last);
            }
            Data::Struct { children, .. } => children.iter_mut().for_each(Col::push_null),
        }
    }

    /// The item column of a list (`None` for other types).
    pub(super) fn item(&mut self) -> Option<&mut Col> {
        match &mut self.data {
            Data::List { item, .. } => Some(item),
            _ => None,
        }
    }

    /// Closes a list or map row whose items were appended to its item (or
    /// key and value) columns since the last row.
    pub(super) fn close_row(&mut self) {
        self.valid.push(true);
        match &mut self.data {
            Data::List { offsets, item, .. } => offsets.push(item.valid.len() as i64),
            Data::Map { offsets, keys, .. } => offsets.push(keys.valid.len() as i64),
            _ => {}
        }
    }

    /// The key and value columns of a map.
    pub(super) fn entries(&mut self) -> Option<(&mut Col, &mut Col)> {
        match &mut self.data {
            Data::Map { keys, values, .. } => Some((keys, values)),
            _ => None,
        }
    }

    /// The children of a struct; appending a row to each, then
    /// [`Col::close_struct`], appends one valid struct.
    pub(super) fn children(&mut self) -> &mut [Col] {
        match &mut self.data {
            Data::Struct { children, .. } => children,
            _ => &mut [],
        }
    }

    /// Marks one struct row (whose children were appended) valid.
    pub(super) fn close_struct(&mut self) {
        self.valid.push(true);
    }

    fn nulls(&self) -> Option<NullBuffer> {
        if self.valid.iter().all(|v| *v) {
            None
        } else {
            Some(NullBuffer::from(self.valid.clone()))
        }
    }

    /// The Arrow array of what was appended.
    pub(super) fn finish(self) -> Result<ArrayRef, ArrowError> {
        let nulls = self.nulls();
        let len = self.valid.len();
        Ok(match self.data {
            Data::Bool(v) => Arc::new(BooleanArray::new(v.into(), nulls)),
            Data::I32(v) => Arc::new(PrimitiveArray::<Int32Type>::new(v.into(), nulls)),
            Data::I64(v) => Arc::new(PrimitiveArray::<Int64Type>::new(v.into(), nulls)),
            Data::U32(v) => Arc::new(PrimitiveArray::<UInt32Type>::new(v.into(), nulls)),
            Data::U64(v) => Arc::new(PrimitiveArray::<UInt64Type>::new(v.into(), nulls)),
            Data::F32(v) => Arc::new(PrimitiveArray::<Float32Type>::new(v.into(), nulls)),
            Data::F64(v) => Arc::new(PrimitiveArray::<Float64Type>::new(v.into(), nulls)),
            Data::Bytes {
                offsets,
                data,
                utf8,
            } => {
                let offsets = OffsetBuffer::new(ScalarBuffer::from(offsets));
                let data = Buffer::from_vec(data);
                if utf8 {
                    Arc::new(LargeStringArray::try_new(offsets, data, nulls)?)
                } else {
                    Arc::new(LargeBinaryArray::try_new(offsets, data, nulls)?)
                }
            }
            Data::List {
                offsets,
                item,
                field,
            } => Arc::new(LargeListArray::try_new(
                field,
                OffsetBuffer::new(ScalarBuffer::from(offsets)),
                item.finish()?,
                nulls,
            )?),
            Data::Struct { children, fields } => {
                if fields.is_empty() {
                    Arc::new(StructArray::new_empty_fields(len, nulls))
                } else {
                    let arrays = children
                        .into_iter()
                        .map(Col::finish)
                        .collect::<Result<Vec<_>, _>>()?;
                    Arc::new(StructArray::try_new(fields, arrays, nulls)?)
                }
            }
            Data::Map {
                offsets,
                keys,
                values,
                field,
                entries,
            } => {
                let entries =
                    StructArray::try_new(entries, vec![keys.finish()?, values.finish()?], None)?;
                let offsets = ScalarBuffer::from(
                    offsets
                        .iter()
                        .map(|&o| i32::try_from(o))
                        .collect::<Result<Vec<i32>, _>>()
                        .map_err(|_| {
                            ArrowError::InvalidArgumentError(
                                "schema columns: a map column of more than 2^31 entries".into(),
                            )
                        })?,
                );
                Arc::new(MapArray::try_new(
                    field,
                    OffsetBuffer::new(offsets),
                    entries,
                    nulls,
                    false,
                )?)
            }
        })
    }
}
