//! What a file is written as, from its name and what the caller named:
//! the one rule of the command line's `pack`/`convert` and Python's
//! `Writer` (docs/FORMAT.md §9.3).
//!
//! - **Compression**: the one named, else the name's suffix (`.gz`/`.gzip`:
//!   GZIP, `.zlib`/`.zz`: ZLIB), else none.
//! - **Framing**: the one named, whatever the name says; else the one the
//!   name suggests ([`framing_hint`]: `x.tfrecord`, `x.ofrecord`, OneFlow's
//!   `part-N`); else the default the caller gives (the payload's own, or the
//!   input's).
//! - A payload named explicitly whose own framing (tf.Example and
//!   SequenceExample: TFRecord; OFRecord: OFRecord) contradicts the name is
//!   refused ([`FramingConflict`]): only a named framing may disagree with
//!   the name.
//!
//! ```
//! use std::path::Path;
//! use recordwire::encode::{output_compression, output_framing};
//! use recordwire::frame::Framing;
//! use recordwire::io::Compression;
//! use recordwire::view::PayloadKind;
//!
//! let out = Path::new("train.ofrecord.gz");
//! assert_eq!(output_compression(None, out), Compression::Gzip);
//! assert_eq!(output_framing(None, None, out, || Framing::TfRecord), Ok(Framing::OfRecord));
//! // A tf.Example payload does not go in the OFRecord frames the name asks for...
//! let conflict = output_framing(None, Some(PayloadKind::Example), out, || Framing::TfRecord).unwrap_err();
//! assert!(conflict.message("--framing").contains("say --framing ofrecord"));
//! // ... unless the framing is named.
//! assert_eq!(
//!     output_framing(Some(Framing::OfRecord), Some(PayloadKind::Example), out, || Framing::TfRecord),
//!     Ok(Framing::OfRecord)
//! );
//! ```

use std::path::{Path, PathBuf};

use crate::frame::Framing;
use crate::io::{framing_hint, Compression};
use crate::view::PayloadKind;

/// The compression of a file written to `output`: `named` when it names
/// one (not `Auto`), else the name's suffix.
pub fn output_compression(named: Option<Compression>, output: &Path) -> Compression {
    match named {
        Some(named @ (Compression::Gzip | Compression::Zlib | Compression::None)) => named,
        Some(Compression::Auto) | None => {
            match output
                .extension()
                .and_then(|e| e.to_str())
                .map(str::to_ascii_lowercase)
                .as_deref()
            {
                Some("gz") | Some("gzip") => Compression::Gzip,
                Some("zlib") | Some("zz") => Compression::Zlib,
                _ => Compression::None,
            }
        }
    }
}

/// The framing a payload kind is written in by default: tf.Example and
/// SequenceExample in TFRecord, OFRecord in OFRecord; raw in either.
pub fn native_framing(payload: PayloadKind) -> Option<Framing> {
    match payload {
        PayloadKind::Example | PayloadKind::SequenceExample => Some(Framing::TfRecord),
        PayloadKind::OfRecord => Some(Framing::OfRecord),
        PayloadKind::Raw => None,
    }
}

/// The framing of a file written to `output`: `named` when given; else the
/// one the name suggests; else `otherwise()`. A `payload` named explicitly
/// whose own framing contradicts the name is a [`FramingConflict`].
pub fn output_framing(
    named: Option<Framing>,
    payload: Option<PayloadKind>,
    output: &Path,
    otherwise: impl FnOnce() -> Framing,
) -> Result<Framing, FramingConflict> {
    if let Some(named) = named {
        return Ok(named);
    }
    let Some(hinted) = framing_hint(output) else {
        return Ok(otherwise());
    };
    match payload.and_then(|p| native_framing(p).map(|f| (p, f))) {
        Some((payload, own)) if own != hinted => Err(FramingConflict {
            output: output.to_path_buf(),
            hinted,
            payload,
            own,
        }),
        _ => Ok(hinted),
    }
}

/// A payload named for an output whose name asks for the other framing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FramingConflict {
    /// The output.
    pub output: PathBuf,
    /// The framing its name suggests.
    pub hinted: Framing,
    /// The payload named.
    pub payload: PayloadKind,
    /// The framing that payload belongs in.
    pub own: Framing,
}

impl FramingConflict {
    /// The message, telling how to name the framing with `option` (the
    /// command line's `--framing`, Python's `framing=`).
    pub fn message(&self, option: &str) -> String {
        let (hinted, own) = (self.hinted, self.own);
        let named = if option.ends_with('=') {
            format!("{option}'{hinted}'")
        } else {
            format!("{option} {hinted}")
        };
        format!(
            "{}: the name says {hinted} framing, but {} payloads belong in {own} frames; \
             say {named} to write them in {hinted} frames anyway, or name the output for {own}",
            self.output.display(),
            self.payload.name()
        )
    }
}

impl std::fmt::Display for FramingConflict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message("--framing"))
    }
}

impl std::error::Error for FramingConflict {}
