//! The README's first example, built by CI (`cargo build --workspace --examples`) so that
//! it keeps compiling: a rayon-style parallel iterator, then node-local work with
//! `spawn_on`. `cargo run --release --example readme`.

use zonal::prelude::*; // was: use rayon::prelude::*;

fn main() -> Result<(), zonal::BuildError> {
    // rayon's API on the global pool: change the import, keep the code.
    let v: Vec<u64> = (0..1_000_000).collect();
    let sum_sq: u64 = v.par_iter().map(|x| x * x).sum();

    // One pinned worker per CPU (hwloc), conservative zone-limited stealing.
    let pool = zonal::ThreadPoolBuilder::new().build()?;
    let nodes: Vec<_> = pool.topology().cpu_nodes().collect();
    let mut per_node = vec![0u64; nodes.len()];
    pool.scope(|s| {
        for (&node, out) in nodes.iter().zip(per_node.iter_mut()) {
            // Rooted on `node`: it and its children stay in that node's zone.
            s.spawn_on(node, move |_| *out = (0..1_000u64).map(|x| x * x).sum());
        }
    });
    println!("sum of squares {sum_sq}; per node {per_node:?}");
    Ok(())
}
