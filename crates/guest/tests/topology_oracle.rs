//! The kernel as oracle for topology.
//!
//! Every machine of `crates/topology/tests/data` and the presets s1, s2, s3 boots as a guest
//! (one vCPU per node, 32 MiB per node, memory-only nodes kept) running the `topology`
//! example: the default discovery of the guest (`topology --json`: sysfs and procfs, no
//! hwloc), hwloc's discovery (`topology --hwloc --json`), Zonal's sysfs reader
//! (`topology --sysfs / --json`) and the kernel's sched domains (`/proc/schedstat`). Then:
//! (a) the three give the levels, spans and node CPUs of the expected machine
//!     ([`GuestSpec::expected_machine`], guest node ids);
//! (b) Zonal's NUMA spans match the kernel's sched-domain spans for every CPU;
//! (c) they agree with each other (also on distances and memory-only nodes), and the
//!     default discovery's whole report is hwloc's.
//!
//! The example binary is built by `cargo build --workspace --examples` (scripts/test.sh).

mod common;

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use zonal_guest::{
    compare_with_kernel, find_busybox, parse_schedstat, CpuCount, Guest, GuestError, GuestSpec,
    Initramfs, NumaSpans, Shape,
};
use zonal_topology::{Machine, Topology, TopologyReport};

/// Guests booting at once (the host has 2 cores; each TCG guest runs on one host thread).
const PARALLEL: usize = 2;

const JOB: &str = "\
echo '=== default'
topology --json 2>/tmp/default.err
echo '=== hwloc'
topology --hwloc --json 2>/tmp/hwloc.err
echo '=== sysfs'
topology --sysfs / --json 2>/tmp/sysfs.err
echo '=== schedstat'
cat /proc/schedstat
echo '=== stderr'
cat /tmp/default.err /tmp/hwloc.err /tmp/sysfs.err
";

fn data_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../topology/tests/data")
}

/// Every machine: the data files (xml and json, except `expected.json`, which holds the
/// expected levels of the others, not a machine) and the presets.
fn machines() -> Vec<Machine> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(data_dir())
        .expect("crates/topology/tests/data")
        .map(|e| e.expect("a directory entry").path())
        .filter(|p| {
            matches!(p.extension().and_then(|e| e.to_str()), Some("xml" | "json"))
                && p.file_name().and_then(|n| n.to_str()) != Some("expected.json")
        })
        .collect();
    files.sort();
    let mut out: Vec<Machine> = files
        .iter()
        .map(|p| {
            let m = if p.extension().and_then(|e| e.to_str()) == Some("xml") {
                zonal_topology::from_xml_file(p)
            } else {
                zonal_topology::from_nodes_file(p)
            };
            m.unwrap_or_else(|e| panic!("{}: {e}", p.display()))
        })
        .collect();
    assert_eq!(out.len(), 10, "the data files changed: update this test");
    for name in ["s1", "s2", "s3"] {
        out.push(zonal_topology::presets::preset_machine(name).unwrap());
    }
    out
}

/// One vCPU and 32 MiB per node; machines of fewer than 4 nodes get more memory per node so
/// that the guest has the 128 MiB Linux and the initramfs need.
fn shape(m: &Machine) -> Shape {
    let nodes = u32::try_from(m.nodes().len()).unwrap_or(u32::MAX).max(1);
    Shape {
        cpus_per_node: CpuCount::AtMost(1),
        memory_mib_per_node: 32.max(128_u32.div_ceil(nodes)),
    }
}

/// The job's output cut at `=== name` lines.
fn section<'a>(output: &'a str, name: &str) -> &'a str {
    let head = format!("=== {name}\n");
    let start = output
        .find(&head)
        .unwrap_or_else(|| panic!("no section {name} in:\n{output}"))
        + head.len();
    let rest = &output[start..];
    rest.find("\n=== ").map_or(rest, |end| &rest[..=end])
}

