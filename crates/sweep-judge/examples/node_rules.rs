//! How often the slow-node rules name a healthy node, and how often they
//! find a node at a tenth of the median, in simulated sweeps: every pair
//! lognormal around one figure (σ of the logarithm 0.2 to 0.8, as seen on
//! loaded machines), seeded so the printout is repeatable. Prints the
//! pair rule alone (nodes it names) beside both rules. Not a test: its
//! rates are what the constants in analysis.rs were chosen from.
//!
//! cargo run --release -p fabdiag-sweep-judge --example node_rules

use fabdiag_sweep_judge::analysis::{Analysis, Better, Matrix, NodeRule, Rules};
use rand::rngs::StdRng;
use rand::SeedableRng;
use rand_distr::{Distribution, LogNormal};

/// Nodes named: by the pair rule alone, and by either rule.
fn named(m: &Matrix) -> (Vec<usize>, Vec<usize>) {
    let an = Analysis::of(m, Better::Higher, Rules::default());
    let by_pairs = an
        .slow_nodes
        .iter()
        .filter(|f| f.rule == NodeRule::Pairs)
        .map(|f| f.node);
    let mut all: Vec<usize> = an.slow_nodes.iter().map(|f| f.node).collect();
    all.sort_unstable();
    (by_pairs.collect(), all)
}

fn main() -> Result<(), rand_distr::NormalError> {
    let mut rng = StdRng::seed_from_u64(2026);
    println!("nodes  sigma  sweeps | healthy nodes named per sweep: pairs rule, both | slow node found alone: pairs rule, both");
    for n in [6usize, 8, 12, 16] {
        let sweeps = if n <= 8 { 2000 } else { 500 };
        for sigma in [0.2, 0.4, 0.6, 0.8] {
            let noise = LogNormal::new(0.0, sigma)?;
            let (mut fp_pairs, mut fp_both, mut hit_pairs, mut hit_both) = (0, 0, 0, 0);
            for _ in 0..sweeps {
                let mut m = Matrix::new(n);
                for a in 0..n {
                    for b in a + 1..n {
                        m.set(a, b, 100.0 * noise.sample(&mut rng));
                    }
                }
                let (p, both) = named(&m);
                fp_pairs += p.len();
                fp_both += both.len();
                for b in 1..n {
                    m.set(0, b, 10.0 * noise.sample(&mut rng));
                }
                let (p, both) = named(&m);
                hit_pairs += usize::from(p == [0]);
                hit_both += usize::from(both == [0]);
            }
            let per = |k: usize| k as f64 / sweeps as f64;
            println!(
                "{n:>5}  {sigma:>5.1}  {sweeps:>6} | {:>6.3} {:>6.3} | {:>5.2} {:>5.2}",
                per(fp_pairs),
                per(fp_both),
                per(hit_pairs),
                per(hit_both)
            );
        }
    }
    Ok(())
}
