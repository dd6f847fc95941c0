//! A link direction's timing noise (`[[link]] jitter`): each packet's propagation takes a
//! further delay drawn uniformly in `[0, bound]` ns from the direction's own random stream,
//! and ends no earlier than the packet ahead's, so the line stays in order (the propagation
//! delay of netem's `delay … jitter` without its reordering). Real paths have such noise;
//! without it, ACK-clocked flows can lock into phases at a tail-drop queue (Floyd and
//! Jacobson, "On traffic phase effects in packet-switched gateways", 1992). Tested through
//! the link ([`super::link`]'s `jitter_tests`).

use crate::rng::SimRng;
use crate::units::SimTime;

#[derive(Debug, Clone)]
pub struct Jitter {
    bound: SimTime,
    rng: SimRng,
    /// The far-end arrival time last given, which the next may not precede.
    last: SimTime,
}

impl Jitter {
    /// Noise of up to `bound` ns a packet; `None` at 0 (exact timing: nothing drawn).
    pub fn new(bound: SimTime, rng: SimRng) -> Option<Jitter> {
        (bound > 0).then_some(Jitter {
            bound,
            rng,
            last: 0,
        })
    }

    /// The arrival time of a packet whose exact arrival is `exact`, given in line order.
    #[inline]
    pub fn arrival(&mut self, exact: SimTime) -> SimTime {
        // uniform but for the modulo's bias, at most bound / 2^64 (2^-11 at the largest
        // duration a scenario accepts, 2^53 ns; 2^-47 at 130 µs)
        let extra = self.rng.next_u64() % (self.bound + 1);
        self.last = (exact + extra).max(self.last);
        self.last
    }
}
