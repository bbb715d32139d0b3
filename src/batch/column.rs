//! [`Column`] and [`Batch`]: decoded features in Arrow-compatible memory,
//! reused from one batch to the next.
//!
//! Every method of [`Column`] is here: its public view, what the record walk
//! (`decode`) and the fast path (`fast`) append to it and take back, and the
//! finishing of its rows (joining the parts of a parallel decode, padding,
//! lengths, sparse indices). The files of `batch` import downward only:
//! `buf`, `spec` < `shape` < `column` < `fast` < `decode` < `threads`.

use super::buf::AlignedBuf;
use super::shape::{shape_of, Fail, Shape};
use super::spec::{default_bytes, DType, DefaultValue, FeatureSpec, Form, Spec};
use crate::error::FeatureProblem;
use crate::view::{FeatureListRef, ListRef, NumList};

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
    /// them ([`Batch::into_owned`]); `shares` says they are the values.
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
    /// of another lifetime (see [`Batch::recycle`]).
    fn recycle<'b>(self) -> Column<'b> {
        let mut c = self.relabel();
        c.shared.clear();
        c.shares = false;
        c
    }

    /// The same column for another lifetime: everything kept but the
    /// borrowed slices (their vectors' memory is reused).
    pub(super) fn relabel<'b>(self) -> Column<'b> {
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
    /// ([`Batch::into_owned`]), the values as `Bytes`: shares of the
    /// records' buffers (no copy), which keep them alive.
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

/// The columns of a decoded batch, reused across calls: decoding into a warm
/// batch (one that already held a batch at least as large) allocates nothing.
///
/// ```
/// use recordwire::batch::{decode, Batch, DType, FeatureSpec, Spec};
/// use recordwire::encode::{Example, Feature, Features};
///
/// let spec = Spec::example(vec![
///     FeatureSpec::fixed_len("label", DType::Int64, &[]),
///     FeatureSpec::var_len("tokens", DType::Int64),
/// ])
/// .unwrap();
/// let records: Vec<Vec<u8>> = (0..3i64)
///     .map(|i| {
///         let features: Features = [
///             ("label", Feature::Int64(vec![i])),
///             ("tokens", Feature::Int64((0..i).collect())),
///         ]
///         .into_iter()
///         .collect();
///         Example::with_features(features).to_bytes().unwrap()
///     })
///     .collect();
/// let payloads: Vec<&[u8]> = records.iter().map(Vec::as_slice).collect();
/// let mut batch = Batch::new();
/// decode(&payloads, &spec, &mut batch).unwrap();
/// assert_eq!(batch.rows(), 3);
/// assert_eq!(batch.column("label").unwrap().values::<i64>().unwrap(), [0, 1, 2]);
/// let tokens = batch.column("tokens").unwrap();
/// assert_eq!(tokens.row_splits().unwrap(), [0, 0, 1, 3]);
/// assert_eq!(tokens.values::<i64>().unwrap(), [0, 0, 1]);
/// ```
#[derive(Debug, Clone, Default)]
pub struct Batch<'a> {
    pub(crate) rows: usize,
    pub(crate) columns: Vec<Column<'a>>,
    pub(crate) sequence: Vec<Column<'a>>,
    /// Per-thread batches of a parallel decode (reused like the columns).
    pub(crate) parts: Vec<Batch<'a>>,
    /// The records of a decode by ids or from an iterator (reused).
    pub(crate) records: Vec<crate::frame::Record<'a>>,
    /// A parallel decode's placed columns (see [`Column::placed_row_bytes`]):
    /// their buffers while the parts write into them (reused).
    pub(crate) placed: Vec<AlignedBuf>,
    /// The parts' windows into `placed` (reused; empty between decodes).
    pub(crate) windows: Windows,
}

/// Room for the windows of a parallel decode: each part's slice of each
/// placed column's buffer, kept between batches so that a warm decode
/// allocates nothing. Empty between decodes; [`take`](Windows::take) gives
/// the vector at the lifetime of one decode (collecting an empty vector
/// into one of the same layout reuses its allocation).
#[derive(Default)]
pub(crate) struct Windows(Vec<Option<&'static mut [u8]>>);

/// One part's windows, by column.
pub(crate) type PartWindows<'s, 'w> = &'s mut [Option<&'w mut [u8]>];

/// Where row `row` of column `c` goes when the column is placed (a
/// parallel decode's part writing into the shared batch): its slice of the
/// part's window. `None` for a column that appends to its own buffers.
#[inline]
pub(crate) fn slot<'s>(
    windows: &'s mut [Option<&mut [u8]>],
    c: usize,
    row: usize,
    col: &Column<'_>,
) -> Option<&'s mut [u8]> {
    let window = windows.get_mut(c)?.as_deref_mut()?;
    let n = col.placed_row_bytes()?;
    // The window holds the part's rows, so `row` is inside it.
    window.get_mut(row * n..(row + 1) * n)
}

