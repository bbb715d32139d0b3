//! [`Column`]: one decoded feature, its layout and its public view.

use crate::batch::buf::AlignedBuf;
use crate::batch::shape::{shape_of, Fail, Shape};
use crate::batch::spec::{default_bytes, DType, DefaultValue, FeatureSpec, Form};

/// How a column's values are laid out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    /// `[rows, *shape]` ([`Form::FixedLen`], [`Form::OfRecordRaw`]) or
    /// `[rows, max_len, *shape]` ([`Form::FixedLenSequence`], also per frame
    /// in a sequence spec): one value slot per element of
    /// [`Column::shape`], row-major.
    Dense,
    /// Any number of values per row: row `r` holds values
    /// `row_splits[r]..row_splits[r + 1]` ([`Form::VarLen`]).
    Ragged,
    /// Frames per row, values per frame: row `r` holds frames
    /// `row_splits[r]..row_splits[r + 1]`, frame `f` holds values
    /// `frame_splits[f]..frame_splits[f + 1]` ([`Form::VarLen`] in a
    /// SequenceExample's sequence spec).
    RaggedFrames,
}

/// Element types a column's values can be read as ([`Column::values`]).
pub trait ColumnValue: bytemuck::Pod + std::fmt::Debug {
    /// The dtype whose columns hold this type.
    const DTYPE: DType;
}

macro_rules! column_value {
    ($($t:ty => $d:expr),+) => {$(
        impl ColumnValue for $t {
            const DTYPE: DType = $d;
        }
    )+};
}

column_value!(i64 => DType::Int64, f32 => DType::Float32, i32 => DType::Int32,
    f64 => DType::Float64, i8 => DType::Int8, u8 => DType::UInt8);

/// TensorFlow's sparse form of a ragged column ([`Column::sparse`]).
#[derive(Debug, Clone, Copy)]
pub struct Sparse<'c> {
    /// `[nnz, rank]` int64 coordinates, row-major (rank 2, or 3 over frames).
    pub indices: &'c [i64],
    /// `[rows, max_len]`, or `[rows, max_frames, max_len]`.
    pub dense_shape: &'c [usize],
}

/// Where a column's row began, to take back an entry that a later one with
/// the same name replaces, or that failed.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Mark {
    pub(crate) values: usize,
    pub(crate) frame_splits: usize,
}

/// One decoded feature.
///
/// Numeric values sit in one 64-byte aligned little-endian buffer
/// ([`raw_values`](Column::raw_values), typed by [`values`](Column::values));
/// bytes values either in one data buffer with int64 offsets (Arrow's
/// `LargeBinary` layout: value `i` is `data[offsets[i]..offsets[i + 1]]`) or,
/// for a spec that borrows, as slices of the input
/// ([`borrowed`](Column::borrowed)). Ragged columns add int64 `row_splits`
/// (Arrow's `LargeList` offsets), dense sequence columns the int64 `lengths`.
#[derive(Debug, Clone)]
pub struct Column<'a> {
    /// The feature it was made for (a batch reuses it only for the same one).
    pub(crate) spec: FeatureSpec,
    pub(crate) in_sequence: bool,
    pub(crate) dtype: DType,
    pub(crate) layout: Layout,
    pub(crate) borrow: bool,
    pub(crate) sparse_wanted: bool,
    /// The form as the decoder sees it (worked out once, not per record).
    pub(crate) form: Shape,
    pub(crate) values: AlignedBuf,
    pub(crate) offsets: AlignedBuf,
    pub(crate) borrowed: Vec<&'a [u8]>,
    pub(crate) splits: AlignedBuf,
    pub(crate) frame_splits: AlignedBuf,
    pub(crate) lengths: AlignedBuf,
    pub(crate) indices: AlignedBuf,
    pub(crate) shape: Vec<usize>,
    pub(crate) sparse_shape: Vec<usize>,
    /// Spare buffers for padding (kept so that a warm batch does not allocate).
    pub(crate) spare: AlignedBuf,
    pub(crate) spare_offsets: AlignedBuf,
    pub(crate) spare_borrowed: Vec<&'a [u8]>,
    /// The borrowed values as owned `Bytes`, once the batch is made to own
    /// them ([`Batch::into_owned`](crate::batch::Batch::into_owned));
    /// `shares` says they are the values.
    pub(crate) shared: Vec<bytes::Bytes>,
    pub(crate) shares: bool,
    /// A borrowing bytes column's default elements as `Bytes` (made once
    /// with the column), shared by the padded slots of an owned batch.
    pub(crate) shared_defaults: Vec<bytes::Bytes>,
    /// The default's elements as stored (numeric, little-endian; empty for
    /// bytes, whose default is read from the spec), when there is one.
    pub(crate) default: Option<Vec<u8>>,
    /// Per-record decode state.
    pub(crate) seen: u64,
    pub(crate) mark: Mark,
    pub(crate) pending: Option<Fail>,
    /// Values the current row's entry gave (OFRecord raw lengths).
    pub(crate) entry_len: usize,
}

