//! Datasets: record files opened with their indexes, and many of them read
//! as one id space.
//!
//! - **Shards** ([`Shard`]): one record file of any kind (plain, mapped or
//!   read with positioned reads; GZIP/ZLIB through its checkpoint index; in
//!   object storage with feature `remote`), with its own framing,
//!   compression and payload, and its index: its sidecar when current, the
//!   local index cache's copy of a remote one, one given, or one built in
//!   memory ([`IndexOrigin`]). Records come out owning their bytes.
//! - **Datasets** ([`Dataset`]): shards as one id space, with their epoch
//!   orders ([`crate::order`]), batches read shard by shard in offset order
//!   ([`Dataset::get_many`], with its reused [`Scratch`]), and the globs that
//!   name their files ([`Dataset::glob`], [`Dataset::expand`]).
//!
//! The index itself and its file formats are [`crate::index`]'s.

mod glob;
mod open;
mod order;
#[cfg(feature = "remote")]
mod remote;
mod set;
mod shard;
mod stored;

#[cfg(feature = "cli")]
pub(crate) use glob::index_file_at;
#[cfg(all(feature = "cli", feature = "remote"))]
pub(crate) use glob::{has_wildcard, matches as glob_matches};
pub use set::{Dataset, MixedPayloads};
pub use shard::{IndexOrigin, Scratch, Shard};

/// The compressed shards of a [`Dataset`]: a [`Shard`] reads GZIP and ZLIB
/// files through their checkpoint indexes itself.
#[deprecated(note = "a Shard reads compressed files itself: use Shard")]
pub type GzShard = Shard;
/// Datasets of compressed files: a [`Dataset`] holds any mix of plain and
/// compressed shards.
#[deprecated(note = "a Dataset holds compressed shards itself: use Dataset")]
pub type GzDataset = Dataset;

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests;
