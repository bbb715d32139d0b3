//! recordwire: zero-copy reading of TFRecord and OFRecord files.
#![cfg_attr(docsrs, feature(doc_cfg))]

pub mod error;
pub mod frame;
pub mod io;
pub mod view;
pub mod wire;

pub use error::{DecodeError, DecodeReason, Error, ErrorKind, Result};
