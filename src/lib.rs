//! recordwire: zero-copy reading of TFRecord and OFRecord files.
#![cfg_attr(docsrs, feature(doc_cfg))]

#[cfg(feature = "cli")]
pub mod cli;
pub mod dump;
pub mod error;
pub mod frame;
pub mod io;
pub mod json;
pub mod view;
pub mod wire;

pub use error::{DecodeError, DecodeReason, Error, ErrorKind, Result};