impl Windows {
    pub(crate) fn take<'w>(&mut self) -> Vec<Option<&'w mut [u8]>> {
        let mut v = std::mem::take(&mut self.0);
        v.clear();
        v.into_iter().map(|_| unreachable!()).collect()
    }

    pub(crate) fn keep(&mut self, mut v: Vec<Option<&mut [u8]>>) {
        v.clear();
        self.0 = v.into_iter().map(|_| unreachable!()).collect();
    }
}

impl Clone for Windows {
    fn clone(&self) -> Self {
        Windows::default()
    }
}

impl std::fmt::Debug for Windows {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Windows")
    }
}

/// Equal when the rows and the columns are (see [`Column`]'s `PartialEq`).
impl PartialEq for Batch<'_> {
    fn eq(&self, o: &Self) -> bool {
        (self.rows, &self.columns, &self.sequence) == (o.rows, &o.columns, &o.sequence)
    }
}

impl<'a> Batch<'a> {
    /// An empty batch; its columns are made on the first decode.
    pub fn new() -> Self {
        Batch::default()
    }

    /// Rows decoded (records, in input order).
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// The columns of the spec's features (a SequenceExample's context), in spec order.
    pub fn columns(&self) -> &[Column<'a>] {
        &self.columns
    }

    /// The columns of a SequenceExample's sequence features, in spec order.
    pub fn sequence(&self) -> &[Column<'a>] {
        &self.sequence
    }

    /// The column named `name` (features first, then sequence features).
    pub fn column(&self, name: &str) -> Option<&Column<'a>> {
        self.columns
            .iter()
            .chain(&self.sequence)
            .find(|c| c.spec.name == name)
    }

    /// The context (or only) columns and the sequence columns, writable
    /// (see [`Column::buffers_mut`]).
    pub fn columns_mut(&mut self) -> (&mut [Column<'a>], &mut [Column<'a>]) {
        (&mut self.columns, &mut self.sequence)
    }

    /// The bytes of memory the batch holds for its columns (see
    /// [`Column::capacity`]) and its per-thread parts.
    pub fn capacity(&self) -> usize {
        self.columns
            .iter()
            .chain(&self.sequence)
            .map(Column::capacity)
            .sum::<usize>()
            + self.parts.iter().map(Batch::capacity).sum::<usize>()
            + self.records.capacity() * std::mem::size_of::<crate::frame::Record<'_>>()
    }

    /// The context (or only) columns and the sequence columns, taken out of
    /// the batch without copying. The rest stays: the per-thread parts keep
    /// their warm memory for the next decode into this batch (which makes
    /// new columns for its spec).
    pub fn take_columns(&mut self) -> (Vec<Column<'a>>, Vec<Column<'a>>) {
        self.rows = 0;
        (
            std::mem::take(&mut self.columns),
            std::mem::take(&mut self.sequence),
        )
    }

    /// The same batch, emptied, for inputs of another lifetime: the columns,
    /// their memory and the per-thread parts are kept (the borrowed values
    /// are dropped, their vectors' memory reused), so a loop whose records
    /// borrow from a new buffer each time still decodes into warm memory.
    ///
    /// ```
    /// # use recordwire::batch::{decode, Batch, DType, FeatureSpec, Spec};
    /// let spec = Spec::example(vec![FeatureSpec::var_len("x", DType::Bytes).borrowed()])?;
    /// let mut spare: Batch<'static> = Batch::new();
    /// for round in 0..3u8 {
    ///     let buffer: Vec<u8> = vec![round; 4]; // records read anew each round
    ///     let records: Vec<&[u8]> = vec![&buffer[..0]];
    ///     let mut batch = spare.recycle();
    ///     decode(&records, &spec, &mut batch)?;
    ///     assert_eq!(batch.rows(), 1);
    ///     spare = batch.recycle(); // no longer borrows `buffer`
    /// }
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn recycle<'b>(self) -> Batch<'b> {
        let columns = |cols: Vec<Column<'a>>| -> Vec<Column<'b>> {
            cols.into_iter().map(Column::recycle).collect()
        };
        let mut records = self.records;
        records.clear();
        Batch {
            rows: 0,
            columns: columns(self.columns),
            sequence: columns(self.sequence),
            parts: self.parts.into_iter().map(Batch::recycle).collect(),
            // Empty: collecting reuses the allocation (same layout).
            records: records.into_iter().map(|_| unreachable!()).collect(),
            placed: self.placed,
            windows: self.windows,
        }
    }

    /// Makes the columns fit `spec` (keeping their memory when they already
    /// do) and empties them.
    pub(crate) fn reset(&mut self, spec: &Spec) {
        let fits = |cols: &[Column<'_>], fs: &[FeatureSpec], seq: bool| {
            cols.len() == fs.len() && cols.iter().zip(fs).all(|(c, f)| c.matches(f, seq))
        };
        if !fits(&self.columns, spec.features(), false) {
            self.columns = spec
                .features()
                .iter()
                .map(|f| Column::new(f, false))
                .collect();
        }
        if !fits(&self.sequence, spec.sequence(), true) {
            self.sequence = spec
                .sequence()
                .iter()
                .map(|f| Column::new(f, true))
                .collect();
        }
        self.rows = 0;
        for c in self.columns.iter_mut().chain(self.sequence.iter_mut()) {
            c.clear();
        }
    }
}

