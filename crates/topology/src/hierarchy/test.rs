use super::*;
use crate::machine::{CpuSpec, NodeSpec};

fn machine(cpus_per_node: &[u32], rows: Vec<Vec<u64>>) -> Machine {
    let mut next = 0;
    let specs = cpus_per_node
        .iter()
        .enumerate()
        .map(|(i, &k)| {
            let cpus = (0..k)
                .map(|_| {
                    next += 1;
                    CpuSpec::alone(next - 1, i as u32)
                })
                .collect();
            NodeSpec {
                os_id: i as u32,
                cpus,
                memory_bytes: None,
            }
        })
        .collect();
    Machine::from_specs("t", specs, Some(rows)).unwrap()
}

#[test]
fn kunpeng_overlapping_spans() {
    // 128arm-2pa2n8cluster4co: spans overlap rather than nest.
    let t = Topology::new(machine(
        &[1, 1, 1, 1],
        vec![
            vec![10, 16, 32, 33],
            vec![16, 10, 25, 32],
            vec![32, 25, 10, 16],
            vec![33, 32, 16, 10],
        ],
    ));
    assert_eq!(t.levels(), &[10, 16, 25, 32, 33]);
    assert_eq!(t.zone_depth(), 3);
    let ids = |n: u32, l: u8| {
        let mut v: Vec<u32> = t.span(NodeId(n), Level(l)).iter().map(|x| x.0).collect();
        v.sort_unstable();
        v
    };
    assert_eq!(ids(0, 2), vec![0, 1]);
    assert_eq!(ids(1, 2), vec![0, 1, 2]);
    assert_eq!(ids(0, 3), vec![0, 1, 2]);
    assert_eq!(ids(3, 3), vec![1, 2, 3]);
    assert_eq!(ids(0, 4), vec![0, 1, 2, 3]);
}

#[test]
fn cpuless_nodes_take_no_part() {
    let t = Topology::new(machine(
        &[2, 2, 0],
        vec![vec![10, 20, 80], vec![20, 10, 80], vec![80, 80, 10]],
    ));
    assert_eq!(t.levels(), &[10, 20]);
    assert!(t.span(NodeId(2), Level(1)).is_empty());
    assert_eq!(t.node_level(NodeId(0), NodeId(2)), None);
    assert_eq!(t.node_level(NodeId(2), NodeId(0)), None);
    assert!(t
        .victims(CpuId(0))
        .iter()
        .all(|v| t.node_of(v.cpu) != NodeId(2)));
}

#[test]
fn victim_order_is_nearest_first_and_complete() {
    let specs = vec![
        NodeSpec {
            os_id: 0,
            cpus: vec![
                CpuSpec {
                    os_index: 0,
                    core: 0,
                    cache_group: 0,
                },
                CpuSpec {
                    os_index: 1,
                    core: 0,
                    cache_group: 0,
                },
                CpuSpec {
                    os_index: 2,
                    core: 1,
                    cache_group: 0,
                },
                CpuSpec {
                    os_index: 3,
                    core: 2,
                    cache_group: 1,
                },
            ],
            memory_bytes: None,
        },
        NodeSpec {
            os_id: 1,
            cpus: vec![CpuSpec::alone(4, 1), CpuSpec::alone(5, 1)],
            memory_bytes: None,
        },
    ];
    let t = Topology::new(
        Machine::from_specs("t", specs, Some(vec![vec![10, 20], vec![20, 10]])).unwrap(),
    );
    let v = t.victims(CpuId(0));
    let tiers: Vec<Tier> = v.iter().map(|v| v.tier).collect();
    assert_eq!(
        tiers,
        [
            Tier::Smt,
            Tier::Cache,
            Tier::Node,
            Tier::Remote,
            Tier::Remote
        ]
    );
    assert_eq!(v[0].cpu, CpuId(1));
    let mut all: Vec<u32> = v.iter().map(|v| v.cpu.0).collect();
    all.sort_unstable();
    assert_eq!(all, [1, 2, 3, 4, 5]);
    // M = 2 ≤ 3: the zone is every level.
    assert_eq!(t.zone_victims(CpuId(0)).len(), 5);
    assert_eq!(t.level_between(CpuId(0), CpuId(5)), Level(1));
    assert!((t.numa_factor(NodeId(0), NodeId(1)) - 2.0).abs() < 1e-12);
}

#[test]
fn zone_prefix_with_six_levels() {
    let t = crate::presets::preset("s1").unwrap();
    for c in 0..t.cpu_count() {
        let cpu = CpuId::new(c);
        let zone = t.zone_victims(cpu);
        assert!(zone.iter().all(|v| t.in_zone(cpu, t.node_of(v.cpu))));
        let rest = &t.victims(cpu)[zone.len()..];
        assert!(rest.iter().all(|v| !t.in_zone(cpu, t.node_of(v.cpu))));
        // 10 zone nodes × 2 CPUs, less ourselves.
        assert_eq!(zone.len(), 19);
    }
    let narrowed = t.clone().with_zone_depth(1);
    assert_eq!(narrowed.zone_victims(CpuId(0)).len(), 1);
}

