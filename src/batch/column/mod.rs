//! [`Column`] and [`Batch`]: decoded features in Arrow-compatible memory,
//! reused from one batch to the next.
//!
//! Every method of [`Column`] is in this folder, one concern a file: its
//! public view (`feature`), what the record walk (`decode`) and the fast
//! path (`fast`) append to it and take back (`append`), and the finishing
//! of its rows (`finish`: joining the parts of a parallel decode, padding,
//! lengths, sparse indices); [`Batch`] and the windows of a parallel decode
//! are in `batch`. Its files import `feature` and nothing else of the
//! folder (`mod.rs` only declares and re-exports them). The files of
//! `batch` import downward only: `buf`, `spec` < `shape` < `column` <
//! `fast` < `decode` < `threads`.

mod append;
mod batch;
mod feature;
mod finish;

pub use batch::Batch;
pub(crate) use batch::{slot, PartWindows};
pub use feature::{Column, ColumnBuffersMut, ColumnParts, ColumnValue, Layout, Sparse};
