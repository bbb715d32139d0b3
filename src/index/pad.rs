//! Pad frames, as the index sees them: re-exported from [`crate::frame::pad`],
//! where they are defined (docs/FORMAT.md §7.5).
//!
//! The index builders call [`is_pad`] on every frame and leave pad frames out
//! of the index, so that record ids count records only; an index records
//! whether its file has pads ([`Index::has_pads`](super::Index::has_pads)). This module keeps the older paths
//! (`recordwire::index::pad::…`, `recordwire::index::is_pad`) working.
//!
//! ```
//! use recordwire::frame::Framing;
//! use recordwire::index::pad::{is_pad, pad_payload};
//!
//! assert!(is_pad(&pad_payload(37, Framing::TfRecord).unwrap()));
//! ```

pub use crate::frame::pad::{
    is_pad, max_pad_frame_len, min_pad_frame_len, pad_frame, pad_payload, write_pad_frame,
    write_pad_payload, MAX_PAD_PAYLOAD, MIN_PAD_PAYLOAD, PAD_FIELD, PAD_MARKER, PAD_TAG,
};