// Building rows: what the record walk and the fast path append, and how an
// entry or a row is taken back.
impl<'a> Column<'a> {
    /// Where the column stands now (to take an entry back).
    #[inline]
    fn mark_now(&self) -> Mark {
        Mark {
            values: self.len(),
            frame_splits: self.frame_splits.count::<i64>(),
        }
    }

    /// Drops values past the first `n`.
    fn truncate_values(&mut self, n: usize) {
        match (self.dtype, self.borrow) {
            (DType::Bytes, true) => self.borrowed.truncate(n),
            (DType::Bytes, false) => {
                self.offsets.truncate((n + 1) * 8);
                let end = self.offsets.typed::<i64>()[n] as usize;
                self.values.truncate(end);
            }
            (d, _) => self.values.truncate(n * d.width()),
        }
    }

    /// Takes back what entries of the current row appended.
    #[inline]
    pub(super) fn rollback(&mut self) {
        let m = self.mark;
        self.truncate_values(m.values);
        self.frame_splits.truncate(m.frame_splits * 8);
    }

    /// Keeps the first `rows` rows (before the batch is finished).
    pub(super) fn truncate_rows(&mut self, rows: usize, shape: Shape) {
        match shape {
            Shape::Fixed { elems } | Shape::Raw { elems, .. } => {
                self.truncate_values(rows * elems);
                self.lengths.truncate(rows * 8);
            }
            Shape::VarLen | Shape::Padded { .. } => {
                self.splits.truncate((rows + 1) * 8);
                let n = self.splits.typed::<i64>()[rows] as usize;
                self.truncate_values(n);
            }
            Shape::RaggedFrames => {
                self.splits.truncate((rows + 1) * 8);
                let frames = self.splits.typed::<i64>()[rows] as usize;
                self.frame_splits.truncate((frames + 1) * 8);
                let n = self.frame_splits.typed::<i64>()[frames] as usize;
                self.truncate_values(n);
            }
        }
    }

    /// Appends the values of `list` (which must be of the column's type) and
    /// returns how many.
    #[inline]
    fn append_list(
        &mut self,
        list: Option<ListRef<'a>>,
        exact: Option<usize>,
        at: u64,
    ) -> Result<usize, Fail> {
        let Some(list) = list else {
            return Ok(0);
        };
        match (list, self.dtype) {
            (ListRef::Int64(l), DType::Int64) => append_num(&mut self.values, l, exact),
            (ListRef::Float(l), DType::Float32) => append_num(&mut self.values, l, exact),
            (ListRef::Int32(l), DType::Int32) => append_num(&mut self.values, l, exact),
            (ListRef::Double(l), DType::Float64) => append_num(&mut self.values, l, exact),
            (ListRef::Bytes(l), DType::Bytes) => {
                let mut n = 0;
                if self.borrow {
                    for v in l.iter() {
                        self.borrowed.push(v?);
                        n += 1;
                    }
                } else {
                    for v in l.iter() {
                        self.values.extend_from_slice(v?);
                        self.offsets.push(self.values.len() as i64);
                        n += 1;
                    }
                }
                Ok(n)
            }
            (l, d) => Err(wrong_type(at, l, d)),
        }
    }

    /// The bytes of one row when the column is placed: a numeric
    /// fixed-length column, whose row `r` has its place at `r` times this,
    /// so that the parts of a parallel decode write their rows straight into
    /// the shared batch's buffer. `None` for any other column, and for rows
    /// of no bytes.
    pub(crate) fn placed_row_bytes(&self) -> Option<usize> {
        match (self.form, self.dtype) {
            (_, DType::Bytes) => None,
            (Shape::Fixed { elems }, d) => Some(elems * d.width()).filter(|&n| n > 0),
            _ => None,
        }
    }

