//! Interchange formats: DALI's / vahidk-tfrecord's text index and the
//! thesis's raw table of offsets (docs/FORMAT.md §6.6, §6.7). The latter is
//! called `lirs` after LIRS, "a lightweight implementation of random
//! shuffling", which the thesis applies to TFRecord with this table.

use std::fmt;
use std::io::{BufWriter, Write};

use bytes::Bytes;

use super::table::{stale, Index};
use crate::error::Error;
use crate::frame::{is_pad, parse_frame, Framing, ReadOptions, Status};
use crate::names::OptionName;

/// The file formats of an index (the `--format` of `recordwire index`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum IndexFormat {
    /// The native binary format, documented on [`Index`]: `native`.
    #[default]
    Native,
    /// DALI's and vahidk/tfrecord's text index: one line `offset size` per
    /// record, `size` being the whole frame, in decimal: `dali`.
    Dali,
    /// The thesis's raw offset table: the frame starts as u64
    /// little-endian, nothing else: `lirs` (after LIRS, the random shuffling
    /// the thesis builds on this table; docs/FORMAT.md §6.7).
    Lirs,
}

impl IndexFormat {
    /// The name used on the command line: `native`, `dali` or `lirs`.
    pub const fn name(self) -> &'static str {
        match self {
            IndexFormat::Native => "native",
            IndexFormat::Dali => "dali",
            IndexFormat::Lirs => "lirs",
        }
    }

    /// Tells the format of an index file from (at least the first bytes of)
    /// its content: native by its magic number, DALI text when every byte is
    /// an ASCII digit or white space, else a raw offset table. A raw table
    /// cannot pass for text: the top byte of each entry is zero for any data
    /// file under 64 PiB. An empty file is an empty text index.
    ///
    /// ```
    /// use recordwire::index::IndexFormat;
    ///
    /// assert_eq!(IndexFormat::detect(b"RWINDEX\0..."), IndexFormat::Native);
    /// assert_eq!(IndexFormat::detect(b"0 131\n131 131\n"), IndexFormat::Dali);
    /// assert_eq!(IndexFormat::detect(&131u64.to_le_bytes()), IndexFormat::Lirs);
    /// ```
    pub fn detect(content: &[u8]) -> IndexFormat {
        if content.starts_with(&super::native::NATIVE_MAGIC) {
            IndexFormat::Native
        } else if content
            .iter()
            .all(|b| b.is_ascii_digit() || b.is_ascii_whitespace())
        {
            IndexFormat::Dali
        } else {
            IndexFormat::Lirs
        }
    }
}

/// How many first bytes of a file [`index_file_format`] looks at.
pub const INDEX_SNIFF_LEN: usize = 4096;

/// Whether a file is one of the index files recordwire writes, from its name
/// and its first bytes (up to [`INDEX_SNIFF_LEN`]) and its length; the format
/// when it is. Used to keep index files out of datasets and to tell a user
/// who passes one as a record file what it is.
///
/// - native: the magic number, whatever the name; the checkpoint index of
///   a GZIP or ZLIB file (what `index --format native` writes for one,
///   docs/FORMAT.md §6.10) by its own magic number, as native too;
/// - DALI text: lines of two decimal numbers (`offset size`), whatever the
///   name: no record file starts so (its first 8 bytes would declare a
///   frame of more than 2^53 bytes);
/// - raw offset table (`lirs`): a name ending in `.offsets` (what `index
///   --format lirs` writes) and content that fits, a length that is a whole
///   number of 8-byte entries, the first 0, and no entry smaller than the
///   one before.
///
/// A file whose first 12 bytes are a valid TFRecord header is never an
/// index (the header's CRC cannot match by chance).
///
/// ```
/// use recordwire::frame::{file_of, Framing};
/// use recordwire::index::{index_file_format, IndexFormat};
///
/// assert_eq!(index_file_format("a.idx", b"0 131\n131 131\n", 14), Some(IndexFormat::Dali));
/// let table: Vec<u8> = [0u64, 131, 262].iter().flat_map(|o| o.to_le_bytes()).collect();
/// assert_eq!(index_file_format("a.offsets", &table, 24), Some(IndexFormat::Lirs));
/// let data = file_of(Framing::TfRecord, [&b"x"[..]]);
/// assert_eq!(index_file_format("a.idx", &data, data.len() as u64), None);
/// ```
pub fn index_file_format(name: &str, head: &[u8], len: u64) -> Option<IndexFormat> {
    let head = &head[..head.len().min(INDEX_SNIFF_LEN)];
    if head.starts_with(&super::native::NATIVE_MAGIC) || head.starts_with(&super::gz::GZ_MAGIC) {
        return Some(IndexFormat::Native);
    }
    if let Some(header) = head.first_chunk::<{ crate::frame::TFRECORD_HEADER_LEN }>() {
        if crate::frame::is_tfrecord_header(header) {
            return None;
        }
    }
    if looks_like_dali(head) {
        return Some(IndexFormat::Dali);
    }
    if name.ends_with(".offsets") && looks_like_lirs(head, len) {
        return Some(IndexFormat::Lirs);
    }
    None
}

