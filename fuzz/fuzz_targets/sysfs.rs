//! The sysfs reader on an arbitrary node directory: `node<id>/{cpulist,distance,meminfo}`
//! files with arbitrary contents (or absent). A machine or a typed error, never a panic.
#![no_main]

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;

#[derive(Arbitrary, Debug)]
struct Node {
    id: u8,
    cpulist: Option<String>,
    distance: Option<String>,
    meminfo: Option<String>,
}

fuzz_target!(|nodes: Vec<Node>| {
    let root = std::env::temp_dir().join(format!("zonal-fuzz-sysfs-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    let dir = root.join("sys/devices/system/node");
    for n in nodes.iter().take(16) {
        let d = dir.join(format!("node{}", n.id));
        std::fs::create_dir_all(&d).expect("node dir");
        for (name, text) in [
            ("cpulist", &n.cpulist),
            ("distance", &n.distance),
            ("meminfo", &n.meminfo),
        ] {
            if let Some(t) = text {
                std::fs::write(d.join(name), t).expect("node file");
            }
        }
    }
    if let Ok(m) = zonal_topology::from_sysfs_root(&root) {
        let _ = zonal_topology::Topology::new(m);
    }
});
