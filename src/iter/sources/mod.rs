//! The sources: ranges, vectors, slices, options, maps and sets, node-placed buffers.

pub(super) mod collections;
pub(super) mod node;
pub(super) mod option;
pub(super) mod range;
pub(super) mod slice;
pub(super) mod vec;
