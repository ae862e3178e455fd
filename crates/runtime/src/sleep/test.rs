//! The wake-up decisions of the push-and-wake function, without threads: who is taken out
//! of the sleeper sets (and made a searcher) for each queue kind.

use super::*;

/// Four nodes on a line (distance 10 to itself, +10 per hop), two workers each: worker
/// `2n` and `2n + 1` on node `n`.
fn line() -> Sleep {
    let worker_node = [0, 0, 1, 1, 2, 2, 3, 3];
    Sleep::new(&worker_node, 4, |a, b| 10 + 10 * a.abs_diff(b))
}

/// Registers `workers` as sleepy (step 1), returning their tokens.
fn sleepy(s: &Sleep, workers: &[usize]) -> Vec<Sleepy> {
    workers.iter().map(|&w| s.get_sleepy(w)).collect()
}

/// The workers a waker took out of the sets: their `cancel` says so.
fn claimed(s: &Sleep, tokens: Vec<Sleepy>) -> Vec<usize> {
    tokens
        .into_iter()
        .filter_map(|t| {
            let w = t.worker;
            s.cancel(t).then_some(w)
        })
        .collect()
}

#[test]
fn a_push_on_a_workers_queue_wakes_that_worker_if_it_sleeps() {
    let s = line();
    let t = sleepy(&s, &[0, 1, 2, 3]);
    s.push_and_wake(Owner::Worker(3), Others::None, || {});
    assert_eq!(s.searching(), 1, "the woken owner searches");
    assert_eq!(claimed(&s, t), [3]);
    assert_eq!(s.sleepers(), 0);
}

#[test]
fn an_awake_owner_with_no_helpers_wakes_nobody() {
    let s = line();
    let t = sleepy(&s, &[0, 2, 3]);
    // Worker 1 (node 0) is awake and will drain its own queue.
    s.push_and_wake(Owner::Worker(1), Others::None, || {});
    assert!(claimed(&s, t).is_empty());
    // With helpers: a sleeper of its node first.
    let t = sleepy(&s, &[0, 2, 3]);
    s.push_and_wake(Owner::Worker(1), Others::Origin(0), || {});
    assert_eq!(claimed(&s, t), [0]);
}

#[test]
fn a_node_push_wakes_its_node_then_the_nearest_allowed_node() {
    let s = line();
    // Node 1 has nobody asleep; nodes 0, 2, 3 do. Nearest to origin 1: 0 and 2 (ties:
    // the lowest id), then 3.
    let t = sleepy(&s, &[0, 4, 6]);
    s.push_and_wake(Owner::Node(1), Others::Origin(1), || {});
    assert_eq!(claimed(&s, t), [0]);
    // Node 0 may not take node 1's tasks: node 2's sleeper instead.
    s.set_takers(|origin, node| !(origin == 1 && node == 0));
    let t = sleepy(&s, &[0, 4, 6]);
    s.push_and_wake(Owner::Node(1), Others::Origin(1), || {});
    assert_eq!(claimed(&s, t), [4]);
    // Only the node itself may: nobody is woken, as no worker of node 1 sleeps.
    s.set_takers(|origin, node| origin == node);
    let t = sleepy(&s, &[0, 4, 6]);
    s.push_and_wake(Owner::Node(1), Others::Origin(1), || {});
    assert!(claimed(&s, t).is_empty());
    // A refused task handed back to node 3's injector: node 3's sleepers only.
    let t = sleepy(&s, &[0, 4, 6]);
    s.push_and_wake(Owner::Node(3), Others::None, || {});
    assert_eq!(claimed(&s, t), [6]);
}

#[test]
fn a_searcher_of_the_owners_node_makes_the_wake_up_unnecessary() {
    let s = line();
    s.start_searching(1);
    let t = sleepy(&s, &[2, 3, 0]);
    s.push_and_wake(Owner::Node(1), Others::Origin(1), || {});
    s.push_and_wake(Owner::Pusher { node: 1 }, Others::Origin(1), || {});
    assert!(claimed(&s, t).is_empty(), "node 1's searcher finds it");
    // A searcher of another node does not: it may be refused the task.
    let t = sleepy(&s, &[2, 3, 0]);
    s.push_and_wake(Owner::Node(0), Others::Origin(0), || {});
    assert_eq!(claimed(&s, t), [0]);
    // Each node's last searcher is told so, whatever the other nodes' searchers: a producer
    // of node 1 trusted node 1's count, and the woken worker of node 0 does not change it.
    assert!(
        s.stop_searching(1),
        "node 1's last searcher, though node 0's woken worker still searches"
    );
    assert_eq!(s.searching(), 1);
    assert!(s.stop_searching(0));
}

#[test]
fn the_push_runs_before_the_wake_up_check() {
    let s = line();
    let mut pushed = false;
    s.push_and_wake(Owner::Node(0), Others::None, || pushed = true);
    assert!(pushed);
}

#[test]
fn a_burst_of_pushes_wakes_one_worker_at_a_time() {
    let s = line();
    let t = sleepy(&s, &[0, 1]);
    for _ in 0..10 {
        s.push_and_wake(Owner::Pusher { node: 0 }, Others::Origin(0), || {});
    }
    assert_eq!(
        claimed(&s, t).len(),
        1,
        "the woken worker searches: no more wake-ups"
    );
}

#[test]
fn many_workers_per_node_use_several_words() {
    let worker_node = vec![0u32; 200];
    let s = Sleep::new(&worker_node, 1, |_, _| 10);
    let t = sleepy(&s, &[150, 199]);
    s.push_and_wake(Owner::Worker(199), Others::None, || {});
    // Worker 199 searches: a push on the node's injector wakes nobody until it stops.
    s.push_and_wake(Owner::Node(0), Others::None, || {});
    assert_eq!(s.sleepers(), 1);
    assert!(s.stop_searching(0));
    s.push_and_wake(Owner::Node(0), Others::None, || {});
    let mut c = claimed(&s, t);
    c.sort_unstable();
    assert_eq!(c, [150, 199]);
    assert_eq!(s.searching(), 1);
}

#[test]
fn a_latch_wake_up_leaves_the_worker_registered() {
    let s = line();
    let t = s.get_sleepy(2);
    s.wake_worker(2);
    assert!(!s.park_for(t, None), "woken by its token, not claimed");
    assert_eq!((s.sleepers(), s.searching()), (0, 0));
}
