//! The epoch orders of shards: one id space, each shard's pages apart.

use super::shard::Shard;
use crate::index::{DEFAULT_SPACING, SPAN_STRIDE};
use crate::order::{Mode, Order, OrderError, OrderSpec};

/// The order of the ids of `shards` (one id space, in this order) for
/// `spec`: see [`Dataset::order`](super::Dataset::order).
pub(super) fn order_of(shards: &[Shard], spec: OrderSpec) -> Result<Order, OrderError> {
    let stride = crate::index::SPAN_STRIDE;
    let any_compressed = shards.iter().any(Shard::is_compressed);
    let (by_span, spec) = match spec.mode {
        Mode::PageAware { page_size: 0 } if any_compressed => (
            true,
            OrderSpec {
                mode: Mode::PageAware { page_size: stride },
                ..spec
            },
        ),
        Mode::QuasiRandom {
            page_size: 0,
            window,
        } if any_compressed => (
            true,
            OrderSpec {
                mode: Mode::QuasiRandom {
                    page_size: stride,
                    window,
                },
                ..spec
            },
        ),
        _ => (false, spec),
    };
    let inputs: Vec<_> = shards.iter().map(|s| s.order_inputs(by_span)).collect();
    let files: Vec<(&[u64], u64)> = inputs.iter().map(|(o, size)| (&o[..], *size)).collect();
    Order::of_files(&files, spec)
}

impl Shard {
    /// The ranges a page mode of the orders sees its records at, and the
    /// size of the space they lie in: the frame starts in the stream; or,
    /// with a page size of 0 (`by_span`), each checkpoint span of a
    /// compressed file as a page, and every [`DEFAULT_SPACING`] bytes of a
    /// plain file.
    fn order_inputs(&self, by_span: bool) -> (std::borrow::Cow<'_, [u64]>, u64) {
        match (self.gz_index(), by_span) {
            (Some(gz), true) => {
                let size = gz.checkpoints().len() as u64 * SPAN_STRIDE;
                (gz.span_offsets().into(), size)
            }
            (None, true) => {
                let stride = SPAN_STRIDE;
                let spans = self
                    .index
                    .starts()
                    .iter()
                    .map(|&s| (s / DEFAULT_SPACING) * stride + s % DEFAULT_SPACING)
                    .collect::<Vec<u64>>();
                let size = self.source.len().div_ceil(DEFAULT_SPACING).max(1) * stride;
                (spans.into(), size)
            }
            (_, false) => (self.index.starts().into(), self.source.len()),
        }
    }

    /// The order of this shard's records for `spec` (as a one-shard
    /// [`Dataset::order`](super::Dataset::order)).
    pub fn order(
        &self,
        spec: crate::order::OrderSpec,
    ) -> Result<crate::order::Order, crate::order::OrderError> {
        order_of(std::slice::from_ref(self), spec)
    }
}