    /// [`append_list`](Self::append_list) for a placed row: the values of
    /// `list` into `slot`, the row's place in the shared buffer (at most
    /// as many as it holds); returns how many the list holds.
    fn place_list(
        &self,
        list: Option<ListRef<'a>>,
        slot: &mut [u8],
        at: u64,
    ) -> Result<usize, Fail> {
        let Some(list) = list else {
            return Ok(0);
        };
        // `slot` starts at a multiple of the row's bytes in a 64-byte
        // aligned buffer, so it is aligned for the column's type.
        let n = match (list, self.dtype) {
            (ListRef::Int64(l), DType::Int64) => l.copy_to_slice(bytemuck::cast_slice_mut(slot))?,
            (ListRef::Float(l), DType::Float32) => {
                l.copy_to_slice(bytemuck::cast_slice_mut(slot))?
            }
            (ListRef::Int32(l), DType::Int32) => l.copy_to_slice(bytemuck::cast_slice_mut(slot))?,
            (ListRef::Double(l), DType::Float64) => {
                l.copy_to_slice(bytemuck::cast_slice_mut(slot))?
            }
            (l, d) => return Err(wrong_type(at, l, d)),
        };
        Ok(n)
    }

    /// Appends one value slot from the default (element `i` of it), or a
    /// zero / empty value when there is none.
    /// A placed row's `slot` takes the value at its element `i` instead.
    fn push_default(
        &mut self,
        spec_default: Option<&'a [u8]>,
        raw: Option<&[u8]>,
        i: usize,
        slot: Option<&mut [u8]>,
    ) {
        if let Some(slot) = slot {
            let w = self.dtype.width();
            if let Some(out) = slot.get_mut(i * w..(i + 1) * w) {
                match raw.and_then(|r| r.get(i * w..(i + 1) * w)) {
                    Some(v) => out.copy_from_slice(v),
                    None => out.fill(0),
                }
            }
            return;
        }
        match (self.dtype, self.borrow) {
            (DType::Bytes, true) => self.borrowed.push(spec_default.unwrap_or_default()),
            (DType::Bytes, false) => {
                self.values
                    .extend_from_slice(spec_default.unwrap_or_default());
                self.offsets.push(self.values.len() as i64);
            }
            (d, _) => {
                let w = d.width();
                match raw.and_then(|r| r.get(i * w..(i + 1) * w)) {
                    Some(v) => self.values.extend_from_slice(v),
                    None => self.values.extend_space(w).fill(0),
                }
            }
        }
    }

    /// Appends one OFRecord raw decoder row (`elems` values, zeros after the
    /// record's own) from `list`.
    fn append_raw(
        &mut self,
        list: Option<ListRef<'a>>,
        elems: usize,
        fewer: bool,
        at: u64,
    ) -> Result<usize, Fail> {
        let start = self.values.len();
        let w = self.dtype.width();
        self.values.extend_space(elems * w).fill(0);
        let row = &mut self.values.as_bytes_mut()[start..];
        let n = match list {
            None => 0,
            Some(ListRef::Bytes(l)) => {
                let mut it = l.iter();
                let first = it.next().transpose()?;
                let more = it.count();
                let Some(v) = first.filter(|_| more == 0) else {
                    let found = usize::from(first.is_some()) + more;
                    return Err(Fail::Feature(
                        at,
                        FeatureProblem::NotOneBytesValue { found },
                    ));
                };
                let n = v.len().min(elems);
                for (i, &b) in v[..n].iter().enumerate() {
                    put_cast(row, self.dtype, i, Num::I(i64::from(b as i8)));
                }
                return Ok(n);
            }
            Some(ListRef::Int64(l)) => raw_values(l, row, self.dtype, elems, fewer, at, Num::I)?,
            Some(ListRef::Int32(l)) => raw_values(l, row, self.dtype, elems, fewer, at, |v| {
                Num::I(i64::from(v))
            })?,
            Some(ListRef::Float(l)) => raw_values(l, row, self.dtype, elems, fewer, at, |v| {
                Num::F(f64::from(v))
            })?,
            Some(ListRef::Double(l)) => raw_values(l, row, self.dtype, elems, fewer, at, Num::F)?,
        };
        Ok(n)
    }
    /// Before an entry of this column's name: the last entry of a name wins
    /// (TensorFlow skips the earlier ones unread), so what an earlier entry
    /// of this row appended is taken back.
    #[inline]
    pub(super) fn begin_entry(&mut self, stamp: u64) {
        if self.seen == stamp {
            self.rollback();
        } else {
            self.seen = stamp;
            self.mark = self.mark_now();
        }
        self.pending = None;
        self.entry_len = 0;
    }

