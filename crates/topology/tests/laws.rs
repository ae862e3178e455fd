//! Laws of the hierarchy over generated machines, and robustness against malformed input.
//!
//! Machines are generated as Linux sees valid ones: 1..24 nodes of 0..4 CPUs (at least one
//! node with CPUs), sparse OS ids given in shuffled order, and a symmetric matrix with 10 on
//! the diagonal and 11..=255 elsewhere — weighted towards few distinct values, so that
//! levels repeat, and towards the range's edges. Every law below is checked on each one;
//! the levels and spans are also compared with a naive transcription of `sched_init_numa`.
//!
//! Malformed input (arbitrary text, ragged or out-of-range matrices, broken files) must give
//! a typed [`TopologyError`], never a panic.

use std::collections::BTreeSet;

use proptest::collection::vec;
use proptest::prelude::*;
use zonal_topology::{
    format_cpulist, parse_cpulist, parse_nodes_json, presets, CpuId, CpuSpec, Level, Machine,
    NodeId, NodeSpec, Topology, TopologyError, TopologyReport,
};

/// A valid machine description: node specs in input order and the matching matrix.
#[derive(Clone, Debug)]
struct Spec {
    nodes: Vec<NodeSpec>,
    rows: Vec<Vec<u64>>,
}

/// An off-diagonal distance: mostly from a few shared values, sometimes anything, sometimes
/// an edge of the range.
fn distance() -> impl Strategy<Value = u64> {
    prop_oneof![
        4 => prop::sample::select(vec![16u64, 21, 22, 32]),
        3 => 11u64..=255,
        1 => prop::sample::select(vec![11u64, 255]),
    ]
}

fn cpu_counts(n: usize) -> impl Strategy<Value = Vec<usize>> {
    prop_oneof![
        4 => vec(1usize..4, n),
        2 => vec(0usize..4, n),
        1 => vec(prop_oneof![3 => Just(0usize), 1 => Just(1usize)], n),
    ]
    .prop_map(|mut c| {
        if c.iter().all(|&k| k == 0) {
            c[0] = 1;
        }
        c
    })
}

fn symmetric_spec() -> impl Strategy<Value = Spec> {
    (1usize..24)
        .prop_flat_map(|n| {
            (
                cpu_counts(n),
                vec(distance(), n * (n - 1) / 2),
                vec(1u32..4, n),
                // Input order must not matter: nodes come shuffled.
                Just((0..n).collect::<Vec<usize>>()).prop_shuffle(),
                1usize..3,
            )
        })
        .prop_map(|(cpus, upper, gaps, order, smt)| {
            let n = cpus.len();
            // `upper` holds the upper triangle row by row; mirror it.
            let at = |i: usize, j: usize| upper[i * n - i * (i + 1) / 2 + (j - i - 1)];
            let full: Vec<Vec<u64>> = (0..n)
                .map(|i| {
                    (0..n)
                        .map(|j| match i.cmp(&j) {
                            std::cmp::Ordering::Equal => 10,
                            std::cmp::Ordering::Less => at(i, j),
                            std::cmp::Ordering::Greater => at(j, i),
                        })
                        .collect()
                })
                .collect();
            // Sparse, ascending OS ids and consecutive CPU numbers in node order.
            let mut os_id = 0;
            let mut next_cpu = 0;
            let mut nodes = Vec::with_capacity(n);
            for (i, &count) in cpus.iter().enumerate() {
                os_id += gaps[i];
                let cpus = (0..count as u32)
                    .map(|c| CpuSpec {
                        os_index: next_cpu + c,
                        core: (next_cpu + c) / smt as u32,
                        cache_group: os_id,
                    })
                    .collect();
                next_cpu += count as u32;
                nodes.push(NodeSpec {
                    os_id,
                    cpus,
                    memory_bytes: None,
                });
            }
            Spec {
                nodes: order.iter().map(|&i| nodes[i].clone()).collect(),
                rows: order
                    .iter()
                    .map(|&i| order.iter().map(|&j| full[i][j]).collect())
                    .collect(),
            }
        })
}

fn build(spec: &Spec) -> Topology {
    Topology::new(
        Machine::from_specs("law", spec.nodes.clone(), Some(spec.rows.clone()))
            .expect("generated machines are valid"),
    )
}

fn os_ids(t: &Topology, nodes: &[NodeId]) -> BTreeSet<u32> {
    nodes.iter().map(|&n| t.machine().node(n).os_id).collect()
}

fn cpu_nodes(t: &Topology) -> Vec<NodeId> {
    t.cpu_nodes().collect()
}

/// Per node (OS id), per level: the OS ids of the span.
type NaiveSpans = Vec<(u32, Vec<BTreeSet<u32>>)>;

