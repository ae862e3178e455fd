//! The `--nodes` reader on arbitrary text: a machine or a typed error, never a panic; a
//! machine it accepts builds a hierarchy.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|text: &str| {
    if let Ok(m) = zonal_topology::parse_nodes_json(text, "fuzz", "fuzz") {
        let t = zonal_topology::Topology::new(m);
        assert!(t.cpu_count() <= zonal_topology::MAX_CPUS);
    }
});
