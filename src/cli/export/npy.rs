//! The `.npy` output of `export`: a directory with one NumPy file (format
//! version 1.0) per array, `index.json` (feature → files, dtype, shape,
//! form) and `spec.json`.
//!
//! | form | files |
//! |---|---|
//! | `fixed_len`, `ofrecord_raw` | `NAME.npy`, shape `(rows, *shape)` |
//! | `fixed_len_sequence` | `NAME.values.npy` `(elements, *shape)`, unpadded; `NAME.lengths.npy` `(rows,)` |
//! | `var_len` | `NAME.values.npy` `(values,)`; `NAME.row_splits.npy` `(rows + 1,)` |
//! | `var_len` (sequence) | `NAME.values.npy`; `NAME.frame_splits.npy` `(frames + 1,)`; `NAME.row_splits.npy` `(rows + 1,)` |
//!
//! Bytes values are `NAME.data.npy` (uint8, every value's bytes one after
//! the other) and `NAME.offsets.npy` (int64, values + 1) in place of
//! `NAME.npy` / `NAME.values.npy`. Lengths, splits and offsets are int64.
//! A column's name (the feature's; `sequence.NAME` for a sequence feature
//! whose name a context feature has too) becomes a file name with `/` as
//! `__` (see [`file_stem`]); `index.json` maps column names to the feature,
//! its files, dtype, shape and form.

use std::collections::HashSet;
use std::fs::File;
use std::io::{BufWriter, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use super::{bytes_runs, raw_runs, runs, Plan, Shape, Sink};
use crate::batch::{Batch, Column, DType, Spec};
use crate::error::Error;
use crate::names::write_json_string;

/// The `descr` of a dtype's values in a `.npy` header.
fn descr(d: DType) -> &'static str {
    d.numpy_typestr()
}

/// The dtype's name in NumPy (for `index.json`).
fn numpy_dtype(d: DType) -> &'static str {
    match d {
        DType::Int64 => "int64",
        DType::Float32 => "float32",
        DType::Int32 => "int32",
        DType::Float64 => "float64",
        DType::Int8 => "int8",
        DType::UInt8 => "uint8",
        DType::Bytes => "bytes",
    }
}

const I64: &str = "<i8";

/// The header dictionary of an array of `count` items of shape `inner`.
fn header_dict(descr: &str, count: u64, inner: &[usize]) -> String {
    let mut shape = count.to_string();
    if inner.is_empty() {
        shape.push(',');
    }
    for d in inner {
        shape.push_str(", ");
        shape.push_str(&d.to_string());
    }
    format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': ({shape}), }}")
}

/// The bytes before the data: magic, version 1.0, the header's length and
/// the header, padded with spaces (and ended by a newline) to `total`.
fn header(descr: &str, count: u64, inner: &[usize], total: usize) -> Vec<u8> {
    let dict = header_dict(descr, count, inner);
    let mut out = Vec::with_capacity(total);
    out.extend_from_slice(b"\x93NUMPY\x01\x00");
    let len = u16::try_from(total - 10).unwrap_or(u16::MAX);
    out.extend_from_slice(&len.to_le_bytes());
    out.extend_from_slice(dict.as_bytes());
    out.resize(total - 1, b' ');
    out.push(b'\n');
    out
}

/// One `.npy` file being written: its header is written first with room for
/// any count (data start at a multiple of 64 bytes) and rewritten with the
/// count at the end.
struct NpyFile {
    out: BufWriter<File>,
    path: PathBuf,
    descr: &'static str,
    inner: Vec<usize>,
    count: u64,
    header: usize,
}

impl NpyFile {
    fn create(path: PathBuf, descr: &'static str, inner: &[usize]) -> Result<NpyFile, Error> {
        let reserved = (10 + header_dict(descr, u64::MAX, inner).len() + 1).div_ceil(64) * 64;
        let file = File::create_new(&path).map_err(|e| io_error(e, &path))?;
        let mut f = NpyFile {
            out: BufWriter::with_capacity(1 << 20, file),
            path,
            descr,
            inner: inner.to_vec(),
            count: 0,
            header: reserved,
        };
        let h = header(descr, 0, inner, reserved);
        f.bytes(&h)?;
        Ok(f)
    }