/// `sched_init_numa`, transcribed naively from the input description.
fn naive_levels_and_spans(spec: &Spec) -> (Vec<u32>, NaiveSpans) {
    let with_cpus: Vec<usize> = (0..spec.nodes.len())
        .filter(|&i| !spec.nodes[i].cpus.is_empty())
        .collect();
    let mut levels: Vec<u32> = with_cpus
        .iter()
        .flat_map(|&i| with_cpus.iter().map(move |&j| (i, j)))
        .map(|(i, j)| spec.rows[i][j] as u32)
        .collect();
    levels.sort_unstable();
    levels.dedup();
    let mut per_node: NaiveSpans = (0..spec.nodes.len())
        .map(|i| {
            let rows = levels
                .iter()
                .map(|&d| {
                    if spec.nodes[i].cpus.is_empty() {
                        return BTreeSet::new();
                    }
                    with_cpus
                        .iter()
                        .filter(|&&j| spec.rows[i][j] as u32 <= d)
                        .map(|&j| spec.nodes[j].os_id)
                        .collect()
                })
                .collect();
            (spec.nodes[i].os_id, rows)
        })
        .collect();
    per_node.sort_by_key(|(id, _)| *id);
    (levels, per_node)
}

fn level(l: usize) -> Level {
    Level(u8::try_from(l).expect("few levels"))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn matches_naive_sched_init_numa(spec in symmetric_spec()) {
        let t = build(&spec);
        let (levels, per_node) = naive_levels_and_spans(&spec);
        prop_assert_eq!(t.levels(), &levels[..]);
        let report = TopologyReport::new(&t);
        for (k, (os_id, rows)) in per_node.iter().enumerate() {
            prop_assert_eq!(report.node_ids[k], *os_id);
            for (l, want) in rows.iter().enumerate() {
                let got: BTreeSet<u32> = report.spans[&levels[l].to_string()][k].iter().copied().collect();
                prop_assert_eq!(&got, want, "node {} level {}", os_id, l);
            }
        }
    }

    #[test]
    fn levels_are_sorted_distinct_and_start_local(spec in symmetric_spec()) {
        let t = build(&spec);
        prop_assert!(t.levels().windows(2).all(|w| w[0] < w[1]));
        prop_assert_eq!(t.levels()[0], 10);
        prop_assert_eq!(t.mal_count(), t.levels().len());
        let m = t.mal_count();
        let s = t.zone_depth();
        prop_assert!((1..=m).contains(&s));
        prop_assert_eq!(s, if m >= 4 { m / 2 + 1 } else { m });
    }

    #[test]
    fn own_span_contains_the_node_and_grows(spec in symmetric_spec()) {
        let t = build(&spec);
        let all = os_ids(&t, &cpu_nodes(&t));
        for node in cpu_nodes(&t) {
            let me = t.machine().node(node).os_id;
            let mut previous = BTreeSet::new();
            for l in 0..t.mal_count() {
                let span = os_ids(&t, t.span(node, level(l)));
                prop_assert!(span.contains(&me), "node {} level {}", me, l);
                prop_assert!(previous.is_subset(&span), "node {} level {} shrinks", me, l);
                previous = span;
            }
            // The last level spans every CPU node: a valid matrix connects them all.
            prop_assert_eq!(&previous, &all);
        }
        for node in (0..t.node_count()).map(NodeId::new) {
            if !t.machine().node(node).has_cpus() {
                prop_assert!(t.span(node, t.zone_level()).is_empty());
            }
        }
    }

    #[test]
    fn level_between_is_symmetric_and_local_at_home(spec in symmetric_spec()) {
        let t = build(&spec);
        for a in (0..t.cpu_count()).map(CpuId::new) {
            for b in (0..t.cpu_count()).map(CpuId::new) {
                let ab = t.level_between(a, b);
                prop_assert_eq!(ab, t.level_between(b, a));
                prop_assert_eq!(ab == Level::LOCAL, t.distance(t.node_of(a), t.node_of(b)) == 10);
                let d = t.distance(t.node_of(a), t.node_of(b));
                prop_assert_eq!(t.levels()[ab.index()], d);
            }
        }
    }

    #[test]
    fn zone_contains_own_cpus(spec in symmetric_spec()) {
        let t = build(&spec);
        for cpu in (0..t.cpu_count()).map(CpuId::new) {
            let home = t.node_of(cpu);
            prop_assert!(t.in_zone(cpu, home));
            let zone: BTreeSet<CpuId> = t.zone_victims(cpu).iter().map(|v| v.cpu).collect();
            for &other in t.cpus_of(home) {
                prop_assert!(other == cpu || zone.contains(&other));
            }
        }
    }

    #[test]
    fn victim_orders_are_complete_nearest_first_and_zone_prefixed(spec in symmetric_spec()) {
        let t = build(&spec);
        for cpu in (0..t.cpu_count()).map(CpuId::new) {
            let victims = t.victims(cpu);
            let mut seen = vec![0u32; t.cpu_count()];
            for v in victims {
                prop_assert_ne!(v.cpu, cpu, "cpu {} lists itself", cpu);
                seen[v.cpu.index()] += 1;
                prop_assert_eq!(v.level, t.level_between(cpu, v.cpu));
            }
            for (c, &k) in seen.iter().enumerate() {
                prop_assert_eq!(k, u32::from(c != cpu.index()), "cpu {} lists {} {} times", cpu, c, k);
            }
            prop_assert!(victims.windows(2).all(|w| w[0].level <= w[1].level));
            // Never an out-of-zone victim before an in-zone one.
            let inside: Vec<bool> = victims.iter().map(|v| t.in_zone(cpu, t.node_of(v.cpu))).collect();
            prop_assert!(inside.windows(2).all(|w| w[0] || !w[1]));
            let zone = t.zone_victims(cpu);
            prop_assert_eq!(zone.len(), inside.iter().filter(|&&b| b).count());
            prop_assert!(zone.iter().all(|v| v.level <= t.zone_level()));
        }
    }

    #[test]
    fn nested_machines_have_nested_spans(
        fanout in vec(1usize..5, 1..5).prop_filter("at most 64 nodes", |f| f.iter().product::<usize>() <= 64),
        cpus in 1usize..3,
    ) {
        let t = presets::hierarchical(&fanout, cpus).expect("valid fan-out");
        let nodes = cpu_nodes(&t);
        let spans: Vec<Vec<BTreeSet<u32>>> = nodes
            .iter()
            .map(|&a| (0..t.mal_count()).map(|l| os_ids(&t, t.span(a, level(l)))).collect())
            .collect();
        for l in 0..t.mal_count() {
            for (a, sa) in spans.iter().enumerate() {
                if l + 1 < t.mal_count() {
                    // Strictly: every level of a tree adds a sibling subtree.
                    prop_assert!(sa[l].is_subset(&sa[l + 1]) && sa[l].len() < sa[l + 1].len(),
                        "node {} level {} of {:?}", a, l, fanout);
                }
                for sb in &spans {
                    // A tree: spans of one level are equal or disjoint.
                    prop_assert!(sa[l] == sb[l] || sa[l].is_disjoint(&sb[l]));
                }
            }
        }
        let distinct = fanout.iter().filter(|&&f| f > 1).count();
        prop_assert_eq!(t.mal_count(), distinct + 1);
    }
}