/// Non-empty, only digits and white space, and a first line of two numbers.
fn looks_like_dali(head: &[u8]) -> bool {
    if head.is_empty()
        || !head
            .iter()
            .all(|b| b.is_ascii_digit() || b.is_ascii_whitespace())
    {
        return false;
    }
    let first_line = head.split(|&b| b == b'\n').next().unwrap_or_default();
    let fields: Vec<&[u8]> = first_line
        .split(|b| b.is_ascii_whitespace())
        .filter(|f| !f.is_empty())
        .collect();
    fields.len() == 2
}

/// Whole 8-byte entries, the first 0, none smaller than the one before.
fn looks_like_lirs(head: &[u8], len: u64) -> bool {
    if len < 8 || !len.is_multiple_of(8) {
        return false;
    }
    let entries = head
        .chunks_exact(8)
        .map(|c| u64::from_le_bytes(c.try_into().unwrap_or([0xff; 8])));
    let mut previous = None;
    for entry in entries {
        match previous {
            None if entry != 0 => return false,
            Some(p) if entry < p => return false,
            _ => previous = Some(entry),
        }
    }
    previous.is_some()
}

/// `native`, `dali` or `lirs`.
impl OptionName for IndexFormat {
    const WHAT: &'static str = "index format";
    const ALL: &'static [Self] = &[IndexFormat::Native, IndexFormat::Dali, IndexFormat::Lirs];
    fn name(self) -> &'static str {
        IndexFormat::name(self)
    }
}

crate::option_names!(IndexFormat);

/// An entry of an interchange index, for messages.
#[derive(Debug, Clone, Copy)]
enum Entry {
    /// A line of a text index (0-based).
    Line(usize),
    /// An entry of a raw table (0-based).
    Raw(usize),
    /// Bytes between listed frames.
    Gap,
}

impl fmt::Display for Entry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Entry::Line(i) => write!(f, "text index line {}", i + 1),
            Entry::Raw(i) => write!(f, "raw table entry {i}"),
            Entry::Gap => f.write_str("gap"),
        }
    }
}

/// Reads frames at the offsets an interchange index gives, checking that
/// records and pad frames tile the data.
struct Tiler<'d> {
    data: &'d [u8],
    framing: Framing,
    /// Where the previous frame ended.
    pos: u64,
    offsets: Vec<u64>,
    last_end: u64,
    pads: bool,
}

impl<'d> Tiler<'d> {
    fn new(data: &'d [u8], framing: Framing) -> Self {
        Tiler {
            data,
            framing,
            pos: 0,
            offsets: Vec::new(),
            last_end: 0,
            pads: false,
        }
    }

    /// The frame at `at`, its length CRC (not its data CRC) checked; `what`
    /// names the index entry in errors.
    fn frame(&self, at: u64, what: Entry) -> Result<(usize, &'d [u8]), Error> {
        let id = self.offsets.len() as u64;
        let rest = usize::try_from(at)
            .ok()
            .and_then(|a| self.data.get(a..))
            .filter(|r| !r.is_empty())
            .ok_or_else(|| {
                stale(
                    at,
                    format!(
                        "{what}: offset {at} is at or past the end of the data ({} bytes)",
                        self.data.len()
                    ),
                )
                .with_record(id)
            })?;
        let opts = ReadOptions::default().with_data_crc(false);
        match parse_frame(rest, self.framing, &opts) {
            Ok(Status::Complete(frame)) => Ok((frame.len, frame.data)),
            Ok(Status::Incomplete(more)) => Err(stale(
                at,
                format!(
                    "{what}: no whole frame at offset {at}: {}",
                    more.error_kind()
                ),
            )
            .with_record(id)),
            Err(e) => Err(stale(
                at,
                format!(
                    "{what}: offset {at} is not the start of a frame: [{}] {}",
                    e.kind().name(),
                    e.kind()
                ),
            )
            .with_record(id)),
        }
    }

