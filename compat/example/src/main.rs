//! ndarray and hashbrown on Zonal through `[patch.crates-io]`.
//!
//! Each NUMA node of the pool gets a block of rows of a matrix in its own memory (a
//! `NodeBuffer`, filled by that node's workers), and a task rooted on that node
//! (`spawn_on`) works on it with the crates' parallel code: ndarray's `Zip::par_for_each`
//! and `par_mapv_inplace`, and a hashbrown `HashMap` built with `par_extend` and summed with
//! `par_values`. Those crates call rayon; the patch makes that rayon Zonal, so their tasks
//! run on the pool's workers. The program checks every result against a sequential
//! computation, then prints, per node, the tasks its workers ran (`PoolMetrics`): the
//! crates' work, counted by Zonal.
//!
//! Usage: `zonal-compat-example [PRESET]`: this machine by default, or one of Zonal's
//! virtual machines (`s1`: 16 nodes of 2 CPUs), to see several nodes on a one-node
//! machine. An unknown preset is an error naming the valid ones.

use std::error::Error;
use std::process::ExitCode;

use hashbrown::HashMap;
use ndarray::{Array1, ArrayView2, Zip};
use rayon::prelude::*;
use zonal::runtime::NodeBuffer;
use zonal::NodeId;

/// Columns of the matrix, and rows per node.
const COLS: usize = 256;
const ROWS_PER_NODE: usize = 512;

/// Element `i` of a node's block (row-major), a value in `0..1000`.
fn element(node: usize, i: usize) -> f64 {
    ((node * 7919 + i * 31) % 1000) as f64
}

/// What a node's task computes from its block.
#[derive(Debug, PartialEq)]
struct NodeResult {
    row_sums: Vec<f64>,
    sum_of_squares: f64,
    /// How often each value (as an integer) occurs in the block, summed over the values:
    /// the number of elements.
    histogram_total: usize,
    distinct: usize,
}

/// The crates' parallel code on one block.
fn parallel(block: &[f64]) -> Result<NodeResult, ndarray::ShapeError> {
    let view = ArrayView2::from_shape((ROWS_PER_NODE, COLS), block)?;
    // ndarray: a Zip over the rows, in parallel (ndarray's own producers).
    let mut row_sums = Array1::<f64>::zeros(ROWS_PER_NODE);
    Zip::from(&mut row_sums)
        .and(view.rows())
        .par_for_each(|s, row| *s = row.sum());
    let mut squares = view.to_owned();
    squares.par_mapv_inplace(|x| x * x);
    let sum_of_squares = squares.as_slice().map_or(0.0, |s| s.par_iter().sum());
    // hashbrown: a map filled in parallel, then read in parallel.
    let mut histogram: HashMap<u64, usize> = HashMap::new();
    histogram.par_extend(
        block
            .par_chunks(COLS)
            .fold(HashMap::new, |mut m: HashMap<u64, usize>, row| {
                for &x in row {
                    *m.entry(x as u64).or_default() += 1;
                }
                m
            })
            .reduce(HashMap::new, |mut a, b| {
                for (k, v) in b {
                    *a.entry(k).or_default() += v;
                }
                a
            }),
    );
    Ok(NodeResult {
        row_sums: row_sums.to_vec(),
        sum_of_squares,
        histogram_total: histogram.par_values().sum(),
        distinct: histogram.len(),
    })
}

/// The same, sequentially.
fn sequential(block: &[f64]) -> NodeResult {
    let row_sums: Vec<f64> = block.chunks(COLS).map(|r| r.iter().sum()).collect();
    let sum_of_squares = block.iter().map(|x| x * x).sum();
    let mut histogram: std::collections::HashMap<u64, usize> = Default::default();
    for &x in block {
        *histogram.entry(x as u64).or_default() += 1;
    }
    NodeResult {
        row_sums,
        sum_of_squares,
        histogram_total: histogram.values().sum(),
        distinct: histogram.len(),
    }
}

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("zonal-compat-example: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run() -> Result<(), Box<dyn Error>> {
    let mut builder = zonal::ThreadPoolBuilder::new();
    if let Some(preset) = std::env::args().nth(1) {
        builder = builder.preset(&preset);
    }
    let pool = builder.build()?;
    let nodes: Vec<NodeId> = pool.topology().cpu_nodes().collect();
    println!(
        "pool: {} workers on {} node(s), policy {}",
        pool.num_workers(),
        nodes.len(),
        pool.policy_name()
    );

    // One block per node, in that node's memory, filled by its workers.
    let blocks: Vec<NodeBuffer<f64>> = nodes
        .iter()
        .map(|&node| {
            NodeBuffer::try_new_in(&pool, node, ROWS_PER_NODE * COLS, |i| {
                element(node.index(), i)
            })
        })
        .collect::<Result<_, _>>()?;
    let before = pool.metrics();

    // A task rooted on each node runs the crates' parallel code on that node's block.
    let mut results: Vec<Option<Result<NodeResult, ndarray::ShapeError>>> =
        nodes.iter().map(|_| None).collect();
    pool.scope(|s| {
        for ((&node, block), out) in nodes.iter().zip(&blocks).zip(results.iter_mut()) {
            s.spawn_on(node, move |_| *out = Some(parallel(block)));
        }
    });

    for ((&node, block), result) in nodes.iter().zip(&blocks).zip(results) {
        let result = result.ok_or("a node's task did not run")??;
        if result != sequential(block) {
            return Err(format!("node {}: the parallel result differs", node.index()).into());
        }
        println!(
            "node {}: {} rows, sum of squares {}, {} distinct values",
            node.index(),
            result.row_sums.len(),
            result.sum_of_squares,
            result.distinct
        );
    }

    // Where the work ran: the tasks each node's workers ran during the scope.
    let after = pool.metrics();
    let mut total = 0;
    for &node in &nodes {
        let per_node = |m: &zonal::runtime::PoolMetrics| -> u64 {
            m.workers
                .iter()
                .filter(|w| w.node == Some(node.0))
                .map(|w| w.tasks_run)
                .sum()
        };
        let ran = per_node(&after) - per_node(&before);
        total += ran;
        println!("node {}: its workers ran {ran} tasks", node.index());
    }
    println!("tasks run on Zonal's workers: {total}");
    // More tasks than the one spawn_on per node: the crates' own parallel work ran there.
    if total <= nodes.len() as u64 {
        return Err(format!("only {total} tasks ran on the pool: the crates did not").into());
    }
    Ok(())
}
