//! The sources: ranges, vectors, slices, options, maps and sets, node-placed buffers, the
//! free-function sources (`empty`, `once`, `repeat`, `split`, `walk_tree`, ...), tuples
//! zipped, and draining.

pub(super) mod collections;
pub(super) mod drain;
pub(super) mod empty;
pub(super) mod multizip;
pub(super) mod node;
pub(super) mod option;
pub(super) mod range;
pub(super) mod repeat;
pub(super) mod result;
pub(super) mod slice;
pub(super) mod split;
pub(super) mod vec;
pub(super) mod walk_tree;