    /// Appends data bytes.
    fn bytes(&mut self, b: &[u8]) -> Result<(), Error> {
        self.out.write_all(b).map_err(|e| io_error(e, &self.path))
    }

    /// Appends int64 values (little-endian), `add` added to each; they are
    /// that many items.
    fn i64s(&mut self, values: &[i64], add: i64) -> Result<(), Error> {
        let mut buf = Vec::with_capacity(values.len() * 8);
        for v in values {
            buf.extend_from_slice(&(v + add).to_le_bytes());
        }
        self.bytes(&buf)?;
        self.count += values.len() as u64;
        Ok(())
    }

    /// Writes the header with the count; returns the file's size.
    fn finish(mut self) -> Result<u64, Error> {
        let h = header(self.descr, self.count, &self.inner, self.header);
        let r = (|| {
            self.out.flush()?;
            let mut file = self.out.get_ref();
            let size = file.seek(SeekFrom::End(0))?;
            file.seek(SeekFrom::Start(0))?;
            file.write_all(&h)?;
            file.sync_all()?;
            Ok(size)
        })();
        r.map_err(|e| io_error(e, &self.path))
    }
}

fn io_error(e: std::io::Error, path: &Path) -> Error {
    Error::io(e).with_file(path.display().to_string())
}

/// The file name stem of a feature: its name with `/` as `__`, other
/// characters unsafe in a file name (`\`, control characters) as `_`, `_`
/// before a name that is empty or starts with `.`, at most 200 bytes, and
/// `~2`, `~3`, … after a stem already taken.
pub(super) fn file_stem(name: &str, taken: &mut HashSet<String>) -> String {
    let mut stem = String::new();
    for c in name.chars() {
        match c {
            '/' => stem.push_str("__"),
            '\\' => stem.push('_'),
            c if c.is_control() => stem.push('_'),
            c => stem.push(c),
        }
    }
    if stem.is_empty() || stem.starts_with('.') {
        stem.insert(0, '_');
    }
    if stem.len() > 200 {
        let mut cut = 200;
        while !stem.is_char_boundary(cut) {
            cut -= 1;
        }
        stem.truncate(cut);
    }
    let mut unique = stem.clone();
    let mut n = 1;
    while !taken.insert(unique.clone()) {
        n += 1;
        unique = format!("{stem}~{n}");
    }
    unique
}

/// The files of one column, and how far each has got.
struct NpyColumn {
    plan: Plan,
    /// Numeric values.
    values: Option<NpyFile>,
    /// Bytes values: their bytes, and their offsets.
    data: Option<NpyFile>,
    offsets: Option<NpyFile>,
    lengths: Option<NpyFile>,
    frame_splits: Option<NpyFile>,
    row_splits: Option<NpyFile>,
    /// Values written so far (bytes values: values, not bytes).
    values_total: i64,
    /// Bytes of bytes values written so far.
    data_total: i64,
    /// Frames written so far (RaggedFrames).
    frames_total: i64,
    /// (role, file name), for `index.json`.
    files: Vec<(&'static str, String)>,
}

impl NpyColumn {
    fn create(dir: &Path, plan: &Plan, stem: &str) -> Result<NpyColumn, Error> {
        let mut files = Vec::new();
        let mut open = |role: &'static str, suffix: &str, descr: &'static str, inner: &[usize]| {
            let name = format!("{stem}{suffix}");
            let f = NpyFile::create(dir.join(&name), descr, inner);
            files.push((role, name));
            f
        };
        let dims: &[usize] = match plan.shape {
            Shape::Fixed | Shape::Padded => &plan.dims,
            Shape::Ragged | Shape::RaggedFrames => &[],
        };
        let (mut values, mut data, mut offsets) = (None, None, None);
        if plan.dtype == DType::Bytes {
            data = Some(open("data", ".data.npy", descr(DType::Bytes), &[])?);
            let mut o = open("offsets", ".offsets.npy", I64, &[])?;
            o.i64s(&[0], 0)?;
            offsets = Some(o);
        } else if plan.shape == Shape::Fixed {
            values = Some(open("values", ".npy", descr(plan.dtype), dims)?);
        } else {
            values = Some(open("values", ".values.npy", descr(plan.dtype), dims)?);
        }
        let lengths = match plan.shape {
            Shape::Padded => Some(open("lengths", ".lengths.npy", I64, &[])?),
            _ => None,
        };
        let frame_splits = match plan.shape {
            Shape::RaggedFrames => {
                let mut f = open("frame_splits", ".frame_splits.npy", I64, &[])?;
                f.i64s(&[0], 0)?;
                Some(f)
            }
            _ => None,
        };
        let row_splits = match plan.shape {
            Shape::Ragged | Shape::RaggedFrames => {
                let mut f = open("row_splits", ".row_splits.npy", I64, &[])?;
                f.i64s(&[0], 0)?;
                Some(f)
            }
            _ => None,
        };
        Ok(NpyColumn {
            plan: plan.clone(),
            values,
            data,
            offsets,
            lengths,
            frame_splits,
            row_splits,
            values_total: 0,
            data_total: 0,
            frames_total: 0,
            files,
        })
    }

