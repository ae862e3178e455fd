//! `ZONAL_NUM_THREADS` sizes the global pool; an invalid value is refused, not replaced by
//! the default. (Its own test binary: it sets the process's environment before the global
//! pool exists.)

#[test]
fn the_variable_sizes_the_global_pool_and_an_invalid_value_is_refused() {
    std::env::set_var(zonal_runtime::NUM_THREADS_VAR, "three");
    let err = zonal_runtime::ThreadPoolBuilder::new()
        .preset("s1")
        .build_global()
        .unwrap_err();
    let msg = err.to_string();
    assert!(
        msg.contains("ZONAL_NUM_THREADS") && msg.contains("three"),
        "{msg}"
    );
    assert!(err.is_input_error());

    // A builder with no worker count takes the variable's.
    std::env::set_var(zonal_runtime::NUM_THREADS_VAR, "5");
    zonal_runtime::ThreadPoolBuilder::new()
        .preset("s1")
        .build_global()
        .unwrap();
    std::env::remove_var(zonal_runtime::NUM_THREADS_VAR);
    assert_eq!(zonal_runtime::current_num_threads(), 5);
}
