//! CFS load weights (Linux's `sched_prio_to_weight`): each nice step is ×1.25.

/// The weight of a nice-0 task.
pub const NICE_0_WEIGHT: u32 = 1024;

/// Linux's `sched_prio_to_weight`, nice −20 … +19.
const PRIO_TO_WEIGHT: [u32; 40] = [
    88761, 71755, 56483, 46273, 36291, 29154, 23254, 18705, 14949, 11916, 9548, 7620, 6100, 4904,
    3906, 3121, 2501, 1991, 1586, 1277, 1024, 820, 655, 526, 423, 335, 272, 215, 172, 137, 110, 87,
    70, 56, 45, 36, 29, 23, 18, 15,
];

/// The CFS weight of a nice value; values outside −20..=19 are clamped.
///
/// ```
/// # use zonal_policy::doc_facade as zonal;
/// assert_eq!(zonal::policy::nice_to_weight(0), 1024);
/// assert_eq!(zonal::policy::nice_to_weight(-20), 88761);
/// assert_eq!(zonal::policy::nice_to_weight(99), 15);
/// ```
#[must_use]
pub fn nice_to_weight(nice: i32) -> u32 {
    PRIO_TO_WEIGHT[(nice.clamp(-20, 19) + 20) as usize]
}

#[cfg(test)]
mod test {
    #[test]
    fn each_step_is_about_a_quarter() {
        for nice in -20..19 {
            let ratio =
                f64::from(super::nice_to_weight(nice)) / f64::from(super::nice_to_weight(nice + 1));
            assert!((1.15..1.35).contains(&ratio), "nice {nice}: {ratio}");
        }
    }
}
