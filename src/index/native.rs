//! The native index file (the format is documented on [`Index`]): writing
//! it, opening it in place, and the sidecar beside a data file.

use std::io::Write;
use std::path::{Path, PathBuf};

use bytes::Bytes;

use super::table::{damaged, Index, Table, FLAG_CRCS_VERIFIED, FLAG_PADS};
use crate::error::Error;
use crate::frame::Framing;
use crate::io::write_atomically;

/// The magic number that starts a native index file: `RWINDEX` and a NUL.
pub const NATIVE_MAGIC: [u8; 8] = *b"RWINDEX\0";
/// The version of the native format this build reads and writes.
pub const NATIVE_VERSION: u32 = 1;
/// Bytes of the native header; the table of offsets starts here.
pub const NATIVE_HEADER_LEN: usize = 48;
/// The extension of a sidecar index: `<data file>.rwindex`.
pub const SIDECAR_EXTENSION: &str = "rwindex";

const KNOWN_FLAGS: u8 = FLAG_CRCS_VERIFIED | FLAG_PADS;

/// The sidecar index path of a data file: its path with `.rwindex` appended
/// (`train-00003.tfrecord` → `train-00003.tfrecord.rwindex`).
///
/// ```
/// use std::path::Path;
/// assert_eq!(
///     recordwire::index::sidecar_path(Path::new("data/a.tfrecord")),
///     Path::new("data/a.tfrecord.rwindex")
/// );
/// ```
pub fn sidecar_path(data: &Path) -> PathBuf {
    let mut name = data.as_os_str().to_owned();
    name.push(".");
    name.push(SIDECAR_EXTENSION);
    PathBuf::from(name)
}

impl Index {
    /// Writes the native index file (format above) to `out`.
    ///
    /// `out` is written in a few large writes (the table in one on a
    /// little-endian target); there is no need to buffer it.
    ///
    /// An index that passed over damage ([`has_skips`](Self::has_skips)) is
    /// refused (`InvalidInput`, nothing written): it does not describe a
    /// valid file, and a sidecar made of it would be used as if it did.
    pub fn write_native(&self, out: &mut impl Write) -> std::io::Result<()> {
        self.check_writable()?;
        let offsets = self.offsets();
        let n = offsets.len().saturating_sub(1) as u64;
        #[cfg(target_endian = "little")]
        let table: &[u8] = bytemuck::cast_slice(offsets);
        #[cfg(not(target_endian = "little"))]
        let owned: Vec<u8> = offsets.iter().flat_map(|o| o.to_le_bytes()).collect();
        #[cfg(not(target_endian = "little"))]
        let table: &[u8] = &owned;
        let table_crc = crc32c::crc32c(table);

        let mut header = [0u8; NATIVE_HEADER_LEN];
        header[0..8].copy_from_slice(&NATIVE_MAGIC);
        header[8..12].copy_from_slice(&NATIVE_VERSION.to_le_bytes());
        header[12] = framing_code(self.framing);
        header[13] = self.flags;
        header[16..24].copy_from_slice(&n.to_le_bytes());
        header[24..32].copy_from_slice(&self.data_size.to_le_bytes());
        header[32..36].copy_from_slice(&self.fingerprint.to_le_bytes());
        header[36..40].copy_from_slice(&table_crc.to_le_bytes());
        let header_crc = crc32c::crc32c(&header[..40]);
        header[40..44].copy_from_slice(&header_crc.to_le_bytes());
        out.write_all(&header)?;
        out.write_all(table)
    }