    /// After an entry: a failure is kept until the record ends (a later
    /// entry of the name may replace it). Returns whether it failed.
    #[inline]
    pub(super) fn end_entry(&mut self, r: Result<(), Fail>) -> bool {
        match r {
            Ok(()) => false,
            Err(fail) => {
                self.rollback();
                self.pending = Some(fail);
                true
            }
        }
    }

    /// Appends an entry's values; a placed column's row goes to `slot`
    /// instead (see [`placed_row_bytes`](Self::placed_row_bytes)).
    #[inline]
    pub(super) fn append_feature(
        &mut self,
        shape: Shape,
        list: Option<ListRef<'a>>,
        at: u64,
        slot: Option<&mut [u8]>,
    ) -> Result<(), Fail> {
        match shape {
            Shape::Fixed { elems } => {
                let n = match slot {
                    Some(slot) => self.place_list(list, slot, at)?,
                    None => self.append_list(list, Some(elems), at)?,
                };
                if n != elems {
                    let problem = FeatureProblem::WrongCount {
                        expected: elems,
                        found: n,
                    };
                    return Err(Fail::Feature(at, problem));
                }
            }
            Shape::VarLen => {
                self.append_list(list, None, at)?;
            }
            Shape::Padded { elems, .. } => {
                let n = self.append_list(list, None, at)?;
                if (elems == 0 && n != 0) || (elems != 0 && n % elems != 0) {
                    let problem = FeatureProblem::NotMultiple {
                        element: elems,
                        found: n,
                    };
                    return Err(Fail::Feature(at, problem));
                }
            }
            Shape::Raw { elems, fewer, .. } => {
                self.entry_len = self.append_raw(list, elems, fewer, at)?;
            }
            Shape::RaggedFrames => {}
        }
        Ok(())
    }

    pub(super) fn append_frames(
        &mut self,
        shape: Shape,
        list: FeatureListRef<'a>,
        at: u64,
    ) -> Result<(), Fail> {
        for (i, frame) in list.iter().enumerate() {
            let frame = frame?;
            let values = frame.list()?;
            match shape {
                Shape::Padded { elems, .. } => {
                    let n = self.append_list(values, Some(elems), at)?;
                    if n != elems {
                        let problem = FeatureProblem::WrongFrameCount {
                            frame: i,
                            expected: elems,
                            found: n,
                        };
                        return Err(Fail::Feature(at, problem));
                    }
                }
                _ => {
                    self.append_list(values, None, at)?;
                    self.frame_splits.push(self.len() as i64);
                }
            }
        }
        Ok(())
    }

    /// After the record's entries: fills a missing feature (into `slot`
    /// for a placed row), closes the row.
    pub(super) fn end_row(
        &mut self,
        spec: &'a FeatureSpec,
        shape: Shape,
        stamp: u64,
        base: u64,
        mut slot: Option<&mut [u8]>,
    ) -> Result<(), Fail> {
        if let Some(fail) = self.pending.take() {
            return Err(fail);
        }
        let present = self.seen == stamp;
        match shape {
            Shape::Fixed { elems } => {
                if !present {
                    if self.default.is_none() {
                        return Err(Fail::Feature(base, FeatureProblem::Missing));
                    }
                    let raw = self.default.take();
                    for i in 0..elems {
                        let at = slot.as_deref_mut();
                        self.push_default(spec_bytes_default(spec, i), raw.as_deref(), i, at);
                    }
                    self.default = raw;
                }
            }
            Shape::Raw { .. } => {
                if !present {
                    return Err(Fail::Feature(base, FeatureProblem::Missing));
                }
                self.lengths.push(self.entry_len as i64);
            }
            Shape::Padded { .. } => {
                let allow_missing = matches!(
                    spec.form,
                    Form::FixedLenSequence {
                        allow_missing: true,
                        ..
                    }
                );
                if !present && !allow_missing {
                    return Err(Fail::Feature(base, FeatureProblem::Missing));
                }
                self.splits.push(self.len() as i64);
            }
            Shape::VarLen => self.splits.push(self.len() as i64),
            Shape::RaggedFrames => {
                let frames = self.frame_splits.count::<i64>() - 1;
                self.splits.push(frames as i64);
            }
        }
        Ok(())
    }
}