/// Equal when everything a reader sees is: name, type, layout, shape and
/// every buffer's contents (not spare memory or decode state).
impl PartialEq for Column<'_> {
    fn eq(&self, o: &Self) -> bool {
        (
            &self.spec.name,
            self.dtype,
            self.layout,
            self.borrow,
            &self.shape,
        ) == (&o.spec.name, o.dtype, o.layout, o.borrow, &o.shape)
            && (&self.values, &self.offsets) == (&o.values, &o.offsets)
            && self.len() == o.len()
            && (self.dtype != DType::Bytes
                || (0..self.len()).all(|i| self.bytes_value(i) == o.bytes_value(i)))
            && (&self.splits, &self.frame_splits, &self.lengths)
                == (&o.splits, &o.frame_splits, &o.lengths)
            && (&self.indices, &self.sparse_shape) == (&o.indices, &o.sparse_shape)
    }
}

impl<'a> Column<'a> {
    pub(crate) fn new(f: &FeatureSpec, in_sequence: bool) -> Self {
        let layout = Column::layout_of(f, in_sequence);
        let defaults = match &f.form {
            Form::FixedLen { default, .. } | Form::FixedLenSequence { default, .. } => {
                default.as_ref()
            }
            _ => None,
        };
        // Bytes defaults are read from the spec itself (borrowed columns
        // point at them); numeric ones are kept as the column stores them.
        let default = defaults.map(|d| {
            let mut raw = Vec::new();
            default_bytes(d, f.dtype, &mut raw);
            raw
        });
        let mut c = Column {
            spec: f.clone(),
            in_sequence,
            dtype: f.dtype,
            layout,
            borrow: f.borrow,
            sparse_wanted: f.sparse,
            form: shape_of(f, in_sequence),
            values: AlignedBuf::new(),
            offsets: AlignedBuf::new(),
            borrowed: Vec::new(),
            splits: AlignedBuf::new(),
            frame_splits: AlignedBuf::new(),
            lengths: AlignedBuf::new(),
            indices: AlignedBuf::new(),
            shape: Vec::new(),
            sparse_shape: Vec::new(),
            spare: AlignedBuf::new(),
            spare_offsets: AlignedBuf::new(),
            spare_borrowed: Vec::new(),
            shared: Vec::new(),
            shares: false,
            shared_defaults: shared_defaults(f),
            default,
            seen: 0,
            mark: Mark::default(),
            pending: None,
            entry_len: 0,
        };
        c.clear();
        c
    }

    /// The column emptied of borrowed values and of owned ones, for inputs
    /// of another lifetime (see [`Batch::recycle`](crate::batch::Batch::recycle)).
    pub(super) fn recycle<'b>(self) -> Column<'b> {
        let mut c = self.relabel();
        c.shared.clear();
        c.shares = false;
        c
    }

    /// The same column for another lifetime: everything kept but the
    /// borrowed slices (their vectors' memory is reused).
    pub(in crate::batch) fn relabel<'b>(self) -> Column<'b> {
        let empty = |mut v: Vec<&'a [u8]>| -> Vec<&'b [u8]> {
            v.clear();
            // Empty: collecting reuses the allocation (same layout).
            v.into_iter().map(|_| unreachable!()).collect()
        };
        Column {
            borrowed: empty(self.borrowed),
            spare_borrowed: empty(self.spare_borrowed),
            shared: self.shared,
            shares: self.shares,
            shared_defaults: self.shared_defaults,
            spec: self.spec,
            in_sequence: self.in_sequence,
            dtype: self.dtype,
            layout: self.layout,
            borrow: self.borrow,
            sparse_wanted: self.sparse_wanted,
            form: self.form,
            values: self.values,
            offsets: self.offsets,
            splits: self.splits,
            frame_splits: self.frame_splits,
            lengths: self.lengths,
            indices: self.indices,
            shape: self.shape,
            sparse_shape: self.sparse_shape,
            spare: self.spare,
            spare_offsets: self.spare_offsets,
            default: self.default,
            seen: 0,
            mark: self.mark,
            pending: None,
            entry_len: 0,
        }
    }