    fn write(&mut self, col: &Column<'_>, rows: usize) -> Result<(), Error> {
        let runs = runs(&self.plan, col);
        let values_before = self.values_total;
        if let (Some(data), Some(offsets)) = (self.data.as_mut(), self.offsets.as_mut()) {
            let mut ends = Vec::new();
            for v in bytes_runs(col, &runs) {
                data.bytes(v)?;
                self.data_total += v.len() as i64;
                ends.push(self.data_total);
            }
            data.count = self.data_total as u64;
            offsets.i64s(&ends, 0)?;
            self.values_total += ends.len() as i64;
        }
        if let Some(values) = self.values.as_mut() {
            let mut n = 0usize;
            for b in raw_runs(col, &runs) {
                values.bytes(b)?;
                n += b.len();
            }
            let n = n.checked_div(col.dtype().width()).unwrap_or(0);
            self.values_total += n as i64;
            values.count += match self.plan.shape {
                Shape::Fixed => rows as u64,
                Shape::Padded => n.checked_div(self.plan.elems()).unwrap_or(0) as u64,
                Shape::Ragged | Shape::RaggedFrames => n as u64,
            };
        }
        if let Some(lengths) = self.lengths.as_mut() {
            lengths.i64s(col.lengths().unwrap_or_default(), 0)?;
        }
        let splits = col.row_splits().unwrap_or(&[0]);
        if let Some(frame_splits) = self.frame_splits.as_mut() {
            let frames = col.frame_splits().unwrap_or(&[0]);
            frame_splits.i64s(&frames[1..], values_before)?;
        }
        if let Some(row_splits) = self.row_splits.as_mut() {
            let base = match self.plan.shape {
                Shape::RaggedFrames => self.frames_total,
                _ => values_before,
            };
            row_splits.i64s(&splits[1..], base)?;
            if self.plan.shape == Shape::RaggedFrames {
                self.frames_total += splits.last().copied().unwrap_or(0);
            }
        }
        Ok(())
    }

    /// Finishes the files; returns their bytes.
    fn finish(self) -> Result<u64, Error> {
        let mut bytes = 0;
        let files = [
            self.values,
            self.data,
            self.offsets,
            self.lengths,
            self.frame_splits,
            self.row_splits,
        ];
        for f in files.into_iter().flatten() {
            bytes += f.finish()?;
        }
        Ok(bytes)
    }
}

/// The `.npy` directory being written.
pub(in crate::cli) struct NpyOut {
    dir: PathBuf,
    spec_json: String,
    payload: &'static str,
    columns: Vec<NpyColumn>,
}

impl NpyOut {
    /// Creates the files of every column in `dir` (which exists, empty).
    pub(in crate::cli) fn create(dir: &Path, spec: &Spec, plans: &[Plan]) -> Result<NpyOut, Error> {
        // Names of the files written beside the columns' own.
        let mut taken: HashSet<String> = ["index.json", "spec.json"]
            .into_iter()
            .map(String::from)
            .collect();
        let mut columns = Vec::with_capacity(plans.len());
        for plan in plans {
            let stem = file_stem(&plan.column, &mut taken);
            columns.push(NpyColumn::create(dir, plan, &stem)?);
        }
        Ok(NpyOut {
            dir: dir.to_path_buf(),
            spec_json: spec.to_json(),
            payload: crate::names::OptionName::name(spec.payload()),
            columns,
        })
    }

