//! Parallel iterators over std's collections (rayon's `rayon::collections`), one module per
//! collection, with rayon's type names. Their items (or references to them) are first
//! gathered into a `Vec`, which is then iterated by value (indexed); draining moves the
//! items out at once (see [`ParallelDrainRange`](crate::iter::ParallelDrainRange) and
//! [`ParallelDrainFull`](crate::iter::ParallelDrainFull)).
//!
//! ```
//! use zonal::prelude::*;
//! use std::collections::BTreeMap;
//! let m: BTreeMap<u32, char> = [(1, 'a'), (2, 'b')].into_iter().collect();
//! let it: zonal::collections::btree_map::Iter<'_, u32, char> = m.par_iter();
//! assert_eq!(it.map(|(k, _)| k).sum::<u32>(), 3);
//! ```

pub mod binary_heap;
pub mod btree_map;
pub mod btree_set;
pub mod hash_map;
pub mod hash_set;
pub mod linked_list;
pub mod vec_deque;