// Finishing: joining the parts of a parallel decode, then shapes, padding,
// lengths and sparse indices.
impl<'a> Column<'a> {
    /// Appends `other`'s rows (both unfinished) after this column's.
    pub(super) fn append_rows(&mut self, other: &Column<'a>, shape: Shape) {
        let (values_before, frames_before) = (
            self.len() as i64,
            self.frame_splits.count::<i64>() as i64 - 1,
        );
        match (self.dtype, self.borrow) {
            (DType::Bytes, true) => self.borrowed.extend_from_slice(&other.borrowed),
            (DType::Bytes, false) => {
                let data_before = self.values.len() as i64;
                self.values.extend_from_slice(other.values.as_bytes());
                let src = &other.offsets.typed::<i64>()[1..];
                let dst = self.offsets.extend_typed::<i64>(src.len());
                for (d, s) in dst.iter_mut().zip(src) {
                    *d = s + data_before;
                }
            }
            _ => self.values.extend_from_slice(other.values.as_bytes()),
        }
        self.lengths.extend_from_slice(other.lengths.as_bytes());
        let shift = |dst: &mut super::buf::AlignedBuf, src: &super::buf::AlignedBuf, by: i64| {
            let src = &src.typed::<i64>()[1..];
            let out = dst.extend_typed::<i64>(src.len());
            for (d, s) in out.iter_mut().zip(src) {
                *d = s + by;
            }
        };
        match shape {
            Shape::VarLen | Shape::Padded { .. } => {
                shift(&mut self.splits, &other.splits, values_before)
            }
            Shape::RaggedFrames => {
                shift(&mut self.splits, &other.splits, frames_before);
                shift(&mut self.frame_splits, &other.frame_splits, values_before);
            }
            Shape::Fixed { .. } | Shape::Raw { .. } => {}
        }
    }

    /// Appends the rows of `parts` (unfinished), then finishes the
    /// column's `rows` rows.
    fn join_finish<'p>(
        &mut self,
        parts: impl Iterator<Item = &'p Column<'a>>,
        spec: &'a FeatureSpec,
        rows: usize,
    ) where
        'a: 'p,
    {
        for p in parts {
            self.append_rows(p, self.form);
        }
        self.finish(spec, self.form, rows);
    }

    /// Turns the decoded rows into the column's final form: shapes, padding
    /// of sequence columns, lengths, sparse indices.
    fn finish(&mut self, spec: &'a FeatureSpec, shape: Shape, rows: usize) {
        self.shape.clear();
        self.shape.push(rows);
        let inner = spec.form.shape().unwrap_or_default();
        match shape {
            Shape::Fixed { .. } | Shape::Raw { .. } => self.shape.extend_from_slice(inner),
            Shape::VarLen => {
                if self.sparse_wanted {
                    self.sparse_2d(rows);
                }
            }
            Shape::RaggedFrames => {
                if self.sparse_wanted {
                    self.sparse_3d(rows);
                }
            }
            Shape::Padded { elems, .. } => {
                let max = self.pad(spec, elems, rows);
                self.shape.push(max);
                self.shape.extend_from_slice(inner);
            }
        }
    }

    fn sparse_2d(&mut self, rows: usize) {
        self.indices.clear();
        let mut max = 0;
        let splits = self.splits.typed::<i64>();
        let out = self.indices.extend_typed::<i64>(2 * splits[rows] as usize);
        let mut k = 0;
        for r in 0..rows {
            let n = (splits[r + 1] - splits[r]) as usize;
            max = max.max(n);
            for j in 0..n {
                out[k] = r as i64;
                out[k + 1] = j as i64;
                k += 2;
            }
        }
        self.sparse_shape.clear();
        self.sparse_shape.extend_from_slice(&[rows, max]);
    }

    fn sparse_3d(&mut self, rows: usize) {
        self.indices.clear();
        let (mut max_frames, mut max_values) = (0, 0);
        let splits = self.splits.typed::<i64>();
        let frames = self.frame_splits.typed::<i64>();
        let total = frames[splits[rows] as usize] as usize;
        let out = self.indices.extend_typed::<i64>(3 * total);
        let mut k = 0;
        for r in 0..rows {
            let (f0, f1) = (splits[r] as usize, splits[r + 1] as usize);
            max_frames = max_frames.max(f1 - f0);
            for f in f0..f1 {
                let n = (frames[f + 1] - frames[f]) as usize;
                max_values = max_values.max(n);
                for j in 0..n {
                    out[k..k + 3].copy_from_slice(&[r as i64, (f - f0) as i64, j as i64]);
                    k += 3;
                }
            }
        }
        self.sparse_shape.clear();
        self.sparse_shape
            .extend_from_slice(&[rows, max_frames, max_values]);
    }

    /// Pads each row to the longest (in elements of `elems` values) with the
    /// default; sets the lengths; returns the longest.
    fn pad(&mut self, spec: &'a FeatureSpec, elems: usize, rows: usize) -> usize {
        let splits = self.splits.typed::<i64>();
        self.lengths.clear();
        let lens = self.lengths.extend_typed::<i64>(rows);
        let mut max = 0;
        for r in 0..rows {
            let n = (splits[r + 1] - splits[r]) as usize;
            let units = n.checked_div(elems).unwrap_or(0);
            lens[r] = units as i64;
            max = max.max(units);
        }
        let slot = max * elems;
        match (self.dtype, self.borrow) {
            (DType::Bytes, _) => {
                let fill = spec_bytes_default(spec, 0).unwrap_or_default();
                if self.borrow {
                    self.spare_borrowed.clear();
                    for r in 0..rows {
                        let (a, b) = (splits[r] as usize, splits[r + 1] as usize);
                        self.spare_borrowed.extend_from_slice(&self.borrowed[a..b]);
                        for _ in (b - a)..slot {
                            self.spare_borrowed.push(fill);
                        }
                    }
                    std::mem::swap(&mut self.borrowed, &mut self.spare_borrowed);
                } else {
                    self.spare.clear();
                    self.spare_offsets.clear();
                    self.spare_offsets.push(0i64);
                    let offsets = self.offsets.typed::<i64>();
                    let data = self.values.as_bytes();
                    for r in 0..rows {
                        let (a, b) = (splits[r] as usize, splits[r + 1] as usize);
                        for i in a..b {
                            let v = &data[offsets[i] as usize..offsets[i + 1] as usize];
                            self.spare.extend_from_slice(v);
                            self.spare_offsets.push(self.spare.len() as i64);
                        }
                        for _ in (b - a)..slot {
                            self.spare.extend_from_slice(fill);
                            self.spare_offsets.push(self.spare.len() as i64);
                        }
                    }
                    std::mem::swap(&mut self.values, &mut self.spare);
                    std::mem::swap(&mut self.offsets, &mut self.spare_offsets);
                }
            }
            (d, _) => {
                let w = d.width();
                let mut fill = [0u8; 8];
                if let Some(raw) = self.default.as_deref() {
                    fill[..w].copy_from_slice(&raw[..w]);
                }
                let fill = &fill[..w];
                let row_bytes = slot * w;
                // Move rows to their padded places from the last one down:
                // each row's new place is at or after its old one, and past
                // every earlier row's old place.
                self.values.resize_zeroed(rows * row_bytes);
                let values = self.values.as_bytes_mut();
                for r in (0..rows).rev() {
                    let (a, b) = (splits[r] as usize * w, splits[r + 1] as usize * w);
                    let dst = r * row_bytes;
                    values.copy_within(a..b, dst);
                    for c in values[dst + (b - a)..dst + row_bytes].chunks_exact_mut(w) {
                        c.copy_from_slice(fill);
                    }
                }
            }
        }
        max
    }
}

