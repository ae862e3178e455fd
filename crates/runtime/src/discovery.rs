//! This machine's topology for a pool: discovered (sysfs on Linux, hwloc elsewhere with the
//! `hwloc` feature), or, where it cannot be, one flat node of `available_parallelism` CPUs.

use zonal_topology::{Machine, Topology, TopologyError};

use crate::error::BuildError;

/// Where a pool's topology came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum TopologyKind {
    /// This machine, discovered.
    Discovered,
    /// This machine could not be discovered (`why`): one flat node of
    /// `available_parallelism` CPUs whose numbers are not known to be the OS's.
    Fallback {
        /// The discovery error, as text.
        why: String,
    },
    /// Not this machine (a preset, a file, a topology object).
    Virtual,
}

impl TopologyKind {
    /// Whether the pool is virtual: its CPU numbers are not this machine's (the flat
    /// fallback is, too: nothing is pinned to its CPUs unless asked).
    pub(crate) fn is_virtual(&self) -> bool {
        !matches!(self, TopologyKind::Discovered)
    }
}

/// This machine's topology ([`TopologyKind::Discovered`]); where it cannot be discovered (neither
/// Linux nor the `hwloc` feature), one node holding `available_parallelism` CPUs
/// ([`TopologyKind::Fallback`]: a virtual pool, since its CPU numbers are not known to be the
/// OS's, so nothing is pinned to them), with a `tracing` warning.
pub(crate) fn this_machine() -> Result<(Topology, TopologyKind), BuildError> {
    #[cfg(test)]
    if test_undiscovered::active() {
        return from_discovery(Err(TopologyError::NoDiscovery { os: "test" }));
    }
    from_discovery(zonal_topology::this_machine())
}

/// What discovery's result `found` gives a pool.
fn from_discovery(
    found: Result<Machine, TopologyError>,
) -> Result<(Topology, TopologyKind), BuildError> {
    match found {
        Ok(m) => Ok((Topology::new(m), TopologyKind::Discovered)),
        Err(e @ (TopologyError::NoDiscovery { .. } | TopologyError::NoSysfs { .. })) => {
            let cpus = flat_cpus();
            tracing::warn!(
                target: "zonal_runtime",
                "{e}; running over one node of {} CPUs, unpinned",
                cpus.len()
            );
            let node = zonal_topology::NodeSpec {
                os_id: 0,
                cpus: cpus
                    .into_iter()
                    .map(|c| zonal_topology::CpuSpec::alone(c, 0))
                    .collect(),
                memory_bytes: None,
            };
            let m = Machine::from_specs("this machine (undiscovered)", vec![node], None)?;
            Ok((
                Topology::new(m),
                TopologyKind::Fallback { why: e.to_string() },
            ))
        }
        Err(e) => Err(e.into()),
    }
}

/// The CPUs the calling thread may run on; where this machine cannot be discovered,
/// `0..available_parallelism`.
pub(crate) fn allowed_cpus() -> Result<Vec<u32>, TopologyError> {
    match zonal_topology::allowed_cpus() {
        Err(TopologyError::NoDiscovery { .. } | TopologyError::NoSysfs { .. }) => Ok(flat_cpus()),
        other => other,
    }
}

fn flat_cpus() -> Vec<u32> {
    let n = std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get);
    (0..u32::try_from(n).unwrap_or(1)).collect()
}

/// Unit tests only: makes [`this_machine`] fail to discover this machine, as it does off
/// Linux without the `hwloc` feature, on the calling thread (where a builder loads its
/// topology) while a guard lives; other threads, and the tests on them, are unaffected.
#[cfg(test)]
pub(crate) mod test_undiscovered {
    use std::cell::Cell;

    thread_local! {
        static ACTIVE: Cell<bool> = const { Cell::new(false) };
    }

    /// Discovery fails on this thread until the guard is dropped.
    #[derive(Debug)]
    pub(crate) struct Undiscovered(());

    impl Undiscovered {
        pub(crate) fn new() -> Self {
            ACTIVE.with(|a| a.set(true));
            Self(())
        }
    }

    impl Drop for Undiscovered {
        fn drop(&mut self) {
            ACTIVE.with(|a| a.set(false));
        }
    }

    pub(super) fn active() -> bool {
        ACTIVE.with(Cell::get)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_undiscoverable_machine_is_one_flat_node_marked_fallback() {
        let (topo, kind) = from_discovery(Err(TopologyError::NoDiscovery { os: "plan9" })).unwrap();
        let TopologyKind::Fallback { why } = &kind else {
            panic!("{kind:?}")
        };
        assert!(why.contains("plan9"), "{why}");
        assert!(kind.is_virtual());
        assert_eq!(topo.node_count(), 1);
        assert_eq!(topo.cpu_count(), flat_cpus().len());
    }

    #[test]
    fn linux_without_sysfs_is_one_flat_node_marked_fallback() {
        let missing = std::path::PathBuf::from("/nonexistent/sys/devices/system");
        let (topo, kind) = from_discovery(Err(TopologyError::NoSysfs { path: missing })).unwrap();
        let TopologyKind::Fallback { why } = &kind else {
            panic!("{kind:?}")
        };
        assert!(why.contains("is sysfs mounted"), "{why}");
        assert_eq!(topo.node_count(), 1);
    }

    #[test]
    fn other_discovery_errors_stay_errors() {
        assert!(from_discovery(Err(TopologyError::NoCpus)).is_err());
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn this_machine_is_discovered_here_unless_a_test_says_otherwise() {
        assert_eq!(this_machine().unwrap().1, TopologyKind::Discovered);
        let _g = test_undiscovered::Undiscovered::new();
        assert!(matches!(
            this_machine().unwrap().1,
            TopologyKind::Fallback { .. }
        ));
    }
}
