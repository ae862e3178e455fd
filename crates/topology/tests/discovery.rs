//! This machine's discovery: through sysfs and procfs (the default on Linux) it gives the
//! [`Machine`] hwloc's discovery gives (with the `hwloc` feature), unrestricted and
//! restricted to the calling thread's CPUs, including in a thread pinned to one CPU, where
//! the other CPUs are withheld.

#![cfg(target_os = "linux")]

/// Everything a [`Machine`](zonal_topology::Machine) holds, comparable.
#[cfg(feature = "hwloc")]
fn parts(m: &zonal_topology::Machine) -> String {
    format!(
        "name {:?}\ncpus {:?}\nnodes {:?}\ndistances {:?} ({:?})",
        m.name(),
        m.cpus(),
        m.nodes(),
        m.distance_rows(),
        m.distance_kind()
    )
}

/// Runs `f` in a thread whose affinity is the single CPU `cpu`.
fn pinned<T: Send>(cpu: u32, f: impl FnOnce() -> T + Send) -> T {
    std::thread::scope(|s| {
        s.spawn(|| {
            // SAFETY: a zeroed cpu_set_t is a valid empty set; CPU_SET writes within it.
            let rc = unsafe {
                let mut set: libc::cpu_set_t = std::mem::zeroed();
                libc::CPU_SET(cpu as usize, &mut set);
                libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set)
            };
            assert_eq!(rc, 0, "sched_setaffinity to CPU {cpu}");
            f()
        })
        .join()
        .expect("pinned thread")
    })
}

#[test]
fn sysfs_discovery_withholds_what_the_thread_may_not_use() {
    let all = zonal_topology::this_machine_unrestricted().expect("sysfs discovery");
    let allowed = zonal_topology::allowed_cpus().expect("allowed CPUs");
    let cpu = allowed[0];
    let (m, mine) = pinned(cpu, || {
        (
            zonal_topology::this_machine().expect("pinned discovery"),
            zonal_topology::allowed_cpus().expect("pinned allowed CPUs"),
        )
    });
    assert_eq!(mine, [cpu]);
    assert_eq!(m.cpus().len(), 1);
    assert_eq!(m.cpus()[0].os_index, cpu);
    let withheld: Vec<u32> = m
        .nodes()
        .iter()
        .flat_map(|n| n.withheld_cpus.iter().copied())
        .collect();
    let others: Vec<u32> = all
        .cpus()
        .iter()
        .map(|c| c.os_index)
        .filter(|&c| c != cpu)
        .collect();
    let mut withheld_sorted = withheld.clone();
    withheld_sorted.sort_unstable();
    assert_eq!(withheld_sorted, others);
}

#[cfg(feature = "hwloc")]
#[test]
fn sysfs_discovery_is_hwlocs() {
    use zonal_topology::hwloc;
    let sysfs = zonal_topology::this_machine_unrestricted().expect("sysfs discovery");
    let hw = hwloc::this_machine_unrestricted().expect("hwloc discovery");
    assert_eq!(parts(&sysfs), parts(&hw), "unrestricted");
    let sysfs = zonal_topology::this_machine().expect("sysfs discovery");
    let hw = hwloc::this_machine().expect("hwloc discovery");
    assert_eq!(parts(&sysfs), parts(&hw), "restricted to this thread");
    assert_eq!(
        zonal_topology::allowed_cpus().expect("sysfs"),
        hwloc::allowed_cpus().expect("hwloc")
    );
    // Pinned to one CPU: both withhold the others alike.
    let cpu = zonal_topology::allowed_cpus().expect("allowed")[0];
    let (sysfs, hw) = pinned(cpu, || {
        (
            zonal_topology::this_machine().expect("sysfs"),
            hwloc::this_machine().expect("hwloc"),
        )
    });
    assert_eq!(parts(&sysfs), parts(&hw), "pinned to CPU {cpu}");
}