impl<'a> Batch<'a> {
    /// Makes the columns fit `spec`, then takes out the buffers of the
    /// placed columns (see [`Column::placed_row_bytes`]), each sized for
    /// `rows` rows, for the parts of a parallel decode to write their rows
    /// into (part 0 decodes into this batch itself meanwhile). The other
    /// columns' entries are empty.
    pub(super) fn take_placed(&mut self, spec: &Spec, rows: usize) -> Vec<AlignedBuf> {
        self.reset(spec);
        let mut placed = std::mem::take(&mut self.placed);
        placed.clear();
        placed.extend(self.columns.iter_mut().map(|col| {
            let Some(row_bytes) = col.placed_row_bytes() else {
                return AlignedBuf::new();
            };
            let mut buf = std::mem::take(&mut col.values);
            buf.clear();
            // Every byte is written by its row (or dropped with it).
            buf.extend_space(rows * row_bytes);
            buf
        }));
        placed
    }

    /// Gives the placed columns back their buffers, holding the first
    /// `rows` rows; keeps `placed` for the next decode.
    pub(super) fn restore_placed(&mut self, placed: &mut Vec<AlignedBuf>, rows: usize) {
        for (col, buf) in self.columns.iter_mut().zip(placed.iter_mut()) {
            if let Some(row_bytes) = col.placed_row_bytes() {
                buf.truncate(rows * row_bytes);
                col.values = std::mem::take(buf);
            }
        }
        self.placed = std::mem::take(placed);
    }

