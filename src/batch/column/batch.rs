//! [`Batch`]: the columns of a decoded batch, reused across calls, and the
//! windows of a parallel decode into them.

use super::feature::Column;
use crate::batch::buf::AlignedBuf;
use crate::batch::spec::{FeatureSpec, Spec};

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

impl<'a> Batch<'a> {
    /// Makes the columns fit `spec`, then takes out the buffers of the
    /// placed columns (see [`Column::placed_row_bytes`]), each sized for
    /// `rows` rows, for the parts of a parallel decode to write their rows
    /// into (part 0 decodes into this batch itself meanwhile). The other
    /// columns' entries are empty.
    pub(in crate::batch) fn take_placed(&mut self, spec: &Spec, rows: usize) -> Vec<AlignedBuf> {
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
    pub(in crate::batch) fn restore_placed(&mut self, placed: &mut Vec<AlignedBuf>, rows: usize) {
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
    pub(in crate::batch) fn join_finish(&mut self, parts: &[Batch<'a>], spec: &'a Spec) {
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
    pub(in crate::batch) fn finish(&mut self, spec: &'a Spec) {
        let rows = self.rows;
        for (c, f) in self.columns.iter_mut().zip(spec.features()) {
            c.finish(f, c.form, rows);
        }
        for (c, f) in self.sequence.iter_mut().zip(spec.sequence()) {
            c.finish(f, c.form, rows);
        }
    }
}