#[test]
fn zone_and_farther_tests() {
    let t = crate::presets::preset("s1").unwrap();
    let n = t.node_count();
    let zone = t.zone_depth();
    assert!(!t.beyond_zone(Level(0)));
    assert!(!t.beyond_zone(Level(zone as u8 - 1)));
    assert!(t.beyond_zone(Level(zone as u8)));
    for o in 0..n {
        for f in 0..n {
            for to in 0..n {
                let (o, f, to) = (NodeId::new(o), NodeId::new(f), NodeId::new(to));
                let level = t.node_level(to, f).unwrap();
                let expect = if o == f {
                    level.index() >= zone
                } else {
                    !t.node_in_zone(to, o)
                };
                assert_eq!(t.leaves_zone(o, f, to, level), expect);
                assert_eq!(
                    t.farther_from(o, f, to),
                    t.distance(o, to) > t.distance(o, f)
                );
            }
        }
    }
    // An origin that is no node of the machine: beyond every zone, never "farther", no panic.
    let bad = NodeId::new(n + 3);
    assert!(!t.origin_in_zone(NodeId(0), bad));
    assert!(t.leaves_zone(bad, NodeId(0), NodeId(1), Level(0)));
    assert!(!t.farther_from(bad, NodeId(0), NodeId(1)));
}

#[test]
fn single_cpu_machine() {
    let t = Topology::new(machine(&[1], vec![vec![10]]));
    assert_eq!(t.mal_count(), 1);
    assert_eq!(t.zone_depth(), 1);
    assert!(t.victims(CpuId(0)).is_empty());
}

/// The victim order as first written (a sort per CPU), kept as the reference for the
/// bucketed construction in `build_victims`.
fn reference_victims(t: &Topology, c: usize) -> Vec<Victim> {
    let m = t.machine();
    let me = m.cpu(CpuId::new(c));
    let home = me.node;
    let node_cpus = &m.node(home).cpus;
    let pos = node_cpus.iter().position(|&x| x.index() == c).unwrap();
    let mut local: Vec<(Tier, usize, CpuId)> = node_cpus
        .iter()
        .enumerate()
        .filter(|(_, &x)| x.index() != c)
        .map(|(k, &x)| {
            let tier = Tier::within_node(me, m.cpu(x));
            (tier, (k + node_cpus.len() - pos) % node_cpus.len(), x)
        })
        .collect();
    local.sort_unstable();
    let mut out: Vec<Victim> = local
        .into_iter()
        .map(|(tier, _, cpu)| Victim {
            cpu,
            level: Level::LOCAL,
            tier,
        })
        .collect();
    let n = t.node_count();
    let mut others: Vec<NodeId> = t.cpu_nodes().filter(|&b| b != home).collect();
    others.sort_by_key(|&b| {
        (
            t.node_level(home, b).unwrap(),
            (b.index() + n - home.index()) % n,
        )
    });
    for b in others {
        let cpus = &m.node(b).cpus;
        for off in 0..cpus.len() {
            out.push(Victim {
                cpu: cpus[(pos + off) % cpus.len()],
                level: t.node_level(home, b).unwrap(),
                tier: Tier::Remote,
            });
        }
    }
    out
}

#[test]
fn bucketed_victims_match_the_reference() {
    // Interleaved CPU numbering, SMT pairs, two caches per node, a memory-only node.
    let specs: Vec<NodeSpec> = (0..5u32)
        .map(|node| NodeSpec {
            os_id: node * 3,
            cpus: if node == 2 {
                Vec::new()
            } else {
                (0..6)
                    .map(|k| CpuSpec {
                        os_index: k * 5 + node,
                        core: k / 2,
                        cache_group: k / 4,
                    })
                    .collect()
            },
            memory_bytes: None,
        })
        .collect();
    let rows = vec![
        vec![10, 16, 40, 22, 28],
        vec![16, 10, 40, 28, 22],
        vec![40, 40, 10, 40, 40],
        vec![22, 28, 40, 10, 16],
        vec![28, 22, 40, 16, 10],
    ];
    let mut topologies = vec![Topology::new(
        Machine::from_specs("interleaved", specs, Some(rows)).unwrap(),
    )];
    for name in ["s1", "s2", "s3"] {
        topologies.push(crate::presets::preset(name).unwrap());
    }
    topologies.push(crate::presets::mesh(5, 3, true, 3).unwrap());
    topologies.push(crate::presets::hierarchical(&[3, 2, 2], 2).unwrap());
    for t in &topologies {
        for c in 0..t.cpu_count() {
            assert_eq!(
                t.victims(CpuId::new(c)),
                &reference_victims(t, c)[..],
                "{} cpu {c}",
                t.machine().name()
            );
        }
    }
}