    /// Appends the rows of `parts` (the later parts of a parallel decode)
    /// after this batch's, all unfinished, and turns them into their final
    /// form: each column joined and finished as a task of its own, on the
    /// current rayon pool, so that the copies and the padding of a batch's
    /// columns run on all its threads rather than on the caller's.
    pub(super) fn join_finish(&mut self, parts: &[Batch<'a>], spec: &'a Spec) {
        use rayon::prelude::*;
        fn each<'a>(
            columns: &mut [Column<'a>],
            features: &'a [FeatureSpec],
            parts: &[Batch<'a>],
            of: for<'p> fn(&'p Batch<'a>) -> &'p [Column<'a>],
            rows: usize,
        ) {
            columns
                .par_iter_mut()
                .zip(features.par_iter())
                .enumerate()
                .for_each(|(c, (col, f))| {
                    col.join_finish(parts.iter().map(|p| &of(p)[c]), f, rows);
                });
        }
        self.rows += parts.iter().map(|p| p.rows).sum::<usize>();
        let rows = self.rows;
        each(
            &mut self.columns,
            spec.features(),
            parts,
            |p| &p.columns,
            rows,
        );
        each(
            &mut self.sequence,
            spec.sequence(),
            parts,
            |p| &p.sequence,
            rows,
        );
    }

    /// Turns the decoded rows into their final form (see
    /// [`Column::finish`]).
    pub(super) fn finish(&mut self, spec: &'a Spec) {
        let rows = self.rows;
        for (c, f) in self.columns.iter_mut().zip(spec.features()) {
            c.finish(f, c.form, rows);
        }
        for (c, f) in self.sequence.iter_mut().zip(spec.sequence()) {
            c.finish(f, c.form, rows);
        }
    }
}

impl DType {
    fn name_str(self) -> &'static str {
        crate::names::OptionName::name(self)
    }
}

#[derive(Clone, Copy)]
enum Num {
    I(i64),
    F(f64),
}

/// Stores `v` as element `i` of `row`, converted to `dtype` the way C++'s
/// `static_cast` does (float to integer truncates; out of range saturates,
/// where C++ leaves it undefined).
fn put_cast(row: &mut [u8], dtype: DType, i: usize, v: Num) {
    macro_rules! put {
        ($t:ty) => {{
            let x: $t = match v {
                Num::I(x) => x as $t,
                Num::F(x) => x as $t,
            };
            let w = std::mem::size_of::<$t>();
            row[i * w..(i + 1) * w].copy_from_slice(&x.to_le_bytes());
        }};
    }
    match dtype {
        DType::Int64 => put!(i64),
        DType::Int32 => put!(i32),
        DType::Int8 => put!(i8),
        DType::UInt8 => put!(u8),
        DType::Float32 => put!(f32),
        DType::Float64 => put!(f64),
        DType::Bytes => {}
    }
}

fn raw_values<T: crate::view::Element>(
    l: NumList<'_, T>,
    row: &mut [u8],
    dtype: DType,
    elems: usize,
    fewer: bool,
    at: u64,
    num: impl Fn(T) -> Num,
) -> Result<usize, Fail> {
    let n = l.len()?;
    if fewer && n > elems {
        return Err(Fail::Feature(
            at,
            FeatureProblem::TooMany {
                max: elems,
                found: n,
            },
        ));
    }
    if !fewer && n != elems {
        return Err(Fail::Feature(
            at,
            FeatureProblem::WrongCount {
                expected: elems,
                found: n,
            },
        ));
    }
    for (i, v) in l.iter().enumerate() {
        put_cast(row, dtype, i, num(v?));
    }
    Ok(n)
}

/// Decodes a numeric list straight into the column in one pass: room for
/// `exact` values (a fixed_len feature's count: any other count is an error
/// the caller reports) or for the list's bound, then the values, then the
/// length cut to what the list held.
#[inline]
fn append_num<T: crate::view::Element + bytemuck::Pod>(
    values: &mut super::buf::AlignedBuf,
    l: NumList<'_, T>,
    exact: Option<usize>,
) -> Result<usize, Fail> {
    let room = match exact {
        Some(n) => n,
        None => l.len_bound()?,
    };
    let start = values.len();
    let out = values.extend_typed::<T>(room);
    let n = l.copy_to_slice(out)?;
    values.truncate(start + n.min(room) * std::mem::size_of::<T>());
    Ok(n)
}

/// A list of another type than the column's.
fn wrong_type(at: u64, l: ListRef<'_>, d: DType) -> Fail {
    Fail::Feature(
        at,
        FeatureProblem::WrongType {
            expected: d.name_str(),
            found: l.kind().name(),
        },
    )
}

/// The default of a bytes feature as a slice of the spec (element `i`).
fn spec_bytes_default(f: &FeatureSpec, i: usize) -> Option<&[u8]> {
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
