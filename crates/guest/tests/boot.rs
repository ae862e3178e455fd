//! The harness itself: a 2-node guest reads its node distances and returns the job's exit
//! code; a guest whose job never ends is killed at the timeout, and one that prints nothing
//! at the quiet limit.

mod common;

use std::time::Duration;

use zonal_guest::{find_busybox, Guest, GuestError, GuestNode, GuestSpec, Initramfs};

fn two_nodes() -> GuestSpec {
    let node = |os_id| GuestNode {
        os_id,
        cpus: 1,
        memory_mib: 64,
    };
    GuestSpec::new(
        "two",
        vec![node(0), node(1)],
        vec![vec![10, 21], vec![21, 10]],
    )
    .unwrap()
}

#[test]
fn two_node_guest_reads_distances_and_returns_the_exit_code() {
    if !common::host_can_boot() {
        return;
    }
    let initramfs = Initramfs::new(&find_busybox().unwrap())
        .unwrap()
        .job("cat /sys/devices/system/node/node1/distance\nexit 3");
    let run = common::limited(Guest::new(two_nodes(), initramfs))
        .run()
        .unwrap();
    println!("2-node guest: {:.1} s", run.elapsed.as_secs_f64());
    assert_eq!(run.job_output, "21 10\n", "console:\n{}", run.console);
    assert_eq!(run.exit_code, 3);
}

#[test]
fn a_job_that_never_ends_times_out() {
    if !common::host_can_boot() {
        return;
    }
    let initramfs = Initramfs::new(&find_busybox().unwrap())
        .unwrap()
        .job("while true; do sleep 1; done");
    let err = Guest::new(two_nodes(), initramfs)
        .timeout(Duration::from_secs(2))
        .run()
        .unwrap_err();
    assert!(
        matches!(err, GuestError::Timeout { seconds: 2, .. }),
        "{err}"
    );
}

#[test]
fn a_silent_job_is_killed_at_the_quiet_limit() {
    if !common::host_can_boot() {
        return;
    }
    let initramfs = Initramfs::new(&find_busybox().unwrap())
        .unwrap()
        .job("echo started; sleep 100000");
    let err = Guest::new(two_nodes(), initramfs)
        .timeout(common::RUN_LIMIT)
        .quiet_limit(Duration::from_secs(5))
        .run()
        .unwrap_err();
    assert!(
        matches!(err, GuestError::Silent { seconds: 5, .. }),
        "{err}"
    );
}
