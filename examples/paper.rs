//! Reproduces Mehta & Kanungo's Tables 1–5 on the zonal-sim simulator.
//!
//! ```text
//! cargo run --release --example paper                       # the whole grid → out/paper
//! cargo run --release --example paper -- --system s1 --workload w2 --procs 200 \
//!     --policy conservative-hard --seed 3 --json             # one run as JSON
//! cargo run --release --example paper -- --sweep            # sensitivity study
//! ```
//!
//! The logic lives in `zonal_sim::cli`; see `crates/sim/README.md`.

fn main() {
    std::process::exit(zonal_sim::cli::main());
}
