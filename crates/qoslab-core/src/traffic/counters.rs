//! Per-flow counters a sender declares in its own file, as a queue kind declares its gauges
//! ([`crate::aqm::Gauge`]): each [`Counter`] is a column of the flows table over the whole
//! run (`NAME`) and again inside the measurement window (`window_NAME`, and summary.json's
//! `flows[].window.NAME`), documented in the outputs catalogue from its unit and doc. The
//! sender keeps the values in a [`Counts`] array in declaration order and counts with
//! [`Counts::add`] where the event happens; the host reads them, counts them again inside the
//! window and folds an arrival process's connections by the declaration alone.

/// How a counter's values combine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fold {
    /// A count of events: the window's value is its count when the window closes minus its
    /// count when the window opens, an arrival process's the sum over its connections.
    Sum,
}

impl Fold {
    /// Its name in the scenario schema's `$defs.flow_counters` (and the outputs catalogue).
    pub const fn name(self) -> &'static str {
        match self {
            Fold::Sum => "sum",
        }
    }
}

/// A per-flow counter: its column name, unit, definition and fold; `at` is its position in
/// its sender's declaration list (and in the sender's [`Counts`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Counter {
    pub at: usize,
    pub name: &'static str,
    /// One of qoslab.outputs.UNITS (`count`, `packets`, …).
    pub unit: &'static str,
    /// What it counts, one sentence with `{span}` where the span goes ("over the whole run",
    /// "inside the measurement window").
    pub doc: &'static str,
    pub fold: Fold,
}

impl Counter {
    /// A count of events ([`Fold::Sum`]) at position `at` of its sender's list.
    pub const fn sum(
        at: usize,
        name: &'static str,
        unit: &'static str,
        doc: &'static str,
    ) -> Counter {
        Counter {
            at,
            name,
            unit,
            doc,
            fold: Fold::Sum,
        }
    }
}

/// A sender's counter values, in the order of its declaration list (`N` its length).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Counts<const N: usize>(pub [u64; N]);

impl<const N: usize> Default for Counts<N> {
    fn default() -> Self {
        Counts([0; N])
    }
}

impl<const N: usize> Counts<N> {
    /// One more event of counter `c`.
    #[inline]
    pub fn add(&mut self, c: &Counter) {
        self.0[c.at] += 1;
    }

    /// The value of counter `c`.
    pub fn get(&self, c: &Counter) -> u64 {
        self.0[c.at]
    }

    /// The counts between `start` and `self` (a window's), position by position as `list`
    /// declares them ([`Fold`]).
    pub fn since<'a>(self, start: Self, list: impl IntoIterator<Item = &'a Counter>) -> Self {
        let mut d = self;
        for (i, c) in list.into_iter().enumerate() {
            d.0[i] = match c.fold {
                Fold::Sum => self.0[i] - start.0[i],
            };
        }
        d
    }

    /// Folds `o`'s counts (another connection's) into these, position by position as `list`
    /// declares them ([`Fold`]).
    pub fn absorb<'a>(&mut self, o: &Self, list: impl IntoIterator<Item = &'a Counter>) {
        for (i, c) in list.into_iter().enumerate() {
            match c.fold {
                Fold::Sum => self.0[i] += o.0[i],
            }
        }
    }
}

/// Checks a declaration list: positions in order, names unique, each doc with one `{span}`.
/// Each sender's tests call it on its own list.
pub fn check(list: &[Counter]) -> Result<(), String> {
    for (i, c) in list.iter().enumerate() {
        if c.at != i {
            return Err(format!(
                "counter `{}` is at {} of its list, declared at {}",
                c.name, i, c.at
            ));
        }
        if list[..i].iter().any(|o| o.name == c.name) {
            return Err(format!("counter `{}` declared twice", c.name));
        }
        if c.doc.matches("{span}").count() != 1 {
            return Err(format!("counter `{}`: its doc needs one {{span}}", c.name));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: Counter = Counter::sum(0, "a", "count", "As {span}.");
    const B: Counter = Counter::sum(1, "b", "count", "Bs {span}.");

    #[test]
    fn counts_by_position_and_checks_the_list() {
        let mut c = Counts::<2>::default();
        c.add(&B);
        c.add(&B);
        c.add(&A);
        assert_eq!((c.get(&A), c.get(&B)), (1, 2));
        let start = Counts([1, 0]);
        assert_eq!(c.since(start, &[A, B]), Counts([0, 2]));
        c.absorb(&Counts([4, 5]), &[A, B]);
        assert_eq!(c, Counts([5, 7]));
        assert_eq!(check(&[A, B]), Ok(()));
        assert!(check(&[B, A]).unwrap_err().contains("`b` is at 0"));
        let twice = Counter::sum(1, "a", "count", "As {span}.");
        assert!(check(&[A, twice]).unwrap_err().contains("declared twice"));
        let no_span = Counter::sum(1, "c", "count", "Cs.");
        assert!(check(&[A, no_span]).unwrap_err().contains("one {span}"));
    }
}
