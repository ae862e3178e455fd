//! What Zonal's example programs and benchmarks share: the CLI conventions ([`cli`]), the
//! machine a pool runs on ([`machine`]), the worker counts of the paired runners
//! ([`runners`]), and one copy of each workload: fib, scope/spawn and sum on Zonal, rayon and
//! tokio ([`workloads`]), the rayon-demo programs compiled against both preludes
//! ([`demo`]), the shapes where a parallel loop's own cost shows ([`loops`]: many short
//! loops, uneven items, sparse rows), the `service` example's load ([`service_load`]), the mixed-load benchmark ([`mixed`]: an
//! HTTP service and a batch job on tokio + rayon or on Zonal alone), and the NUMA kit
//! ([`numa`]: locality-bound workloads on Zonal, rayon and tokio, with locality read from
//! the kernel).
//!
//! The programs are this package's example targets (`examples/`: `topology`, `paper`,
//! `workload`, `service`, `mixed`, `scaling`, `rayon_demo`, `vs_rayon`, `numa-report`), each a
//! `main` over this library and its own modules; the benches (`benches/`: `runtime`,
//! `rayon_demo`, `idle_cpu`, `numa`) are its bench targets. The workspace's default
//! members include this package, so `cargo run --release --example NAME` and `cargo bench
//! --bench NAME` work from the repository root. Not published.

pub mod cli;
pub mod demo;
pub mod loops;
pub mod machine;
pub mod mixed;
pub mod numa;
pub mod runners;
pub mod service_load;
pub mod workloads;
