use super::*;

/// A small valid hwloc 2 export: two packages, each with one NUMA node and one PU.
const XML: &str = include_str!("../../../tests/hostile/two-nodes.xml");

fn with(from: &str, to: &str) -> String {
    assert!(XML.contains(from), "{from:?} is not in the sample");
    XML.replacen(from, to, 1)
}

fn run(doc: &str) -> Result<()> {
    check(Path::new("m.xml"), doc.as_bytes())
}

/// The document is refused with an `Xml` error whose message names every needle.
#[track_caller]
fn refused(doc: &str, needles: &[&str]) -> u32 {
    match run(doc) {
        Err(e @ TopologyError::Xml { line, .. }) => {
            let msg = e.to_string();
            assert!(msg.starts_with("m.xml:"), "{msg}");
            for n in needles {
                assert!(msg.contains(n), "{msg:?} does not name {n:?}");
            }
            line
        }
        other => panic!("expected an XML error naming {needles:?}, got {other:?}"),
    }
}

#[test]
fn valid_exports_pass() {
    run(XML).unwrap();
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data");
    let mut seen = 0;
    for entry in std::fs::read_dir(&data).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "xml") {
            let bytes = std::fs::read(&path).unwrap();
            check(&path, &bytes).unwrap_or_else(|e| panic!("{e}"));
            seen += 1;
        }
    }
    assert!(seen >= 5, "only {seen} XML files under {}", data.display());
}

#[test]
fn documents_that_are_not_hwloc_xml() {
    assert_eq!(refused("this is not XML", &["not well-formed"]), 1);
    refused(&XML.replace("</topology>", ""), &["not well-formed"]);
    refused(
        "<?xml version=\"1.0\"?>\n<machine/>",
        &["<machine>", "<topology>"],
    );
    match check(Path::new("m.xml"), b"<topology>\xff</topology>") {
        Err(TopologyError::Xml { message, .. }) => assert!(message.contains("UTF-8")),
        other => panic!("{other:?}"),
    }
}

