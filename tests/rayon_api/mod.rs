//! rayon's public API against Zonal's: a scanner of crate sources and the README table.

#![allow(unreachable_pub)]

pub mod scan;
pub mod table;
