//! The hwloc XML reader on arbitrary bytes, written to a file as the CLI reads it: a machine
//! or a typed error, never a panic, a crash in hwloc or a hang.
#![no_main]

use std::io::Write as _;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|bytes: &[u8]| {
    let path = std::env::temp_dir().join(format!("zonal-fuzz-{}.xml", std::process::id()));
    let mut f = std::fs::File::create(&path).expect("temp file");
    f.write_all(bytes).expect("write");
    drop(f);
    if let Ok(m) = zonal_topology::from_xml_file(&path) {
        let _ = zonal_topology::Topology::new(m);
    }
});
