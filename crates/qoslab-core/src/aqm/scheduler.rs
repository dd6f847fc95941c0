//! Schedulers serving several physical queues on one link (RFC 3290's "scheduler"): strict
//! priority, round robin, weighted round robin (weights in packets per round) and deficit round
//! robin (Shreedhar & Varghese 1995: quanta in bytes per round). A scheduler is a pure state
//! machine: given which queues have a packet ready and the size of each head, it names the
//! queue to serve next.

#[derive(Debug, Clone, PartialEq)]
pub enum Scheduler {
    /// Queue 0 first, then 1, ...
    Priority,
    /// One packet from each backlogged queue in turn.
    RoundRobin { next: usize },
    /// Up to `weights[i]` packets from queue i per round.
    Wrr {
        weights: Vec<u32>,
        current: usize,
        served: u32,
    },
    /// Deficit round robin: `quanta[i]` bytes of credit per visit.
    Drr {
        quanta: Vec<u64>,
        deficit: Vec<u64>,
        current: usize,
        visited: bool,
    },
}

impl Scheduler {
    /// The queue to serve next. `heads[i]` is the size of queue i's head packet, `None` when
    /// it has none ready. Returns `None` when every queue is empty.
    pub fn pick(&mut self, heads: &[Option<u32>]) -> Option<usize> {
        let n = heads.len();
        if heads.iter().all(Option::is_none) {
            if let Scheduler::Drr { deficit, .. } = self {
                deficit.iter_mut().for_each(|d| *d = 0);
            }
            return None;
        }
        match self {
            Scheduler::Priority => heads.iter().position(Option::is_some),
            Scheduler::RoundRobin { next } => {
                let i = (0..n)
                    .map(|k| (*next + k) % n)
                    .find(|&i| heads[i].is_some())?;
                *next = (i + 1) % n;
                Some(i)
            }
            Scheduler::Wrr {
                weights,
                current,
                served,
            } => {
                for _ in 0..=n {
                    let i = *current;
                    if heads[i].is_some() && *served < weights[i] {
                        *served += 1;
                        return Some(i);
                    }
                    *current = (i + 1) % n;
                    *served = 0;
                }
                None
            }
            Scheduler::Drr {
                quanta,
                deficit,
                current,
                visited,
            } => {
                // Each pass over the queues adds one quantum to every backlogged queue, so a
                // head larger than its quantum is served after enough rounds.
                loop {
                    let i = *current;
                    match heads[i] {
                        None => {
                            deficit[i] = 0;
                        }
                        Some(size) => {
                            if !*visited {
                                deficit[i] += quanta[i];
                                *visited = true;
                            }
                            if size as u64 <= deficit[i] {
                                deficit[i] -= size as u64;
                                return Some(i);
                            }
                        }
                    }
                    *current = (i + 1) % n;
                    *visited = false;
                }
            }
        }
    }

    /// Queue `i` became empty after being served: DRR forfeits its remaining credit.
    pub fn on_empty(&mut self, i: usize) {
        if let Scheduler::Drr {
            deficit,
            current,
            visited,
            ..
        } = self
        {
            deficit[i] = 0;
            if *current == i {
                *current = (i + 1) % deficit.len();
                *visited = false;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Serve `n` packets with every queue saturated (heads of the given sizes) and return the
    /// bytes served per queue.
    fn saturated(s: &mut Scheduler, sizes: &[u32], n: usize) -> Vec<u64> {
        let heads: Vec<Option<u32>> = sizes.iter().map(|&x| Some(x)).collect();
        let mut bytes = vec![0u64; sizes.len()];
        for _ in 0..n {
            let i = s.pick(&heads).unwrap();
            bytes[i] += sizes[i] as u64;
        }
        bytes
    }

    #[test]
    fn priority_starves_lower_queues_under_saturation() {
        let mut s = Scheduler::Priority;
        assert_eq!(saturated(&mut s, &[100, 100], 1000), vec![100_000, 0]);
        assert_eq!(s.pick(&[None, Some(5)]), Some(1));
    }

    #[test]
    fn round_robin_alternates() {
        let mut s = Scheduler::RoundRobin { next: 0 };
        assert_eq!(saturated(&mut s, &[100, 100, 100], 3000), vec![100_000; 3]);
        assert_eq!(s.pick(&[None, None, Some(1)]), Some(2));
    }

    #[test]
    fn wrr_shares_follow_packet_weights() {
        let mut s = Scheduler::Wrr {
            weights: vec![3, 1],
            current: 0,
            served: 0,
        };
        let b = saturated(&mut s, &[1000, 1000], 4000);
        assert_eq!(b, vec![3_000_000, 1_000_000]);
    }

    #[test]
    fn drr_shares_follow_quanta_in_bytes_whatever_the_packet_sizes() {
        // Quanta 3000:1000 bytes, packets of 1500 and 200 bytes: byte shares 3:1.
        let mut s = Scheduler::Drr {
            quanta: vec![3000, 1000],
            deficit: vec![0, 0],
            current: 0,
            visited: false,
        };
        let b = saturated(&mut s, &[1500, 200], 100_000);
        let share = b[0] as f64 / (b[0] + b[1]) as f64;
        assert!((share - 0.75).abs() < 0.001, "{share}");
    }

    #[test]
    fn drr_serves_a_head_larger_than_its_quantum_eventually() {
        let mut s = Scheduler::Drr {
            quanta: vec![500, 500],
            deficit: vec![0, 0],
            current: 0,
            visited: false,
        };
        let b = saturated(&mut s, &[1500, 500], 4000);
        let share = b[0] as f64 / (b[0] + b[1]) as f64;
        assert!((share - 0.5).abs() < 0.01, "{share}");
    }
}
