//! Finishing a column: joining the parts of a parallel decode, then
//! shapes, padding, lengths and sparse indices.

use super::feature::{spec_bytes_default, Column};
use crate::batch::buf::AlignedBuf;
use crate::batch::shape::Shape;
use crate::batch::spec::{DType, FeatureSpec};

impl<'a> Column<'a> {
    /// Appends `other`'s rows (both unfinished) after this column's.
    fn append_rows(&mut self, other: &Column<'a>, shape: Shape) {
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
        let shift = |dst: &mut AlignedBuf, src: &AlignedBuf, by: i64| {
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
    pub(super) fn join_finish<'p>(
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
    pub(super) fn finish(&mut self, spec: &'a FeatureSpec, shape: Shape, rows: usize) {
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
