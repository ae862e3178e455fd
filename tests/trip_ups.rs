//! A user of the facade finds `NodeId` at `zonal::NodeId`, and `spawn_on` takes a node's
//! index as an integer (rustc used to suggest a path that does not exist).

#[test]
fn node_id_is_at_the_root_and_spawn_on_takes_an_integer() {
    let pool = zonal::ThreadPoolBuilder::new()
        .preset("s1")
        .no_policy()
        .build()
        .unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    let tx2 = tx.clone();
    pool.spawn_on(1, move || tx.send(1).unwrap());
    pool.spawn_on(zonal::NodeId(2), move || tx2.send(2).unwrap());
    let mut got = [rx.recv().unwrap(), rx.recv().unwrap()];
    got.sort_unstable();
    assert_eq!(got, [1, 2]);
    assert_eq!(zonal::NodeId::new(7), zonal::NodeId(7));
}
