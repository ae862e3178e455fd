//! Times one large run: a 1024-CPU fan-out tree (`hierarchical(&[4, 4, 4, 4, 4], 1)`) with
//! 100,000 CPU-bound processes of 200 ms arriving at random over one second.
//!
//! ```text
//! cargo run --release -p zonal-sim --example big -- [POLICY] [PROCS]
//! ```

use std::time::Instant;

use zonal_sim::{experiment::SimError, Arrival, CostModel, ExecTime, SimConfig, WorkloadSpec};

fn main() -> Result<(), SimError> {
    let mut args = std::env::args().skip(1);
    let policy = args.next().unwrap_or_else(|| "linux".into());
    let procs: usize = args.next().and_then(|s| s.parse().ok()).unwrap_or(100_000);
    let t0 = Instant::now();
    let topo = zonal_topology::presets::hierarchical(&[4, 4, 4, 4, 4], 1)?;
    let cfg = zonal_policy::PolicyConfig::named(&policy)?;
    let pol = cfg.build()?;
    let spec = WorkloadSpec {
        procs,
        exec: ExecTime::Fixed(200),
        arrival: Arrival::Uniform { window_ms: 1_000 },
        io_share: 0.0,
    };
    let cost = CostModel::default();
    let w = spec.generate(
        topo.cpu_count(),
        cost.mem_bound_range,
        &mut zonal_policy::Rng::new(1),
    );
    let setup = t0.elapsed();
    let t1 = Instant::now();
    let sim = SimConfig {
        seed: 1,
        cost,
        ..SimConfig::default()
    };
    let r = zonal_sim::simulate(&topo, pol.as_ref(), &w, &sim);
    let run = t1.elapsed();
    let s = &r.stats;
    println!(
        "{policy}: {} CPUs, {} procs ({} finished): setup {:.2} s, run {:.2} s, {} events, {:.2} M events/s; avg TAT {:.0} ms, makespan {:.0} ms, {} migrations, {} lb attempts",
        topo.cpu_count(),
        s.procs,
        s.finished,
        setup.as_secs_f64(),
        run.as_secs_f64(),
        s.events,
        s.events as f64 / run.as_secs_f64() / 1e6,
        s.avg_tat_us / 1000.0,
        s.makespan_us as f64 / 1000.0,
        s.migrations,
        s.lb_attempts
    );
    Ok(())
}
