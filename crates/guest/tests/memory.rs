//! In the 4-node guest, every page of every `NodeBuffer` (bind and preferred, 1 MiB and an
//! odd size, on each node) lies on its node as `move_pages` reports, the kernel's policy
//! (`get_mempolicy`, `numa_maps`) is the placement Zonal reports, and no other mapping of the
//! process carries a policy.

mod common;

#[test]
fn buffers_live_on_their_nodes_under_the_reported_policy() {
    let Some(boot) = common::numa4_boot() else {
        return;
    };
    let step = boot.step("memory");
    assert_eq!(step.rc, Some(0), "{}", step.text);
    let r = step.probe();
    common::assertions::assert_buffers_on_their_nodes(&r);
}