    /// Checks that the bytes from the previous frame's end to `to` are pad
    /// frames.
    fn pads_until(&mut self, to: u64) -> Result<(), Error> {
        while self.pos < to {
            let at = self.pos;
            let id = self.offsets.len() as u64;
            let not_pad = || {
                stale(
                    at,
                    format!(
                        "bytes {at}..{to} are not listed in the index and are not pad frames \
                         (a record is missing from the index)"
                    ),
                )
                .with_record(id)
            };
            let (len, data) = self.frame(at, Entry::Gap).map_err(|_| not_pad())?;
            let end = at.saturating_add(len as u64);
            if !is_pad(data) || end > to {
                return Err(not_pad());
            }
            self.pads = true;
            self.pos = end;
        }
        Ok(())
    }

    /// The index lists a frame at `at` (of `size` bytes, when it says).
    fn push(&mut self, at: u64, size: Option<u64>, what: Entry) -> Result<(), Error> {
        let id = self.offsets.len() as u64;
        if at < self.pos {
            return Err(stale(
                at,
                format!(
                    "{what}: offset {at} is before the end of the previous frame ({}): \
                     the offsets must be increasing frame starts",
                    self.pos
                ),
            )
            .with_record(id));
        }
        let (len, data) = self.frame(at, what)?;
        self.pads_until(at)?;
        if let Some(size) = size {
            if size != len as u64 {
                return Err(stale(
                    at,
                    format!(
                        "{what}: the index says {size} bytes, the frame header at offset {at} \
                         declares a frame of {len} bytes"
                    ),
                )
                .with_record(id));
            }
        }
        let end = at.saturating_add(len as u64);
        self.pos = end;
        if is_pad(data) {
            // A pad frame listed as a record (a DALI index of a padded file):
            // not a record here.
            self.pads = true;
            return Ok(());
        }
        self.offsets.push(at);
        self.last_end = end;
        Ok(())
    }

    fn finish(mut self) -> Result<Index, Error> {
        let size = self.data.len() as u64;
        if let Err(e) = self.pads_until(size) {
            return Err(stale(
                self.pos,
                format!(
                    "the index ends at byte {} but the data continues to byte {size} with \
                     frames that are not listed (the data file was appended to?)",
                    self.pos
                ),
            )
            .with_record(e.record().unwrap_or(0)));
        }
        let mut offsets = self.offsets;
        offsets.push(self.last_end);
        offsets.shrink_to_fit();
        Ok(Index::from_offsets(
            self.framing,
            offsets,
            self.data,
            false,
            self.pads,
        ))
    }
}

impl Index {
    /// Reads a DALI / vahidk-tfrecord text index (`text`) of the data file
    /// whose content is `data`, of `framing`.
    ///
    /// The text is one line per record, `offset size` in decimal separated by
    /// spaces or tabs, `size` being the whole frame (header, data and CRC);
    /// blank lines are ignored. It is checked against the data, reading every
    /// frame header it points at: each offset must be a frame start with a
    /// valid header (length CRC) whose frame has exactly `size` bytes, the
    /// offsets must increase, and the frames must cover the data with nothing
    /// in between but pad frames. Pad frames listed as records (as a DALI
    /// tool writes them for a padded file) are left out: the ids are those of
    /// the records. Anything else is a `stale_index` error (a line that is not
    /// two numbers too).
    ///
    /// The data CRCs are not checked ([`crcs_verified`](Index::crcs_verified)
    /// is false).
    pub fn read_dali(text: &[u8], data: &[u8], framing: Framing) -> Result<Index, Error> {
        let mut tiler = Tiler::new(data, framing);
        let mut line_start = 0u64;
        for (i, line) in text.split(|&b| b == b'\n').enumerate() {
            let at = line_start;
            line_start = line_start.saturating_add(line.len() as u64 + 1);
            let line = line.strip_suffix(b"\r").unwrap_or(line);
            let mut fields = line
                .split(|b| *b == b' ' || *b == b'\t')
                .filter(|f| !f.is_empty());
            let (Some(offset), size, None) = (fields.next(), fields.next(), fields.next()) else {
                if line.iter().all(|b| *b == b' ' || *b == b'\t') {
                    continue;
                }
                return Err(not_a_text_index(at, i, line));
            };
            let (Some(offset), Some(size)) = (decimal(offset), size.and_then(decimal)) else {
                return Err(not_a_text_index(at, i, line));
            };
            tiler.push(offset, Some(size), Entry::Line(i))?;
        }
        tiler.finish()
    }

