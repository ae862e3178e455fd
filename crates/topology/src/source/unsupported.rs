//! This machine on an OS other than Linux in a build without the `hwloc` feature: there
//! is no discovery, and every call says so with [`TopologyError::NoDiscovery`] (a pool
//! then runs over a preset, a node dump or an XML export instead).

use crate::error::{Result, TopologyError};
use crate::machine::Machine;

fn refused() -> TopologyError {
    TopologyError::NoDiscovery {
        os: std::env::consts::OS,
    }
}

/// Always [`TopologyError::NoDiscovery`] here (see the module's docs).
///
/// # Errors
/// Always.
pub fn this_machine() -> Result<Machine> {
    Err(refused())
}

/// Always [`TopologyError::NoDiscovery`] here.
///
/// # Errors
/// Always.
pub fn this_machine_unrestricted() -> Result<Machine> {
    Err(refused())
}

/// Always [`TopologyError::NoDiscovery`] here.
///
/// # Errors
/// Always.
pub fn allowed_cpus() -> Result<Vec<u32>> {
    Err(refused())
}