    fn index_json(&self, rows: u64) -> Vec<u8> {
        let mut out = Vec::new();
        out.extend_from_slice(
            format!(
                "{{\n  \"rows\": {rows},\n  \"payload\": \"{}\",\n  \"features\": {{",
                self.payload
            )
            .as_bytes(),
        );
        for (i, c) in self.columns.iter().enumerate() {
            out.extend_from_slice(if i == 0 { b"\n    " } else { b",\n    " });
            write_json_string(&mut out, c.plan.column.as_bytes());
            out.extend_from_slice(b": {\"name\": ");
            write_json_string(&mut out, c.plan.name.as_bytes());
            let dims: Vec<String> = c.plan.dims.iter().map(ToString::to_string).collect();
            out.extend_from_slice(
                format!(
                    ", \"part\": \"{}\", \"form\": \"{}\", \"dtype\": \"{}\", \"shape\": [{}], \"files\": {{",
                    if c.plan.sequence { "sequence" } else { "features" },
                    c.plan.form,
                    numpy_dtype(c.plan.dtype),
                    dims.join(", ")
                )
                .as_bytes(),
            );
            for (k, (role, name)) in c.files.iter().enumerate() {
                if k > 0 {
                    out.extend_from_slice(b", ");
                }
                out.extend_from_slice(format!("\"{role}\": ").as_bytes());
                write_json_string(&mut out, name.as_bytes());
            }
            out.extend_from_slice(b"}}");
        }
        out.extend_from_slice(b"\n  }\n}\n");
        out
    }
}

impl Sink for NpyOut {
    fn write_batch(&mut self, batch: &mut Batch<'_>) -> Result<(), Error> {
        let cols = batch.columns().iter().chain(batch.sequence());
        for (c, col) in self.columns.iter_mut().zip(cols) {
            c.write(col, batch.rows())?;
        }
        Ok(())
    }

    fn finish(self: Box<Self>, rows: u64) -> Result<u64, Error> {
        let index = self.index_json(rows);
        let mut bytes = 0;
        for (name, text) in [
            ("index.json", &index[..]),
            ("spec.json", self.spec_json.as_bytes()),
        ] {
            let path = self.dir.join(name);
            std::fs::write(&path, text).map_err(|e| io_error(e, &path))?;
            bytes += text.len() as u64;
        }
        for c in self.columns {
            bytes += c.finish()?;
        }
        if let Ok(d) = File::open(&self.dir) {
            let _ = d.sync_all();
        }
        Ok(bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_end_on_a_multiple_of_64_with_room_for_any_count() {
        for inner in [&[][..], &[3], &[28, 28, 3]] {
            let reserved = (10 + header_dict("<f4", u64::MAX, inner).len() + 1).div_ceil(64) * 64;
            for count in [0, 7, u64::MAX] {
                let h = header("<f4", count, inner, reserved);
                assert_eq!(h.len() % 64, 0);
                assert_eq!(h.len(), reserved);
                assert_eq!(h.last(), Some(&b'\n'));
                let text = std::str::from_utf8(&h[10..]).unwrap_or_default();
                assert!(text.starts_with(&format!(
                    "{{'descr': '<f4', 'fortran_order': False, 'shape': ({count}"
                )));
            }
        }
        assert!(header_dict("<i8", 5, &[]).contains("'shape': (5,)"));
        assert!(header_dict("<i8", 5, &[2, 3]).contains("'shape': (5, 2, 3)"));
    }

    #[test]
    fn feature_names_become_distinct_safe_file_names() {
        let mut taken = HashSet::new();
        assert_eq!(file_stem("image/encoded", &mut taken), "image__encoded");
        assert_eq!(file_stem("image__encoded", &mut taken), "image__encoded~2");
        assert_eq!(file_stem("", &mut taken), "_");
        assert_eq!(file_stem("..", &mut taken), "_..");
        assert_eq!(file_stem("a\\b\nc", &mut taken), "a_b_c");
        assert_eq!(file_stem("日本", &mut taken), "日本");
        let long = "é".repeat(150);
        let stem = file_stem(&long, &mut taken);
        assert!(stem.len() <= 200 && long.starts_with(&stem));
    }
}