    /// Writes the DALI / vahidk-tfrecord text index: one line
    /// `offset size\n` per record, `size` being the whole frame.
    ///
    /// Without pad frames the sizes come from the index alone; with them
    /// ([`has_pads`](Index::has_pads)) each record's frame header is read
    /// from `data` (the data file's content), and an index that does not
    /// match it is a `stale_index` error. Pad frames are not listed.
    pub fn write_dali(&self, data: &[u8], out: &mut impl Write) -> Result<(), Error> {
        let mut w = BufWriter::with_capacity(1 << 16, out);
        let io = Error::io;
        for id in 0..self.len() {
            let Some(span) = self.frame_range(id) else {
                break;
            };
            let size = if self.has_pads() {
                let record = self
                    .get(data, id, &ReadOptions::default().with_data_crc(false))?
                    .ok_or_else(|| stale(span.start, "record missing"))?;
                record.frame_len()
            } else {
                span.end.saturating_sub(span.start)
            };
            writeln!(w, "{} {size}", span.start).map_err(io)?;
        }
        w.flush().map_err(io)
    }

    /// Reads the thesis's raw offset table (`table`: the record starts as u64
    /// little-endian, nothing else) of the data file whose content is `data`,
    /// of `framing`.
    ///
    /// Checked against the data as [`read_dali`](Index::read_dali) checks a
    /// text index: every offset must be a frame start with a valid header,
    /// the offsets increase, and records and pad frames cover the data. The
    /// end of the last record comes from its frame header. A table whose
    /// length is not a multiple of 8 is a `stale_index` error.
    pub fn read_lirs(table: &[u8], data: &[u8], framing: Framing) -> Result<Index, Error> {
        if !table.len().is_multiple_of(8) {
            return Err(stale(
                table.len() as u64,
                format!(
                    "a raw offset table is a multiple of 8 bytes, this one has {}",
                    table.len()
                ),
            ));
        }
        let mut tiler = Tiler::new(data, framing);
        for (i, entry) in table.chunks_exact(8).enumerate() {
            let offset = u64::from_le_bytes(entry.try_into().unwrap_or_default());
            tiler.push(offset, None, Entry::Raw(i))?;
        }
        tiler.finish()
    }

    /// Writes the thesis's raw offset table: each record's frame start as u64
    /// little-endian (not the end of the last record).
    pub fn write_lirs(&self, out: &mut impl Write) -> Result<(), Error> {
        let starts = self.starts();
        let io = Error::io;
        #[cfg(target_endian = "little")]
        out.write_all(bytemuck::cast_slice(starts)).map_err(io)?;
        #[cfg(not(target_endian = "little"))]
        {
            let mut w = BufWriter::with_capacity(1 << 16, &mut *out);
            for s in starts {
                w.write_all(&s.to_le_bytes()).map_err(io)?;
            }
            w.flush().map_err(io)?;
        }
        Ok(())
    }

    /// Reads an index file of `format` held in `bytes`, for the data file
    /// whose content is `data`, of `framing`: [`open_native`](Index::open_native)
    /// (whose framing must then be `framing`), [`read_dali`](Index::read_dali)
    /// or [`read_lirs`](Index::read_lirs).
    pub fn read_as(
        format: IndexFormat,
        bytes: Bytes,
        data: &[u8],
        framing: Framing,
    ) -> Result<Index, Error> {
        match format {
            IndexFormat::Native => {
                let index = Index::open_native(bytes, data)?;
                if index.framing() != framing {
                    return Err(stale(
                        12,
                        format!(
                            "the index is for {} data, the data is read as {framing}",
                            index.framing()
                        ),
                    ));
                }
                Ok(index)
            }
            IndexFormat::Dali => Index::read_dali(&bytes, data, framing),
            IndexFormat::Lirs => Index::read_lirs(&bytes, data, framing),
        }
    }

    /// Writes this index as `format` ([`write_native`](Index::write_native),
    /// [`write_dali`](Index::write_dali) — which may read `data` — or
    /// [`write_lirs`](Index::write_lirs)).
    pub fn write_as(
        &self,
        format: IndexFormat,
        data: &[u8],
        out: &mut impl Write,
    ) -> Result<(), Error> {
        self.check_writable().map_err(Error::io)?;
        match format {
            IndexFormat::Native => self.write_native(out).map_err(Error::io),
            IndexFormat::Dali => self.write_dali(data, out),
            IndexFormat::Lirs => self.write_lirs(out),
        }
    }
}

/// A decimal u64 without sign or other characters.
fn decimal(field: &[u8]) -> Option<u64> {
    if field.is_empty() || !field.iter().all(u8::is_ascii_digit) {
        return None;
    }
    std::str::from_utf8(field).ok()?.parse().ok()
}