#[test]
fn victim_rows_are_built_on_first_use_only() {
    // At the CPU limit a table of every row would be 4,096 × 4,095 victims; only the rows
    // asked for exist.
    let t = crate::presets::mesh(8, 8, true, crate::machine::MAX_CPUS / 64).unwrap();
    assert_eq!(t.cpu_count(), crate::machine::MAX_CPUS);
    assert!(t.victims.iter().all(|row| row.get().is_none()));
    let last = CpuId::new(t.cpu_count() - 1);
    let row = t.victims(last);
    assert_eq!(row.len(), t.cpu_count() - 1);
    assert!(row.iter().all(|v| v.cpu != last));
    assert!(row.windows(2).all(|w| w[0].level <= w[1].level));
    assert_eq!(t.victims.iter().filter(|r| r.get().is_some()).count(), 1);
    // A clone keeps the built rows; the zone is a prefix of the same row.
    let narrowed = t.clone().with_zone_depth(1);
    assert_eq!(
        narrowed.victims(last).as_ptr(),
        narrowed.victims(last).as_ptr()
    );
    assert!(narrowed.zone_victims(last).len() < t.zone_victims(last).len());
}

/// Every span of every node at every level, counted through the built hierarchy.
fn listed_span_entries(t: &Topology) -> u64 {
    (0..t.node_count())
        .map(|n| {
            (0..t.mal_count())
                .map(|l| t.span(NodeId::new(n), Level(l as u8)).len() as u64)
                .sum::<u64>()
        })
        .sum()
}

#[test]
fn span_count_from_the_matrix_is_what_the_hierarchy_lists() {
    let mut topologies = vec![
        crate::presets::mesh(6, 6, false, 1).unwrap(),
        crate::presets::mesh(5, 3, true, 3).unwrap(),
        crate::presets::hierarchical(&[3, 2, 2], 2).unwrap(),
        // Overlapping spans, a memory-only node, an asymmetric row and a diagonal above
        // another entry (level I is the node itself all the same).
        Topology::new(machine(
            &[1, 1, 1, 1, 0],
            vec![
                vec![10, 16, 32, 33, 40],
                vec![16, 10, 25, 32, 40],
                vec![32, 26, 10, 16, 40],
                vec![33, 32, 16, 12, 40],
                vec![40, 40, 40, 40, 10],
            ],
        )),
    ];
    for name in crate::presets::PRESET_NAMES {
        topologies.push(crate::presets::preset(name).unwrap());
    }
    for t in &topologies {
        let count = span_count(t.machine());
        assert_eq!(count.levels, t.levels(), "{}", t.machine().name());
        assert_eq!(count.nodes, t.cpu_nodes().count());
        assert_eq!(
            count.entries,
            listed_span_entries(t),
            "{}",
            t.machine().name()
        );
    }
}

/// `n` nodes of one CPU each: node 0 is `11 + (j − 1) % 245` from node `j` (distances
/// 11..=255 once `n` > 245), every other pair 20 apart.
fn fan_of_distances(n: usize) -> (Vec<NodeSpec>, Vec<Vec<u64>>) {
    let specs = (0..n as u32)
        .map(|i| NodeSpec {
            os_id: i,
            cpus: vec![CpuSpec::alone(i, i)],
            memory_bytes: None,
        })
        .collect();
    let d = |i: usize, j: usize| -> u64 {
        match (i.min(j), i.max(j)) {
            (a, b) if a == b => 10,
            (0, b) => 11 + ((b - 1) % 245) as u64,
            _ => 20,
        }
    };
    let rows = (0..n).map(|i| (0..n).map(|j| d(i, j)).collect()).collect();
    (specs, rows)
}

#[test]
fn machines_whose_spans_grow_past_the_limit_are_refused_from_the_matrix() {
    // 1,024 nodes, 246 distinct distances: 10⁶ pairs, each listed at ~236 levels.
    let (specs, rows) = fan_of_distances(1024);
    let err = Machine::from_specs("fan", specs, Some(rows)).unwrap_err();
    assert!(
        matches!(
            err,
            TopologyError::TooManySpanEntries {
                nodes: 1024,
                levels: 246,
                first: 10,
                last: 255,
                limit: MAX_SPAN_ENTRIES,
                entries,
            } if entries > MAX_SPAN_ENTRIES
        ),
        "{err:?}"
    );
    // The same shape over 300 nodes lists fewer ids than the limit, and builds.
    let (specs, rows) = fan_of_distances(300);
    let t = Topology::new(Machine::from_specs("fan", specs, Some(rows)).unwrap());
    assert_eq!(t.mal_count(), 246);
    assert_eq!(listed_span_entries(&t), span_count(t.machine()).entries);
    // Restricting or respecifying a machine goes through the same check (spans only shrink
    // when CPUs are removed).
    let r = t.machine().restrict_cpus(|c| c < 100).unwrap();
    assert!(span_count(&r).entries < span_count(t.machine()).entries);
}
