//! Temporary: min-of-N build times.
#![allow(missing_docs)]
use std::time::Instant;
use zonal_topology::{presets, Topology};
fn main() {
    let ms = vec![
        presets::hierarchical(&[4, 4, 4], 1)
            .unwrap()
            .machine()
            .clone(),
        presets::hierarchical(&[4, 4, 4, 4], 1)
            .unwrap()
            .machine()
            .clone(),
        presets::hierarchical(&[4, 4, 4, 4, 4], 1)
            .unwrap()
            .machine()
            .clone(),
        presets::mesh(32, 32, false, 1).unwrap().machine().clone(),
    ];
    for m in ms {
        let mut best = f64::MAX;
        for _ in 0..30 {
            let c = m.clone();
            let t0 = Instant::now();
            let t = Topology::new(c);
            let dt = t0.elapsed().as_secs_f64();
            std::hint::black_box(&t);
            drop(t);
            best = best.min(dt);
        }
        println!("{:>40} {:>10.3} ms", m.name(), best * 1e3);
    }
}
