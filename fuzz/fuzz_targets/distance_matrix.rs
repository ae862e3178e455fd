//! Machine validation on arbitrary nodes and distance matrices: a machine or a typed error,
//! never a panic; an accepted machine builds a hierarchy whose laws hold.
#![no_main]

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use zonal_topology::{CpuSpec, Machine, NodeSpec, Topology};

#[derive(Arbitrary, Debug)]
struct Input {
    nodes: Vec<(u32, Vec<u16>, Option<u64>)>,
    matrix: Option<Vec<Vec<u64>>>,
}

fuzz_target!(|input: Input| {
    let specs: Vec<NodeSpec> = input
        .nodes
        .into_iter()
        .take(64)
        .map(|(id, cpus, memory_bytes)| NodeSpec {
            os_id: id,
            cpus: cpus
                .into_iter()
                .take(64)
                .map(|c| CpuSpec::alone(u32::from(c), id))
                .collect(),
            memory_bytes,
        })
        .collect();
    if let Ok(m) = Machine::from_specs("fuzz", specs, input.matrix) {
        let t = Topology::new(m);
        for c in 0..t.cpu_count() {
            let cpu = zonal_topology::CpuId::new(c);
            assert_eq!(t.victims(cpu).len(), t.cpu_count() - 1);
            assert!(t.zone_victims(cpu).len() <= t.victims(cpu).len());
        }
    }
});
