//! `compile_fail` doctests proving the `Send` and lifetime bounds of the API (as rayon's
//! `compile_fail` module). Nothing here is compiled into the crate.

/// `spawn` needs `'static`: it cannot borrow from the caller.
///
/// ```compile_fail
/// # use zonal_runtime::doc_facade as zonal;
/// let pool = zonal::ThreadPoolBuilder::new().preset("s1").no_policy().build().unwrap();
/// let v = vec![1, 2, 3];
/// pool.spawn(|| println!("{}", v.len()));
/// ```
///
/// `join` closures must be `Send`.
///
/// ```compile_fail
/// # use zonal_runtime::doc_facade as zonal;
/// use std::rc::Rc;
/// let pool = zonal::ThreadPoolBuilder::new().preset("s1").no_policy().build().unwrap();
/// let r = Rc::new(1);
/// pool.join(move || drop(r), || ());
/// ```
///
/// A scope's tasks cannot outlive what they borrow.
///
/// ```compile_fail
/// # use zonal_runtime::doc_facade as zonal;
/// let pool = zonal::ThreadPoolBuilder::new().preset("s1").no_policy().build().unwrap();
/// pool.scope(|s| {
///     let local = vec![1];
///     s.spawn(|_| println!("{}", local.len()));
/// });
/// ```
///
/// Two scoped tasks cannot both borrow the same data mutably.
///
/// ```compile_fail
/// # use zonal_runtime::doc_facade as zonal;
/// let pool = zonal::ThreadPoolBuilder::new().preset("s1").no_policy().build().unwrap();
/// let mut x = 0;
/// pool.scope(|s| {
///     s.spawn(|_| x += 1);
///     s.spawn(|_| x += 1);
/// });
/// ```
const _BOUNDS: () = ();
