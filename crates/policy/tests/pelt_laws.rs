//! Laws of the one PELT average ([`PeltAverage`]) that the runtime and the simulator share.

use proptest::prelude::*;
use zonal_policy::{pelt_decay, PeltAverage};

const PERIOD: u64 = 1024;

proptest! {
    /// The average never leaves the range of the levels it followed (nor 0, its start).
    #[test]
    fn stays_within_its_levels(steps in prop::collection::vec((0u64..5_000, 0.0f64..4096.0), 1..40)) {
        let mut s = PeltAverage::default();
        let mut a = PeltAverage::default();
        let (mut lo, mut hi, mut now) = (0.0f64, 0.0f64, 0u64);
        for (dt, level) in steps {
            now += dt;
            a.accumulate(now, level);
            lo = lo.min(level);
            hi = hi.max(level);
            s.set(now, level);
            for v in [s.value(), s.at(now + 3 * PERIOD), a.value()] {
                prop_assert!(v >= lo - 1e-9 && v <= hi + 1e-9, "{v} outside [{lo}, {hi}]");
            }
        }
    }

    /// Accumulating a constant level in any steps accounts exactly the whole periods
    /// elapsed: fractions of a period are carried, never lost nor counted twice.
    #[test]
    fn accumulate_carries_fractions(steps in prop::collection::vec(1u64..3_000, 1..60)) {
        let mut a = PeltAverage::default();
        let mut now = 0;
        for dt in steps {
            now += dt;
            a.accumulate(now, 1024.0);
        }
        let expect = pelt_decay(now / PERIOD).map_or(1024.0, |d| 1024.0 * (1.0 - d));
        prop_assert!((a.value() - expect).abs() < 1e-6, "{} vs {expect}", a.value());
    }

    /// Setting a level and evaluating later is a pure function of the time since the set:
    /// evaluating does not change the average, and a set at the same level and time
    /// changes nothing later.
    #[test]
    fn set_then_at_is_pure(t0 in 0u64..1_000_000, dt in 0u64..1_000_000, level in 0.0f64..4096.0) {
        let mut s = PeltAverage::default();
        s.set(t0, level);
        let before = s;
        let v = s.at(t0 + dt);
        prop_assert_eq!(s, before);
        prop_assert_eq!(v, s.at(t0 + dt));
        s.set(t0, level);
        prop_assert_eq!(s.at(t0 + dt), v);
    }

    /// At whole-period boundaries both ways of driving it give the same number.
    #[test]
    fn set_and_accumulate_agree_on_period_boundaries(
        steps in prop::collection::vec((1u64..700, 0.0f64..4096.0), 1..20)
    ) {
        let mut s = PeltAverage::default();
        let mut a = PeltAverage::default();
        let mut now = 0;
        let mut held = 0.0;
        for (periods, level) in steps {
            now += periods * PERIOD;
            a.accumulate(now, held);
            s.set(now, level);
            prop_assert_eq!(a.value(), s.value());
            held = level;
        }
    }
}
