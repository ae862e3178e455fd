//! The README's first program ("A first program"), kept identical to it: a rayon-style
//! parallel iterator on the global pool, then one computation rooted on each NUMA node with
//! `spawn_on`. `cargo run --release --example readme`; CI builds it
//! (`cargo build --workspace --examples`), and the README's copy runs as a doc test.

use zonal::prelude::*; // was: use rayon::prelude::*;

fn main() -> Result<(), zonal::BuildError> {
    // rayon's API on the global pool: change the import, keep the code.
    let v: Vec<u64> = (0..1_000_000).collect();
    let sum_sq: u64 = v.par_iter().map(|x| x * x).sum();
    assert_eq!(sum_sq, v.iter().map(|x| x * x).sum::<u64>());

    // A pool of its own: one pinned worker per allowed CPU, the conservative policy. One
    // computation rooted on each NUMA node; it and all its children stay in that node's zone.
    let pool = zonal::ThreadPoolBuilder::new().build()?;
    let nodes: Vec<_> = pool.topology().cpu_nodes().collect();
    let mut per_node = vec![0u64; nodes.len()];
    pool.scope(|s| {
        for (&node, out) in nodes.iter().zip(per_node.iter_mut()) {
            s.spawn_on(node, move |_| *out = (0..1_000u64).map(|x| x * x).sum());
        }
    });
    println!("sum of squares {sum_sq}; per node {per_node:?}");
    Ok(())
}
