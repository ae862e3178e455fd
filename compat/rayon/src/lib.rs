//! rayon's public API (1.12) on Zonal, for `[patch.crates-io]`.
//!
//! With this package patched in (beside the `rayon-core` package), `rayon::` is Zonal
//! all the way down: the parallel iterators, slices, strings and collections are the
//! `zonal` facade's (so a crate's own `Producer`/`Consumer` implementations drive Zonal's
//! splitting, per-node cut included), and the pool items are the `rayon-core` package's,
//! re-exported as rayon re-exports rayon-core's: rayon's types with rayon's methods, and
//! Zonal's extras through [`AsZonal`]. The README's "A whole dependency tree on Zonal"
//! has the lines to write.
//!
//! ```
//! use rayon::prelude::*;
//!
//! let sum: u64 = (0..1_000u64).into_par_iter().map(|x| x * 2).sum();
//! assert_eq!(sum, 999_000);
//! let pool = rayon::ThreadPoolBuilder::new().num_threads(2).build()?;
//! assert_eq!(pool.install(|| (0..10).into_par_iter().count()), 10);
//! # Ok::<(), rayon::ThreadPoolBuildError>(())
//! ```

pub use zonal::{
    array, collections, iter, option, prelude, range, range_inclusive, result, slice, str, string,
    vec,
};

pub use rayon_core::FnContext;
pub use rayon_core::ThreadBuilder;
pub use rayon_core::ThreadPool;
pub use rayon_core::ThreadPoolBuildError;
pub use rayon_core::ThreadPoolBuilder;
pub use rayon_core::{broadcast, spawn_broadcast, BroadcastContext};
pub use rayon_core::{current_num_threads, current_thread_index, max_num_threads};
pub use rayon_core::{in_place_scope, scope, Scope};
pub use rayon_core::{in_place_scope_fifo, scope_fifo, ScopeFifo};
pub use rayon_core::{join, join_context};
pub use rayon_core::{spawn, spawn_fifo};
pub use rayon_core::{yield_local, yield_now, Yield};

/// The way to Zonal's own methods from rayon's pool and scopes (no rayon item: Zonal's
/// addition).
pub use rayon_core::AsZonal;