    /// Empties the column for a new batch, keeping its memory.
    pub(crate) fn clear(&mut self) {
        self.values.clear();
        self.offsets.clear();
        self.offsets.push(0i64);
        self.borrowed.clear();
        self.shared.clear();
        self.shares = false;
        self.splits.clear();
        self.splits.push(0i64);
        self.frame_splits.clear();
        self.frame_splits.push(0i64);
        self.lengths.clear();
        self.indices.clear();
        self.shape.clear();
        self.sparse_shape.clear();
        self.seen = 0;
        self.pending = None;
    }

    /// Whether this column was made for `f` (so a batch can be reused).
    pub(crate) fn matches(&self, f: &FeatureSpec, in_sequence: bool) -> bool {
        self.in_sequence == in_sequence && self.spec.same(f)
    }

    fn layout_of(f: &FeatureSpec, in_sequence: bool) -> Layout {
        match (&f.form, in_sequence) {
            (Form::VarLen, false) => Layout::Ragged,
            (Form::VarLen, true) => Layout::RaggedFrames,
            _ => Layout::Dense,
        }
    }

    /// The feature's name.
    pub fn name(&self) -> &str {
        &self.spec.name
    }

    /// The element type.
    pub fn dtype(&self) -> DType {
        self.dtype
    }

    /// How the values are laid out.
    pub fn layout(&self) -> Layout {
        self.layout
    }

    /// The shape of a dense column (`[rows, *shape]` or `[rows, max_len,
    /// *shape]`); for a ragged column `[rows]`.
    pub fn shape(&self) -> &[usize] {
        &self.shape
    }

    /// The numeric values, when `T` is the column's type.
    pub fn values<T: ColumnValue>(&self) -> Option<&[T]> {
        (T::DTYPE == self.dtype).then(|| self.values.typed::<T>())
    }

    /// The values' buffer as bytes (numeric values little-endian; for an
    /// owned bytes column, the concatenated data). 64-byte aligned.
    pub fn raw_values(&self) -> &[u8] {
        self.values.as_bytes()
    }

    /// For an owned bytes column, the int64 offsets into
    /// [`raw_values`](Self::raw_values): one more than the number of values.
    pub fn offsets(&self) -> Option<&[i64]> {
        (self.dtype == DType::Bytes && !self.borrow).then(|| self.offsets.typed::<i64>())
    }

    /// For a borrowing bytes column, the values as slices of the input;
    /// `None` for a column of an owned batch, whose values are
    /// [`shared`](Self::shared).
    pub fn borrowed(&self) -> Option<&[&'a [u8]]> {
        (self.dtype == DType::Bytes && self.borrow && !self.shares)
            .then_some(self.borrowed.as_slice())
    }

    /// For a borrowing bytes column of a batch made to own its values
    /// ([`Batch::into_owned`](crate::batch::Batch::into_owned)), the values
    /// as `Bytes`: shares of the records' buffers (no copy), which keep them
    /// alive.
    pub fn shared(&self) -> Option<&[bytes::Bytes]> {
        (self.dtype == DType::Bytes && self.borrow && self.shares).then_some(self.shared.as_slice())
    }

    /// Number of values (slots, for a dense column).
    pub fn len(&self) -> usize {
        match (self.dtype, self.borrow) {
            (DType::Bytes, true) if self.shares => self.shared.len(),
            (DType::Bytes, true) => self.borrowed.len(),
            (DType::Bytes, false) => self.offsets.count::<i64>() - 1,
            (d, _) => self.values.len() / d.width(),
        }
    }

