//! Parallel iterators with rayon's traits and method names.
