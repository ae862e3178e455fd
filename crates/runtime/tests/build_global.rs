//! `ThreadPoolBuilder::build_global`: installs the global pool once. (Its own test binary:
//! the global pool is process-wide, and this one must be built before anything uses it.)

use zonal_runtime::ThreadPoolBuilder;

#[test]
fn build_global_installs_the_pool_the_free_functions_use_and_only_once() {
    ThreadPoolBuilder::new()
        .preset("s1")
        .num_threads(3)
        .build_global()
        .expect("the first build_global");
    assert_eq!(zonal_runtime::current_num_threads(), 3);
    let idx = zonal_runtime::broadcast(|ctx| ctx.index());
    assert_eq!(idx, [0, 1, 2]);
    let (a, b) = zonal_runtime::join(zonal_runtime::current_node, || 1);
    assert!(a.is_some());
    assert_eq!(b, 1);
    let again = ThreadPoolBuilder::new().preset("s1").build_global();
    let err = again.unwrap_err();
    assert!(err.is_global_pool_already_initialized(), "{err}");
    assert!(err.to_string().contains("already"), "{err}");
    assert_eq!(zonal_runtime::current_num_threads(), 3);
}
