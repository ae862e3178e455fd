//! What the kernel says about this thread and about fresh regions (on any machine: one
//! node is enough for these).

use super::*;

#[test]
fn masks_round_trip() {
    let ids = [0, 1, 63, 64, 4095, 8191];
    assert_eq!(ids_of(&mask_of(&ids).unwrap()), ids);
    assert!(mask_of(&[8192]).is_err());
}

#[cfg(target_os = "linux")]
#[test]
fn a_thread_pinned_reads_back_its_cpu() {
    let allowed = thread_affinity().unwrap();
    let cpu = *allowed.last().unwrap();
    std::thread::spawn(move || {
        pin_current_thread(cpu).unwrap();
        assert_eq!(thread_affinity().unwrap(), vec![cpu]);
        assert_eq!(current_cpu(), Some(cpu));
    })
    .join()
    .unwrap();
    // The caller's own affinity is untouched.
    assert_eq!(thread_affinity().unwrap(), allowed);
}

#[cfg(target_os = "linux")]
#[test]
fn an_offline_or_absent_cpu_is_refused() {
    std::thread::spawn(|| {
        let e = pin_current_thread(8000).unwrap_err();
        assert_eq!(e.raw_os_error(), Some(libc::EINVAL));
    })
    .join()
    .unwrap();
}

#[cfg(target_os = "linux")]
#[test]
fn a_bound_region_is_bound_and_its_pages_are_on_the_node() {
    let r = PageRegion::new(3 * page_size() + 1).unwrap();
    assert_eq!(r.len(), 4 * page_size());
    assert_eq!(r.as_ptr() as usize % page_size(), 0);
    // Not touched yet: every page is absent.
    assert!(r
        .page_nodes()
        .unwrap()
        .iter()
        .all(|p| *p == Err(PageUnknown::NotPresent)));
    assert_eq!(r.policy().unwrap().mode, PolicyMode::Default);
    r.bind(0, MemoryPolicy::Bind).unwrap();
    let p = r.policy().unwrap();
    assert_eq!((p.mode, p.nodes), (PolicyMode::Bind, vec![0]));
    // SAFETY: the region is ours and `len` bytes long.
    unsafe { std::ptr::write_bytes(r.as_ptr(), 1, r.len()) };
    assert!(r.page_nodes().unwrap().iter().all(|p| *p == Ok(0)));
}

#[cfg(target_os = "linux")]
#[test]
fn a_preferred_region_reports_preferred() {
    let r = PageRegion::new(page_size()).unwrap();
    r.bind(0, MemoryPolicy::Preferred).unwrap();
    let p = r.policy().unwrap();
    assert_eq!((p.mode, p.nodes), (PolicyMode::Preferred, vec![0]));
}

#[test]
fn an_empty_region_maps_nothing() {
    let r = PageRegion::new(0).unwrap();
    assert_eq!(r.len(), 0);
    r.bind(0, MemoryPolicy::Bind).unwrap();
}

#[cfg(target_os = "linux")]
#[test]
fn a_helper_started_from_a_pinned_thread_gets_the_builders_cpus() {
    let all = thread_affinity().unwrap();
    let cpu = all[0];
    std::thread::spawn(move || {
        // What a build does first, on the building thread, before it pins anything.
        note_builder_cpus();
        // The builder pinned (as a caller adopted as worker 0 is while its pool lives).
        pin_current_thread(cpu).unwrap();
        // A thread started here inherits the one CPU...
        std::thread::spawn(move || {
            assert_eq!(thread_affinity().unwrap(), vec![cpu]);
            // ...until it takes the builder's mask, read before the pinning.
            release_current_thread();
            assert_eq!(thread_affinity().unwrap(), all);
        })
        .join()
        .unwrap();
    })
    .join()
    .unwrap();
}

#[cfg(target_os = "linux")]
#[test]
fn another_threads_affinity_is_set_by_its_id() {
    let all = thread_affinity().unwrap();
    let cpu = *all.last().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    let (done_tx, done_rx) = std::sync::mpsc::channel::<()>();
    let t = std::thread::spawn(move || {
        tx.send(current_thread_id().unwrap()).unwrap();
        done_rx.recv().unwrap();
        thread_affinity().unwrap()
    });
    let tid = rx.recv().unwrap();
    set_thread_affinity_of(tid, &[cpu]).unwrap();
    done_tx.send(()).unwrap();
    assert_eq!(t.join().unwrap(), [cpu]);
    // This thread is untouched.
    assert_eq!(thread_affinity().unwrap(), all);
}

#[cfg(target_os = "linux")]
#[test]
fn the_first_touch_policy_resets_a_region_to_the_default() {
    let r = PageRegion::new(page_size()).unwrap();
    r.bind(0, MemoryPolicy::Bind).unwrap();
    r.bind(0, MemoryPolicy::FirstTouch).unwrap();
    let p = r.policy().unwrap();
    assert_eq!((p.mode, p.nodes), (PolicyMode::Default, vec![]));
}

#[test]
fn an_empty_region_has_no_pages() {
    let r = PageRegion::new(0).unwrap();
    assert_eq!(r.page_nodes().unwrap(), []);
    assert_eq!(r.policy().unwrap_err().kind(), io::ErrorKind::InvalidInput);
}