// --- Malformed input -------------------------------------------------------------------

/// Anything `from_specs` might be handed: ragged rows, any value, wrong row counts,
/// repeated node ids, CPUs claimed twice.
fn wild_input() -> impl Strategy<Value = (Vec<NodeSpec>, Option<Vec<Vec<u64>>>)> {
    let value = prop_oneof![
        3 => 10u64..=255,
        1 => Just(0u64),
        1 => prop::sample::select(vec![9u64, 256, u64::MAX]),
        1 => any::<u64>(),
    ];
    let node =
        (prop_oneof![0u32..6, 0u32..64], vec(0u32..64, 0..4)).prop_map(|(os_id, cpus)| NodeSpec {
            os_id,
            cpus: cpus.into_iter().map(|c| CpuSpec::alone(c, os_id)).collect(),
            memory_bytes: None,
        });
    vec(node, 0..6).prop_flat_map(move |nodes| {
        let n = nodes.len();
        let value = value.clone();
        let rows = prop_oneof![4 => Just(n), 1 => 0usize..7];
        let matrix = rows.prop_flat_map(move |rows| {
            let row = prop_oneof![
                6 => vec(value.clone(), n..=n),
                1 => vec(value.clone(), 0..8),
            ];
            vec(row, rows..=rows)
        });
        (
            Just(nodes),
            prop_oneof![1 => Just(None), 4 => matrix.prop_map(Some)],
        )
    })
}