    /// Refuses an index built with skips: see [`write_native`](Self::write_native).
    pub(super) fn check_writable(&self) -> std::io::Result<()> {
        if self.has_skips() {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                "this index passed over damaged bytes (on-error skip): it does not describe a valid file and is not written",
            ));
        }
        Ok(())
    }

    /// Writes the native index file to `path` atomically: to a temporary file
    /// beside it, synced, then renamed over `path` (nothing half-written ever
    /// appears under the final name). Errors carry the path.
    pub fn write_native_file(&self, path: impl AsRef<Path>) -> Result<(), Error> {
        let mut bytes = Vec::new();
        self.write_native(&mut bytes).map_err(Error::io)?;
        write_atomically(path.as_ref(), &bytes)
    }

    /// Opens a native index file held in `bytes` (typically a memory map),
    /// for the data file whose content is `data`, **in place**: the table is
    /// not copied (when aligned, on a little-endian target) nor parsed.
    ///
    /// Checks, in order (see the format above): magic, version, header CRC,
    /// reserved bytes, flags, framing, the length of the table against the
    /// record count, then the data's size and content fingerprint. Any
    /// mismatch is a `stale_index` error that says what differs (for a
    /// damaged index file: "damaged index file: …", at the offset in the index
    /// file). The caller should also check that the [`framing`](Self::framing)
    /// is the one it reads the data with.
    pub fn open_native(bytes: Bytes, data: &[u8]) -> Result<Index, Error> {
        let index = Index::open_native_parts(bytes)?;
        index.check_data(data)?;
        Ok(index)
    }

    /// [`open_native`](Self::open_native) without the data: every check of
    /// the index file itself, none against the data it describes (for an
    /// index whose data is checked another way: the decompressed stream of a
    /// compressed file, whose compressed bytes are fingerprinted instead).
    pub(crate) fn open_native_parts(bytes: Bytes) -> Result<Index, Error> {
        let header = bytes.get(..NATIVE_HEADER_LEN).ok_or_else(|| {
            damaged(
                0,
                format_args!(
                    "{} bytes, shorter than the {NATIVE_HEADER_LEN}-byte header",
                    bytes.len()
                ),
            )
        })?;
        let u32_at = |at: usize| {
            u32::from_le_bytes([header[at], header[at + 1], header[at + 2], header[at + 3]])
        };
        let u64_at = |at: usize| {
            let mut b = [0u8; 8];
            b.copy_from_slice(&header[at..at + 8]);
            u64::from_le_bytes(b)
        };
        if header[..8] != NATIVE_MAGIC {
            return Err(damaged(
                0,
                format_args!(
                    "not a recordwire index: magic {:02x?}, expected {:02x?} (RWINDEX\\0)",
                    &header[..8],
                    NATIVE_MAGIC
                ),
            ));
        }
        let version = u32_at(8);
        if version != NATIVE_VERSION {
            return Err(damaged(
                8,
                format_args!("format version {version}, this build reads version {NATIVE_VERSION}"),
            ));
        }
        let stored = u32_at(40);
        let computed = crc32c::crc32c(&header[..40]);
        if stored != computed {
            return Err(damaged(
                40,
                format_args!("header CRC stored {stored:#010x}, computed {computed:#010x}"),
            ));
        }
        if header[14..16] != [0, 0] || header[44..48] != [0; 4] {
            return Err(damaged(14, "reserved bytes are not zero"));
        }
        let flags = header[13];
        if flags & !KNOWN_FLAGS != 0 {
            return Err(damaged(13, format_args!("unknown flags {flags:#04x}")));
        }
        let framing = match header[12] {
            1 => Framing::TfRecord,
            2 => Framing::OfRecord,
            other => return Err(damaged(12, format_args!("unknown framing code {other}"))),
        };
        let n = u64_at(16);
        let data_size = u64_at(24);
        let fingerprint = u32_at(32);
        let table_crc = u32_at(36);
        let expected = n
            .checked_add(1)
            .and_then(|entries| entries.checked_mul(8))
            .and_then(|t| t.checked_add(NATIVE_HEADER_LEN as u64));
        if expected != Some(bytes.len() as u64) {
            return Err(damaged(
                NATIVE_HEADER_LEN as u64,
                format_args!(
                    "{} bytes, but {n} records need {} (truncated or extended table)",
                    bytes.len(),
                    expected.map_or_else(|| "more than 2^64".to_string(), |e| e.to_string())
                ),
            ));
        }
        let table = Table::from_le_bytes(bytes.slice(NATIVE_HEADER_LEN..));
        let index = Index {
            framing,
            flags,
            data_size,
            fingerprint,
            table_crc: Some(table_crc),
            table,
        };
        let end = index.offsets().last().copied().unwrap_or(0);
        if end > data_size {
            return Err(damaged(
                bytes.len() as u64 - 8,
                format_args!("the last record ends at byte {end}, past the data size {data_size}"),
            ));
        }
        Ok(index)
    }

    /// Reads the native index file at `path` (memory-mapped when `mmap`,
    /// else read), opens it for `data` ([`open_native`](Self::open_native))
    /// and checks its whole table ([`verify_table`](Self::verify_table)).
    /// Errors carry the index file's path.
    ///
    /// This is how the sidecar and `--index` files are opened: an index file
    /// on disk may have been damaged, and a damaged entry that the
    /// fingerprint does not sample would otherwise go unseen until a
    /// [`get`](Self::get) of its records, and would silently skew what reads
    /// only the offsets (page groups, sizes). The table check reads 8 bytes
    /// per record once (a CRC pass: about a millisecond per million records);
    /// callers that cannot afford it use [`open_native`](Self::open_native).
    pub fn load_native(path: impl AsRef<Path>, data: &[u8], mmap: bool) -> Result<Index, Error> {
        let path = path.as_ref();
        let bytes = crate::io::RecordFile::stored_bytes(path, mmap)?;
        Index::open_native(bytes, data)
            .and_then(|index| index.verify_table().map(|()| index))
            .map_err(|e| e.with_file(path.display().to_string()))
    }
}

/// The framing's code in the native header.
fn framing_code(framing: Framing) -> u8 {
    match framing {
        Framing::TfRecord => 1,
        Framing::OfRecord => 2,
    }
}