fn not_a_text_index(at: u64, line: usize, text: &[u8]) -> Error {
    let shown: String = String::from_utf8_lossy(&text[..text.len().min(40)]).into_owned();
    stale(
        at,
        format!(
            "not a text index: line {} is {shown:?}, expected `offset size`",
            line + 1
        ),
    )
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::frame::{file_of, tfrecord_frame};
    use crate::index::pad::pad_frame;

    #[test]
    fn format_names() {
        for f in [IndexFormat::Native, IndexFormat::Dali, IndexFormat::Lirs] {
            assert_eq!(f.name().parse::<IndexFormat>(), Ok(f));
        }
        assert!("csv".parse::<IndexFormat>().is_err());
    }

    #[test]
    fn text_parsing() {
        let data = file_of(Framing::TfRecord, [&b"ab"[..], b"c"]);
        let good = Index::build(&data, Framing::TfRecord, false).unwrap();
        let read = |t: &str| Index::read_dali(t.as_bytes(), &data, Framing::TfRecord);
        assert_eq!(read("0 18\n18 17\n").unwrap(), good);
        assert_eq!(read("0 18\r\n\n18\t17").unwrap(), good);
        for bad in ["0 18\n18\n", "0 18 1\n18 17\n", "0 18\n18 +17\n", "x y\n"] {
            let err = read(bad).unwrap_err();
            assert_eq!(err.kind().name(), "stale_index", "{bad}");
            assert!(err.to_string().contains("not a text index"), "{err}");
        }
        let err = read("0 18\n").unwrap_err();
        assert!(err.to_string().contains("appended"), "{err}");
        let err = read("0 17\n17 18\n").unwrap_err();
        assert!(err.to_string().contains("declares a frame of 18"), "{err}");
        let err = read("18 17\n").unwrap_err();
        assert!(err.to_string().contains("not pad frames"), "{err}");
        let err = read("0 18\n17 17\n").unwrap_err();
        assert!(err.to_string().contains("before the end"), "{err}");
        let err = read("0 18\n35 17\n").unwrap_err();
        assert!(err.to_string().contains("past the end"), "{err}");
    }

    #[test]
    fn pads_between_and_listed() {
        let mut data = pad_frame(40, Framing::TfRecord).unwrap();
        data.extend_from_slice(&tfrecord_frame(b"one"));
        data.extend_from_slice(&pad_frame(50, Framing::TfRecord).unwrap());
        data.extend_from_slice(&tfrecord_frame(b"two"));
        data.extend_from_slice(&pad_frame(37, Framing::TfRecord).unwrap());
        let built = Index::build(&data, Framing::TfRecord, true).unwrap();
        assert_eq!(built.offsets(), [40, 109, 128]);
        assert!(built.has_pads());
        // DALI's tool lists the pads; we leave them out.
        let listed = "0 40\n40 19\n59 50\n109 19\n128 37\n";
        let read = Index::read_dali(listed.as_bytes(), &data, Framing::TfRecord).unwrap();
        assert_eq!(read.offsets(), built.offsets());
        // Written back without pads, with frame sizes from the headers.
        let mut text = Vec::new();
        read.write_dali(&data, &mut text).unwrap();
        assert_eq!(text, b"40 19\n109 19\n");
        let again = Index::read_dali(&text, &data, Framing::TfRecord).unwrap();
        assert_eq!(again.offsets(), built.offsets());
        let mut raw = Vec::new();
        built.write_lirs(&mut raw).unwrap();
        let lirs = Index::read_lirs(&raw, &data, Framing::TfRecord).unwrap();
        assert_eq!(lirs.offsets(), built.offsets());
    }

    #[test]
    fn raw_tables() {
        let data = file_of(Framing::OfRecord, [&b"a"[..], b"", b"xyz"]);
        let built = Index::build(&data, Framing::OfRecord, false).unwrap();
        let mut raw = Vec::new();
        built.write_lirs(&mut raw).unwrap();
        assert_eq!(raw.len(), 24);
        let read = Index::read_lirs(&raw, &data, Framing::OfRecord).unwrap();
        assert_eq!(read, built);
        let err = Index::read_lirs(&raw[..23], &data, Framing::OfRecord).unwrap_err();
        assert!(err.to_string().contains("multiple of 8"), "{err}");
        let err = Index::read_lirs(&raw[..16], &data, Framing::OfRecord).unwrap_err();
        assert_eq!(err.kind().name(), "stale_index");
        let empty = Index::read_lirs(b"", b"", Framing::OfRecord).unwrap();
        assert_eq!(empty.offsets(), [0]);
    }
}
