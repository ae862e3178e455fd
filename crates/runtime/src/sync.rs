//! The primitives of the sleep protocol, the latches, the policy switch and the job blocks: std's, or loom's when built with
//! `--cfg zonal_loom`, so that the protocol's model tests (`sleep/loom.rs`) explore every
//! interleaving of the very code the pool runs.

#[cfg(all(test, zonal_loom))]
pub(crate) use loom::sync::atomic::{fence, AtomicBool, AtomicPtr, AtomicU64, AtomicUsize};
#[cfg(all(test, zonal_loom))]
pub(crate) use loom::sync::{Condvar, Mutex, MutexGuard};
#[cfg(not(all(test, zonal_loom)))]
pub(crate) use std::sync::atomic::{fence, AtomicBool, AtomicPtr, AtomicU64, AtomicUsize};
#[cfg(not(all(test, zonal_loom)))]
pub(crate) use std::sync::{Condvar, Mutex, MutexGuard};
