//! The workers' steal walks cache exactly what the policy answers in advance.

use zonal_policy::{FreshSteal, OriginRule, PolicyConfig, PolicyName, Refusal};

use crate::ThreadPoolBuilder;

fn pool(cfg: PolicyConfig) -> crate::ThreadPool {
    ThreadPoolBuilder::new()
        .preset("s1")
        .policy_config(cfg)
        .build()
        .expect("pool on s1")
}

#[test]
fn victim_orders_cache_the_static_answers() {
    let mut strict = PolicyConfig::new(PolicyName::CONSERVATIVE_HARD);
    strict.origin = OriginRule::Strict;
    let cfgs = PolicyName::all().map(PolicyConfig::new).chain([strict]);
    for cfg in cfgs {
        let (name, origin) = (cfg.name, cfg.origin);
        let p = pool(cfg);
        let r = p.registry();
        let topo = &*r.topo;
        let epoch = r.policy.current();
        for (w, walker) in epoch.walkers.iter().enumerate() {
            let thief = r.worker_cpu[w];
            assert_eq!(walker.thief(), thief);
            assert_eq!(walker.len(), r.num_workers() - 1);
            for s in walker.slots() {
                assert_eq!(
                    r.policy.cpu_worker()[s.victim.cpu.index()],
                    w_of(r, s.victim.cpu)
                );
                assert_eq!(
                    s.fresh,
                    epoch
                        .policy
                        .steal_side()
                        .static_fresh_steal(topo, thief, &s.victim),
                    "{name}"
                );
                let beyond = s.victim.level.index() >= topo.zone_depth();
                let same_node = topo.node_of(s.victim.cpu) == topo.node_of(thief);
                let expected = match name {
                    PolicyName::CONSERVATIVE_HARD if beyond => {
                        Some(FreshSteal::Stop(Refusal::Zone))
                    }
                    PolicyName::CONSERVATIVE_SOFT if beyond => None,
                    PolicyName::CONSERVATIVE_HARD if origin == OriginRule::Strict && !same_node => {
                        Some(FreshSteal::Refused(Refusal::Origin))
                    }
                    _ => Some(FreshSteal::Allowed),
                };
                assert_eq!(s.fresh, expected, "{name} {origin:?}: {thief:?} <- {s:?}");
            }
        }
    }
}

fn w_of(r: &crate::registry::Registry, cpu: zonal_topology::CpuId) -> usize {
    r.worker_cpu
        .iter()
        .position(|&c| c == cpu)
        .expect("victim has a worker")
}

#[test]
fn no_policy_is_cached_as_allowed_everywhere() {
    let p = ThreadPoolBuilder::new()
        .preset("s2")
        .no_policy()
        .build()
        .expect("pool on s2");
    let r = p.registry();
    assert!(r
        .policy
        .current()
        .walkers
        .iter()
        .flat_map(|w| w.slots())
        .all(|s| s.fresh == Some(FreshSteal::Allowed)));
}
