//! Batches that own their bytes.
//!
//! A column of a borrowing bytes feature ([`FeatureSpec::borrowed`]) holds
//! its values as `&[u8]` slices of the records while a batch is decoded: the
//! hot path, with nothing allocated per value. [`Batch::into_owned`] turns
//! such a batch into a `Batch<'static>` whose values are [`Bytes`] shares of
//! the buffers the records came from (a file's map, an inflated span, a
//! record's own bytes): no copy, and each value keeps its buffer alive. An
//! owned batch is `Send + 'static`: it can be decoded on one thread and read
//! on another, or kept after the dataset it came from is dropped.
//!
//! Which buffer a value came from is known from its row: row `r` of a batch
//! is record `r`, so the caller names the buffer of each row (the shard's
//! map for [`Decoder::decode_ids_owned`](super::Decoder::decode_ids_owned),
//! the record's bytes for [`Decoder::decode_owned`](super::Decoder::decode_owned)),
//! and no value is looked up by its address. A value that is not a part of
//! its row's buffer is one of the spec's default values (a padded or missing
//! slot): those are shared from `Bytes` made once with the column.

use std::ops::Range;

use bytes::Bytes;

use super::column::{Batch, Column, Layout};
use super::spec::DType;

impl Column<'_> {
    /// The values of row `r` (slots, for a dense column) as a range of
    /// value indices ([`bytes_value`](Self::bytes_value), and the elements
    /// of [`values`](Self::values)), for any layout: `None` past the last
    /// row.
    ///
    /// ```
    /// use recordwire::batch::{decode, Batch, DType, FeatureSpec, Spec};
    /// use recordwire::encode::{Example, Feature, Features};
    ///
    /// let spec = Spec::example(vec![FeatureSpec::var_len("tokens", DType::Int64)])?;
    /// let records: Vec<Vec<u8>> = [vec![7, 8], vec![], vec![9]]
    ///     .into_iter()
    ///     .map(|t| {
    ///         let features: Features = [("tokens", Feature::Int64(t))].into_iter().collect();
    ///         Example::with_features(features).to_bytes()
    ///     })
    ///     .collect::<Result<_, _>>()?;
    /// let payloads: Vec<&[u8]> = records.iter().map(Vec::as_slice).collect();
    /// let mut batch = Batch::new();
    /// decode(&payloads, &spec, &mut batch)?;
    /// let tokens = batch.column("tokens").unwrap();
    /// assert_eq!(tokens.row_values(0), Some(0..2));
    /// assert_eq!(tokens.row_values(1), Some(2..2));
    /// assert_eq!(tokens.row_values(2), Some(2..3));
    /// assert_eq!(tokens.row_values(3), None);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn row_values(&self, r: usize) -> Option<Range<usize>> {
        let rows = self.shape.first().copied().unwrap_or(0);
        if r >= rows {
            return None;
        }
        let at = |v: &i64| *v as usize;
        match self.layout {
            Layout::Dense => {
                let per_row = self.len() / rows;
                Some(r * per_row..(r + 1) * per_row)
            }
            Layout::Ragged => {
                let splits = self.splits.typed::<i64>();
                Some(at(splits.get(r)?)..at(splits.get(r + 1)?))
            }
            Layout::RaggedFrames => {
                let splits = self.splits.typed::<i64>();
                let frames = self.frame_splits.typed::<i64>();
                let first = frames.get(at(splits.get(r)?))?;
                let end = frames.get(at(splits.get(r + 1)?))?;
                Some(at(first)..at(end))
            }
        }
    }

    /// Makes the borrowed values owned: each a share of its row's buffer
    /// (`owner(row)`), or of a default.
    fn share<'o>(&mut self, owner: &impl Fn(usize) -> Option<&'o Bytes>) {
        let mut shared = std::mem::take(&mut self.shared);
        shared.clear();
        shared.reserve(self.borrowed.len());
        let mut r = 0;
        while let Some(range) = self.row_values(r) {
            let buffer = owner(r);
            for &v in self.borrowed.get(range).unwrap_or_default() {
                shared.push(share_of(v, buffer, &self.shared_defaults));
            }
            r += 1;
        }
        self.shared = shared;
        self.shares = true;
    }
}

/// `v` as `Bytes`: a share of `buffer` when it lies in it, else of the
/// default it equals; a copy only for bytes from neither (which the decoder
/// does not make: every value is a part of its record or a default).
fn share_of(v: &[u8], buffer: Option<&Bytes>, defaults: &[Bytes]) -> Bytes {
    if v.is_empty() {
        return Bytes::new();
    }
    if let Some(b) = buffer {
        let (outer, inner) = (b.as_ptr_range(), v.as_ptr_range());
        if outer.start <= inner.start && inner.end <= outer.end {
            let start = inner.start as usize - outer.start as usize;
            return b.slice(start..start + v.len());
        }
    }
    match defaults.iter().find(|d| d[..] == *v) {
        Some(d) => d.clone(),
        None => Bytes::copy_from_slice(v),
    }
}

impl<'a> Batch<'a> {
    /// The batch with its borrowed values made owned, so that it no longer
    /// borrows its records: `owner(row)` names the buffer record `row` is a
    /// part of (a [`Bytes`] the records were sliced from), and each value of
    /// that row becomes a share of it ([`Column::shared`]), with no copy.
    /// Columns of other features (numbers, bytes copied into the column)
    /// are moved as they are; nothing is allocated once the batch is warm.
    ///
    /// A row whose buffer is `None`, or a value not in it, gets a copy
    /// (never made by the decoder for a row whose buffer is given).
    ///
    /// ```
    /// use bytes::Bytes;
    /// use recordwire::batch::{decode, Batch, DType, FeatureSpec, Spec};
    /// use recordwire::encode::{Example, Feature, Features};
    ///
    /// let spec = Spec::example(vec![FeatureSpec::fixed_len("image", DType::Bytes, &[]).borrowed()])?;
    /// let features: Features = [("image", Feature::Bytes(vec![b"pixels".to_vec()]))].into_iter().collect();
    /// let record = Bytes::from(Example::with_features(features).to_bytes()?);
    /// let owned: Batch<'static> = {
    ///     let mut batch = Batch::new();
    ///     decode(&[&record[..]], &spec, &mut batch)?;
    ///     batch.into_owned(|_row| Some(&record))
    /// };
    /// // The batch can go to another thread, and outlive the borrow.
    /// let image = std::thread::spawn(move || owned.column("image").unwrap().shared().unwrap()[0].clone())
    ///     .join()
    ///     .unwrap();
    /// assert_eq!(&image[..], b"pixels");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn into_owned<'o>(self, owner: impl Fn(usize) -> Option<&'o Bytes>) -> Batch<'static> {
        let columns = |cols: Vec<Column<'a>>| -> Vec<Column<'static>> {
            cols.into_iter()
                .map(|mut c| {
                    if c.dtype == DType::Bytes && c.borrow && !c.shares {
                        c.share(&owner);
                    }
                    c.relabel()
                })
                .collect()
        };
        let mut records = self.records;
        records.clear();
        Batch {
            rows: self.rows,
            columns: columns(self.columns),
            sequence: columns(self.sequence),
            parts: self.parts.into_iter().map(Batch::recycle).collect(),
            // Empty: collecting reuses the allocation (same layout).
            records: records.into_iter().map(|_| unreachable!()).collect(),
            placed: self.placed,
            windows: self.windows,
        }
    }
}