    /// Whether the column holds no values.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Bytes value `i` of a bytes column, in either form.
    pub fn bytes_value(&self, i: usize) -> Option<&[u8]> {
        if self.dtype != DType::Bytes {
            return None;
        }
        if self.borrow && self.shares {
            return self.shared.get(i).map(|b| &b[..]);
        }
        if self.borrow {
            return self.borrowed.get(i).copied();
        }
        let o = self.offsets.typed::<i64>();
        let (a, b) = (*o.get(i)? as usize, *o.get(i + 1)? as usize);
        self.values.as_bytes().get(a..b)
    }

    /// Row splits of a ragged column (`rows + 1` int64 offsets into the
    /// values, or into the frames for [`Layout::RaggedFrames`]).
    pub fn row_splits(&self) -> Option<&[i64]> {
        (self.layout != Layout::Dense).then(|| self.splits.typed::<i64>())
    }

    /// Frame splits of a [`Layout::RaggedFrames`] column (frames + 1 offsets into the values).
    pub fn frame_splits(&self) -> Option<&[i64]> {
        (self.layout == Layout::RaggedFrames).then(|| self.frame_splits.typed::<i64>())
    }

    /// Per-row lengths: elements of a fixed_len_sequence feature, frames of
    /// a sequence feature, values of an OFRecord raw feature.
    pub fn lengths(&self) -> Option<&[i64]> {
        matches!(self.form, Shape::Padded { .. } | Shape::Raw { .. })
            .then(|| self.lengths.typed::<i64>())
    }

    /// TensorFlow's sparse form, when the spec asked for it ([`FeatureSpec::sparse`]).
    pub fn sparse(&self) -> Option<Sparse<'_>> {
        self.sparse_wanted.then(|| Sparse {
            indices: self.indices.typed::<i64>(),
            dense_shape: &self.sparse_shape,
        })
    }

    /// The column's buffers, writable in place and left where they are:
    /// for a caller that normalises values in place, or hands the memory
    /// to another language that may write it (the Python package's loader
    /// gives numpy views of a pooled batch). Whatever is written stays
    /// until the next decode into the batch; a decode never reads what was
    /// there.
    ///
    /// ```
    /// use recordwire::batch::{decode, Batch, DType, FeatureSpec, Spec};
    /// use recordwire::encode::{Example, Feature, Features};
    ///
    /// let spec = Spec::example(vec![FeatureSpec::fixed_len("x", DType::Float32, &[2])])?;
    /// let f: Features = [("x", Feature::Float(vec![2.0, 4.0]))].into_iter().collect();
    /// let record = Example::with_features(f).to_bytes()?;
    /// let mut batch = Batch::new();
    /// decode(&[&record[..]], &spec, &mut batch)?;
    /// let column = &mut batch.columns_mut().0[0];
    /// let values = column.buffers_mut().values;
    /// for v in values.chunks_exact_mut(4) {
    ///     let x = f32::from_le_bytes(v.try_into().unwrap());
    ///     v.copy_from_slice(&(x / 2.0).to_le_bytes());
    /// }
    /// assert_eq!(batch.column("x").unwrap().values::<f32>().unwrap(), [1.0, 2.0]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn buffers_mut(&mut self) -> ColumnBuffersMut<'_> {
        let layout = self.layout;
        let owned_bytes = self.dtype == DType::Bytes && !self.borrow;
        let lengths = matches!(self.form, Shape::Padded { .. } | Shape::Raw { .. });
        fn some(b: &mut AlignedBuf, wanted: bool) -> Option<&mut [u8]> {
            wanted.then(move || b.as_bytes_mut())
        }
        ColumnBuffersMut {
            values: self.values.as_bytes_mut(),
            offsets: some(&mut self.offsets, owned_bytes),
            row_splits: some(&mut self.splits, layout != Layout::Dense),
            frame_splits: some(&mut self.frame_splits, layout == Layout::RaggedFrames),
            lengths: some(&mut self.lengths, lengths),
            indices: some(&mut self.indices, self.sparse_wanted),
        }
    }

    /// The bytes of memory the column holds (every buffer's capacity), so
    /// that a pool of batches can tell whether a decode grew one.
    pub fn capacity(&self) -> usize {
        [
            &self.values,
            &self.offsets,
            &self.splits,
            &self.frame_splits,
            &self.lengths,
            &self.indices,
            &self.spare,
            &self.spare_offsets,
        ]
        .iter()
        .map(|b| b.capacity())
        .sum::<usize>()
            + (self.borrowed.capacity() + self.spare_borrowed.capacity())
                * std::mem::size_of::<&[u8]>()
            + self.shared.capacity() * std::mem::size_of::<bytes::Bytes>()
    }

    /// The column's buffers, taken out without copying (each `None` where
    /// the matching accessor gives `None`): for a caller that hands them to
    /// another owner, as the Python package hands them to numpy.
    pub fn into_parts(self) -> ColumnParts<'a> {
        let layout = self.layout;
        let some = |b: AlignedBuf, wanted: bool| wanted.then_some(b);
        let owned_bytes = self.dtype == DType::Bytes && !self.borrow;
        let lengths = matches!(self.form, Shape::Padded { .. } | Shape::Raw { .. });
        ColumnParts {
            values: self.values,
            offsets: some(self.offsets, owned_bytes),
            borrowed: if self.shares {
                Vec::new()
            } else {
                self.borrowed
            },
            shared: self.shared,
            row_splits: some(self.splits, layout != Layout::Dense),
            frame_splits: some(self.frame_splits, layout == Layout::RaggedFrames),
            lengths: some(self.lengths, lengths),
            indices: some(self.indices, self.sparse_wanted),
            sparse_shape: self.sparse_shape,
        }
    }
}

