//! `NodeBuffer` writes itself on its node's workers and says where: in the 4-node guest and
//! in the S1-shaped one (16 nodes × 2 CPUs), on every node, a buffer placed by first touch
//! alone (no memory policy) was written by exactly that node's workers, on their CPUs, in
//! parallel, reports that node as its first-touch node, and the kernel holds every page of
//! it there (`move_pages`); empty and zero-sized buffers have no page to report.

mod common;

#[test]
fn first_touch_is_reported_where_the_kernel_placed_the_pages_numa4() {
    let Some(boot) = common::numa4_boot() else {
        return;
    };
    let step = boot.step("first-touch");
    assert_eq!(step.rc, Some(0), "{}", step.text);
    common::assertions::assert_first_touch_on_every_node(&step.probe());
}

#[test]
fn first_touch_is_reported_where_the_kernel_placed_the_pages_s1() {
    let Some(boot) = common::s1_boot() else {
        return;
    };
    let step = boot.step("first-touch");
    assert_eq!(step.rc, Some(0), "{}", step.text);
    let r = step.probe();
    assert_eq!(r["nodes"].as_array().map(Vec::len), Some(16), "{r}");
    common::assertions::assert_first_touch_on_every_node(&r);
}