/// What one guest showed, checked; `Err` lists every disagreement.
fn check(m: &Machine, example: &Path, busybox: &Path) -> Result<String, String> {
    let spec = GuestSpec::from_machine(m, &shape(m)).map_err(|e| format!("spec: {e}"))?;
    let expected = TopologyReport::new(&Topology::new(spec.expected_machine()));
    let initramfs = Initramfs::new(busybox)
        .and_then(|i| i.binary(example, "/bin/topology"))
        .map_err(|e| format!("initramfs: {e}"))?
        .job(JOB);
    let run = common::limited(Guest::new(spec.clone(), initramfs))
        .run()
        .map_err(|e| format!("guest: {e}"))?;
    let out = &run.job_output;
    let mut problems = Vec::new();
    if run.exit_code != 0 {
        problems.push(format!("job exit code {}", run.exit_code));
    }
    let want = NumaSpans::from(&expected);
    let parse = |name| -> Result<(NumaSpans, serde_json::Value), String> {
        let text = section(out, name);
        let spans = NumaSpans::from_json(text).map_err(|e| format!("{name}: {e}\n{text}"))?;
        let value = serde_json::from_str(text).map_err(|e| format!("{name}: {e}"))?;
        Ok((spans, value))
    };
    let (default, default_json) = parse("default")?;
    let (hwloc, hwloc_json) = parse("hwloc")?;
    let (sysfs, sysfs_json) = parse("sysfs")?;
    // (a) every discovery presents the expected machine.
    for (name, got) in [("default", &default), ("hwloc", &hwloc), ("sysfs", &sysfs)] {
        if got != &want {
            problems.push(format!(
                "(a) {name} discovery differs from the expected machine:\n  got  {got:?}\n  want {want:?}"
            ));
        }
    }
    // (c) they agree, distances and memory-only nodes included; the default discovery
    // (sysfs and procfs) reports exactly what hwloc's does.
    if default_json != hwloc_json {
        problems.push(format!(
            "(c) default discovery {default_json}\n    hwloc discovery {hwloc_json}"
        ));
    }
    if default != sysfs {
        problems.push(format!("(c) default {default:?}\n    sysfs {sysfs:?}"));
    }
    if hwloc != sysfs {
        problems.push(format!("(c) hwloc {hwloc:?}\n    sysfs {sysfs:?}"));
    }
    for field in ["distances", "cpuless_nodes", "node_cpus"] {
        if hwloc_json[field] != sysfs_json[field] {
            problems.push(format!(
                "(c) {field}: hwloc {} sysfs {}",
                hwloc_json[field], sysfs_json[field]
            ));
        }
    }
    let distances = serde_json::to_value(spec.distances()).unwrap_or_default();
    if sysfs_json["distances"] != distances {
        problems.push(format!(
            "(a) sysfs distances {} differ from the spec's {distances}",
            sysfs_json["distances"]
        ));
    }
    // (b) the kernel's sched domains.
    let kernel = parse_schedstat(section(out, "schedstat")).map_err(|e| e.to_string())?;
    for (name, zonal) in [
        ("default", &default),
        ("hwloc", &hwloc),
        ("sysfs", &sysfs),
        ("expected", &want),
    ] {
        match compare_with_kernel(zonal, &kernel) {
            Ok(m) if m.is_empty() => {}
            Ok(m) => problems.extend(m.iter().map(|x| format!("(b) {name} vs kernel: {x}"))),
            Err(e) => problems.push(format!("(b) {name}: {e}")),
        }
    }
    let summary = format!(
        "{}: {} nodes, {} vCPUs, {} MiB, levels {:?}: booted and checked in {:.1} s",
        m.name(),
        spec.nodes().len(),
        spec.cpu_count(),
        spec.memory_mib(),
        want.levels,
        run.elapsed.as_secs_f64()
    );
    if problems.is_empty() {
        Ok(summary)
    } else {
        let stderr = section(out, "stderr");
        Err(format!(
            "{summary}\n{}\nguest stderr:\n{stderr}",
            problems.join("\n")
        ))
    }
}

#[test]
fn every_machine_shrunk_to_one_cpu_per_node_is_a_guest() {
    // Why one CPU per node: the sources as they are do not all fit QEMU's pc machine.
    let big = zonal_topology::from_nodes_file(data_dir().join("256ia64-64n2s2c.json")).unwrap();
    let as_source = Shape {
        cpus_per_node: CpuCount::AsSource,
        memory_mib_per_node: 32,
    };
    assert!(matches!(
        GuestSpec::from_machine(&big, &as_source),
        Err(GuestError::TooManyCpus {
            cpus: 256,
            limit: 255
        })
    ));
    // One CPU per node keeps every machine's node and distance shape.
    for m in machines() {
        let spec =
            GuestSpec::from_machine(&m, &shape(&m)).unwrap_or_else(|e| panic!("{}: {e}", m.name()));
        assert_eq!(spec.nodes().len(), m.nodes().len(), "{}", m.name());
        assert_eq!(
            spec.distances(),
            m.distance_rows().as_slice(),
            "{}",
            m.name()
        );
        for (g, n) in spec.nodes().iter().zip(m.nodes()) {
            assert_eq!(
                (g.os_id, g.cpus > 0),
                (n.os_id, n.has_cpus()),
                "{}",
                m.name()
            );
        }
    }
}

#[test]
fn kernel_agrees_with_zonal_on_every_machine() {
    if !common::host_can_boot() {
        return;
    }
    let example = common::example("topology");
    let busybox = find_busybox().unwrap();
    let queue = Mutex::new(machines());
    let results = Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..PARALLEL {
            s.spawn(|| loop {
                let Some(m) = queue.lock().unwrap().pop() else {
                    break;
                };
                let r = check(&m, &example, &busybox);
                match &r {
                    Ok(line) => println!("{line}"),
                    Err(e) => println!("FAILED {e}"),
                }
                results.lock().unwrap().push((m.name().to_owned(), r));
            });
        }
    });
    let results = results.into_inner().unwrap();
    assert_eq!(results.len(), 13);
    let failures: Vec<String> = results
        .into_iter()
        .filter_map(|(name, r)| r.err().map(|e| format!("--- {name}\n{e}")))
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