/// A column's buffers, writable in place ([`Column::buffers_mut`]): the
/// same bytes as the accessors of the same names (numbers little-endian,
/// splits and offsets int64), each `None` where that accessor gives `None`.
#[derive(Debug)]
pub struct ColumnBuffersMut<'c> {
    /// [`Column::raw_values`].
    pub values: &'c mut [u8],
    /// [`Column::offsets`].
    pub offsets: Option<&'c mut [u8]>,
    /// [`Column::row_splits`].
    pub row_splits: Option<&'c mut [u8]>,
    /// [`Column::frame_splits`].
    pub frame_splits: Option<&'c mut [u8]>,
    /// [`Column::lengths`].
    pub lengths: Option<&'c mut [u8]>,
    /// The `indices` of [`Column::sparse`].
    pub indices: Option<&'c mut [u8]>,
}

/// A column's buffers, from [`Column::into_parts`]: the same contents as
/// the accessors of the same names.
#[derive(Debug)]
pub struct ColumnParts<'a> {
    /// [`Column::raw_values`].
    pub values: AlignedBuf,
    /// [`Column::offsets`].
    pub offsets: Option<AlignedBuf>,
    /// [`Column::borrowed`] (empty unless the column borrows).
    pub borrowed: Vec<&'a [u8]>,
    /// [`Column::shared`] (empty unless the column is one of an owned batch).
    pub shared: Vec<bytes::Bytes>,
    /// [`Column::row_splits`].
    pub row_splits: Option<AlignedBuf>,
    /// [`Column::frame_splits`].
    pub frame_splits: Option<AlignedBuf>,
    /// [`Column::lengths`].
    pub lengths: Option<AlignedBuf>,
    /// The `indices` of [`Column::sparse`].
    pub indices: Option<AlignedBuf>,
    /// The `dense_shape` of [`Column::sparse`].
    pub sparse_shape: Vec<usize>,
}

/// The default of a bytes feature as a slice of the spec (element `i`).
pub(super) fn spec_bytes_default(f: &FeatureSpec, i: usize) -> Option<&[u8]> {
    match &f.form {
        Form::FixedLen {
            default: Some(DefaultValue::Bytes(b)),
            ..
        }
        | Form::FixedLenSequence {
            default: Some(DefaultValue::Bytes(b)),
            ..
        } => b.get(i).map(Vec::as_slice),
        _ => None,
    }
}

/// A borrowing bytes feature's default elements as `Bytes` (empty for any
/// other feature): made once per column, so that an owned batch's padded
/// slots share them instead of copying them per batch.
fn shared_defaults(f: &FeatureSpec) -> Vec<bytes::Bytes> {
    if !(f.borrow && f.dtype == DType::Bytes) {
        return Vec::new();
    }
    match &f.form {
        Form::FixedLen {
            default: Some(DefaultValue::Bytes(b)),
            ..
        }
        | Form::FixedLenSequence {
            default: Some(DefaultValue::Bytes(b)),
            ..
        } => b.iter().map(|v| bytes::Bytes::copy_from_slice(v)).collect(),
        _ => Vec::new(),
    }
}