#[test]
fn object_types_follow_hwlocs_matching() {
    let line = refused(
        &with(
            r#"type="Package" os_index="0""#,
            r#"type="Pakage" os_index="0""#,
        ),
        &["Pakage", "not an hwloc object type"],
    );
    assert_eq!(line, 5);
    for ok in [
        "Socket", "package", "PACKAGE", "Pack", "Group0", "L3Cache", "L2", "Die",
    ] {
        run(&with(
            r#"type="Package" os_index="0""#,
            &format!(r#"type="{ok}" os_index="0""#),
        ))
        .unwrap_or_else(|e| panic!("{ok}: {e}"));
    }
    for bad in ["", "P", "L9Cache", "L4iCache", "L2x", "Grope", "Cores"] {
        refused(
            &with(
                r#"type="Package" os_index="0""#,
                &format!(r#"type="{bad}" os_index="0""#),
            ),
            &["not an hwloc object type"],
        );
    }
    refused(
        &with(r#"<object type="Machine" "#, "<object "),
        &["no type attribute"],
    );
}

#[test]
fn garbage_bitmaps_are_refused() {
    for bad in [
        "0xzz",
        "hello",
        "0x123456789",
        "",
        "0x",
        "1",
        "0x1,0xg",
        "0xf...f0x1",
        // hwloc does not count a leading comma and aborts (found by the xml fuzz target).
        ",0x00000001",
    ] {
        refused(
            &with(
                r#"<object type="PU" os_index="0" cpuset="0x00000001""#,
                &format!(r#"<object type="PU" os_index="0" cpuset="{bad}""#),
            ),
            &["cpuset", &format!("\"{bad}\""), "not an hwloc bitmap"],
        );
    }
    let long = vec!["0x0"; MAX_BITMAP_WORDS + 1].join(",");
    refused(
        &with(r#"nodeset="0x00000003""#, &format!(r#"nodeset="{long}""#)),
        &["nodeset", "more than the limit"],
    );
    assert_eq!(
        Bitmap::parse("0xf...f,0x00000001").unwrap(),
        Bitmap {
            words: vec![1],
            infinite: true
        }
    );
    assert_eq!(
        Bitmap::parse("0x00000000,0x00000003").unwrap().words,
        vec![3]
    );
    assert_eq!(
        Bitmap::parse("0x000000ff,,,0x00000001").unwrap().words,
        vec![1, 0, 0, 0xff]
    );
}

#[test]
fn numbers_are_unsigned_decimals_in_range() {
    refused(
        &with(r#"local_memory="1048576""#, r#"local_memory="-5""#),
        &["local_memory", "\"-5\"", "negative"],
    );
    refused(
        &with(r#"gp_index="4""#, r#"gp_index="four""#),
        &["gp_index", "\"four\""],
    );
    refused(
        &with(
            r#"<object type="Package" os_index="0""#,
            r#"<object type="Package" os_index="4294967296""#,
        ),
        &["os_index", "4294967296", "out of range"],
    );
}

#[test]
fn nodes_and_cpus_need_a_known_index_that_matches_their_set() {
    refused(
        &with(
            r#"<object type="NUMANode" os_index="1""#,
            r#"<object type="NUMANode" os_index="4294967295""#,
        ),
        &["NUMANode", "4294967295", "unknown"],
    );
    refused(
        &with(
            r#"<object type="PU" os_index="1" "#,
            r#"<object type="PU" "#,
        ),
        &["PU", "no os_index"],
    );
    refused(
        &with(
            r#"<object type="PU" os_index="1" cpuset="0x00000002""#,
            r#"<object type="PU" os_index="5" cpuset="0x00000002""#,
        ),
        &["PU", "os_index=\"5\"", "cpuset=\"0x00000002\""],
    );
    refused(
        &with(
            r#"nodeset="0x00000002" complete_nodeset="0x00000002" gp_index="6""#,
            r#"nodeset="0x00000001" complete_nodeset="0x00000002" gp_index="6""#,
        ),
        &["NUMANode", "nodeset=\"0x00000001\""],
    );
}

#[test]
fn sets_come_in_pairs_as_hwloc_writes_them() {
    // Each of these made libhwloc 2.9's importer dereference a NULL set.
    refused(
        &with(
            r#"<object type="PU" os_index="0" cpuset="0x00000001" complete_cpuset="0x00000001""#,
            r#"<object type="PU" os_index="0" cpuset="0x00000001""#,
        ),
        &["PU", "cpuset but no complete_cpuset"],
    );
    refused(
        &with(r#" allowed_cpuset="0x00000003""#, ""),
        &["root", "allowed_cpuset"],
    );
    refused(
        &with(
            r#"nodeset="0x00000002" complete_nodeset="0x00000002" gp_index="7""#,
            r#"gp_index="7""#,
        ),
        &["PU", "no nodeset"],
    );
    refused(
        &with(
            r#"<object type="PU" os_index="1" cpuset="0x00000002" complete_cpuset="0x00000002" nodeset="0x00000002" complete_nodeset="0x00000002" gp_index="7"/>"#,
            r#"<object type="PU" os_index="1" cpuset="0x00000002" complete_cpuset="0x00000002" nodeset="0x00000002" complete_nodeset="0x00000002" gp_index="7"/><object type="Misc" cpuset="0x00000002"/>"#,
        ),
        &["Misc", "no cpuset"],
    );
}

#[test]
fn childrens_cpusets_must_add_up_to_their_parents() {
    // The PU loses its CPU: the package's cpuset is no longer its children's.
    refused(
        &with(
            r#"<object type="PU" os_index="0" cpuset="0x00000001""#,
            r#"<object type="PU" os_index="0" cpuset="0x00000003""#,
        ),
        &["cpuset"],
    );
    refused(
        &with(
            r#"<object type="Package" os_index="1" cpuset="0x00000002""#,
            r#"<object type="Package" os_index="1" cpuset="0x00000003""#,
        ),
        &["Package", "overlaps"],
    );
    refused(
        &with(
            r#"<object type="NUMANode" os_index="0" cpuset="0x00000001""#,
            r#"<object type="NUMANode" os_index="0" cpuset="0x00000003""#,
        ),
        &["NUMANode", "differs from its parent"],
    );
}

#[test]
fn distance_matrices_hold_exactly_n_squared_unsigned_values() {
    refused(
        &with("10 20 20 10 ", "10 20 20 10 30 "),
        &["distances2", "5 distance values", "expected 4"],
    );
    refused(&with("10 20 20 10 ", "10 20 20 "), &["3 distance values"]);
    let line = refused(
        &with("10 20 20 10 ", "10 -5 -5 10 "),
        &["\"-5\"", "negative"],
    );
    assert_eq!(line, 16);
    refused(&with("10 20 20 10 ", "10 2x 20 10 "), &["\"2x\""]);
    refused(&with(r#"nbobjs="2""#, r#"nbobjs="0""#), &["nbobjs=\"0\""]);
    refused(
        &with(r#"nbobjs="2""#, r#"nbobjs="100000""#),
        &["nbobjs=\"100000\"", "out of range"],
    );
    refused(
        &with(
            r#"<indexes length="4">0 1 </indexes>"#,
            r#"<indexes length="2">0 </indexes>"#,
        ),
        &["1 indexes", "expected 2"],
    );
}

#[test]
fn a_matrix_must_name_nodes_of_the_document() {
    refused(
        &with(
            r#"<indexes length="4">0 1 </indexes>"#,
            r#"<indexes length="4">0 7 </indexes>"#,
        ),
        &["index 7", "names no NUMA node", "os_index"],
    );
    let gp = with(r#"indexing="os""#, r#"indexing="gp""#);
    refused(&gp, &["index 0", "gp_index"]);
    run(&gp.replace(
        r#"<indexes length="4">0 1 </indexes>"#,
        r#"<indexes length="4">3 6 </indexes>"#,
    ))
    .unwrap();
}

#[test]
fn version_1_documents() {
    // hwloc 1: NUMA nodes in the CPU tree, `<distances>` with `<latency>` children.
    let v1 = r#"<?xml version="1.0" encoding="UTF-8"?>
<topology>
  <object type="Machine" os_index="0" cpuset="0x00000003" complete_cpuset="0x00000003" nodeset="0x00000003" complete_nodeset="0x00000003">
    <object type="NUMANode" os_index="0" cpuset="0x00000001" complete_cpuset="0x00000001" nodeset="0x00000001" complete_nodeset="0x00000001" local_memory="1024">
      <object type="Socket" os_index="0" cpuset="0x00000001" complete_cpuset="0x00000001" nodeset="0x00000001" complete_nodeset="0x00000001">
        <object type="PU" os_index="0" cpuset="0x00000001" complete_cpuset="0x00000001" nodeset="0x00000001" complete_nodeset="0x00000001"/>
      </object>
    </object>
    <object type="NUMANode" os_index="1" cpuset="0x00000002" complete_cpuset="0x00000002" nodeset="0x00000002" complete_nodeset="0x00000002" local_memory="1024">
      <object type="Socket" os_index="1" cpuset="0x00000002" complete_cpuset="0x00000002" nodeset="0x00000002" complete_nodeset="0x00000002">
        <object type="PU" os_index="1" cpuset="0x00000002" complete_cpuset="0x00000002" nodeset="0x00000002" complete_nodeset="0x00000002"/>
      </object>
    </object>
    <distances nbobjs="2" relative_depth="1" latency_base="10.000000">
      <latency value="1.000000"/>
      <latency value="2.000000"/>
      <latency value="2.000000"/>
      <latency value="1.000000"/>
    </distances>
  </object>
</topology>
"#;
    run(v1).unwrap();
    refused(
        &v1.replacen(r#"<latency value="1.000000"/>"#, "", 1),
        &["3 latencies", "expected 4"],
    );
    refused(
        &v1.replacen(
            r#"<latency value="2.000000"/>"#,
            r#"<latency value="-2"/>"#,
            1,
        ),
        &["\"-2\""],
    );
}
