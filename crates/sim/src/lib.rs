//! zonal-sim (under construction).
