//! `use zonal::prelude::*;`: the traits a rayon user expects in scope.

pub use crate::slice::ParallelSliceMut;
