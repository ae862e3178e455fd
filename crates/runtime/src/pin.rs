//! Pinning worker threads to CPUs: hwloc (`hwloc_set_cpubind` with `THREAD`) through
//! hwlocality, with core_affinity as the fallback where hwloc cannot load.

use std::sync::Arc;

use hwlocality::cpu::binding::CpuBindingFlags;
use hwlocality::cpu::cpuset::CpuSet;
use hwlocality::Topology as HwTopology;

/// How workers bind themselves.
#[derive(Clone, Debug)]
pub(crate) enum Binder {
    Hwloc(Arc<HwTopology>),
    CoreAffinity,
}

impl Binder {
    pub(crate) fn new() -> Self {
        match HwTopology::new() {
            Ok(t) => Binder::Hwloc(Arc::new(t)),
            Err(e) => {
                tracing::warn!(target: "zonal_runtime", "hwloc unavailable ({e}); pinning with core_affinity");
                Binder::CoreAffinity
            }
        }
    }

    /// Binds the calling thread to CPU `os_index`.
    #[doc(alias = "hwloc_set_cpubind")]
    pub(crate) fn bind_current_thread(&self, os_index: u32) -> Result<(), String> {
        match self {
            Binder::Hwloc(t) => {
                let mut set = CpuSet::new();
                set.set(os_index as usize);
                t.bind_cpu(&set, CpuBindingFlags::THREAD)
                    .map_err(|e| format!("hwloc_set_cpubind failed: {e}"))
            }
            Binder::CoreAffinity => {
                if core_affinity::set_for_current(core_affinity::CoreId {
                    id: os_index as usize,
                }) {
                    Ok(())
                } else {
                    Err(format!(
                        "sched_setaffinity failed: {}",
                        std::io::Error::last_os_error()
                    ))
                }
            }
        }
    }
}
