//! # zonal-guest
//!
//! Boots Debian's real Linux kernel under `qemu-system-x86_64` (plain TCG, no KVM) as a NUMA
//! machine of any shape one of Zonal's topology sources describes, runs a job inside (a
//! busybox initramfs plus our binaries and the shared libraries `ldd` lists) and returns the
//! job's output. The guest kernel then serves as an oracle: its node files and its
//! sched-domain spans (`/proc/schedstat`) are what Zonal's readers and hierarchy must agree
//! with.
//!
//! ## Map
//! - [`spec`]: [`GuestSpec`], the guest's shape (nodes, CPUs, memory, distances) from a
//!   [`zonal_topology::Machine`] and a [`Shape`], its QEMU arguments, and the
//!   [`Machine`](zonal_topology::Machine) the guest should present.
//! - [`initramfs`]: [`Initramfs`], a cpio `newc` writer: busybox, an `/init` that runs
//!   `/job.sh` between markers, binaries with their shared libraries.
//! - [`boot`]: [`Guest`] runs QEMU with a timeout and returns a [`GuestRun`].
//! - [`schedstat`]: [`parse_schedstat`], the kernel's per-CPU sched-domain spans.
//! - [`open_mpi`]: [`OpenMpi`], an Open MPI installation packed into a guest (`mpirun`, its
//!   daemon, the components and PMIx plugins it loads at run time, its help and parameter
//!   files), and the job lines `mpirun` needs there.
//! - [`oracle`]: [`compare_with_kernel`], Zonal's NUMA spans against the kernel's.
//!
//! Everything needs `qemu-system-x86_64`, `busybox` (static) and a kernel image at run time
//! only (`scripts/setup-guest.sh` installs them); building needs nothing beyond the workspace.
//!
//! ```no_run
//! use std::time::Duration;
//! use zonal_guest::{find_busybox, CpuCount, Guest, GuestSpec, Initramfs, Shape};
//! let machine = zonal_topology::presets::preset_machine("s1")?;
//! let shape = Shape { cpus_per_node: CpuCount::AtMost(1), memory_mib_per_node: 32 };
//! let spec = GuestSpec::from_machine(&machine, &shape)?;
//! let initramfs = Initramfs::new(&find_busybox()?)?.job("cat /proc/schedstat");
//! let run = Guest::new(spec, initramfs).timeout(Duration::from_secs(120)).run()?;
//! println!("{}", run.job_output);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod boot;
mod error;
pub mod initramfs;
pub mod open_mpi;
pub mod oracle;
pub mod schedstat;
pub mod spec;

pub use boot::{find_busybox, find_kernel, Guest, GuestRun, DEFAULT_KERNEL_ARGS};
pub use error::GuestError;
pub use initramfs::Initramfs;
pub use open_mpi::OpenMpi;
pub use oracle::{compare_with_kernel, NumaSpans, OracleMismatch};
pub use schedstat::{parse_cpumask, parse_schedstat, CpuDomains};
pub use spec::{CpuCount, GuestNode, GuestSpec, Shape};