fn json_node() -> impl Strategy<Value = String> {
    let cpus = prop_oneof![
        vec(any::<u32>(), 0..4).prop_map(|v| format!("\"cpus\": {v:?}")),
        "[-0-9, a]{0,10}".prop_map(|s| format!("\"cpulist\": {s:?}")),
        Just(String::new()),
    ];
    let dist = prop_oneof![
        vec(prop_oneof![0i64..300, Just(-1), Just(1 << 40)], 0..5)
            .prop_map(|v| format!("\"distance\": {v:?}")),
        Just("\"distance\": \"x\"".to_owned()),
        Just(String::new()),
    ];
    (prop_oneof![0i64..4, Just(-1), Just(1 << 33)], cpus, dist).prop_map(|(id, c, d)| {
        let fields: Vec<String> = [format!("\"id\": {id}"), c, d]
            .into_iter()
            .filter(|f| !f.is_empty())
            .collect();
        format!("{{{}}}", fields.join(", "))
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn from_specs_never_panics((nodes, matrix) in wild_input()) {
        if let Ok(m) = Machine::from_specs("wild", nodes, matrix) {
            // Whatever is accepted builds a usable hierarchy (asymmetric matrices included).
            let t = Topology::new(m);
            for cpu in (0..t.cpu_count()).map(CpuId::new) {
                prop_assert_eq!(t.victims(cpu).len(), t.cpu_count() - 1);
                prop_assert!(t.in_zone(cpu, t.node_of(cpu)));
                prop_assert!(t.victims(cpu).windows(2).all(|w| w[0].level <= w[1].level));
            }
            let _ = TopologyReport::new(&t);
        }
    }

    #[test]
    fn arbitrary_text_is_not_a_node_dump(text in any::<String>()) {
        let _ = parse_nodes_json(&text, "<prop>", "prop");
    }

    #[test]
    fn structured_but_wrong_node_dumps_give_typed_errors(nodes in vec(json_node(), 0..5)) {
        let doc = format!("{{\"nodes\": [{}]}}", nodes.join(", "));
        match parse_nodes_json(&doc, "<prop>", "prop") {
            Ok(m) => prop_assert!(!m.cpus().is_empty()),
            Err(e) => prop_assert!(!e.to_string().is_empty()),
        }
    }

    #[test]
    fn arbitrary_bytes_are_not_a_cpulist(bytes in vec(any::<u8>(), 0..64)) {
        let _ = parse_cpulist(&String::from_utf8_lossy(&bytes));
    }

    #[test]
    fn cpulists_round_trip(ids in vec(prop_oneof![0u32..64, any::<u32>()], 0..40)) {
        let mut want = ids.clone();
        want.sort_unstable();
        want.dedup();
        prop_assert_eq!(parse_cpulist(&format_cpulist(&ids)).expect("own output parses"), want);
    }

    #[test]
    fn cpulist_like_text_parses_or_fails_typed(text in "[0-9,\\- \n]{0,24}") {
        match parse_cpulist(&text) {
            Ok(cpus) => prop_assert!(cpus.windows(2).all(|w| w[0] < w[1])),
            Err(e) => prop_assert!(matches!(e, TopologyError::CpuList { .. }), "{e}"),
        }
    }
}

#[test]
fn wrong_shapes_are_named() {
    let one = |os_id| NodeSpec {
        os_id,
        cpus: vec![CpuSpec::alone(os_id, os_id)],
        memory_bytes: None,
    };
    let e = Machine::from_specs(
        "t",
        vec![one(0), one(1)],
        Some(vec![vec![10, 20], vec![20]]),
    );
    assert!(matches!(e, Err(TopologyError::NonSquareMatrix { .. })));
    let e = Machine::from_specs(
        "t",
        vec![one(0), one(1)],
        Some(vec![vec![10, 20], vec![20, 0]]),
    );
    assert!(matches!(e, Err(TopologyError::ZeroDiagonal { node: 1 })));
    let e = Machine::from_specs(
        "t",
        vec![one(0), one(1)],
        Some(vec![vec![10, 300], vec![20, 10]]),
    );
    assert!(matches!(
        e,
        Err(TopologyError::DistanceOutOfRange { value: 300, .. })
    ));
}

#[cfg(feature = "hwloc")]
#[test]
fn broken_xml_and_missing_files_are_typed_errors() {
    let dir = std::env::temp_dir().join(format!("zonal-laws-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let missing = dir.join("missing.xml");
    assert!(matches!(
        zonal_topology::from_xml_file(&missing),
        Err(TopologyError::Io { .. })
    ));
    for (name, text) in [
        ("garbage.xml", "this is not xml at all"),
        (
            "truncated.xml",
            "<?xml version=\"1.0\"?>\n<topology version=\"3.0\">\n<object type=",
        ),
        ("empty.xml", ""),
        ("wrong-root.xml", "<?xml version=\"1.0\"?>\n<machine/>\n"),
    ] {
        let path = dir.join(name);
        std::fs::write(&path, text).expect("write");
        // Refused by Zonal's own check, naming the file and a line, before hwloc's errno.
        match zonal_topology::from_xml_file(&path) {
            Err(e @ TopologyError::Xml { .. }) => {
                assert!(e.to_string().contains(name), "{name}: {e}");
            }
            other => panic!("{name}: {other:?}"),
        }
    }
    assert!(matches!(
        zonal_topology::from_nodes_file(dir.join("missing.json")),
        Err(TopologyError::Io { .. })
    ));
    std::fs::remove_dir_all(&dir).expect("clean up");
}
