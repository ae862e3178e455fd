#!/usr/bin/env bash
# The main job: its set-up, then the topology report of this machine and of a real multi-node
# machine, then a real workload on the Zonal runtime over this machine's topology, with its report,
# then Zonal against rayon and tokio: the scaling curve and the rayon-demo programs; last, a
# service-like load of long-lived async tasks balanced by the control plane, every policy, on
# this machine and on the paper's S1 (emulated remote access), with that comparison table; last,
# the NUMA report of this machine (numa-report --quick), printed whole.
set -euo pipefail
cd "$(dirname "$0")/.."
# Only what this job builds and runs needs (hwloc's headers, a Rust toolchain): none of the
# guests' or MPI's set-up, which scripts/test.sh installs (scripts/setup.sh).
scripts/setup-build.sh
cargo build --release --examples

echo "== This machine (discovered from sysfs and procfs)"
cargo run -q --release --example topology

shared="${ZONAL_TOPOLOGIES_DIR:-crates/topology/tests/data}"
if [ -f "$shared/64amd64-4p2n4ca2co.xml" ]; then
  echo; echo "== A real 8-node machine: $shared/64amd64-4p2n4ca2co.xml"
  cargo run -q --release --example topology -- --xml "$shared/64amd64-4p2n4ca2co.xml"
else
  echo; echo "== The paper's 16-node machine S1 (preset; $shared not found)"
  cargo run -q --release --example topology -- --preset s1
fi

if [ -f crates/examples/examples/workload.rs ]; then
  echo; echo "== Workload on the Zonal runtime (this machine)"
  cargo run -q --release --example workload
  echo; echo "== The same workloads on the paper's 16-node machine S1 (a virtual pool), every policy,"
  echo "== with the labelled remote-access emulation on"
  cargo run -q --release --example workload -- --preset s1 --policy all --emulate-remote
fi

echo; echo "== The simulator's work-stealing mode on the paper's S1 and S3: the runtime's steal walker"
echo "== deciding every steal of simulated workers (cost model labelled in crates/sim/README.md)"
cargo run -q --release -p zonal-sim --example steal_mode

echo; echo "== Scaling: Zonal, rayon and tokio at 1, 2, 4, 8, 16 workers (up to this machine's CPUs),"
echo "== interleaved rounds; table, JSON and SVG plot under out/scaling/"
cargo run -q --release --example scaling -- --rounds 9 --out out/scaling

echo; echo "== rayon-demo programs written once, compiled against rayon's and Zonal's preludes, paired"
cargo run -q --release --example rayon_demo -- --rounds 7

echo; echo "== Service load: long-lived async tasks with node-local state, arriving in bursts skewed"
echo "== to a quarter of the nodes, the control plane balancing every 4 ms; every policy, 2 s each"
echo "== on this machine (plot: out/service/this-machine/service.svg)"
cargo run -q --release --example service -- --policy all --seconds 2 --out out/service/this-machine
echo; echo "== The same on the paper's 16-node machine S1 (a virtual pool), with the labelled"
echo "== remote-access emulation on (plot: out/service/s1/service.svg)"
cargo run -q --release --example service -- --preset s1 --emulate-remote --policy all --seconds 2 \
  --out out/service/s1

echo; echo "== A service and its computations: an HTTP server's request latency (open loop, from each"
echo "== request's intended send time) while a batch job runs parallel computations; tokio +"
echo "== rayon, tokio + spawn_blocking, Zonal alone, and Zonal on a virtual S1 (emulated);"
echo "== --quick (about 20 s); table, JSON and plot under out/mixed/"
cargo run -q --release --example mixed -- --quick --s1 --out out/mixed

echo; echo "== The NUMA report of this machine (the kit users run on theirs: README, 'Measure it on"
echo "== your machine'): triad, stencil, pointer chase and the service load on Zonal's three"
echo "== policies, rayon and tokio, each slice's CPU and its data's node read from the kernel;"
echo "== --quick (about 1 min); written to out/numa-report/ (report.md, report.json, plots)"
cargo run -q --release -p zonal-examples --example numa-report -- --quick --out out/numa-report
cat out/numa-report/report.md
